// End-to-end check of stac-mcp with a client we did not write: the official
// MCP TypeScript SDK. Usage:
//   node e2e/client.mjs <stac-mcp binary> [args...]    over stdio
//   node e2e/client.mjs http://127.0.0.1:8080/mcp       over Streamable HTTP
//
// It lists the tools, checks their metadata, then makes every call in
// calls.json. The SDK's callTool validates structuredContent against the
// tool's outputSchema and throws on a mismatch, so a passing call proves the
// structured result is what the schema promises. It also checks progress
// notifications, a cursor's continuation and, when STAC_MCP_E2E_SLOW_CATALOG
// names a catalog that never answers, that an aborted call is rejected (the
// caller checks the server cancelled its upstream request). Prints the
// negotiated protocol version, and "N passed, M failed" last; exits non-zero
// on any failure.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [target, ...binaryArgs] = process.argv.slice(2);
if (!target) {
  console.error("usage: node e2e/client.mjs <stac-mcp binary> [args...] | <http(s) URL of /mcp>");
  process.exit(2);
}
const overHTTP = /^https?:\/\//.test(target);
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

// checkImage asserts a result carries exactly one image content block of
// the given MIME type, whose decoded size is what structuredContent.image
// says and at most maxBytes; "none" asserts there is no image.
const checkImage = (r, mimeType, maxBytes) => {
  const images = (r.content ?? []).filter((c) => c.type === "image");
  if (mimeType === "none") {
    assert.equal(images.length, 0, "unexpected image content");
    return;
  }
  assert.equal(images.length, 1, `want one image content block, got ${images.length}`);
  assert.equal(images[0].mimeType, mimeType, "image MIME type");
  const bytes = Buffer.from(images[0].data, "base64");
  assert.ok(bytes.length > 0 && bytes.length <= maxBytes, `image is ${bytes.length} bytes, want 1..${maxBytes}`);
  assert.equal(r.structuredContent?.image?.bytes, bytes.length, "structuredContent.image.bytes");
  assert.equal(r.structuredContent?.image?.mime_type, mimeType, "structuredContent.image.mime_type");
  const magic = mimeType === "image/png" ? "89504e47" : "ffd8ff";
  assert.equal(bytes.subarray(0, magic.length / 2).toString("hex"), magic, "image bytes do not start with the format's signature");
};

const transport = overHTTP
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({
    command: target,
    args: binaryArgs,
    env: { ...process.env },
    stderr: "pipe", // server logs; shown only on failure
  });
let serverStderr = "";
transport.stderr?.on("data", (chunk) => { serverStderr += chunk; });
// The client hands the negotiated version to the transport (HTTP sends it
// in MCP-Protocol-Version); record it for either transport.
let negotiated = "";
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };

const client = new Client({ name: "stac-mcp-e2e", version: "0.0.1" });
await client.connect(transport);
console.log(`protocol version: ${negotiated} over ${overHTTP ? "http" : "stdio"}`);

let tools = [];
await check("initialize: server info and instructions", async () => {
  assert.equal(client.getServerVersion()?.name, "stac-mcp");
  assert.match(client.getInstructions() ?? "", /get_root/);
  assert.ok(client.getServerCapabilities()?.tools, "tools capability");
});
// Tools that change catalogs say so (readOnlyHint false) and take an
// idempotency_key; export writes files of its own (readOnlyHint false,
// never destructive: each call a new file); every other tool is read-only.
const writes = (t) => t.inputSchema?.properties?.idempotency_key !== undefined;
const writesFiles = (t) => t.name === "export";
await check("tools/list: every tool is honest about writing, with an output schema", async () => {
  ({ tools } = await client.listTools());
  assert.ok(tools.length >= 10, `only ${tools.length} tools`);
  for (const t of tools) {
    assert.equal(t.annotations?.readOnlyHint, !writes(t) && !writesFiles(t), `${t.name} readOnlyHint`);
    if (writesFiles(t)) assert.equal(t.annotations?.destructiveHint, false, `${t.name} destructiveHint`);
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
    if (c.image) {
      checkImage(r, c.image, c.max_image_bytes ?? 150000);
    }
  });
}

// A preview with a real image needs an asset host; the Go test starts a
// loopback STAC API with thumbnails and names it here.
const previewCatalog = process.env.STAC_MCP_E2E_PREVIEW_CATALOG;
if (previewCatalog) {
  await check(`get_item_preview on ${previewCatalog} returns the thumbnail as image content`, async () => {
    const r = await client.callTool({ name: "get_item_preview",
      arguments: { catalog_url: previewCatalog, collection_id: "previews", item_id: "thumb-jpeg" } });
    assert.notEqual(r.isError, true, `isError: ${textOf(r)}`);
    assert.equal(r.structuredContent.available, true, textOf(r));
    checkImage(r, "image/jpeg", 150000);
    assert.match(textOf(r), /^Preview of thumb-jpeg/);
  });
}

await check("progress notifications arrive during a paged search", async () => {
  // The server sends one per page, all before the result. This SDK settles
  // the response at once but runs notification handlers a microtask later,
  // and drops the call's onprogress handler with the response: notifications
  // read in the same chunk as the result never reach onprogress. So they are
  // counted by a notification handler of our own (still run before this
  // await resumes); onprogress is there to make the SDK send a token.
  const notes = [];
  client.setNotificationHandler(ProgressNotificationSchema, (n) => { notes.push(n.params); });
  try {
    const r = await client.callTool({ name: "search_items", arguments: { collections: ["joplin"], limit: 1, max_items: 3 } },
      undefined, { onprogress: () => {} });
    assert.notEqual(r.isError, true, textOf(r));
  } finally {
    client.removeNotificationHandler("notifications/progress");
  }
  assert.ok(notes.length >= 3, `${notes.length} progress notifications for three pages`);
  assert.ok(notes.every((p, i) => i === 0 || p.progress > notes[i - 1].progress), "progress does not increase");
});

await check("a cursor continues the search", async () => {
  const first = await client.callTool({ name: "search_items", arguments: { collections: ["joplin"], limit: 1, max_items: 1 } });
  const cursor = first.structuredContent?.cursor;
  assert.ok(cursor, "no cursor");
  const next = await client.callTool({ name: "search_items", arguments: { cursor, max_items: 1 } });
  assert.notEqual(next.isError, true, textOf(next));
  assert.notEqual(next.structuredContent.items[0]?.id, first.structuredContent.items[0]?.id, "the cursor repeated the first item");
});

const slowCatalog = process.env.STAC_MCP_E2E_SLOW_CATALOG;
if (slowCatalog) {
  await check("an aborted call is rejected", () =>
    assert.rejects(
      client.callTool({ name: "get_root", arguments: { catalog_url: slowCatalog } }, undefined, { signal: AbortSignal.timeout(2000) }),
      (e) => e.name === "AbortError" || /abort/i.test(String(e?.message ?? e)),
    ));
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
