// The map view of stac-mcp (an MCP App, SEP-1865): the footprints of a
// map_items, search_items or check_coverage result on an offline Natural
// Earth basemap, numbered and coloured as map_items' PNG. It talks to the
// host with JSON-RPC over postMessage (the spec's transport; no SDK is
// needed and none is bundled) and reaches the server only through the
// host's tools/call: search_items (detail full) for the footprints and the
// next page, get_item_preview for a clicked item, check_coverage for a
// drawn area. It never opens a connection of its own (its CSP forbids it).
//
// Everything an item carries (ids, titles, properties) is untrusted: it is
// only ever written with textContent or as SVG attribute values, never as
// markup.
import basemap from "basemap:data";

const PROTOCOL_VERSION = "2026-01-26";
const SVGNS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const svg = $("map");

// ---- JSON-RPC over postMessage ----------------------------------------

let nextId = 1;
const pending = new Map();
const post = (msg) => window.parent.postMessage(msg, "*");

function request(method, params, timeoutMs = 120000) {
  const id = nextId++;
  post({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`${method}: no answer from the host after ${timeoutMs / 1000} s`));
    }, timeoutMs);
    pending.set(id, { resolve, reject, timer });
  });
}

const notify = (method, params) => post({ jsonrpc: "2.0", method, params });

window.addEventListener("message", (ev) => {
  if (ev.source !== window.parent) return;
  const m = ev.data;
  if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && m.id !== undefined) {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.error) p.reject(new Error(String(m.error.message || "error " + m.error.code)));
    else p.resolve(m.result);
    return;
  }
  if (typeof m.method !== "string") return;
  if (m.id !== undefined) {
    // Host requests: teardown and ping need only an empty answer.
    if (m.method === "ui/resource-teardown" || m.method === "ping") post({ jsonrpc: "2.0", id: m.id, result: {} });
    else post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found: " + m.method } });
    return;
  }
  const params = m.params || {};
  switch (m.method) {
    case "ui/notifications/tool-input":
      state.args = params.arguments && typeof params.arguments === "object" ? params.arguments : {};
      argsArrived();
      break;
    case "ui/notifications/tool-result":
      onToolResult(params).catch(showError);
      break;
    case "ui/notifications/tool-cancelled":
      setStatus("The tool call was cancelled" + (params.reason ? ": " + params.reason : "") + ".");
      break;
    case "ui/notifications/host-context-changed":
      applyHostContext(params);
      break;
  }
});

async function callTool(name, args) {
  const res = await request("tools/call", { name, arguments: args });
  if (!res || res.isError) {
    const text = (res && res.content ? res.content : []).filter((c) => c && c.type === "text").map((c) => c.text).join(" ");
    throw new Error(`${name}: ${text || "failed"}`);
  }
  return res;
}

// ---- state ---------------------------------------------------------------

const state = {
  host: {}, // ui/initialize result
  tool: "", // the tool whose result is shown
  args: null, // its arguments
  search: {}, // search_items arguments that find the same items
  pageSize: 50,
  items: [], // {id, feature, label, color, cloud, time, rings}
  byId: new Map(),
  legend: null, // map_items' legend: id -> label
  colorBy: "",
  aoi: null, // GeoJSON geometry of the area of interest
  cursor: "",
  resend: [],
  matched: null,
  skipped: 0,
  pages: 0,
  coverage: "",
  selected: "",
  view: null, // {cx, cy, s}: world centre and pixels per world unit
  k: 1, // cos(reference latitude): x = lon * k
};

// ---- colours, as map_items (tools/map_items.go, mapimage/colors.go) ------

const CLOUD_RAMP = [[0x08, 0x51, 0x9c], [0x31, 0x82, 0xbd], [0x6b, 0xae, 0xd6], [0xa6, 0xb5, 0xc2], [0x8c, 0x8c, 0x8c]];
const DATE_RAMP = [[0x44, 0x01, 0x54], [0x3b, 0x52, 0x8b], [0x21, 0x91, 0x8c], [0x5e, 0xc9, 0x62], [0xfd, 0xe7, 0x25]];
const UNKNOWN = "#b15928";
const hex = (c) => "#" + c.map((v) => v.toString(16).padStart(2, "0")).join("");

function rampAt(ramp, t) {
  if (!(t >= 0)) t = 0;
  t = Math.min(t, 1) * (ramp.length - 1);
  const i = Math.floor(t);
  if (i >= ramp.length - 1) return hex(ramp[ramp.length - 1]);
  const f = t - i;
  return hex(ramp[i].map((a, j) => Math.round(a + f * (ramp[i + 1][j] - a))));
}

function colorItems() {
  let colorBy = state.colorBy;
  if (!colorBy) colorBy = state.items.some((it) => it.cloud !== null) ? "cloud_cover" : "date";
  const times = [...new Set(state.items.map((it) => it.time).filter((t) => t !== null))].sort((a, b) => a - b);
  const rank = new Map(times.map((t, i) => [t, times.length > 1 ? i / (times.length - 1) : 0.5]));
  for (const it of state.items) {
    if (colorBy === "cloud_cover") it.color = it.cloud !== null ? rampAt(CLOUD_RAMP, it.cloud / 100) : UNKNOWN;
    else it.color = it.time !== null ? rampAt(DATE_RAMP, rank.get(it.time)) : UNKNOWN;
  }
  const ramp = colorBy === "cloud_cover" ? CLOUD_RAMP : DATE_RAMP;
  $("ramp-bar").style.background = `linear-gradient(to right, ${ramp.map(hex).join(", ")})`;
  $("ramp-title").textContent = colorBy === "cloud_cover" ? "cloud cover" : "date (by rank)";
  const day = (t) => new Date(t * 1000).toISOString().slice(0, 10);
  $("ramp-low").textContent = colorBy === "cloud_cover" ? "0%" : times.length ? day(times[0]) : "–";
  $("ramp-high").textContent = colorBy === "cloud_cover" ? "100%" : times.length ? day(times[times.length - 1]) : "–";
  $("ramp").hidden = state.items.length === 0;
  return colorBy;
}

// ---- geometry --------------------------------------------------------------

// rings returns a geometry's outer and inner rings as [[lon, lat], …] with
// longitudes made continuous (a footprint across the antimeridian stays
// whole), or null when it has no polygon.
function rings(g) {
  if (!g || typeof g !== "object") return null;
  let polys;
  if (g.type === "Polygon") polys = [g.coordinates];
  else if (g.type === "MultiPolygon") polys = g.coordinates;
  else return null;
  const out = [];
  for (const poly of Array.isArray(polys) ? polys : []) {
    for (const ring of Array.isArray(poly) ? poly : []) {
      const r = [];
      let prev = null;
      for (const p of Array.isArray(ring) ? ring : []) {
        let lon = Number(p && p[0]);
        const lat = Number(p && p[1]);
        if (!Number.isFinite(lon) || !Number.isFinite(lat)) continue;
        if (prev !== null) lon += 360 * Math.round((prev - lon) / 360);
        prev = lon;
        r.push([lon, lat]);
      }
      if (r.length >= 3) out.push(r);
    }
  }
  return out.length ? out : null;
}

const bboxGeometry = (b) => ({
  type: "Polygon",
  coordinates: [[[b[0], b[1]], [b[2] < b[0] ? b[2] + 360 : b[2], b[1]], [b[2] < b[0] ? b[2] + 360 : b[2], b[3]], [b[0], b[3]], [b[0], b[1]]]],
});

function ringsBounds(rs) {
  let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
  for (const r of rs) for (const [x, y] of r) {
    w = Math.min(w, x); e = Math.max(e, x); s = Math.min(s, y); n = Math.max(n, y);
  }
  return [w, s, e, n];
}

// centroid is the area centroid of the largest ring (where the number goes).
function centroid(rs) {
  let best = null, bestA = -1;
  for (const r of rs) {
    let a = 0, cx = 0, cy = 0;
    for (let i = 0, j = r.length - 1; i < r.length; j = i++) {
      const f = r[j][0] * r[i][1] - r[i][0] * r[j][1];
      a += f; cx += (r[j][0] + r[i][0]) * f; cy += (r[j][1] + r[i][1]) * f;
    }
    if (Math.abs(a) > bestA) {
      bestA = Math.abs(a);
      best = a !== 0 ? [cx / (3 * a), cy / (3 * a)] : r[0];
    }
  }
  return best;
}

// ---- drawing ----------------------------------------------------------------

const el = (name, attrs) => {
  const e = document.createElementNS(SVGNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
};
const size = () => ({ w: svg.clientWidth || 600, h: svg.clientHeight || 400 });

function toScreen(lon, lat) {
  const { w, h } = size();
  const v = state.view;
  return [(lon * state.k - v.cx) * v.s + w / 2, (-lat - v.cy) * v.s + h / 2];
}

function toLonLat(x, y) {
  const { w, h } = size();
  const v = state.view;
  return [((x - w / 2) / v.s + v.cx) / state.k, -((y - h / 2) / v.s + v.cy)];
}

// offsetFor is the multiple of 360° that brings lon nearest the view's centre.
const offsetFor = (lon) => 360 * Math.round((state.view.cx / state.k - lon) / 360);

function pathOf(rs, offset, close = true) {
  let d = "";
  for (const r of rs) {
    r.forEach(([lon, lat], i) => {
      const [x, y] = toScreen(lon + offset, lat);
      d += (i ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
    });
    if (close) d += "Z";
  }
  return d;
}

function flatPath(list, offset, close) {
  let d = "";
  for (const flat of list) {
    for (let i = 0; i < flat.length; i += 2) {
      const [x, y] = toScreen(flat[i] / 100 + offset, flat[i + 1] / 100);
      d += (i ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
    }
    if (close) d += "Z";
  }
  return d;
}

let drawRect = null;

function render() {
  if (!state.view) fit();
  svg.replaceChildren();
  const base = Math.round(state.view.cx / state.k / 360) * 360;
  for (const off of [base - 360, base, base + 360]) {
    svg.append(el("path", { class: "land", d: flatPath(basemap.land, off, true) }));
    svg.append(el("path", { class: "border", d: flatPath(basemap.borders, off, false) }));
  }
  const placeLayer = placesInView();
  // Cloudiest (or oldest) first, as in the PNG: the clearest (newest) on top.
  const order = [...state.items].sort((a, b) => drawRank(a) - drawRank(b));
  const labels = [];
  for (const it of order) {
    const off = offsetFor(it.bounds[0]);
    const p = el("path", { class: "fp" + (it.id === state.selected ? " sel" : ""), d: pathOf(it.rings, off), fill: it.color, stroke: it.color, "fill-rule": "evenodd" });
    p.dataset.id = it.id;
    p.dataset.label = it.label;
    p.dataset.color = it.color;
    svg.append(p);
    const [x, y] = toScreen(it.center[0] + off, it.center[1]);
    const t = el("text", { class: "lbl", x: x.toFixed(1), y: y.toFixed(1) });
    t.textContent = it.label;
    labels.push(t);
  }
  svg.append(...placeLayer);
  if (state.aoi) {
    const rs = rings(state.aoi);
    if (rs) svg.append(el("path", { class: "aoi", d: pathOf(rs, offsetFor(ringsBounds(rs)[0])) }));
  }
  svg.append(...labels);
  if (drawRect) {
    const [x0, y0, x1, y1] = drawRect;
    svg.append(el("rect", { class: "rect", x: Math.min(x0, x1), y: Math.min(y0, y1), width: Math.abs(x1 - x0), height: Math.abs(y1 - y0) }));
  }
}

// placesInView names up to 12 populated places in the frame, the most
// important first (the table's order), each clear of the names already
// placed and of the footprints' numbers.
function placesInView() {
  const { w, h } = size();
  const taken = state.items.map((it) => {
    const [x, y] = toScreen(it.center[0] + offsetFor(it.bounds[0]), it.center[1]);
    return [x - 10, y - 8, x + 10, y + 8];
  });
  const out = [];
  for (const [name, lon100, lat100] of basemap.places) {
    if (out.length >= 24) break;
    const lon = lon100 / 100;
    const [x, y] = toScreen(lon + offsetFor(lon), lat100 / 100);
    if (x < 4 || y < 4 || x > w - 4 || y > h - 4) continue;
    const box = [x - 3, y - 8, x + 8 + name.length * 6.2, y + 8];
    if (box[2] > w || taken.some((b) => box[0] < b[2] && box[2] > b[0] && box[1] < b[3] && box[3] > b[1])) continue;
    taken.push(box);
    const dot = el("circle", { class: "place", cx: x.toFixed(1), cy: y.toFixed(1), r: 2.5 });
    const t = el("text", { class: "place-name", x: (x + 5).toFixed(1), y: y.toFixed(1) });
    t.textContent = name;
    out.push(dot, t);
  }
  return out;
}

function drawRank(it) {
  if (state.colorByUsed === "cloud_cover") return it.cloud !== null ? -it.cloud : -1e9;
  return it.time !== null ? it.time : -1e12;
}

// fit frames the footprints and the area of interest (or the world).
function fit() {
  const all = state.items.flatMap((it) => it.rings);
  const aoi = state.aoi ? rings(state.aoi) : null;
  if (aoi) all.push(...aoi);
  let [w, s, e, n] = all.length ? ringsBounds(all) : [-180, -60, 180, 75];
  const lat0 = Math.max(-70, Math.min(70, (s + n) / 2));
  state.k = Math.cos((lat0 * Math.PI) / 180);
  const pad = Math.max((e - w) * 0.08, (n - s) * 0.08, 0.01);
  w -= pad; e += pad; s -= pad; n += pad;
  const { w: W, h: H } = size();
  const sx = W / ((e - w) * state.k), sy = H / (n - s);
  state.view = { cx: ((w + e) / 2) * state.k, cy: -(s + n) / 2, s: Math.min(sx, sy) };
}

// ---- legend, details, preview ----------------------------------------------

const pct = (v) => (v === null ? "" : `${Math.round(v * 10) / 10}% cloud`);

function renderLegend() {
  const ol = $("legend");
  ol.replaceChildren();
  for (const it of state.items) {
    const li = document.createElement("li");
    li.dataset.id = it.id;
    if (it.id === state.selected) li.className = "sel";
    const sw = document.createElement("span");
    sw.className = "sw";
    sw.style.background = it.color;
    const n = document.createElement("span");
    n.className = "n";
    n.textContent = it.label + ".";
    const body = document.createElement("span");
    const id = document.createElement("div");
    id.className = "id";
    id.textContent = it.id;
    id.title = it.id;
    const meta = document.createElement("div");
    meta.className = "meta";
    meta.textContent = [it.datetime.slice(0, 10), pct(it.cloud), it.collection].filter(Boolean).join(" · ");
    body.append(id, meta);
    li.append(sw, n, body);
    li.addEventListener("click", () => select(it.id));
    ol.append(li);
  }
}

const KEY_PROPS = ["datetime", "start_datetime", "end_datetime", "eo:cloud_cover", "platform", "constellation", "instruments", "gsd",
  "proj:code", "proj:epsg", "s2:mgrs_tile", "landsat:wrs_path", "landsat:wrs_row", "sat:relative_orbit", "sar:instrument_mode",
  "sar:polarizations", "view:off_nadir", "view:sun_elevation", "title"];

function show(value) {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  return s.length > 200 ? s.slice(0, 199) + "…" : s;
}

let previewSeq = 0;

async function select(id) {
  const it = state.byId.get(id);
  if (!it) return;
  state.selected = id;
  render();
  renderLegend();
  $("details").hidden = false;
  $("details-title").textContent = `${it.label}. ${it.id}`;
  const dl = $("props");
  dl.replaceChildren();
  const add = (k, v) => {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = show(v);
    dl.append(dt, dd);
  };
  if (it.collection) add("collection", it.collection);
  const props = it.feature.properties && typeof it.feature.properties === "object" ? it.feature.properties : {};
  for (const k of KEY_PROPS) if (props[k] !== undefined && props[k] !== null) add(k, props[k]);
  const assets = it.feature.assets && typeof it.feature.assets === "object" ? Object.keys(it.feature.assets) : [];
  if (assets.length) add("assets", assets.length + ": " + assets.join(", "));
  const img = $("preview");
  img.hidden = true;
  img.removeAttribute("src");
  $("preview-status").textContent = "Loading the preview…";
  const seq = ++previewSeq;
  try {
    const args = { collection_id: it.collection, item_id: it.id };
    if (state.search.catalog_url) args.catalog_url = state.search.catalog_url;
    const res = await callTool("get_item_preview", args);
    if (seq !== previewSeq) return;
    const image = (res.content || []).find((c) => c && c.type === "image");
    // Only a base64 image of a known type becomes a data: URL.
    if (image && /^image\/(png|jpeg|webp|gif)$/.test(image.mimeType) && /^[A-Za-z0-9+/]+=*$/.test(image.data)) {
      img.onerror = () => {
        img.hidden = true;
        $("preview-status").textContent = "The preview image could not be shown.";
      };
      img.src = `data:${image.mimeType};base64,${image.data}`;
      img.hidden = false;
      $("preview-status").textContent = "Preview";
    } else {
      // The tool's text is written for the model ("call map_items with …");
      // a person reads the short reason of its structured result.
      const reason = res.structuredContent && typeof res.structuredContent.reason === "string" ? res.structuredContent.reason : "";
      $("preview-status").textContent = reason
        ? "No preview image for this scene: " + reason + "."
        : res.isError
          ? "The preview could not be loaded from the catalog."
          : "This scene has no preview image.";
    }
  } catch (err) {
    if (seq === previewSeq) $("preview-status").textContent = "The preview could not be loaded (" + err.message + ").";
  }
}

$("close").addEventListener("click", () => {
  state.selected = "";
  $("details").hidden = true;
  render();
  renderLegend();
});

// ---- tool results --------------------------------------------------------

const AREA_KEYS = ["aoi", "bbox", "intersects", "aoi_geojson"];
const FILTER_KEYS = ["catalog_url", "collections", "ids", "datetime", "query", "filter", "filter_lang", "sortby"];

function parseMaybe(v) {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

// searchFrom turns the shown tool's arguments into search_items arguments
// that find the same items: aoi becomes bbox or intersects, max_cloud_cover
// a CQL2 condition (as map_items and check_coverage send it).
function searchFrom(args) {
  const s = {};
  for (const k of FILTER_KEYS) if (args[k] !== undefined && args[k] !== null && args[k] !== "") s[k] = args[k];
  for (const k of AREA_KEYS) {
    if (args[k] === undefined || args[k] === null || args[k] === "") continue;
    const v = parseMaybe(args[k]);
    if (Array.isArray(v) || typeof v === "string") s.bbox = v;
    else s.intersects = v;
    break;
  }
  const maxCloud = Number(args.max_cloud_cover);
  if (args.max_cloud_cover !== undefined && args.max_cloud_cover !== null && args.max_cloud_cover !== "" && Number.isFinite(maxCloud)) {
    const cond = { op: "<=", args: [{ property: "eo:cloud_cover" }, maxCloud] };
    const f = parseMaybe(s.filter);
    if (f === undefined) {
      s.filter = cond;
      s.filter_lang = "cql2-json";
    } else if (typeof f === "object") {
      s.filter = { op: "and", args: [f, cond] };
    } else {
      s.filter = `(${f}) AND "eo:cloud_cover" <= ${maxCloud}`;
    }
  }
  return s;
}

function areaOf(args) {
  for (const k of AREA_KEYS) {
    const v = parseMaybe(args[k]);
    if (Array.isArray(v) && v.length >= 4 && v.every((x) => Number.isFinite(Number(x)))) {
      const b = v.map(Number);
      return bboxGeometry(b.length === 6 ? [b[0], b[1], b[3], b[4]] : b);
    }
    if (v && typeof v === "object" && rings(v.type === "Feature" ? v.geometry : v)) return v.type === "Feature" ? v.geometry : v;
  }
  return null;
}

function toolOf(sc) {
  const named = state.host.hostContext && state.host.hostContext.toolInfo && state.host.hostContext.toolInfo.tool;
  if (named && typeof named.name === "string") return named.name;
  if (sc && "covered_percent" in sc) return "check_coverage";
  if (sc && "color_by" in sc) return "map_items";
  return "search_items";
}

// The spec sends tool-input before tool-result; a host that sends them the
// other way round gets 3 s for the arguments, which the search needs.
let argsArrived;
const argsReady = new Promise((resolve) => (argsArrived = resolve));

async function onToolResult(res) {
  if (state.args === null) await Promise.race([argsReady, new Promise((r) => setTimeout(r, 3000))]);
  const sc = res && res.structuredContent && typeof res.structuredContent === "object" ? res.structuredContent : {};
  if (res && res.isError) {
    const text = (res.content || []).filter((c) => c && c.type === "text").map((c) => c.text).join(" ");
    setStatus("The tool failed: " + (text || "no detail"));
    return;
  }
  const args = state.args || {};
  state.tool = toolOf(sc);
  state.search = searchFrom(args);
  state.aoi = areaOf(args);
  state.legend = null;
  state.colorBy = "";
  state.coverage = "";
  state.pageSize = Math.min(Math.max(Number(args.max_items) || (state.tool === "check_coverage" ? 100 : state.tool === "map_items" ? 50 : 10), 1), 100);
  if (state.tool === "map_items") {
    // The legend numbers the first page; without one (a host that passes
    // no structuredContent, or nothing was drawn) items are numbered in order.
    const legend = Array.isArray(sc.items) ? sc.items.filter((e) => e && e.id !== undefined && e.label !== undefined) : [];
    if (legend.length) state.legend = new Map(legend.map((e) => [String(e.id), String(e.label)]));
    state.colorBy = sc.color_by === "date" || sc.color_by === "cloud_cover" ? sc.color_by : "";
    if (!state.aoi && Array.isArray(sc.aoi) && sc.aoi.length === 4) state.aoi = bboxGeometry(sc.aoi);
  }
  if (state.tool === "check_coverage") {
    coverageSummary(sc);
    if (!state.aoi && Array.isArray(sc.aoi_bbox) && sc.aoi_bbox.length === 4) state.aoi = bboxGeometry(sc.aoi_bbox);
  }
  // search_items with detail full already carries the footprints; its
  // summaries are fetched by id (the page shown, also when it continued a
  // cursor), numbered in its order, and its cursor continues after them.
  const features = state.tool === "search_items" && Array.isArray(sc.features) && sc.features.length ? sc.features : null;
  const summaries = state.tool === "search_items" && !features && Array.isArray(sc.items) ? sc.items.filter((i) => i && typeof i.id === "string") : [];
  resetItems();
  if (features) {
    addPage(features, sc);
  } else if (summaries.length) {
    state.legend = new Map(summaries.map((i, n) => [i.id, String(n + 1)]));
    const byIds = { ids: summaries.map((i) => i.id), max_items: Math.min(summaries.length, 100), detail: "full" };
    const colls = [...new Set(summaries.map((i) => i.collection).filter((c) => typeof c === "string" && c))];
    if (colls.length) byIds.collections = colls;
    if (state.search.catalog_url) byIds.catalog_url = state.search.catalog_url;
    setStatus("Loading the footprints…");
    const res = await callTool("search_items", byIds);
    const got = res.structuredContent && Array.isArray(res.structuredContent.features) ? res.structuredContent.features : [];
    const order = new Map(summaries.map((i, n) => [i.id, n]));
    got.sort((x, y) => (order.get(String(x.id)) ?? 1e9) - (order.get(String(y.id)) ?? 1e9));
    addPage(got, sc);
  } else {
    await loadPage("");
  }
  fit();
  redraw();
  performance.mark("stac-mcp:footprints-drawn");
  document.body.dataset.ready = String(++readyCount);
}

let readyCount = 0;

function coverageSummary(sc) {
  const n = (v) => (typeof v === "number" ? Math.round(v * 10) / 10 : "?");
  state.coverage = `${n(sc.covered_percent)}% of the area covered by ${Number(sc.items) || 0} item(s)` +
    (typeof sc.cloud_weighted_percent === "number" ? `, ${n(sc.cloud_weighted_percent)}% expected clear` : "");
}

function resetItems() {
  state.items = [];
  state.byId = new Map();
  state.cursor = "";
  state.resend = [];
  state.matched = null;
  state.skipped = 0;
  state.pages = 0;
  state.selected = "";
  $("details").hidden = true;
}

async function loadPage(cursor) {
  const args = { ...state.search, max_items: state.pageSize, detail: "full" };
  if (cursor) {
    // A cursor carries the search; only the arguments it names are sent again.
    for (const k of Object.keys(args)) if (!["max_items", "detail"].includes(k) && !state.resend.includes(k)) delete args[k];
    if (state.search.catalog_url) args.catalog_url = state.search.catalog_url;
    args.cursor = cursor;
  }
  setStatus(cursor ? "Loading the next page…" : "Loading the footprints…");
  const res = await callTool("search_items", args);
  addPage(res.structuredContent && Array.isArray(res.structuredContent.features) ? res.structuredContent.features : [], res.structuredContent || {});
}

function addPage(features, sc) {
  state.pages++;
  state.cursor = typeof sc.cursor === "string" ? sc.cursor : "";
  state.resend = Array.isArray(sc.cursor_requires) ? sc.cursor_requires.map(String) : [];
  if (typeof sc.matched === "number") state.matched = sc.matched;
  const firstOfMap = state.legend && state.pages === 1;
  for (const f of features) {
    if (!f || typeof f !== "object") continue;
    const id = String(f.id);
    if (state.byId.has(id)) continue;
    if (firstOfMap && !state.legend.has(id)) continue; // not on map_items' map (e.g. no usable footprint)
    const rs = rings(f.geometry);
    if (!rs) {
      state.skipped++;
      continue;
    }
    const props = f.properties && typeof f.properties === "object" ? f.properties : {};
    const cc = Number(props["eo:cloud_cover"]);
    const dt = typeof props.datetime === "string" ? props.datetime : typeof props.start_datetime === "string" ? props.start_datetime : "";
    const t = dt ? Math.floor(Date.parse(dt) / 1000) : NaN;
    const label = firstOfMap ? state.legend.get(id) : String(state.items.length + 1);
    const it = {
      id, feature: f, rings: rs, bounds: ringsBounds(rs), center: centroid(rs), label,
      collection: typeof f.collection === "string" ? f.collection : "", datetime: dt,
      cloud: props["eo:cloud_cover"] !== undefined && Number.isFinite(cc) ? cc : null,
      time: Number.isFinite(t) ? t : null, color: UNKNOWN,
    };
    state.items.push(it);
    state.byId.set(id, it);
  }
}

function redraw() {
  state.colorByUsed = colorItems();
  render();
  renderLegend();
  const colls = [...new Set(state.items.map((it) => it.collection).filter(Boolean))];
  $("title").textContent = [`${state.items.length} item(s)` + (state.matched !== null && state.matched > state.items.length ? ` of ${state.matched}` : ""),
    colls.slice(0, 3).join(", ") + (colls.length > 3 ? ", …" : ""), "by " + state.colorByUsed.replace("_", " ")].filter(Boolean).join(" · ");
  $("next").disabled = !state.cursor;
  setStatus([state.coverage, `${state.items.length} footprint(s) drawn` + (state.pages > 1 ? ` from ${state.pages} pages` : ""),
    state.skipped ? `${state.skipped} without a footprint` : "", state.cursor ? "more match: Next page" : "",
    "drag to pan, wheel to zoom, Draw area to search another area"].filter(Boolean).join(" · "));
}

// ---- interaction -----------------------------------------------------------

const tip = $("tip");
let drag = null;
let drawing = false;

function itemAt(target) {
  return target && target.dataset && target.dataset.id ? state.byId.get(target.dataset.id) : null;
}

svg.addEventListener("pointermove", (ev) => {
  const r = svg.getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  if (drag && drag.mode === "draw") {
    drawRect = [drag.x, drag.y, x, y];
    render();
    return;
  }
  if (drag) {
    state.view.cx = drag.cx - (x - drag.x) / state.view.s;
    state.view.cy = drag.cy - (y - drag.y) / state.view.s;
    drag.moved = drag.moved || Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3;
    render();
    return;
  }
  const it = itemAt(ev.target);
  if (!it) {
    tip.hidden = true;
    return;
  }
  tip.textContent = [`${it.label}. ${it.id}`, it.collection, it.datetime, it.cloud !== null ? pct(it.cloud) : ""].filter(Boolean).join("\n");
  tip.style.left = Math.min(x + 12, r.width - 200) + "px";
  tip.style.top = y + 12 + "px";
  tip.hidden = false;
});

svg.addEventListener("pointerleave", () => (tip.hidden = true));

svg.addEventListener("pointerdown", (ev) => {
  if (!state.view) return;
  const r = svg.getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  drag = { x, y, cx: state.view.cx, cy: state.view.cy, moved: false, mode: drawing ? "draw" : "pan", target: ev.target };
  svg.setPointerCapture(ev.pointerId);
});

svg.addEventListener("pointerup", (ev) => {
  if (!drag) return;
  const d = drag;
  drag = null;
  if (d.mode === "draw") {
    const rect = drawRect;
    drawRect = null;
    render();
    if (rect && Math.abs(rect[2] - rect[0]) > 4 && Math.abs(rect[3] - rect[1]) > 4) {
      const [lon0, lat0] = toLonLat(Math.min(rect[0], rect[2]), Math.max(rect[1], rect[3]));
      const [lon1, lat1] = toLonLat(Math.max(rect[0], rect[2]), Math.min(rect[1], rect[3]));
      setDrawing(false);
      searchArea(lon0, lat0, lon1, lat1).catch(showError);
    }
    return;
  }
  if (!d.moved) {
    const it = itemAt(d.target);
    if (it) select(it.id);
  }
});

svg.addEventListener("wheel", (ev) => {
  if (!state.view) return;
  ev.preventDefault();
  const r = svg.getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  const f = Math.exp(-ev.deltaY * 0.0015);
  const { w, h } = size();
  const v = state.view;
  const wx = (x - w / 2) / v.s + v.cx, wy = (y - h / 2) / v.s + v.cy;
  v.s = Math.min(Math.max(v.s * f, 0.5), 2e6);
  v.cx = wx - (x - w / 2) / v.s;
  v.cy = wy - (y - h / 2) / v.s;
  render();
}, { passive: false });

function setDrawing(on) {
  drawing = on;
  $("draw").setAttribute("aria-pressed", String(on));
  svg.classList.toggle("drawing", on);
  if (on) setStatus("Drag a rectangle over the area to search.");
}

$("draw").addEventListener("click", () => setDrawing(!drawing));
$("fit").addEventListener("click", () => {
  fit();
  render();
});
$("next").addEventListener("click", async () => {
  if (!state.cursor) return;
  $("next").disabled = true;
  try {
    await loadPage(state.cursor);
    redraw();
    document.body.dataset.ready = String(++readyCount);
  } catch (err) {
    showError(err);
  }
});

const round = (v) => Math.round(v * 1e4) / 1e4;

// searchArea runs the shown search (or coverage check) again over a drawn
// rectangle, through the host, and tells the model what the user chose.
async function searchArea(w, s, e, n) {
  const norm = (lon) => ((((lon + 180) % 360) + 360) % 360) - 180;
  const bbox = [round(norm(w)), round(Math.max(s, -90)), round(norm(e)), round(Math.min(n, 90))];
  const args = state.args || {};
  const search = { ...state.search };
  delete search.intersects;
  search.bbox = bbox;
  state.search = search;
  state.aoi = bboxGeometry(bbox);
  state.legend = null;
  state.coverage = "";
  resetItems();
  if (state.tool === "check_coverage") {
    setStatus("Checking the coverage of the drawn area…");
    const cov = { ...args, aoi: bbox };
    for (const k of AREA_KEYS.slice(1)) delete cov[k];
    const res = await callTool("check_coverage", cov);
    coverageSummary(res.structuredContent || {});
  }
  await loadPage("");
  fit();
  redraw();
  document.body.dataset.ready = String(++readyCount);
  document.body.dataset.drawn = JSON.stringify(bbox);
  const caps = state.host.hostCapabilities || {};
  if (caps.updateModelContext) {
    const text = `In the stac-mcp map the user drew the area [${bbox.join(", ")}]` +
      (state.coverage ? `; ${state.coverage}` : "") + `; ${state.items.length} item(s) shown` +
      (state.items.length ? ": " + state.items.slice(0, 20).map((it) => it.id).join(", ") : "") + ".";
    request("ui/update-model-context", { content: [{ type: "text", text }] }).catch(() => {});
  }
}

// ---- host context, start --------------------------------------------------

function applyHostContext(ctx) {
  if (!ctx || typeof ctx !== "object") return;
  const vars = ctx.styles && ctx.styles.variables;
  if (vars && typeof vars === "object") {
    for (const [k, v] of Object.entries(vars)) if (k.startsWith("--") && typeof v === "string") document.documentElement.style.setProperty(k, v);
  }
  if (ctx.theme === "dark" || ctx.theme === "light") document.documentElement.style.colorScheme = ctx.theme;
  // A fixed container height is filled; a maximum below the default 560 px is kept.
  const dims = ctx.containerDimensions;
  if (dims && typeof dims === "object") {
    const h = Number(dims.height) > 0 ? Number(dims.height) : Number(dims.maxHeight) > 0 ? Math.min(Number(dims.maxHeight), 560) : 0;
    if (h >= 240) {
      $("app").style.height = h + "px";
      notify("ui/notifications/size-changed", { height: h });
    }
  }
}

function setStatus(text) {
  $("status").textContent = text;
}

function showError(err) {
  setStatus("Error: " + (err && err.message ? err.message : String(err)));
  $("next").disabled = !state.cursor;
}

new ResizeObserver(() => {
  if (state.view) render();
}).observe(svg);

async function start() {
  fit();
  render();
  performance.mark("stac-mcp:basemap-drawn");
  const res = await request("ui/initialize", {
    appInfo: { name: "stac-mcp-map", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: PROTOCOL_VERSION,
  });
  state.host = res || {};
  applyHostContext(state.host.hostContext);
  notify("ui/notifications/initialized", {});
  notify("ui/notifications/size-changed", { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight });
}

start().catch(showError);
