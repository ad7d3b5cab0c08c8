package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// The export tool's files are read back with GDAL (gdalinfo, ogrinfo and
// GDAL's COG validator) and standard readers (encoding/csv), and compared
// with what the analysis tools report for the same selection.

// gdalExport is the part of gdalinfo -json -stats the tests read.
type gdalExport struct {
	Size         []int     `json:"size"`
	GeoTransform []float64 `json:"geoTransform"`
	STAC         struct {
		EPSG int `json:"proj:epsg"`
	} `json:"stac"`
	Metadata map[string]map[string]string `json:"metadata"`
	Bands    []struct {
		Type        string                       `json:"type"`
		Description string                       `json:"description"`
		NoData      any                          `json:"noDataValue"`
		Metadata    map[string]map[string]string `json:"metadata"`
	} `json:"bands"`
}

func gdalInfoJSON(t *testing.T, path string) gdalExport {
	t.Helper()
	gdaltest.Need(t, "gdalinfo")
	// Statistics go to a copy's .aux.xml, never beside the export.
	cp := filepath.Join(t.TempDir(), filepath.Base(path))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gdalinfo", "-json", "-stats", "-mdd", "all", cp).Output()
	if err != nil {
		t.Fatalf("gdalinfo %s: %v", path, err)
	}
	var info gdalExport
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func gdalStat(t *testing.T, md map[string]string, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(md["STATISTICS_"+name], 64)
	if err != nil {
		t.Fatalf("STATISTICS_%s: %v (%v)", name, err, md)
	}
	return v
}

func validateCOG(t *testing.T, path string) {
	t.Helper()
	python, script := gdaltest.COGValidator(t)
	out, err := exec.Command(python, script, "--full-check=yes", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is a valid cloud optimized GeoTIFF") {
		t.Errorf("validate_cloud_optimized_geotiff.py: %v\n%s", err, out)
	}
}

func fileSHA(t *testing.T, path string) (string, int64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), int64(len(raw))
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func resourceLinks(res *mcp.CallToolResult) []*mcp.ResourceLink {
	var out []*mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			out = append(out, l)
		}
	}
	return out
}

// checkExportedStats compares GDAL's statistics of each band of the file
// with the tool's own and with another tool's for the same selection.
func checkExportedStats(t *testing.T, info gdalExport, own, other []BandStats) {
	t.Helper()
	if len(info.Bands) != len(own) || len(own) != len(other) {
		t.Fatalf("%d bands in the file, %d stats, %d from the other tool", len(info.Bands), len(own), len(other))
	}
	for k, b := range info.Bands {
		md := b.Metadata[""]
		got := map[string]float64{"MINIMUM": gdalStat(t, md, "MINIMUM"), "MAXIMUM": gdalStat(t, md, "MAXIMUM"),
			"MEAN": gdalStat(t, md, "MEAN"), "STDDEV": gdalStat(t, md, "STDDEV")}
		for name, want := range map[string]*float64{"MINIMUM": own[k].Min, "MAXIMUM": own[k].Max, "MEAN": own[k].Mean, "STDDEV": own[k].Std} {
			if want == nil || !near(got[name], *want, 1.5e-4) {
				t.Errorf("band %d %s: GDAL %v, the export's statistics %v", k+1, name, got[name], want)
			}
		}
		// Valid pixels: GDAL's valid percent of the whole grid.
		pct := gdalStat(t, md, "VALID_PERCENT")
		n := float64(info.Size[0] * info.Size[1])
		if !near(pct*n/100, float64(own[k].Valid), 0.01*n/100+0.5) {
			t.Errorf("band %d: GDAL counts %.3f%% of %v px valid, the export %d", k+1, pct, n, own[k].Valid)
		}
		o := other[k]
		if o.Valid != own[k].Valid || *o.Mean != *own[k].Mean || *o.Std != *own[k].Std || *o.Min != *own[k].Min || *o.Max != *own[k].Max || *o.P50 != *own[k].P50 {
			t.Errorf("band %d: the export's statistics %+v, the analysis tool's %+v", k+1, own[k], o)
		}
	}
}

func TestExportPixelsIsACOGWithTheAnalysisValues(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	dir := t.TempDir()
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog, Export: ExportSettings{Dir: dir}})
	sel := map[string]any{"collections": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi}

	t.Run("bands", func(t *testing.T) {
		args := map[string]any{"kind": "pixels", "bands": []string{"red", "nir", "swir16"}}
		for k, v := range sel {
			args[k] = v
		}
		res := callOK(t, cs, "export", args)
		out := structured[ExportOut](t, res)
		t.Log(resultText(res))
		p := out.Pixels
		if p == nil || p.DataType != "float32" || p.NoData != "NaN" || p.EPSG != 32613 || p.Width != 64 || p.Height != 64 {
			t.Fatalf("pixels %+v", p)
		}
		if out.Path == "" || filepath.Dir(out.Path) != dir || !strings.HasSuffix(out.Path, ".tif") || out.URI != ExportURIPrefix+filepath.Base(out.Path) {
			t.Fatalf("file %+v", out.ExportFile)
		}
		if sum, n := fileSHA(t, out.Path); sum != out.SHA256 || n != out.Bytes {
			t.Errorf("the file is %d bytes, sha256 %s; the result says %d, %s", n, sum, out.Bytes, out.SHA256)
		}
		if links := resourceLinks(res); len(links) != 1 || links[0].URI != out.URI || links[0].MIMEType != mimeGeoTIFF || *links[0].Size != out.Bytes {
			t.Errorf("resource links %+v", links)
		}
		if !strings.Contains(resultText(res), out.Path) {
			t.Errorf("the text does not give the path")
		}
		info := gdalInfoJSON(t, out.Path)
		if info.Metadata["IMAGE_STRUCTURE"]["LAYOUT"] != "COG" || info.STAC.EPSG != 32613 {
			t.Errorf("layout %v, EPSG %d", info.Metadata["IMAGE_STRUCTURE"], info.STAC.EPSG)
		}
		// The scene's grid: x 478000.., y ..4438000 at 10 m, north up.
		want := []float64{478000, 10, 0, 4438000, 0, -10}
		for i := range want {
			if !near(info.GeoTransform[i], want[i], 1e-6) || !near(p.GeoTransform[i], want[i], 1e-6) {
				t.Fatalf("geotransform: GDAL %v, result %v, want %v", info.GeoTransform, p.GeoTransform, want)
			}
		}
		for k, b := range info.Bands {
			if nd, _ := b.NoData.(string); nd != "NaN" || b.Description != []string{"red", "nir", "swir16"}[k] || b.Type != "Float32" {
				t.Errorf("band %d: %+v", k+1, b)
			}
		}
		if md := info.Metadata[""]; md["STAC_ITEM_IDS"] != "S2-synthetic-1" || !strings.Contains(info.Bands[0].Metadata[""]["CALIBRATION"], "× 0.0001") {
			t.Errorf("metadata %v / %v", md, info.Bands[0].Metadata[""])
		}
		stats := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1",
			"aoi": sc.aoi, "bands": []string{"red", "nir", "swir16"}}))
		checkExportedStats(t, info, p.Stats, stats.Stats)
		validateCOG(t, out.Path)
	})

	t.Run("ndvi, twice: a second file", func(t *testing.T) {
		args := map[string]any{"kind": "pixels", "bands": "ndvi", "collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi}
		first := structured[ExportOut](t, callOK(t, cs, "export", args))
		second := structured[ExportOut](t, callOK(t, cs, "export", args))
		if first.Path == second.Path || filepath.Base(first.Path) != "ndvi_S2-synthetic-1.tif" || filepath.Base(second.Path) != "ndvi_S2-synthetic-1-2.tif" {
			t.Fatalf("paths %s, %s", first.Path, second.Path)
		}
		info := gdalInfoJSON(t, first.Path)
		render := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1",
			"aoi": sc.aoi, "view": "ndvi"}))
		checkExportedStats(t, info, first.Pixels.Stats, []BandStats{*render.Stats})
		if info.Bands[0].Description != "ndvi" || info.Metadata[""]["INDEX_FORMULA"] == "" {
			t.Errorf("band %+v, metadata %v", info.Bands[0], info.Metadata[""])
		}
		validateCOG(t, first.Path)
		// The resource link reads the file back.
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: first.URI})
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(rr.Contents[0].Blob); hex.EncodeToString(sum[:]) != first.SHA256 {
			t.Errorf("resources/read gave other bytes")
		}
	})
}

func TestExportSeriesIsCSVAndChart(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	dir := t.TempDir()
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog, Export: ExportSettings{Dir: dir}})
	search := map[string]any{"collections": "s2-synthetic", "aoi": sc.aoi, "datetime": "2023"}
	series := structured[IndexTimeSeriesOut](t, callOK(t, cs, "index_time_series", search))
	args := map[string]any{"kind": "series"}
	for k, v := range search {
		args[k] = v
	}
	res := callOK(t, cs, "export", args)
	out := structured[ExportOut](t, res)
	t.Log(resultText(res))
	if out.Series == nil || out.Series.Rows != len(series.Rows) || len(series.Rows) == 0 || len(out.Also) != 1 || len(resourceLinks(res)) != 2 {
		t.Fatalf("export %+v (series has %d rows)", out, len(series.Rows))
	}
	raw, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("\r\n")) {
		t.Error("RFC 4180 lines end in CRLF")
	}
	records, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(records[0], ",") != strings.Join(seriesColumns, ",") || len(records) != len(series.Rows)+1 {
		t.Fatalf("records %v", records)
	}
	dateRE := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	for i, r := range series.Rows {
		rec := records[i+1]
		mean, _ := strconv.ParseFloat(rec[3], 64)
		valid, _ := strconv.Atoi(rec[8])
		if !dateRE.MatchString(rec[0]) || rec[1] != r.Datetime || rec[2] != strings.Join(r.Items, " ") || mean != r.Mean || valid != r.Valid {
			t.Errorf("row %d: %v, the series says %+v", i, rec, r)
		}
	}
	png, err := os.ReadFile(out.Also[0].Path)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("chart: %v", err)
	}
}

func TestExportItemsIsTheSearchAsGeoJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cs := newTestSession(t, testSessionOptions{Export: ExportSettings{Dir: dir}})
	search := map[string]any{"collections": []string{"sentinel-2-l2a"}}
	found := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": []string{"sentinel-2-l2a"}, "max_items": 100}))
	res := callOK(t, cs, "export", map[string]any{"kind": "items", "collections": search["collections"]})
	out := structured[ExportOut](t, res)
	t.Log(resultText(res))
	if out.Items == nil || out.Items.Count != len(found.Items) || out.Items.Count == 0 {
		t.Fatalf("items %+v, search returned %d", out.Items, len(found.Items))
	}
	raw, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(raw, &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != len(found.Items) {
		t.Fatalf("GeoJSON: %v, %d features", err, len(fc.Features))
	}
	var first struct {
		Assets map[string]any `json:"assets"`
		Links  []any          `json:"links"`
	}
	if err := json.Unmarshal(fc.Features[0], &first); err != nil || len(first.Assets) == 0 {
		t.Errorf("the features are not complete items: %v", err)
	}
	gdaltest.Need(t, "ogrinfo")
	info, err := exec.Command("ogrinfo", "-ro", "-al", "-so", out.Path).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo: %v\n%s", err, info)
	}
	if m := regexp.MustCompile(`Feature Count: (\d+)`).FindSubmatch(info); m == nil || string(m[1]) != strconv.Itoa(len(found.Items)) {
		t.Errorf("ogrinfo:\n%s", info)
	}
}

// failAfter fails once n bytes went through, as a full disk does.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errors.New("no space left on device")
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestExportRefusesBadInputAndLeavesNothing(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	dir := t.TempDir()
	d := newTestDeps(t, testSessionOptions{CatalogURL: sc.catalog, Export: ExportSettings{Dir: dir, MaxBytes: 2000}})
	cs := connect(t, newServer(d, "test", Tools(d)))
	pixels := map[string]any{"kind": "pixels", "collections": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "bands": "ndvi"}
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for a, b := range pixels {
			out[a] = b
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	for name, c := range map[string]struct {
		args map[string]any
		want string
	}{
		"unknown kind":           {with("kind", "shapefile"), "kind"},
		"no item":                {with("item_id", nil), "item_id"},
		"bands and an index":     {with("bands", []string{"red", "ndvi"}), "an index (ndvi) among other names"},
		"an empty items search":  {map[string]any{"kind": "items"}, "empty selection"},
		"items matching nothing": {map[string]any{"kind": "items", "collections": "s2-synthetic", "datetime": "1999"}, "matched no item"},
		"a path-like name":       {with("name", "../../etc/x"), "a path"},
		"a hidden name":          {with("name", ".bashrc"), "starts with ."},
		"over the byte limit":    {pixels, "export limit of 2000 bytes"},
	} {
		msg := callErr(t, cs, "export", c.args)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: %s", name, msg)
		}
	}
	d.exports.wrap = func(w io.Writer) io.Writer { return &failAfter{w: w, n: 100} }
	d.Export.MaxBytes = 0
	if msg := callErr(t, cs, "export", pixels); !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, "nothing was left behind") {
		t.Errorf("a full disk: %s", msg)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("the export folder holds %v", names)
	}
}

func TestExportOverHTTPIsAResourceOfItsMaker(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog, Shared: true, UntrustedCallers: true})
	res := callOK(t, cs, "export", map[string]any{"kind": "pixels", "collections": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "bands": "nir"})
	out := structured[ExportOut](t, res)
	if out.Path != "" || !strings.HasPrefix(out.URI, ExportURIPrefix) || out.Expires == "" || strings.Contains(resultText(res), "/tmp") {
		t.Fatalf("export %+v\n%s", out.ExportFile, resultText(res))
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: out.URI})
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(rr.Contents[0].Blob); hex.EncodeToString(sum[:]) != out.SHA256 || !strings.HasPrefix(rr.Contents[0].MIMEType, "image/tiff") {
		t.Errorf("resources/read: %s, %d bytes", rr.Contents[0].MIMEType, len(rr.Contents[0].Blob))
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: ExportURIPrefix + "0123456789abcdef0123456789abcdef"}); err == nil {
		t.Error("an unknown export was read")
	}
}

// rawScene is a catalog of one item whose bands carry no scale or offset
// (numbers as stored, nodata 0), on the pixel scene's files.
func rawScene(t *testing.T, sc pixelScene) string {
	t.Helper()
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"raw","description":"raw numbers","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-106,40,-105,41]]},"temporal":{"interval":[["2023-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	band := func(key, file string) string {
		return fmt.Sprintf(`%q: {"href": %q, "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"],
			"eo:bands": [{"name": %q, "common_name": %q}], "raster:bands": [{"data_type": "uint16", "nodata": 0}]}`, key, sc.files+"/"+file, key, key)
	}
	b := sc.bbox
	item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"raw-1","collection":"raw","geometry":{"type":"Polygon","coordinates":[[[%v,%v],[%v,%v],[%v,%v],[%v,%v],[%v,%v]]]},
		"bbox":[%v,%v,%v,%v],"properties":{"datetime":"2023-06-14T17:50:00Z"},"links":[],"assets":{%s,%s}}`,
		b[0], b[1], b[2], b[1], b[2], b[3], b[0], b[3], b[0], b[1], b[0], b[1], b[2], b[3], band("red", "B04.tif"), band("nir", "B08.tif"))
	if err := store.AddItem([]byte(item)); err != nil {
		t.Fatal(err)
	}
	return serveStore(t, store, stacserver.Options{})
}

// TestExportKeepsTheSourceTypeForNumbersAsStored: bands read without a
// scale or offset are written in their own type (uint16), their nodata
// kept, so nothing is rounded; GDAL reads the values aoi_statistics gives.
func TestExportKeepsTheSourceTypeForNumbersAsStored(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: rawScene(t, sc)})
	sel := map[string]any{"collection_id": "raw", "item_id": "raw-1", "aoi": sc.aoi, "bands": []string{"red", "nir"}}
	out := structured[ExportOut](t, callOK(t, cs, "export", withKind(sel, "pixels")))
	if out.Pixels.DataType != "uint16" || out.Pixels.NoData != "0" || !strings.Contains(out.Pixels.DataTypeWhy, "as stored") {
		t.Fatalf("pixels %+v", out.Pixels)
	}
	info := gdalInfoJSON(t, out.Path)
	for _, b := range info.Bands {
		if nd, _ := b.NoData.(float64); b.Type != "UInt16" || nd != 0 || b.NoData == nil {
			t.Errorf("band %+v", b)
		}
	}
	delete(sel, "kind")
	stats := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", sel))
	checkExportedStats(t, info, out.Pixels.Stats, stats.Stats)
	validateCOG(t, out.Path)
}

func withKind(m map[string]any, kind string) map[string]any {
	out := map[string]any{"kind": kind}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestExportIsChargedToTheDecodeBudget: while a GeoTIFF is written, the
// decode budget holds its values, overviews and tiles (the read's own
// charge ended with the read), and it is all given back afterwards.
func TestExportIsChargedToTheDecodeBudget(t *testing.T) {
	t.Parallel()
	sc := newPixelScene(t)
	d := newTestDeps(t, testSessionOptions{CatalogURL: sc.catalog})
	cs := connect(t, newServer(d, "test", Tools(d)))
	var held atomic.Int64
	d.exports.wrap = func(w io.Writer) io.Writer {
		held.Store(d.work().pixelBudget().InUse())
		return w
	}
	sel := map[string]any{"kind": "pixels", "collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": sc.aoi, "bands": []string{"red", "nir", "swir16"}}
	callOK(t, cs, "export", sel)
	// 64×64 px, 3 bands: float64 values and overviews (8/3 units a value)
	// and float32 tiles (4/3).
	if want := int64(64 * 64 * 3 * 4); held.Load() < want {
		t.Errorf("the budget held %d units while the file was written, want at least %d", held.Load(), want)
	}
	if n := d.work().pixelBudget().InUse(); n != 0 {
		t.Errorf("%d units still held after the call", n)
	}
}
