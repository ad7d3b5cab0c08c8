package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
)

// The pixel tools on a synthetic Sentinel-2 L2A-like scene written by
// GDAL (tools/testdata/pixels/make.py says what is where): 10 m bands
// 64×64 px, 20 m swir and SCL, scale 0.0001 and offset −0.1 in
// raster:bands, nodata 0 along the north edge, a cloud and its shadow in
// SCL. The COGs are served by an httptest file server (Range requests) and
// the item by an in-memory catalog.

// pixelScene is the served scene: the catalog's URL, the aoi covering it
// and counters of the range requests the file server answered and the
// body bytes it sent for them.
type pixelScene struct {
	catalog         string
	files           string    // the file server's URL (B02.tif, …)
	aoi             any       // a GeoJSON polygon holding every pixel of the scene, inside the raster
	bbox            []float64 // the scene's lon/lat bbox
	requests, bytes *atomic.Int64
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

func newPixelScene(t *testing.T) pixelScene {
	t.Helper()
	var requests, bytes atomic.Int64
	files := http.FileServer(http.Dir(filepath.Join("testdata", "pixels")))
	asrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			requests.Add(1)
			w = countingWriter{w, &bytes}
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(asrv.Close)
	crs, err := geo.FromEPSG(32613)
	if err != nil {
		t.Fatal(err)
	}
	// The scene: x 478000..478640, y 4437360..4438000.
	var lons, lats []float64
	for _, c := range [][2]float64{{478000, 4437360}, {478640, 4437360}, {478640, 4438000}, {478000, 4438000}} {
		lon, lat, err := crs.ToLonLat(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		lons, lats = append(lons, lon), append(lats, lat)
	}
	bbox := []float64{minOf(lons), minOf(lats), maxOf(lons), maxOf(lats)}
	// The scene's square 1 m inside its edges: every pixel centre (5 m
	// inside) is in the area, and no part of the area lies outside the
	// raster (a bbox of the projected square would: its corners stick out).
	var ring [][2]float64
	for _, c := range [][2]float64{{478001, 4437361}, {478639, 4437361}, {478639, 4437999}, {478001, 4437999}, {478001, 4437361}} {
		lon, lat, err := crs.ToLonLat(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, [2]float64{lon, lat})
	}
	aoi := map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}}
	band := func(key, file, common string, res int) string {
		return fmt.Sprintf(`%q: {"href": %q, "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"],
			"eo:bands": [{"name": %q, "common_name": %q}],
			"raster:bands": [{"data_type": "uint16", "nodata": 0, "scale": 0.0001, "offset": -0.1, "spatial_resolution": %d}]}`,
			key, asrv.URL+"/"+file, file, common, res)
	}
	assets := strings.Join([]string{
		band("blue", "B02.tif", "blue", 10), band("green", "B03.tif", "green", 10), band("red", "B04.tif", "red", 10),
		band("nir", "B08.tif", "nir", 10), band("swir16", "B11.tif", "swir16", 20), band("swir22", "B12.tif", "swir22", 20),
		fmt.Sprintf(`"scl": {"href": %q, "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"]}`, asrv.URL+"/SCL.tif"),
		`"thumbnail": {"href": "` + asrv.URL + `/none.jpg", "type": "image/jpeg", "roles": ["thumbnail"]}`,
	}, ",\n")
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"s2-synthetic","description":"pixel cases","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-106,40,-105,41]]},"temporal":{"interval":[["2023-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	geom, _ := json.Marshal(map[string]any{"type": "Polygon", "coordinates": [][][]float64{{
		{bbox[0], bbox[1]}, {bbox[2], bbox[1]}, {bbox[2], bbox[3]}, {bbox[0], bbox[3]}, {bbox[0], bbox[1]}}}})
	for _, id := range []string{"S2-synthetic-1", "S2-synthetic-2"} {
		day := map[string]string{"S2-synthetic-1": "2023-06-14", "S2-synthetic-2": "2023-08-03"}[id]
		item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"collection":"s2-synthetic","geometry":%s,"bbox":%s,
			"properties":{"datetime":"%sT17:50:00Z","eo:cloud_cover":3.1},"links":[],"assets":{%s}}`, id, geom, string(mustJSON(t, bbox)), day, assets)
		if err := store.AddItem([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	// The Landsat C2 L2-like scene (30 m, nir08, QA_PIXEL).
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"lc-synthetic","description":"pixel cases","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-106,40,-105,41]]},"temporal":{"interval":[["2023-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	lcBand := func(key, file, common string) string {
		return fmt.Sprintf(`%q: {"href": %q, "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"],
			"eo:bands": [{"name": %q, "common_name": %q}],
			"raster:bands": [{"data_type": "uint16", "nodata": 0, "scale": 0.0000275, "offset": -0.2}]}`, key, asrv.URL+"/"+file, file, common)
	}
	lcAssets := strings.Join([]string{lcBand("red", "LC_RED.tif", "red"), lcBand("nir08", "LC_NIR08.tif", "nir08"),
		fmt.Sprintf(`"qa_pixel": {"href": %q, "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["cloud"]}`, asrv.URL+"/LC_QA_PIXEL.tif")}, ",")
	if err := store.AddItem([]byte(fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"LC-synthetic-1","collection":"lc-synthetic","geometry":%s,"bbox":%s,
		"properties":{"datetime":"2023-07-01T17:40:00Z"},"links":[],"assets":{%s}}`, geom, string(mustJSON(t, bbox)), lcAssets))); err != nil {
		t.Fatal(err)
	}
	return pixelScene{catalog: serveStore(t, store, stacserver.Options{}), files: asrv.URL, aoi: aoi, bbox: bbox, requests: &requests, bytes: &bytes}
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestAOIStatisticsOnASyntheticScene(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	res := callOK(t, cs, "aoi_statistics", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1",
		"aoi": sc.aoi, "bands": []string{"red", "nir", "swir16"}})
	out := structured[AOIStatisticsOut](t, res)
	text := resultText(res)
	t.Log(text)
	if out.Resolution.Level != 0 || out.Resolution.PixelMetres < 9.9 || out.Resolution.PixelMetres > 10.1 || out.Resolution.Width != 64 {
		t.Fatalf("resolution %+v", out.Resolution)
	}
	// 4096 pixels; rows 0-7 are nodata (512 px), the cloud and its
	// shadow cover 64 px each of the vegetation half.
	if out.Mask == nil || out.Mask.Considered != 4096 || out.Mask.Clear != 4096-128 {
		t.Fatalf("mask %+v", out.Mask)
	}
	if !strings.Contains(text, "SCL 9 cloud high probability: 64 px") || !strings.Contains(text, "SCL 3 cloud shadow: 64 px") {
		t.Fatalf("the text does not say which classes were masked:\n%s", text)
	}
	red := out.Stats[0]
	if red.Band != "red" || red.Pixels != 4096 || red.Valid != 4096-512-128 {
		t.Fatalf("red %+v", red)
	}
	// Vegetation 0.05 (1664 px) and soil 0.20 (1792 px).
	wantMean := (1664*0.05 + 1792*0.20) / 3456
	if !near(*red.Mean, wantMean, 1e-4) || !near(*red.Min, 0.05, 1e-6) || !near(*red.Max, 0.2, 1e-6) || !near(*red.P50, 0.2, 1e-6) {
		t.Fatalf("red %+v, want mean %v", red, wantMean)
	}
	// swir16 is 20 m: resampled by nearest neighbour to the 10 m grid, and
	// it has no nodata rows (its north edge is vegetation and soil).
	sw := out.Stats[2]
	if sw.Valid != 4096-128 || !strings.Contains(out.Bands[2].Resampled, "nearest neighbour from 20 m") {
		t.Fatalf("swir16 %+v, read %+v", sw, out.Bands[2])
	}
	if !strings.Contains(out.Bands[0].Calibration, "× 0.0001 − 0.1, nodata 0 (raster:bands)") {
		t.Fatalf("calibration %q", out.Bands[0].Calibration)
	}
	// The result counts what the file server sent: every range request
	// and every byte, header reads included (these 64 px files lie whole
	// in the first 16 KiB read, so only headers were read: the result said
	// 0 bytes before).
	if out.Requests == 0 || int64(out.Requests) != sc.requests.Load() || out.Bytes == 0 || int64(out.Bytes) != sc.bytes.Load() {
		t.Fatalf("result: %d range requests, %d bytes; the file server answered %d, sent %d", out.Requests, out.Bytes, sc.requests.Load(), sc.bytes.Load())
	}
	if want := fmt.Sprintf("%d range request(s), %d bytes (header reads included)", out.Requests, out.Bytes); !strings.Contains(text, want) {
		t.Fatalf("the text does not say %q:\n%s", want, text)
	}
}

func TestAOIStatisticsReadsTheOverviewThatFitsTheBudget(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog, Limits: Limits{ReadPixels: 1024}})
	res := callOK(t, cs, "aoi_statistics", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "bands": "nir"})
	out := structured[AOIStatisticsOut](t, res)
	if out.Resolution.Level != 1 || out.Resolution.Width != 32 || !near(out.Resolution.PixelMetres, 20, 0.1) || out.Resolution.Budget != 1024 {
		t.Fatalf("resolution %+v", out.Resolution)
	}
	if !strings.Contains(resultText(res), "Read at 20") {
		t.Fatalf("the text does not say the resolution:\n%s", resultText(res))
	}
}

func TestRenderAOIDrawsIndicesAndComposites(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	dir := os.Getenv("PIXEL_PREVIEW_DIR")
	for _, view := range []string{"ndvi", "ndwi", "ndbi", "nbr", "evi", "savi", "true-color", "false-color", "swir"} {
		res := callOK(t, cs, "render_aoi", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "view": view})
		out := structured[RenderAOIOut](t, res)
		img := imageOf(t, res)
		if out.Image == nil || out.Image.Bytes != len(img.Data) || img.MIMEType != "image/png" {
			t.Fatalf("%s: image %+v, %d bytes sent", view, out.Image, len(img.Data))
		}
		if dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "render-"+view+".png"), img.Data, 0o644)
		}
		if view == "ndvi" {
			t.Log(resultText(res))
			st := out.Stats
			want := (1664*0.8 + 1792*0.2) / 3456
			if st == nil || st.Valid != 3456 || !near(*st.Mean, want, 1e-4) || !near(*st.P2, 0.2, 1e-6) || !near(*st.P98, 0.8, 1e-6) {
				t.Fatalf("ndvi stats %+v, want mean %v", st, want)
			}
		}
		if strings.Contains(view, "-") || view == "swir" {
			if len(out.Stretch) != 3 || out.Stats != nil {
				t.Fatalf("%s: %+v", view, out)
			}
		}
	}
}

func TestPixelToolsSayWhatIsMissing(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	msg := callErr(t, cs, "aoi_statistics", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "bands": "rededge"})
	if !strings.Contains(msg, "has no band rededge") || !strings.Contains(msg, "blue, green, nir, red, swir16, swir22") {
		t.Fatalf("%s", msg)
	}
	msg = callErr(t, cs, "render_aoi", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": []float64{10, 10, 10.1, 10.1}})
	if !strings.Contains(msg, "does not overlap item S2-synthetic-1") {
		t.Fatalf("%s", msg)
	}
	msg = callErr(t, cs, "render_aoi", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "view": "ndxi"})
	if !strings.Contains(msg, "ndvi") {
		t.Fatalf("%s", msg)
	}
	msg = callErr(t, cs, "render_aoi", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1"})
	if !strings.Contains(msg, "aoi") {
		t.Fatalf("%s", msg)
	}
}

// lonLatBBox is the lon/lat bbox of a UTM 13N rectangle.
func lonLatBBox(t *testing.T, x0, y0, x1, y1 float64) []float64 {
	t.Helper()
	crs, err := geo.FromEPSG(32613)
	if err != nil {
		t.Fatal(err)
	}
	var lons, lats []float64
	for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}} {
		lon, lat, err := crs.ToLonLat(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		lons, lats = append(lons, lon), append(lats, lat)
	}
	return []float64{minOf(lons), minOf(lats), maxOf(lons), maxOf(lats)}
}

func TestIndexTimeSeriesKeepsClearItemsAndSaysWhyOthersWereSkipped(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	res := callOK(t, cs, "index_time_series", map[string]any{"collections": "s2-synthetic", "aoi": sc.aoi, "index": "ndvi"})
	out := structured[IndexTimeSeriesOut](t, res)
	t.Log(resultText(res))
	if len(out.Rows) != 2 || strings.Join(out.Rows[0].Items, ",") != "S2-synthetic-1" || strings.Join(out.Rows[1].Items, ",") != "S2-synthetic-2" || len(out.Skipped) != 0 {
		t.Fatalf("rows %+v skipped %+v", out.Rows, out.Skipped)
	}
	want := (1664*0.8 + 1792*0.2) / 3456
	if !near(out.Rows[0].Mean, want, 1e-4) || out.Image == nil {
		t.Fatalf("row %+v, image %+v", out.Rows[0], out.Image)
	}
	if dir := os.Getenv("PIXEL_PREVIEW_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "series-ndvi.png"), imageOf(t, res).Data, 0o644)
	}
	// An area inside the cloud and its shadow (10 m columns 8–23, rows
	// 16–23): nothing clear, both items skipped, with the classes.
	cloud := lonLatBBox(t, 478085, 4437765, 478235, 4437835)
	res = callOK(t, cs, "index_time_series", map[string]any{"collections": "s2-synthetic", "aoi": cloud, "band": "red"})
	out = structured[IndexTimeSeriesOut](t, res)
	text := resultText(res)
	if len(out.Rows) != 0 || len(out.Skipped) != 2 || out.Image != nil {
		t.Fatalf("rows %+v skipped %+v", out.Rows, out.Skipped)
	}
	if !strings.Contains(out.Skipped[0].Reason, "only 0% of the aoi is clear") || !strings.Contains(out.Skipped[0].Reason, "SCL 9 cloud high probability") ||
		!strings.Contains(text, "Skipped 2023-06-14 (s2-synthetic): only 0%") {
		t.Fatalf("%s", text)
	}
	msg := callErr(t, cs, "index_time_series", map[string]any{"collections": "s2-synthetic", "aoi": sc.aoi, "index": "ndvi", "band": "red"})
	if !strings.Contains(msg, "one of index or band") {
		t.Fatalf("%s", msg)
	}
}

func TestRenderAOIOnALandsatSceneMasksQAPixelBits(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	b := lonLatBBox(t, 478000, 4437280, 478720, 4438000)
	aoi := []float64{b[0] - 0.001, b[1] - 0.001, b[2] + 0.001, b[3] + 0.001}
	res := callOK(t, cs, "render_aoi", map[string]any{"collection_id": "lc-synthetic", "item_id": "LC-synthetic-1", "aoi": aoi, "view": "ndvi"})
	out := structured[RenderAOIOut](t, res)
	text := resultText(res)
	t.Log(text)
	// 24×24 px of 30 m: row 0 fill (24 px), a cloud and its shadow (16 px
	// each); nir is read from the nir08 band (Landsat has no "nir").
	if out.Mask == nil || out.Mask.Asset != "qa_pixel" || out.Mask.Considered != 576 || out.Mask.Clear != 576-24-32 {
		t.Fatalf("mask %+v", out.Mask)
	}
	for _, want := range []string{"QA_PIXEL bit 0 fill: 24 px", "QA_PIXEL bit 3 cloud: 16 px", "QA_PIXEL bit 4 cloud shadow: 16 px",
		"Band nir08: asset nir08, × 0.0000275 − 0.2, nodata 0 (raster:bands)", "Read at 30 m pixels"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q", want)
		}
	}
	want := (244*0.8 + 276*0.2) / 520
	if st := out.Stats; st == nil || st.Valid != 520 || !near(*st.Mean, want, 1e-4) {
		t.Fatalf("stats %+v, want mean %v", out.Stats, want)
	}
}

// A local catalog.json's assets are read from disk (its relative hrefs are
// served as absolute paths), only inside the catalog's directory.
func TestPixelToolsReadALocalCatalogsFilesOnly(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	for _, name := range []string{"B04.tif", "B08.tif"} {
		data, err := os.ReadFile(filepath.Join("testdata", "pixels", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{filepath.Join(dir, "c", "items"), outside} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	b := lonLatBBox(t, 478000, 4437360, 478640, 4438000)
	geom := fmt.Sprintf(`{"type":"Polygon","coordinates":[[[%[1]v,%[2]v],[%[3]v,%[2]v],[%[3]v,%[4]v],[%[1]v,%[4]v],[%[1]v,%[2]v]]]}`, b[0], b[1], b[2], b[3])
	band := func(key, href, common string) string {
		return fmt.Sprintf(`%q: {"href": %q, "type": "image/tiff; application=geotiff", "eo:bands": [{"common_name": %q}],
			"raster:bands": [{"nodata": 0, "scale": 0.0001, "offset": -0.1}]}`, key, href, common)
	}
	item := func(id, red string) string {
		return fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"collection":"c","geometry":%s,"bbox":%s,
			"properties":{"datetime":"2024-06-01T00:00:00Z"},"links":[],"assets":{%s,%s}}`, id, geom, string(mustJSON(t, b)),
			band("red", red, "red"), band("nir", "./B08.tif", "nir"))
	}
	for name, body := range map[string]string{
		"catalog.json": `{"type":"Catalog","stac_version":"1.0.0","id":"local","description":"d","links":[{"rel":"child","href":"./c/collection.json"}]}`,
		"c/collection.json": `{"type":"Collection","stac_version":"1.0.0","id":"c","description":"d","license":"proprietary",
			"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},
			"links":[{"rel":"item","href":"./items/a.json"},{"rel":"item","href":"./items/b.json"}]}`,
		"c/items/a.json": item("a", "./B04.tif"),
		"c/items/b.json": item("b", filepath.Join(outside, "B04.tif")),
	} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: filepath.Join(dir, "catalog.json")})
	aoi := []float64{b[0] - 0.001, b[1] - 0.001, b[2] + 0.001, b[3] + 0.001}
	out := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", map[string]any{"collection_id": "c", "item_id": "a", "aoi": aoi, "view": "ndvi"}))
	if st := out.Stats; st == nil || st.Valid != 4096-512 {
		t.Fatalf("stats %+v", out.Stats)
	}
	msg := callErr(t, cs, "render_aoi", map[string]any{"collection_id": "c", "item_id": "b", "aoi": aoi, "view": "ndvi"})
	if !strings.Contains(msg, "outside the local catalog's directory") {
		t.Fatalf("%s", msg)
	}
}

// A band named twice, or by common name and by asset key, is measured
// once and the result says so: each band read reserves pixels from the
// process budget, so a list of repeats must not turn into a refusal.
func TestAOIStatisticsMeasuresARepeatedBandOnce(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	bands := []string{"red"}
	for range 200 {
		bands = append(bands, "red")
	}
	res := callOK(t, cs, "aoi_statistics", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1",
		"aoi": sc.aoi, "bands": bands})
	out := structured[AOIStatisticsOut](t, res)
	if len(out.Stats) != 1 || out.Stats[0].Band != "red" {
		t.Fatalf("stats for %d bands, want red once", len(out.Stats))
	}
	if text := resultText(res); !strings.Contains(text, "bands named again were measured once: red") {
		t.Fatalf("the text does not say the repeats were dropped:\n%s", text)
	}
}

// A static catalog served over HTTP (a catalog.json with child links, no
// API) is not crawled: the pixel tools say so instead of reporting a
// missing collection.
func TestPixelToolsSayAStaticCatalogOverHTTPIsNotRead(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "stacclient", "stacserver", "demo", "catalog"))))
	t.Cleanup(srv.Close)
	cs := newTestSession(t, testSessionOptions{CatalogURL: srv.URL + "/catalog.json"})
	msg := callErr(t, cs, "aoi_statistics", map[string]any{"collection_id": "sentinel-2-l2a-synthetic",
		"item_id": "S2A_13TDE_20230803_0_L2A_synthetic", "aoi": []float64{-105.25, 40.05, -105.21, 40.085}})
	if !strings.Contains(msg, "is a static STAC catalog") || !strings.Contains(msg, "path of its catalog.json") || strings.Contains(msg, "not found") {
		t.Fatalf("%s", msg)
	}
}

// A mis-tagged Earth Search item (flag false, baseline 04.00, numbers
// already harmonised): render_aoi's NDVI is right, and its text says in
// one line which reading was used, why, and what the other gives.
func TestRenderAOISaysWhenThePixelsOverruleTheMetadata(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("internal", "pixel", "testdata")
	files := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dir, "conventions"))))
	t.Cleanup(files.Close)
	raw, err := os.ReadFile(filepath.Join(dir, "items", "earth-search-S2A_13TDE_20231008_0_L2A.json"))
	if err != nil {
		t.Fatal(err)
	}
	var item map[string]any
	if err := json.Unmarshal(raw, &item); err != nil {
		t.Fatal(err)
	}
	props := item["properties"].(map[string]any)
	props["earthsearch:boa_offset_applied"], props["s2:processing_baseline"] = false, "04.00"
	assets := item["assets"].(map[string]any)
	for key, file := range map[string]string{"blue": "H_B02.tif", "green": "H_B03.tif", "red": "H_B04.tif", "nir": "H_B08.tif", "scl": "SCL.tif"} {
		assets[key].(map[string]any)["href"] = files.URL + "/" + file
	}
	item["links"] = []any{}
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"sentinel-2-l2a","description":"d","license":"CC-BY-SA-3.0-IGO",
		"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[["2015-06-27T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := store.AddItem(mustJSON(t, item)); err != nil {
		t.Fatal(err)
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: serveStore(t, store, stacserver.Options{})})
	crs, _ := geo.FromEPSG(32613)
	var ring [][2]float64
	for _, c := range [][2]float64{{478001, 4437681}, {478319, 4437681}, {478319, 4437999}, {478001, 4437999}, {478001, 4437681}} {
		lon, lat, _ := crs.ToLonLat(c[0], c[1])
		ring = append(ring, [2]float64{lon, lat})
	}
	res := callOK(t, cs, "render_aoi", map[string]any{"collection_id": "sentinel-2-l2a", "item_id": "S2A_13TDE_20231008_0_L2A",
		"aoi": map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}}, "view": "ndvi"})
	out := structured[RenderAOIOut](t, res)
	text := resultText(res)
	if out.Stats == nil || !near(*out.Stats.Mean, 0.2561, 1e-3) || out.Calibration == nil || out.Calibration.Status != "overridden" {
		t.Fatalf("stats %+v calibration %+v\n%s", out.Stats, out.Calibration, text)
	}
	for _, want := range []string{"Calibration: the pixels contradict the metadata (earthsearch:boa_offset_applied false and s2:processing_baseline 04.00)",
		"so reflectance = DN × 0.0001 was used", "reflectance = DN × 0.0001 − 0.1 would put", "give NDVI mean 1.05"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the text does not say %q:\n%s", want, text)
		}
	}
}

func TestPixelErrorsSayWhichBoundARead(t *testing.T) {
	item := &stacclient.Item{ID: "x"}
	for limit, want := range map[string]string{
		"RequestBudget":         "range requests, more than the 3 one read may send",
		"MaxBlocks":             "tiles or strips, more than the 3 one read may decode",
		"MaxHeaderDecodedBytes": "is not a Cloud-Optimized GeoTIFF the pixel tools can use",
	} {
		err := pixelError("aoi_statistics", item, &pixel.Error{Kind: pixel.ErrRead, Item: "x", Asset: "red", Band: "red", Err: &cog.LimitError{Limit: limit, Need: 9, Max: 3}})
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "asset red of item x was not read") {
			t.Errorf("%s: %v", limit, err)
		}
	}
}
