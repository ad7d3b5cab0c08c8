// Builds ../view.html, the map view (MCP App) that stac-mcp embeds: one
// self-contained HTML file, scripts and styles inlined, no network.
//
//   cd tools/internal/mapview/web && npm ci && node build.mjs
//
// Inputs, all pinned by package-lock.json: src/ (the view), esbuild (bundles
// and minifies it), world-atlas 2.0.2's countries-110m.json (Natural Earth
// 1:110m, the same file tools/internal/mapimage draws the PNG basemap from),
// converted here with topojson-client into land polygons and country
// borders, and that directory's Natural Earth populated places. The output is deterministic: .ci/run rebuilds it and fails when
// the committed file differs.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { feature, mesh } from "topojson-client";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "view.html");

// basemap converts the TopoJSON into flat integer arrays (hundredths of a
// degree): a ring or line is [lon0, lat0, lon1, lat1, …]. Longitudes are
// made continuous along each ring (the topology is spherical: Russia and
// Fiji cross the antimeridian), so a ring may reach past ±180; the view
// draws the world three times side by side. Antarctica's ring goes round
// the South Pole: it is closed along 90°S.
function basemap() {
  const topo = JSON.parse(readFileSync(join(here, "node_modules", "world-atlas", "countries-110m.json"), "utf8"));
  const q = (v) => Math.round(v * 100);
  const unwrap = (coords) => {
    const flat = [];
    let prev = null;
    let shift = 0;
    for (const [lon, lat] of coords) {
      if (prev !== null) {
        const d = lon + shift - prev;
        if (d > 180) shift -= 360;
        else if (d < -180) shift += 360;
      }
      prev = lon + shift;
      flat.push(q(prev), q(lat));
    }
    return flat;
  };
  const land = [];
  for (const f of [feature(topo, topo.objects.land)].flatMap((x) => (x.features ? x.features : [x]))) {
    const polys = f.geometry.type === "Polygon" ? [f.geometry.coordinates] : f.geometry.coordinates;
    for (const poly of polys) {
      for (const ring of poly) {
        const flat = unwrap(ring);
        const span = flat[flat.length - 2] - flat[0];
        if (Math.abs(span) > 18000) {
          // Goes round a pole (Antarctica): close it along the pole.
          const pole = flat[1] < 0 ? -9000 : 9000;
          flat.push(flat[flat.length - 2], pole, flat[0], pole);
        }
        land.push(flat);
      }
    }
  }
  const borders = mesh(topo, topo.objects.countries, (a, b) => a !== b).coordinates.map(unwrap);
  return { land, borders };
}

// places reads Natural Earth 1:110m populated places from the table the
// PNG maps use (../../mapimage/basemap/places-110m.tsv, converted from
// npm globe.gl 2.46.2; format and licence in that directory's README):
// [name, lon, lat] in hundredths of a degree, most important first.
function places() {
  const file = join(here, "..", "..", "mapimage", "basemap", "places-110m.tsv");
  const rows = readFileSync(file, "utf8").split("\n").filter((l) => l && !l.startsWith("#"));
  const head = rows.shift().split("\t");
  const col = (n) => {
    const i = head.indexOf(n);
    if (i < 0) throw new Error(`${file}: no column ${n}`);
    return i;
  };
  const [name, lon, lat] = [col("name"), col("lon"), col("lat")];
  return rows.map((r) => r.split("\t")).map((c) => [c[name], Math.round(Number(c[lon]) * 100), Math.round(Number(c[lat]) * 100)]);
}

const data = { ...basemap(), places: places() };
const result = await esbuild.build({
  entryPoints: [join(here, "src", "view.js")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  write: false,
  legalComments: "none",
  plugins: [
    {
      name: "basemap",
      setup(build) {
        build.onResolve({ filter: /^basemap:data$/ }, () => ({ path: "basemap", namespace: "basemap" }));
        build.onLoad({ filter: /.*/, namespace: "basemap" }, () => ({ contents: JSON.stringify(data), loader: "json" }));
      },
    },
  ],
});
// A script element ends at the first "</script": keep the bundle's strings from closing it.
const js = result.outputFiles[0].text.replace(/<\/(script)/gi, "<\\/$1").trim();
const css = (await esbuild.transform(readFileSync(join(here, "src", "view.css"), "utf8"), { loader: "css", minify: true })).code.trim();
const template = readFileSync(join(here, "src", "view.html"), "utf8");
const html = template.replace("/*STYLE*/", () => css).replace("/*SCRIPT*/", () => js);
writeFileSync(out, html);
console.log(`wrote ${out}: ${Buffer.byteLength(html)} bytes (script ${Buffer.byteLength(js)}, style ${Buffer.byteLength(css)}; basemap ${data.land.length} land rings, ${data.borders.length} border lines, ${data.places.length} places)`);
