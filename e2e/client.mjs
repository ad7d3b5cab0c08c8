// End-to-end check of stac-mcp with a client we did not write: the official
// MCP TypeScript SDK. Usage: node e2e/client.mjs <stac-mcp binary> [args...]
//
// It lists the tools, checks their metadata, then makes every call in
// calls.json. The SDK's callTool validates structuredContent against the
// tool's outputSchema and throws on a mismatch, so a passing call proves the
// structured result is what the schema promises. Prints "N passed, M failed"
// last and exits non-zero on any failure.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [binary, ...binaryArgs] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node e2e/client.mjs <stac-mcp binary> [args...]");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
// E2E_CALLS names another calls file (write_calls.json runs the write tools
// against a copy of a local catalog, with the server started --allow-writes).
const { calls, covers = "all" } = JSON.parse(readFileSync(join(here, process.env.E2E_CALLS || "calls.json"), "utf8"));

let passed = 0;
let failed = 0;
const check = async (name, fn) => {
  try {
    await fn();
    passed++;
    console.log("ok  ", name);
  } catch (e) {
    failed++;
    console.log("FAIL", name, "-", e?.message ?? e);
  }
};
const textOf = (r) => (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const transport = new StdioClientTransport({
  command: binary,
  args: binaryArgs,
  env: { ...process.env },
  stderr: "pipe", // server logs; shown only on failure
});
let serverStderr = "";
transport.stderr?.on("data", (chunk) => { serverStderr += chunk; });

const client = new Client({ name: "stac-mcp-e2e", version: "0.0.1" });
await client.connect(transport);

let tools = [];
await check("initialize: server info and instructions", async () => {
  assert.equal(client.getServerVersion()?.name, "stac-mcp");
  assert.match(client.getInstructions() ?? "", /get_root/);
  assert.ok(client.getServerCapabilities()?.tools, "tools capability");
});
// Tools that change catalogs say so (readOnlyHint false) and take an
// idempotency_key; every other tool is read-only.
const writes = (t) => t.inputSchema?.properties?.idempotency_key !== undefined;
await check("tools/list: every tool is honest about writing, with an output schema", async () => {
  ({ tools } = await client.listTools());
  assert.ok(tools.length >= 10, `only ${tools.length} tools`);
  for (const t of tools) {
    assert.equal(t.annotations?.readOnlyHint, !writes(t), `${t.name} readOnlyHint`);
    if (writes(t)) assert.ok(t.inputSchema.required.includes("idempotency_key"), `${t.name} idempotency_key required`);
    assert.ok(t.outputSchema, `${t.name} outputSchema`);
    assert.ok(t.inputSchema?.properties?.catalog_url, `${t.name} catalog_url`);
  }
});
await check(`the calls cover every ${covers === "write" ? "write " : ""}tool`, async () => {
  const covered = new Set(calls.filter((c) => (c.expect ?? "ok") === "ok").map((c) => c.tool));
  const missing = tools.filter((t) => covers !== "write" || writes(t)).map((t) => t.name).filter((n) => !covered.has(n));
  assert.deepEqual(missing, [], `tools without a successful call: ${missing.join(", ")}`);
});

for (const c of calls) {
  const expect = c.expect ?? "ok";
  await check(`${c.tool} ${JSON.stringify(c.arguments)} -> ${expect}`, async () => {
    // Throws if structuredContent does not validate against outputSchema.
    const r = await client.callTool({ name: c.tool, arguments: c.arguments });
    if (expect === "error") {
      assert.equal(r.isError, true, "want isError");
      assert.ok(textOf(r).length > 0, "isError without a message");
      return;
    }
    assert.notEqual(r.isError, true, `isError: ${textOf(r)}`);
    assert.equal(typeof r.structuredContent, "object", "no structuredContent");
    assert.ok(textOf(r).length > 0, "no text block");
    assert.ok(r._meta?.["stac-mcp/receipt"], "no receipt in _meta");
    // "structured": members the structuredContent must have, e.g. {"duplicate": true}.
    for (const [k, v] of Object.entries(c.structured ?? {})) {
      assert.deepEqual(r.structuredContent[k], v, `structuredContent.${k}`);
    }
  });
}

await check("unknown tool is a protocol error", () =>
  assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), /unknown tool/i));

await client.close();
if (failed > 0 && serverStderr) {
  console.log("--- server stderr (last 2000 chars) ---");
  console.log(serverStderr.slice(-2000));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
