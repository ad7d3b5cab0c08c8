package tools

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind pixels over a period, on the demo's series of two adjacent tiles:
// the file GDAL reads is the mosaic or composite aoi_statistics and
// render_aoi measure for the same selection, and says what it is made of.

// seriesAOI spans both tiles of the demo series (the README's example).
var seriesAOI = []float64{-105.235, 40.0806, -105.2166, 40.0868}

const seriesCollection = "sentinel-2-l2a-synthetic-series"

func TestExportPixelsOfAPeriod(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cs := newTestSession(t, testSessionOptions{Export: ExportSettings{Dir: dir}})
	sel := func(datetime string, bands any) map[string]any {
		return map[string]any{"collections": seriesCollection, "datetime": datetime, "aoi": seriesAOI, "bands": bands}
	}
	// checkFile checks what every period export shares: a COG on the
	// period's grid, NaN nodata, float32, the items and method named.
	checkFile := func(t *testing.T, res *mcp.CallToolResult, descriptions []string, mode string) (ExportOut, gdalExport) {
		t.Helper()
		out, text := structured[ExportOut](t, res), resultText(res)
		p := out.Pixels
		if p == nil || p.Period == nil || p.Period.Mode != mode || p.ItemID != "" || len(p.Items) == 0 || p.DataType != "float32" || p.NoData != "NaN" {
			t.Fatalf("pixels %+v", p)
		}
		if sum, n := fileSHA(t, out.Path); sum != out.SHA256 || n != out.Bytes {
			t.Errorf("the file is %d bytes, sha256 %s; the result says %d, %s", n, sum, out.Bytes, out.SHA256)
		}
		info := gdalInfoJSON(t, out.Path)
		if info.Metadata["IMAGE_STRUCTURE"]["LAYOUT"] != "COG" || info.STAC.EPSG != 32613 || p.EPSG != 32613 || p.Period.Grid.EPSG != 32613 {
			t.Errorf("layout %v, EPSG %d (result %d)", info.Metadata["IMAGE_STRUCTURE"], info.STAC.EPSG, p.EPSG)
		}
		if info.Size[0] != p.Period.Grid.Width || info.Size[1] != p.Period.Grid.Height || p.Width != info.Size[0] || p.Height != info.Size[1] {
			t.Errorf("size %v, the period's grid %+v", info.Size, p.Period.Grid)
		}
		for i, v := range p.Period.Grid.GeoTransform {
			if !near(info.GeoTransform[i], v, 1e-6) || !near(p.GeoTransform[i], v, 1e-6) {
				t.Fatalf("geotransform: GDAL %v, result %v, the period's grid %v", info.GeoTransform, p.GeoTransform, p.Period.Grid.GeoTransform)
			}
		}
		if len(info.Bands) != len(descriptions) {
			t.Fatalf("%d bands, want %v", len(info.Bands), descriptions)
		}
		for k, b := range info.Bands {
			if nd, _ := b.NoData.(string); nd != "NaN" || b.Description != descriptions[k] || b.Type != "Float32" {
				t.Errorf("band %d: %+v", k+1, b)
			}
		}
		md := info.Metadata[""]
		if md["STAC_ITEM_IDS"] != strings.Join(p.Items, " ") || md["STAC_COLLECTION"] != seriesCollection || md["DATETIME"] != p.Period.Datetime ||
			!strings.HasPrefix(md["METHOD"], map[string]string{"mosaic": "mosaic: ", "composite": "median composite: "}[mode]) ||
			!strings.Contains(md["CLOUD_MASK"], "scl") || strings.Count(md["ACQUISITIONS"], ": read, clear_share ") != len(p.Period.Dates) {
			t.Errorf("metadata %v", md)
		}
		// The text names every item (its dates' lines); the file's
		// description names them, or counts them past a few.
		for _, id := range p.Items {
			if !strings.Contains(text, id) || (len(p.Items) <= exportItemsShown && !strings.Contains(out.What, id)) {
				t.Errorf("item %s not named: %s\n%s", id, out.What, text)
			}
		}
		if len(p.Items) > exportItemsShown && !strings.Contains(out.What, fmt.Sprintf("%d items, named in", len(p.Items))) {
			t.Errorf("what %s", out.What)
		}
		validateCOG(t, out.Path)
		return out, info
	}

	t.Run("a day's mosaic of two tiles, bands", func(t *testing.T) {
		res := callOK(t, cs, "export", withKind(sel("2023-07-04", []string{"red", "nir"}), "pixels"))
		text := resultText(res)
		t.Log(text)
		out, info := checkFile(t, res, []string{"red", "nir"}, "mosaic")
		p := out.Pixels
		want := []string{"S2A_13TDE_20230704_0_L2A_synthetic_e", "S2A_13TDE_20230704_0_L2A_synthetic_w"}
		if strings.Join(p.Items, ",") != strings.Join(want, ",") {
			t.Errorf("items %v, want the day's two tiles %v", p.Items, want)
		}
		if cal := info.Bands[0].Metadata[""]["CALIBRATION"]; !strings.Contains(cal, "× 0.0001") {
			t.Errorf("band calibration %q", cal)
		}
		for _, s := range append([]string{out.Path, "read as a mosaic", "2023-07-04"}, want...) {
			if !strings.Contains(text, s) {
				t.Errorf("the text lacks %q", s)
			}
		}
		// The cloud over the east tile is masked: fewer valid pixels than
		// the aoi holds, and the same as aoi_statistics counts.
		stats := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", sel("2023-07-04", []string{"red", "nir"})))
		if p.Stats[0].Valid >= p.Stats[0].Pixels || stats.Period == nil || strings.Join(stats.Items, ",") != strings.Join(p.Items, ",") {
			t.Errorf("export %+v; aoi_statistics items %v", p.Stats[0], stats.Items)
		}
		checkExportedStats(t, info, p.Stats, stats.Stats)
	})

	t.Run("a day's mosaic, ndvi", func(t *testing.T) {
		out, info := checkFile(t, callOK(t, cs, "export", withKind(sel("2023-06-09", "ndvi"), "pixels")), []string{"ndvi"}, "mosaic")
		render := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", map[string]any{"collections": seriesCollection, "datetime": "2023-06-09",
			"aoi": seriesAOI, "view": "ndvi"}))
		checkExportedStats(t, info, out.Pixels.Stats, []BandStats{*render.Stats})
		if info.Metadata[""]["INDEX_FORMULA"] == "" || !strings.Contains(info.Bands[0].Metadata[""]["BANDS_READ"], "nir") {
			t.Errorf("metadata %v / %v", info.Metadata[""], info.Bands[0].Metadata[""])
		}
	})

	t.Run("an interval's median composite", func(t *testing.T) {
		res := callOK(t, cs, "export", withKind(sel("2023-06/2023-09", "ndvi"), "pixels"))
		text := resultText(res)
		t.Log(text)
		out, info := checkFile(t, res, []string{"ndvi"}, "composite")
		p := out.Pixels
		render := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", map[string]any{"collections": seriesCollection, "datetime": "2023-06/2023-09",
			"aoi": seriesAOI, "view": "ndvi"}))
		checkExportedStats(t, info, p.Stats, []BandStats{*render.Stats})
		o, ro := p.Period.Observations, render.Period.Observations
		if o == nil || ro == nil || *o != *ro || p.Period.Method != "median" || len(p.Period.Dates) != 4 {
			t.Errorf("period %+v, render's %+v", p.Period, render.Period)
		}
		if md := info.Metadata[""]["OBSERVATIONS_PER_PIXEL"]; !strings.Contains(md, "min ") {
			t.Errorf("observations %q", md)
		}
		if !strings.Contains(text, "read as a composite") || !strings.Contains(text, "per-pixel median") {
			t.Errorf("the text does not say it is a median composite")
		}
		// Bands of a composite: aoi_statistics measures the same medians.
		out, info = checkFile(t, callOK(t, cs, "export", withKind(sel("2023-06/2023-09", []string{"red", "nir"}), "pixels")), []string{"red", "nir"}, "composite")
		stats := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", sel("2023-06/2023-09", []string{"red", "nir"})))
		checkExportedStats(t, info, out.Pixels.Stats, stats.Stats)
	})
}

// The forms kind pixels refuses, each naming what it accepts, writing
// nothing.
func TestExportPixelsRefusesAnUnclearSelection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cs := newTestSession(t, testSessionOptions{Export: ExportSettings{Dir: dir}})
	base := map[string]any{"kind": "pixels", "collections": seriesCollection, "aoi": seriesAOI, "bands": "ndvi"}
	with := func(kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	for name, c := range map[string]struct {
		args map[string]any
		want []string
	}{
		"an item and a datetime": {with("item_id", "S2A_13TDE_20230704_0_L2A_synthetic_w", "datetime", "2023-07-04"),
			[]string{"give one or the other", "item_id with collections", "a day: that day's mosaic", "median composite"}},
		"neither":               {with(), []string{"no item_id and no datetime", "item_id with collections", "collections with datetime"}},
		"a datetime of nothing": {with("datetime", "1999-06-01"), []string{"no item over the aoi in 1999-06-01", "Widen datetime", "a day reads its mosaic"}},
		"a malformed datetime":  {with("datetime", "June"), []string{"datetime"}},
		"an item of two collections": {with("item_id", "S2A_13TDE_20230704_0_L2A_synthetic_w", "collections", []string{seriesCollection, "sentinel-2-l2a"}),
			[]string{"the item's one collection"}},
	} {
		msg := callErr(t, cs, "export", c.args)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", name, msg, w)
			}
		}
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("the export folder holds %v", names)
	}
}

// A period's export gives back the read's charge once the file's copy of
// its values is made, and everything when the call ends.
func TestExportOfAPeriodIsChargedToTheDecodeBudget(t *testing.T) {
	t.Parallel()
	d := newTestDeps(t, testSessionOptions{})
	cs := connect(t, newServer(d, "test", Tools(d)))
	var held atomic.Int64
	d.exports.wrap = func(w io.Writer) io.Writer {
		held.Store(d.work().pixelBudget().InUse())
		return w
	}
	out := structured[ExportOut](t, callOK(t, cs, "export", map[string]any{"kind": "pixels", "collections": seriesCollection, "datetime": "2023-06/2023-09",
		"aoi": seriesAOI, "bands": []string{"red", "nir"}}))
	// The file's values and overviews (8/3 units a value) and float32
	// tiles (4/3), and not the composite's own values any more.
	n := int64(out.Pixels.Width * out.Pixels.Height * 2)
	if want := n * 4; held.Load() < want || held.Load() > want+1 {
		t.Errorf("the budget held %d units while the file was written, want %d", held.Load(), want)
	}
	if n := d.work().pixelBudget().InUse(); n != 0 {
		t.Errorf("%d units still held after the call", n)
	}
}
