// Runs stac-node-validator (pinned in package.json) over STAC documents,
// offline: every schema URL is read from the schema tree stacdoc embeds
// (stacclient/stacdoc/schemas/<host>/<path>); any other URL fails, so the
// run never reaches the network. Used by stacclient/stacdoc's
// TestDifferentialAgainstStacNodeValidator.
//
// usage: node stac-validate.cjs <schema dir> <cases.json>
// cases.json: [{"name": ..., "doc": {...}}]; prints
// [{"name": ..., "valid": bool, "skipped": bool, "errors": [...]}].
'use strict';
const fs = require('fs');
const path = require('path');
const validate = require('stac-node-validator');

const [schemaDir, casesFile] = process.argv.slice(2);

async function loader(uri) {
  const m = /^https?:\/\/([^/]+)(\/[^#?]*)#?$/.exec(uri);
  if (!m) {
    throw new Error(`offline: no local schema for ${uri}`);
  }
  const file = path.join(schemaDir, m[1], m[2]);
  if (!file.startsWith(path.resolve(schemaDir) + path.sep) || !fs.existsSync(file)) {
    throw new Error(`offline: no local schema for ${uri}`);
  }
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function messages(report) {
  const out = [];
  for (const e of report.results.core || []) out.push(`${e.instancePath || ''} ${e.message}`);
  for (const [ext, errs] of Object.entries(report.results.extensions || {})) {
    for (const e of errs) out.push(`${ext}: ${e.instancePath || ''} ${e.message}`);
  }
  for (const m of report.messages || []) out.push(m);
  return out;
}

(async () => {
  const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
  // One call for all documents: the validator builds its schema compiler
  // per call, and compiling the schemas for each document is slow.
  const report = await validate(cases.map((c) => c.doc), { loader, schemaMap: {} });
  const children = report.children || [];
  if (children.length !== cases.length) {
    throw new Error(`${children.length} reports for ${cases.length} documents`);
  }
  const results = children.map((r, i) => ({
    name: cases[i].name,
    valid: r.valid === true,
    skipped: r.skipped === true,
    errors: messages(r),
  }));
  process.stdout.write(JSON.stringify(results));
})().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
  process.exit(1);
});
