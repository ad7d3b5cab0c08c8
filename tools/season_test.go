package tools

import (
	"bufio"
	"encoding/json"

	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// The pixel tools over a period, on the engine's season fixtures
// (internal/pixel/testdata/season, written with GDAL by its make.py): a
// year of two adjacent Sentinel-2 tiles served over HTTP (Range requests)
// and an in-memory catalog of their items; the reference values are
// GDAL's and numpy's, in expected.json.

const seasonFixtures = "internal/pixel/testdata/season"

type seasonScene struct {
	catalog  string
	aoi      json.RawMessage
	requests *atomic.Int64
	expected struct {
		Year struct {
			AOIPixels int `json:"aoi_pixels"`
			Dates     []struct {
				Date  string   `json:"date"`
				Items []string `json:"items"`
				Valid int      `json:"valid"`
				Mean  float64  `json:"mean"`
			} `json:"dates"`
			CompositeAll    seasonComposite `json:"composite_all"`
			CompositeSummer seasonComposite `json:"composite_summer"`
			Change          struct {
				Both, EarlierOnly, LaterOnly int
				Classes                      []int   `json:"classes"`
				Mean                         float64 `json:"mean"`
			} `json:"change_winter_summer"`
		} `json:"year"`
	}
}

type seasonComposite struct {
	Valid        int     `json:"valid"`
	Mean         float64 `json:"mean"`
	Observations []int   `json:"observations"`
}

// newSeasonScene serves the year's COGs and a catalog of its items; cloud
// sets an item's eo:cloud_cover by date (the fixtures say 10).
func newSeasonScene(t *testing.T, cloud map[string]float64) *seasonScene {
	t.Helper()
	sc := &seasonScene{requests: &atomic.Int64{}}
	files := http.FileServer(http.Dir(seasonFixtures))
	fsrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			sc.requests.Add(1)
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(fsrv.Close)
	b, err := os.ReadFile(filepath.Join(seasonFixtures, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sc.expected); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(seasonFixtures, "aoi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var aois map[string]json.RawMessage
	if err := json.Unmarshal(b, &aois); err != nil {
		t.Fatal(err)
	}
	sc.aoi = aois["year"]
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"sentinel-2-l2a","description":"season cases","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-106,39,-101,41]]},"temporal":{"interval":[["2023-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(seasonFixtures, "items.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var it map[string]any
		if err := json.Unmarshal(lines.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(it["id"].(string), "S2_zone_") {
			continue
		}
		props := it["properties"].(map[string]any)
		if v, ok := cloud[props["datetime"].(string)[:10]]; ok {
			props["eo:cloud_cover"] = v
		}
		for _, a := range it["assets"].(map[string]any) {
			am := a.(map[string]any)
			am["href"] = fsrv.URL + "/" + am["href"].(string)
		}
		if err := store.AddItem(mustJSON(t, it)); err != nil {
			t.Fatal(err)
		}
	}
	csrv := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	t.Cleanup(csrv.Close)
	sc.catalog = csrv.URL
	return sc
}

// A day's read is that day's acquisition, both tiles mosaicked onto one
// grid over the whole aoi: the statistics are GDAL's and numpy's, and the
// result names the items.
func TestPixelToolsReadADaysMosaic(t *testing.T) {
	t.Parallel()
	sc := newSeasonScene(t, nil)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	want := sc.expected.Year.Dates[2] // 2023-03-15: a cloud on tile A over the overlap, C clear there
	res := callOK(t, cs, "render_aoi", map[string]any{"collections": "sentinel-2-l2a", "datetime": want.Date, "aoi": sc.aoi, "view": "ndvi"})
	out := structured[RenderAOIOut](t, res)
	text := resultText(res)
	t.Log(text)
	if out.Period == nil || out.Period.Mode != "mosaic" || strings.Join(out.Items, ",") != strings.Join(want.Items, ",") {
		t.Fatalf("period %+v items %v, want a mosaic of %v", out.Period, out.Items, want.Items)
	}
	if out.Stats.Pixels != sc.expected.Year.AOIPixels || out.Stats.Valid != want.Valid || !near(*out.Stats.Mean, want.Mean, 1e-4) {
		t.Fatalf("stats %+v, want valid %d of %d, mean %v", out.Stats, want.Valid, sc.expected.Year.AOIPixels, want.Mean)
	}
	for _, s := range []string{"mosaic", "EPSG:32613, 62×34 px, geotransform [478050, 10, 0, 4437970, 0, -10]", "S2_A_20230315", "S2_C_20230315", "one UTC day"} {
		if !strings.Contains(text, s) {
			t.Errorf("the text lacks %q", s)
		}
	}
	if out.Image == nil {
		t.Fatal("no map")
	}
	if dir := os.Getenv("PIXEL_PREVIEW_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "season-mosaic-ndvi.png"), imageOf(t, res).Data, 0o644)
	}
	// aoi_statistics reads the same mosaic: its red band is clear where
	// the NDVI is.
	res = callOK(t, cs, "aoi_statistics", map[string]any{"collection_id": "sentinel-2-l2a", "datetime": want.Date, "aoi": sc.aoi, "bands": "red"})
	st := structured[AOIStatisticsOut](t, res)
	if len(st.Stats) != 1 || st.Stats[0].Valid != want.Valid || st.Period == nil || len(st.Items) != 2 {
		t.Fatalf("%s", resultText(res))
	}
	// A day and an item together are refused, naming both ways.
	msg := callErr(t, cs, "aoi_statistics", map[string]any{"collection_id": "sentinel-2-l2a", "item_id": "S2_A_20230315", "datetime": want.Date, "aoi": sc.aoi})
	if !strings.Contains(msg, "give one or the other") {
		t.Fatalf("%s", msg)
	}
}

// An interval's read is the per-pixel median of its dates' clear values:
// numpy's nanmedian, with the observations per pixel said.
func TestPixelToolsReadAComposite(t *testing.T) {
	t.Parallel()
	sc := newSeasonScene(t, nil)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	want := sc.expected.Year.CompositeSummer
	res := callOK(t, cs, "render_aoi", map[string]any{"collections": "sentinel-2-l2a", "datetime": "2023-06/2023-08", "aoi": sc.aoi, "view": "ndvi"})
	out := structured[RenderAOIOut](t, res)
	text := resultText(res)
	t.Log(text)
	o := out.Period.Observations
	if out.Period.Mode != "composite" || out.Period.Method != "median" || len(out.Period.Dates) != 3 || o == nil ||
		o.Min != want.Observations[0] || o.Median != want.Observations[1] || o.Max != want.Observations[2] {
		t.Fatalf("period %+v", out.Period)
	}
	if out.Stats.Valid != want.Valid || !near(*out.Stats.Mean, want.Mean, 1e-4) {
		t.Fatalf("stats %+v, want valid %d mean %v", out.Stats, want.Valid, want.Mean)
	}
	if !strings.Contains(text, "per-pixel median of the clear observations; observations per pixel of the aoi: min 2") {
		t.Fatalf("%s", text)
	}
	if dir := os.Getenv("PIXEL_PREVIEW_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "season-composite-ndvi.png"), imageOf(t, res).Data, 0o644)
	}
}

// A change map is the index's difference between two periods where both
// are clear, with the pixels clear on one side only counted, and the
// shares of the aoi past the thresholds.
func TestRenderAOIDrawsAChange(t *testing.T) {
	t.Parallel()
	sc := newSeasonScene(t, nil)
	cs := newTestSession(t, testSessionOptions{CatalogURL: sc.catalog})
	want := sc.expected.Year.Change
	// baseline later than datetime: the difference is still later − earlier.
	res := callOK(t, cs, "render_aoi", map[string]any{"collections": "sentinel-2-l2a", "datetime": "2023-01/2023-03", "baseline": "2023-06/2023-08",
		"aoi": sc.aoi, "view": "ndvi"})
	out := structured[RenderAOIOut](t, res)
	text := resultText(res)
	t.Log(text)
	ch := out.Change
	if ch == nil || !strings.HasPrefix(ch.Earlier, "2023-01-01/2023-03-31") || ch.Both != want.Both || !near(*out.Stats.Mean, want.Mean, 1e-4) {
		t.Fatalf("change %+v stats %+v, want %+v", ch, out.Stats, want)
	}
	for k, cl := range ch.Classes {
		if cl.Pixels != want.Classes[k] {
			t.Fatalf("class %s: %d px, want %d", cl.Range, cl.Pixels, want.Classes[k])
		}
	}
	if !strings.Contains(text, "Δndvi ≥ +0.2 (strong vegetation gain)") || out.Image == nil || !strings.Contains(out.ColorMap, "brown (decrease)") {
		t.Fatalf("%s", text)
	}
	if dir := os.Getenv("PIXEL_PREVIEW_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "season-change-ndvi.png"), imageOf(t, res).Data, 0o644)
	}
	msg := callErr(t, cs, "render_aoi", map[string]any{"collections": "sentinel-2-l2a", "datetime": "2023-06/2023-08", "baseline": "2023-07",
		"aoi": sc.aoi, "view": "ndvi"})
	if !strings.Contains(msg, "overlaps datetime") {
		t.Fatalf("%s", msg)
	}
	msg = callErr(t, cs, "render_aoi", map[string]any{"collections": "sentinel-2-l2a", "datetime": "2023-06/2023-08", "baseline": "2023-01",
		"aoi": sc.aoi, "view": "true-color"})
	if !strings.Contains(msg, "index view") {
		t.Fatalf("%s", msg)
	}
}

// A year's series pages through every date with a cursor: an even sample
// first, then the rest, each date once, the means GDAL's and numpy's;
// max_cloud_cover leaves a date out before any pixel is read; progress is
// notified per date.
func TestIndexTimeSeriesPagesThroughAYear(t *testing.T) {
	t.Parallel()
	sc := newSeasonScene(t, map[string]float64{"2023-04-15": 80})
	log := &progressLog{}
	d := newTestDeps(t, testSessionOptions{CatalogURL: sc.catalog, SeriesPage: 5})
	cs := newClientSession(t, d, &mcp.ClientOptions{ProgressNotificationHandler: log.handle})
	args := map[string]any{"collections": "sentinel-2-l2a", "datetime": "2023", "aoi": sc.aoi, "max_cloud_cover": 50}
	wantMean := map[string]float64{}
	for _, dt := range sc.expected.Year.Dates {
		wantMean[dt.Date] = dt.Mean
	}
	seen := map[string]int{}
	var pages []IndexTimeSeriesOut
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("the cursor does not end")
		}
		res := callWithProgress(t, cs, "index_time_series", args, "tok-series")
		out := structured[IndexTimeSeriesOut](t, res)
		text := resultText(res)
		t.Log(text)
		pages = append(pages, out)
		if dir := os.Getenv("PIXEL_PREVIEW_DIR"); dir != "" && out.Image != nil {
			_ = os.WriteFile(filepath.Join(dir, "season-series-"+itoa(page)+".png"), imageOf(t, res).Data, 0o644)
		}
		if out.Dates != 11 || out.ThisCall > 5 {
			t.Fatalf("page %d: %d dates (want 11: 2023-04-15 is over max_cloud_cover), %d this call", page, out.Dates, out.ThisCall)
		}
		for _, r := range out.Rows {
			day := r.Date[:10]
			seen[day]++
			if !near(r.Mean, wantMean[day], 1e-4) {
				t.Errorf("%s: mean %v, want %v", day, r.Mean, wantMean[day])
			}
		}
		for _, s := range append(out.Skipped, out.Failed...) {
			seen[s.ID[:10]]++
		}
		if !strings.Contains(text, strings.Join([]string{itoa(out.Done), "of 11 dates so far"}, " ")) {
			t.Fatalf("page %d: the text does not count the dates so far", page)
		}
		if out.Cursor == "" {
			if out.Done != 11 {
				t.Fatalf("no cursor after %d of 11 dates", out.Done)
			}
			break
		}
		args["cursor"] = out.Cursor
	}
	if len(seen) != 11 || seen["2023-04-15"] != 0 {
		t.Fatalf("dates seen %v", seen)
	}
	for day, n := range seen {
		if n != 1 {
			t.Errorf("%s returned %d times", day, n)
		}
	}
	// The first page is spread over the year: its first and last dates.
	first := pages[0].Rows
	if len(first) < 2 || first[0].Date[:10] != "2023-01-15" || first[len(first)-1].Date[:10] != "2023-12-15" {
		t.Fatalf("first page %+v", first)
	}
	if n := len(waitForNotes(log, 11)); n < 11 {
		t.Fatalf("%d progress notifications for 11 dates", n)
	}
	// Another series' arguments with this cursor are refused.
	args["datetime"] = "2023-01/2023-06"
	args["cursor"] = pages[0].Cursor
	if msg := callErr(t, cs, "index_time_series", args); !strings.Contains(msg, "other arguments") {
		t.Fatalf("%s", msg)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
