package tools

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools/internal/catalog"
	"github.com/stacmcp/stac-mcp/tools/internal/federation/fedtest"
)

// presetHosts serves preset catalogs' hosts in-process, over "https" as
// the handlers see it (links come back on the preset's own URLs), and
// refuses every other host: search_items with catalog_url
// ["earth-search","planetary-computer"] runs as a user's call would.
type presetHosts struct {
	mu       sync.Mutex
	handlers map[string]http.Handler
}

func (p *presetHosts) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	h, ok := p.handlers[req.URL.Host]
	p.mu.Unlock()
	if !ok {
		return nil, errors.New("test: no network beyond the in-process catalogs (" + req.URL.Host + ")")
	}
	sr := req.Clone(req.Context())
	sr.TLS, sr.RequestURI, sr.Host = &tls.ConnectionState{}, req.URL.RequestURI(), req.URL.Host
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, sr)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	res := rec.Result()
	res.Request = req
	return res, nil
}

// newPresetHosts serves Earth Search's and Planetary Computer's styles
// with the given items; wrap may wrap a host's handler (a hang).
func newPresetHosts(t *testing.T, es, pc []fedtest.Item, wrap map[string]func(http.Handler) http.Handler) *presetHosts {
	t.Helper()
	p := &presetHosts{handlers: map[string]http.Handler{}}
	for _, s := range []struct {
		style fedtest.Style
		items []fedtest.Item
	}{{fedtest.EarthSearch(), es}, {fedtest.PlanetaryComputer(), pc}} {
		srv, err := fedtest.Server(s.style, s.items)
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = srv
		if w := wrap[s.style.Host]; w != nil {
			h = w(h)
		}
		p.handlers[s.style.Host] = h
	}
	return p
}

// julyScenes: Earth Search's recorded Sentinel-2 L2A items, and Planetary
// Computer's recorded datatake plus its copies of three of them.
func julyScenes() (es, pc []fedtest.Item) {
	es = fedtest.InCollection(fedtest.EarthSearchItems(), "sentinel-2-l2a")
	for _, id := range []string{"S2B_24MUV_20250731_0_L2A", "S2B_24MVV_20250731_0_L2A", "S2B_24MXV_20250731_0_L2A"} {
		pc = append(pc, fedtest.CopyInPlanetaryComputer(fedtest.Find(es, id)))
	}
	return es, append(pc, fedtest.PlanetaryComputerItems()...)
}

var bothCatalogs = []string{"earth-search", "planetary-computer"}

func TestSearchItemsOverTwoCatalogsMergesDeduplicatesAndNamesEach(t *testing.T) {
	t.Parallel()
	es, pc := julyScenes()
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, es, pc, nil)})
	res := callOK(t, cs, "search_items", map[string]any{"catalog_url": bothCatalogs, "collections": []string{"sentinel-2-l2a"}, "max_items": 12})
	out := structured[SearchItemsOut](t, res)
	text := resultText(res)
	if out.Returned != 12 || len(out.Catalogs) != 2 {
		t.Fatalf("returned %d, catalogs %+v", out.Returned, out.Catalogs)
	}
	for _, o := range out.Catalogs {
		if o.Status != "answered" {
			t.Errorf("%s: %+v", o.Catalog, o)
		}
	}
	copies := 0
	for _, it := range out.Items {
		if it.Catalog == "" || !strings.Contains(text, it.ID) {
			t.Errorf("%s: catalog %q, or missing from the text", it.ID, it.Catalog)
		}
		if len(it.AlsoIn) > 0 {
			copies++
			if it.Catalog != "earth-search" || it.AlsoIn[0].Catalog != "planetary-computer" || it.Kept == "" {
				t.Errorf("%s: %s, also in %+v, kept %q", it.ID, it.Catalog, it.AlsoIn, it.Kept)
			}
		}
	}
	if copies != 3 {
		t.Errorf("%d items with copies, want 3 (24MUV, 24MVV, 24MXV)", copies)
	}
	for _, want := range []string{"from earth-search", "from planetary-computer", "also in planetary-computer as S2B_MSIL2A_20250731T130249_R095_T24MUV",
		"Catalogs: earth-search answered", "merged across 2 catalogs by desc properties.datetime"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if out.Matched != nil {
		t.Error("matched is set: each catalog's count is in catalogs (copies count in each)")
	}
}

// Pages of 4 through the cursor hold what one page of 100 holds, in the
// same order, nothing twice.
func TestSearchItemsOverTwoCatalogsPagesWithOneCursor(t *testing.T) {
	t.Parallel()
	es, pc := julyScenes()
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, es, pc, nil)})
	args := map[string]any{"catalog_url": bothCatalogs, "collections": []string{"sentinel-2-l2a"}}
	whole := structured[SearchItemsOut](t, callOK(t, cs, "search_items", merged(args, map[string]any{"max_items": 100})))
	var want, got []string
	for _, it := range whole.Items {
		want = append(want, it.ID)
	}
	page := structured[SearchItemsOut](t, callOK(t, cs, "search_items", merged(args, map[string]any{"max_items": 4})))
	for n := 0; n < 30; n++ {
		for _, it := range page.Items {
			got = append(got, it.ID)
		}
		if page.Cursor == "" {
			break
		}
		if len(page.Cursor) > 512 {
			t.Fatalf("cursor of %d bytes", len(page.Cursor))
		}
		page = structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"cursor": page.Cursor, "max_items": 4}))
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged by 4:\n got %v\nwant %v", got, want)
	}
}

func TestSearchItemsGroupStandsForItsMembers(t *testing.T) {
	t.Parallel()
	es, pc := julyScenes()
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, es, pc, nil),
		Groups: []catalog.Group{{Name: "public", Members: bothCatalogs}}})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"catalog_url": "public", "collections": "sentinel-2-l2a"}))
	if len(out.Catalogs) != 2 || out.Catalogs[1].Catalog != "planetary-computer" {
		t.Errorf("catalogs %+v", out.Catalogs)
	}
	list := structured[ListCatalogsOut](t, callOK(t, cs, "list_catalogs", map[string]any{}))
	if !slices.ContainsFunc(list.Catalogs, func(e CatalogEntry) bool {
		return e.Name == "public" && e.Kind == "group" && slices.Equal(e.Members, bothCatalogs)
	}) {
		t.Errorf("list_catalogs does not show the group: %+v", list.Catalogs)
	}
	if text := callErr(t, cs, "get_item", map[string]any{"catalog_url": "public", "collection_id": "c", "item_id": "i"}); !strings.Contains(text, "is a group of catalogs") {
		t.Errorf("a group given to a one-catalog tool: %s", text)
	}
}

func TestSearchItemsHungCatalogIsReportedAndTheOthersAnswer(t *testing.T) {
	t.Parallel()
	es, pc := julyScenes()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
	}
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, es, pc, map[string]func(http.Handler) http.Handler{fedtest.PlanetaryComputerHost: hang})})
	res := callOK(t, cs, "search_items", map[string]any{"catalog_url": bothCatalogs, "collections": "sentinel-2-l2a"})
	out := structured[SearchItemsOut](t, res)
	if out.Catalogs[1].Status != "timeout" || out.Returned == 0 {
		t.Errorf("catalogs %+v, returned %d", out.Catalogs, out.Returned)
	}
	if text := resultText(res); !strings.Contains(text, "planetary-computer did not answer in") || !strings.Contains(text, "results are from earth-search only") {
		t.Errorf("the text does not say so:\n%s", text)
	}
}

func TestSearchItemsCatalogListRefusals(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, nil, nil, nil), Limits: Limits{MaxCatalogs: 2}})
	for args, want := range map[string]string{
		`["earth-search","planetary-computer","cdse"]`: "at most 2",
		`["earth-search","earth-serch"]`:               "did you mean",
		`[1,2]`:                                        "catalog_url",
	} {
		if text := callErr(t, cs, "search_items", map[string]any{"catalog_url": rawJSON(args)}); !strings.Contains(text, want) {
			t.Errorf("catalog_url %s: %s", args, text)
		}
	}
}

// merged is a copy of a with b's entries set over it.
func merged(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// rawJSON is an argument sent as the JSON given (a list of numbers, say).
func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }

// landsatAndS2 are both catalogs' items of 8 October 2023 over Colorado:
// Earth Search's Landsat scene (requester-pays s3://) and Sentinel-2 L2A
// tile, and Planetary Computer's HTTPS copies of both.
func landsatAndS2() (es, pc []fedtest.Item) {
	all := fedtest.EarthSearchItems()
	ls := fedtest.Find(all, "LC08_L2SP_033032_20231008_02_T1")
	s2 := fedtest.Find(all, "S2A_13TDE_20231008_0_L2A")
	return []fedtest.Item{ls, s2}, []fedtest.Item{fedtest.CopyInPlanetaryComputer(ls), fedtest.CopyInPlanetaryComputer(s2)}
}

// The tools that draw, measure, size and count a search take several
// catalogs too: each scene once, each catalog named.
func TestAreaToolsOverTwoCatalogsCountEachSceneOnce(t *testing.T) {
	t.Parallel()
	es, pc := landsatAndS2()
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, es, pc, nil)})
	search := map[string]any{"catalog_url": bothCatalogs, "collections": []string{"landsat-c2-l2", "sentinel-2-l2a"},
		"aoi": []float64{-105.2, 40.1, -105.0, 40.2}, "datetime": "2023-10-08"}

	m := structured[MapItemsOut](t, callOK(t, cs, "map_items", search))
	if m.Drawn != 2 || len(m.Catalogs) != 2 {
		t.Fatalf("map_items drew %d (want 2: each scene once), catalogs %+v", m.Drawn, m.Catalogs)
	}
	for _, e := range m.Items {
		if len(e.AlsoIn) != 1 || e.Catalog == "" {
			t.Errorf("legend %+v: want its catalog and its copy", e)
		}
		if strings.HasPrefix(e.ID, "LC08") && e.Catalog != "planetary-computer" {
			t.Errorf("the Landsat scene is drawn from %s: want Planetary Computer's readable copy", e.Catalog)
		}
	}

	cov := structured[CheckCoverageOut](t, callOK(t, cs, "check_coverage", search))
	if cov.Items != 2 || len(cov.Catalogs) != 2 {
		t.Errorf("check_coverage measured %d items (want 2), catalogs %+v", cov.Items, cov.Catalogs)
	}
	for _, p := range cov.SmallestSet.Items {
		if p.Catalog == "" {
			t.Errorf("pick %+v names no catalog", p)
		}
	}

	size := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", merged(search, map[string]any{"asset_keys": []string{"red"}, "force_metadata_only": true})))
	if size.ItemCount != 2 || len(size.Sources) != 2 {
		t.Errorf("estimate_data_size sized %d items from %+v (want 2, once each)", size.ItemCount, size.Sources)
	}

	agg := callOK(t, cs, "get_aggregations", map[string]any{"catalog_url": bothCatalogs, "collections": "landsat-c2-l2", "aggregations": []string{"total_count"}})
	aout := structured[GetAggregationsOut](t, agg)
	if len(aout.ByCatalog) != 2 || len(aout.Results) != 0 {
		t.Errorf("get_aggregations: %d catalogs' results, %d summed results (want 2 and none)", len(aout.ByCatalog), len(aout.Results))
	}
	if !strings.Contains(resultText(agg), "never summed") {
		t.Errorf("get_aggregations' text does not say the counts are per catalog:\n%s", resultText(agg))
	}

	cols := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"catalog_url": bothCatalogs}))
	sameAs := 0
	for _, col := range cols.Collections {
		if col.Catalog == "" {
			t.Errorf("collection %s names no catalog", col.ID)
		}
		sameAs += len(col.SameAs)
	}
	if len(cols.Catalogs) != 2 || sameAs == 0 {
		t.Errorf("search_collections: catalogs %+v, %d same-as links", cols.Catalogs, sameAs)
	}
}

// get_item_preview of a scene whose preview is on requester-pays s3://
// shows the preview of the same scene's readable copy in another catalog,
// and says so.
func TestPreviewFromAReadableCopy(t *testing.T) {
	t.Parallel()
	es, pc := landsatAndS2()
	hosts := newPresetHosts(t, es, pc, nil)
	hosts.handlers["landsateuwest.blob.core.windows.net"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := os.ReadFile(filepath.Join("internal", "picture", "testdata", "scene.jpg"))
		if err != nil {
			t.Error(err)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(data)
	})
	cs := newTestSession(t, testSessionOptions{Transport: hosts})
	res := callOK(t, cs, "get_item_preview", map[string]any{"catalog_url": "earth-search", "collection_id": "landsat-c2-l2", "item_id": "LC08_L2SP_033032_20231008_02_T1"})
	out := structured[GetItemPreviewOut](t, res)
	if !out.Available || out.Copy == nil || out.Copy.Catalog != "planetary-computer" || !strings.Contains(out.Copy.Evidence, "path 033, row 032") {
		t.Fatalf("available %v, copy %+v, reason %q, notes %v", out.Available, out.Copy, out.Reason, out.Notes)
	}
	if !strings.Contains(resultText(res), "Shown from planetary-computer's copy") {
		t.Errorf("the text does not say whose preview it is:\n%s", resultText(res))
	}
}

// Over several catalogs too, every value of structuredContent is in the
// text (provenance, copies, outcomes).
func TestFederatedTextsCarryTheStructuredData(t *testing.T) {
	t.Parallel()
	es, pc := landsatAndS2()
	julyES, julyPC := julyScenes()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
	}
	cs := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, union(es, julyES), union(pc, julyPC), nil)})
	hung := newTestSession(t, testSessionOptions{Transport: newPresetHosts(t, es, pc, map[string]func(http.Handler) http.Handler{fedtest.PlanetaryComputerHost: hang})})
	defs := map[string]*mcp.Tool{}
	for _, tool := range listTools(t, cs) {
		defs[tool.Name] = tool
	}
	area := map[string]any{"catalog_url": bothCatalogs, "collections": []string{"landsat-c2-l2", "sentinel-2-l2a"},
		"aoi": []float64{-105.2, 40.1, -105.0, 40.2}, "datetime": "2023-10-08"}
	for _, c := range []struct {
		tool    string
		args    map[string]any
		session *mcp.ClientSession
	}{
		{"search_items", map[string]any{"catalog_url": bothCatalogs, "collections": "sentinel-2-l2a", "max_items": 6}, cs},
		{"search_items", map[string]any{"catalog_url": bothCatalogs, "collections": "landsat-c2-l2,sentinel-2-l2a", "datetime": "2023-10-08", "detail": "full"}, cs},
		{"search_items", map[string]any{"catalog_url": bothCatalogs, "collections": "landsat-c2-l2"}, hung},
		{"map_items", area, cs},
		{"check_coverage", area, cs},
		{"estimate_data_size", merged(area, map[string]any{"force_metadata_only": true, "per_item": true}), cs},
		{"get_aggregations", map[string]any{"catalog_url": bothCatalogs, "aggregations": "total_count", "collections": "landsat-c2-l2"}, cs},
		{"search_collections", map[string]any{"catalog_url": bothCatalogs}, cs},
		{"list_catalogs", map[string]any{}, newTestSession(t, testSessionOptions{Groups: []catalog.Group{{Name: "public", Members: bothCatalogs}}})},
	} {
		t.Run(c.tool, func(t *testing.T) {
			res := callOK(t, c.session, c.tool, c.args)
			if missing := missingFromText(t, defs[c.tool], res); len(missing) > 0 {
				t.Errorf("%d value(s) of structuredContent are not in the text, e.g.:\n%s\ntext:\n%s",
					len(missing), strings.Join(missing[:min(len(missing), 15)], "\n"), trimText(resultText(res), 3000))
			}
		})
	}
}

// union is a and the items of b not in a (by collection and id).
func union(a, b []fedtest.Item) []fedtest.Item {
	out := slices.Clone(a)
	for _, it := range b {
		if !slices.ContainsFunc(out, func(o fedtest.Item) bool { return o["id"] == it["id"] && o["collection"] == it["collection"] }) {
			out = append(out, it)
		}
	}
	return out
}
