// cql2.mjs converts CQL2 with cql2-wasm (developmentseed/cql2-rs, pinned in
// package.json), the reference stacclient/cql2 is compared with
// (stacclient/cql2/wasm_diff_test.go). Each line of stdin is a JSON object
// {"text": "..."} or {"json": {...}}; each line of stdout answers it in
// order: {"json": {...}} for a text, {"text": "..."} for a JSON, or
// {"error": "..."} when cql2-wasm refuses it.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import * as bg from 'cql2-wasm/cql2_wasm_bg.js';

// The package is built for bundlers (it imports the .wasm file as a
// module), which Node 20 cannot load: instantiate it by hand.
const require = createRequire(import.meta.url);
const bytes = await readFile(require.resolve('cql2-wasm/cql2_wasm_bg.wasm'));
const { instance } = await WebAssembly.instantiate(bytes, { './cql2_wasm_bg.js': bg });
bg.__wbg_set_wasm(instance.exports);
instance.exports.__wbindgen_start?.();

const asObject = (v) => (typeof v === 'string' ? JSON.parse(v) : v);

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  let out;
  try {
    if ('text' in req) {
      out = { json: asObject(bg.parseText(req.text).to_json()) };
    } else {
      out = { text: bg.parseJson(JSON.stringify(req.json)).to_text() };
    }
  } catch (e) {
    out = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
