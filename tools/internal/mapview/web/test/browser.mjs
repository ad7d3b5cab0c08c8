// Browser test of the map view (issue 27), run by cmd/stac-mcp's
// TestMapViewInChromium:
//
//   node test/browser.mjs STAC_MCP_BINARY [server args…]
//
// A real stac-mcp runs over stdio behind an MCP client that declares the
// MCP Apps extension. Headless Chromium (puppeteer-core driving the
// installed browser: CHROMIUM, default /usr/bin/chromium; nothing is
// downloaded) opens a test host page that embeds the view with the
// ext-apps SDK's host side (test/host.js); the view's tools/call requests
// go through the page to that client. Env: MAPVIEW_SHOTS, a directory for
// the screenshots; MAPVIEW_ARGS, the map_items arguments (JSON).
// The last line is "N passed, M failed"; a "metrics {…}" line has the
// sizes and timings.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import puppeteer from "puppeteer-core";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const here = dirname(fileURLToPath(import.meta.url));
const [binary, ...serverArgs] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node test/browser.mjs STAC_MCP_BINARY [server args…]");
  process.exit(2);
}
const shots = process.env.MAPVIEW_SHOTS || "";
if (shots) mkdirSync(shots, { recursive: true });
const mapArgs = JSON.parse(process.env.MAPVIEW_ARGS || '{"collections":["sentinel-2-l2a","sentinel-2-c1-l2a","sentinel-2-l1c"],"aoi":[-40.5,-5.3,-37.5,-3.5],"max_items":8}');
const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";

let passed = 0, failed = 0;
const check = async (name, fn) => {
  try {
    await fn();
    passed++;
    console.log("ok", name);
  } catch (e) {
    failed++;
    console.log("FAIL", name, e && e.stack ? e.stack : e);
  }
};
const metrics = {};

const client = new Client({ name: "mapview-browser-test", version: "1" }, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } });
await client.connect(new StdioClientTransport({ command: binary, args: serverArgs, env: { ...process.env }, stderr: "inherit" }));

const hostBundle = (await esbuild.build({ entryPoints: [join(here, "host.js")], bundle: true, format: "iife", write: false, logLevel: "error" })).outputFiles[0].text;
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // --no-sandbox: CI runs as root, where Chromium's own sandbox cannot start.
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--font-render-hinting=none"],
});

// openHost loads the test host page with the view for one tool result and
// waits until the view has drawn it.
async function openHost(toolName, args, result, html, tool, resultFirst = false) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1020, height: 600 });
  const requests = [];
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    const u = r.url();
    if (u.startsWith("data:") || u.startsWith("about:")) return r.continue();
    requests.push(u);
    r.abort();
  });
  const calls = [];
  await page.exposeFunction("hostCall", async (method, params) => {
    calls.push({ method, params });
    if (method === "tools/call") return client.callTool(params);
    if (method === "resources/read") return client.readResource(params);
    throw new Error("unexpected " + method);
  });
  await page.setContent(`<!doctype html><html><body style="margin:8px;background:#fff"><script>${hostBundle}</script></body></html>`);
  const received = await page.evaluate((p) => window.startHost(p), { html, tool, input: args, result, resultFirst });
  const frame = await page.waitForFrame((f) => f !== page.mainFrame());
  await frame.waitForSelector("body[data-ready='1']", { timeout: 30000 });
  const t = await frame.evaluate(() => ({
    origin: performance.timeOrigin,
    fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime,
    fp: (performance.getEntriesByName("first-paint")[0] || {}).startTime,
    basemap: (performance.getEntriesByName("stac-mcp:basemap-drawn")[0] || {}).startTime,
    footprints: (performance.getEntriesByName("stac-mcp:footprints-drawn")[0] || {}).startTime,
  }));
  const timing = {
    first_paint_ms: t.fp !== undefined ? Math.round(t.origin + t.fp - received) : null,
    first_contentful_paint_ms: t.fcp !== undefined ? Math.round(t.origin + t.fcp - received) : null,
    footprints_drawn_ms: Math.round(t.origin + t.footprints - received),
  };
  return { page, frame, calls, requests, timing };
}

const drawnIds = (frame) => frame.$$eval("#map path.fp", (ps) => ps.map((p) => ({ id: p.dataset.id, label: p.dataset.label, color: p.dataset.color })));

// dragRect draws a rectangle over the given fractions of the map.
async function dragRect(page, frame, [fx0, fy0, fx1, fy1]) {
  await frame.click("#draw");
  const box = await (await frame.$("#map")).boundingBox();
  await page.mouse.move(box.x + box.width * fx0, box.y + box.height * fy0);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * ((fx0 + fx1) / 2), box.y + box.height * ((fy0 + fy1) / 2), { steps: 4 });
  await page.mouse.move(box.x + box.width * fx1, box.y + box.height * fy1, { steps: 4 });
  await page.mouse.up();
}

const shot = async (page, name) => {
  if (shots) await (await page.$("iframe")).screenshot({ path: join(shots, name) });
};

try {
  // ---- the server side: extension, link, resource ----
  const caps = client.getServerCapabilities() || {};
  const tools = (await client.listTools()).tools;
  const mapTool = tools.find((t) => t.name === "map_items");
  const covTool = tools.find((t) => t.name === "check_coverage");
  let html = "";
  await check("server declares the MCP Apps extension and links the view", async () => {
    assert.ok(caps.extensions && caps.extensions[UI], "capabilities.extensions lacks " + UI);
    for (const t of [mapTool, covTool, tools.find((x) => x.name === "search_items")]) {
      assert.equal(t._meta?.ui?.resourceUri, "ui://stac-mcp/map.html", t.name);
    }
  });
  const uri = mapTool._meta.ui.resourceUri;
  const t0 = performance.now();
  const read = await client.readResource({ uri });
  metrics.resource_read_ms = Math.round(performance.now() - t0);
  await check("resources/read serves one HTML document with the MCP Apps MIME type", async () => {
    assert.equal(read.contents.length, 1);
    assert.equal(read.contents[0].mimeType, MIME);
    html = read.contents[0].text;
    assert.match(html, /^<!doctype html>/);
    metrics.html_bytes = Buffer.byteLength(html);
  });

  // ---- map_items: every footprint, click, next page, drawn area ----
  const mapResult = await client.callTool({ name: "map_items", arguments: mapArgs });
  const legend = mapResult.structuredContent.items;
  await check("map_items still answers with its PNG and legend text", async () => {
    assert.notEqual(mapResult.isError, true);
    assert.ok(mapResult.content.some((c) => c.type === "image" && c.mimeType === "image/png"));
    assert.ok(mapResult.content.some((c) => c.type === "text" && c.text.startsWith("Map (")));
    assert.ok(legend.length >= 2 && mapResult.structuredContent.has_more, "the demo search must draw several items and have more");
  });
  const { page, frame, calls, requests, timing } = await openHost("map_items", mapArgs, mapResult, html, mapTool);
  Object.assign(metrics, timing);
  await shot(page, "map-view-start.png");

  await check("every footprint of the map is drawn, numbered and coloured as in the PNG", async () => {
    const drawn = await drawnIds(frame);
    assert.equal(drawn.length, legend.length);
    const byId = new Map(drawn.map((d) => [d.id, d]));
    for (const e of legend) {
      const d = byId.get(e.id);
      assert.ok(d, "not drawn: " + e.id);
      assert.equal(d.label, e.label, e.id + " label");
      assert.equal(d.color, e.color, e.id + " colour");
    }
    const items = await frame.$$eval("#legend li", (lis) => lis.length);
    assert.equal(items, legend.length, "legend entries");
    assert.equal(await frame.$$eval("#map path.aoi", (p) => p.length), 1, "the AOI outline");
    assert.ok((await frame.$$eval("#map path.land", (p) => p.length)) >= 1, "the basemap");
  });

  await check("clicking a footprint shows its properties and its preview image", async () => {
    // The topmost footprint under a number: click exactly there.
    const target = await frame.evaluate(() => {
      for (const t of document.querySelectorAll("#map text.lbl")) {
        const r = t.getBoundingClientRect();
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        const hit = document.elementFromPoint(x, y);
        if (hit && hit.dataset && hit.dataset.id) {
          const pr = hit.getBoundingClientRect();
          return { id: hit.dataset.id, dx: x - pr.left, dy: y - pr.top };
        }
      }
      return null;
    });
    assert.ok(target, "no footprint under any number");
    const el = await frame.$(`#map path.fp[data-id="${target.id}"]`);
    await el.click({ offset: { x: target.dx, y: target.dy } });
    await frame.waitForSelector("#details:not([hidden])");
    const title = await frame.$eval("#details-title", (e) => e.textContent);
    assert.ok(title.includes(target.id), title);
    const props = await frame.$$eval("#props dt", (dts) => dts.map((d) => d.textContent));
    for (const k of ["collection", "datetime", "eo:cloud_cover"]) assert.ok(props.includes(k), `property ${k} missing: ${props}`);
    await frame.waitForSelector("#preview:not([hidden])", { timeout: 30000 });
    const img = await frame.$eval("#preview", (i) => ({ w: i.naturalWidth, h: i.naturalHeight, src: i.src.slice(0, 22) }));
    assert.ok(img.w > 0 && img.h > 0, "preview not decoded");
    const previewCall = calls.find((c) => c.params?.name === "get_item_preview");
    assert.equal(previewCall?.params.arguments.item_id, target.id);
    // The status is a person's text, not the tool's words for the model.
    const status = await frame.$eval("#preview-status", (e) => e.textContent);
    assert.ok(!/call map_items|get_item_preview/.test(status), "status: " + status);
    await shot(page, "map-view.png");
    // A hidden preview takes no space and shows no broken-image icon (the
    // image's display: block must not override the hidden attribute).
    const shown = await frame.$eval("#preview", (i) => {
      i.hidden = true;
      const d = getComputedStyle(i).display;
      i.hidden = false;
      return d;
    });
    assert.equal(shown, "none", "a hidden preview is displayed");
  });

  await check("Next page adds the next items with the cursor", async () => {
    const before = await drawnIds(frame);
    await frame.click("#next");
    await frame.waitForSelector("body[data-ready='2']", { timeout: 30000 });
    const after = await drawnIds(frame);
    assert.ok(after.length > before.length, `${before.length} -> ${after.length}`);
    const old = new Set(before.map((d) => d.id));
    const added = after.filter((d) => !old.has(d.id));
    assert.equal(added.length, after.length - before.length);
    const labels = added.map((d) => Number(d.label)).sort((a, b) => a - b);
    assert.equal(labels[0], before.length + 1, "numbering continues");
    const cursorCall = calls.filter((c) => c.params?.name === "search_items").at(-1);
    assert.ok(cursorCall.params.arguments.cursor, "the next page was not asked with the cursor");
  });

  await check("drawing a rectangle runs a search for that area through the host", async () => {
    const n = calls.length;
    await dragRect(page, frame, [0.3, 0.3, 0.6, 0.7]);
    await frame.waitForSelector("body[data-ready='3']", { timeout: 30000 });
    const bbox = JSON.parse(await frame.$eval("body", (b) => b.dataset.drawn));
    const search = calls.slice(n).find((c) => c.params?.name === "search_items");
    assert.ok(search, "no search_items call after drawing");
    assert.deepEqual(search.params.arguments.bbox, bbox);
    assert.deepEqual(search.params.arguments.collections, mapArgs.collections);
    // The same search made here: the view draws every footprint it finds.
    const direct = await client.callTool({ name: "search_items", arguments: search.params.arguments });
    const want = direct.structuredContent.features.filter((f) => f.geometry).map((f) => f.id).sort();
    const got = (await drawnIds(frame)).map((d) => d.id).sort();
    assert.deepEqual(got, want);
    assert.ok(want.length > 0, "the drawn area should hold footprints");
    const ctx = await page.evaluate(() => window.hostLog.find((l) => l.method === "ui/update-model-context"));
    assert.ok(ctx && ctx.params.content[0].text.includes(JSON.stringify(bbox).slice(1, -1).split(",").join(", ")), "the model context names the drawn area");
    await shot(page, "map-view-drawn.png");
  });

  await check("zooming out names Natural Earth populated places", async () => {
    const box = await (await frame.$("#map")).boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    let places = [];
    for (let i = 0; i < 30 && places.length === 0; i++) {
      await page.mouse.wheel({ deltaY: 400 });
      places = await frame.$$eval("#map text.place-name", (ts) => ts.map((t) => t.textContent));
    }
    assert.ok(places.length > 0, "no place named after zooming out");
    assert.ok(places.length <= 12, "at most 12 names: " + places);
    await shot(page, "map-view-places.png");
    await frame.click("#fit");
  });

  await check("the view reached no network", async () => {
    assert.deepEqual(requests, []);
  });
  await page.close();

  await check("a map_items result without structuredContent still gets its footprints, numbered in order", async () => {
    const h = await openHost("map_items", mapArgs, { content: mapResult.content }, html, mapTool);
    const drawn = await drawnIds(h.frame);
    assert.deepEqual(drawn.map((d) => d.id).sort(), legend.map((e) => e.id).sort());
    assert.deepEqual(drawn.map((d) => Number(d.label)).sort((a, b) => a - b), legend.map((_, i) => i + 1));
    await h.page.close();
  });

  await check("a result sent before the arguments waits for them", async () => {
    const h = await openHost("map_items", mapArgs, mapResult, html, mapTool, true);
    assert.deepEqual((await drawnIds(h.frame)).map((d) => d.id).sort(), legend.map((e) => e.id).sort());
    const search = h.calls.find((c) => c.params?.name === "search_items");
    assert.deepEqual(search?.params.arguments.bbox, mapArgs.aoi, "the view searched without the tool's arguments");
    await h.page.close();
  });

  // ---- search_items: a summary page, its footprints fetched by the view ----
  await check("search_items' view draws the footprints of its summary page", async () => {
    const args = { collections: mapArgs.collections, bbox: mapArgs.aoi, max_items: 4 };
    const res = await client.callTool({ name: "search_items", arguments: args });
    const want = res.structuredContent.items.map((i) => i.id).sort();
    const h = await openHost("search_items", args, res, html, tools.find((x) => x.name === "search_items"));
    const got = (await drawnIds(h.frame)).map((d) => d.id).sort();
    assert.deepEqual(got, want);
    assert.deepEqual(h.requests, []);
    await h.page.close();
    // A page that continued a cursor: its own items, not the search's first page.
    const next = await client.callTool({ name: "search_items", arguments: { cursor: res.structuredContent.cursor } });
    const wantNext = next.structuredContent.items.map((i) => i.id);
    const h2 = await openHost("search_items", { cursor: res.structuredContent.cursor }, next, html, tools.find((x) => x.name === "search_items"));
    const drawn = await drawnIds(h2.frame);
    assert.deepEqual(drawn.map((d) => d.id).sort(), [...wantNext].sort());
    assert.deepEqual(wantNext.map((id) => drawn.find((d) => d.id === id).label), wantNext.map((_, i) => String(i + 1)), "numbered in the page's order");
    await h2.page.close();
  });

  // ---- check_coverage: the coverage figure, and a drawn area is checked ----
  const covArgs = { collections: mapArgs.collections, aoi: mapArgs.aoi };
  const covResult = await client.callTool({ name: "check_coverage", arguments: covArgs });
  await check("check_coverage's view shows the coverage and checks a drawn area", async () => {
    const h = await openHost("check_coverage", covArgs, covResult, html, covTool);
    const status = await h.frame.$eval("#status", (e) => e.textContent);
    assert.match(status, /% of the area covered by \d+ item/);
    const n = h.calls.length;
    await dragRect(h.page, h.frame, [0.35, 0.35, 0.55, 0.6]);
    await h.frame.waitForSelector("body[data-ready='2']", { timeout: 30000 });
    const bbox = JSON.parse(await h.frame.$eval("body", (b) => b.dataset.drawn));
    const cov = h.calls.slice(n).find((c) => c.params?.name === "check_coverage");
    assert.ok(cov, "no check_coverage call after drawing");
    assert.deepEqual(cov.params.arguments.aoi, bbox);
    assert.deepEqual(h.requests, []);
    await h.page.close();
  });
} finally {
  await browser.close();
  await client.close();
}
console.log("metrics " + JSON.stringify(metrics));
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
