package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// A west > east bbox that would span more than 180° is still searched as
// given (a real antimeridian box must keep working) but the result warns
// that the corners are most likely swapped (it was silently read
// as a 340°-wide box).
func TestSwappedBBoxCornersAreWarnedAbout(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	swapped := []float64{10, 0, -10, 5}
	for _, call := range []struct {
		tool  string
		args  map[string]any
		lines func(res map[string]any) []any
	}{
		{"search_items", map[string]any{"bbox": swapped, "max_items": 1}, func(m map[string]any) []any { l, _ := m["warnings"].([]any); return l }},
		{"estimate_data_size", map[string]any{"bbox": swapped, "max_items": 1}, func(m map[string]any) []any { l, _ := m["warnings"].([]any); return l }},
		{"search_collections", map[string]any{"bbox": swapped}, func(m map[string]any) []any { l, _ := m["notes"].([]any); return l }},
	} {
		res := callOK(t, cs, call.tool, call.args)
		if !strings.Contains(resultText(res), "swap west and east: [-10,0,10,5]") {
			t.Errorf("%s text does not warn about the swapped corners:\n%s", call.tool, resultText(res))
		}
		found := false
		for _, w := range call.lines(structured[map[string]any](t, res)) {
			found = found || strings.Contains(w.(string), "340° of longitude")
		}
		if !found {
			t.Errorf("%s structured output has no swapped-bbox warning", call.tool)
		}
	}
	// A narrow box across the antimeridian is what west > east is for.
	res := callOK(t, cs, "search_items", map[string]any{"bbox": []float64{170, -20, -170, 20}, "max_items": 1})
	if strings.Contains(resultText(res), "swap west and east") {
		t.Errorf("a 20° antimeridian box was warned about:\n%s", resultText(res))
	}
}

// offlineTransport serves loopback (the in-process demo server) and refuses,
// and records, every other host: the demo must not need the internet.
type offlineTransport struct {
	mu      sync.Mutex
	foreign []string
}

func (o *offlineTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if host, _, _ := net.SplitHostPort(r.URL.Host); host != "127.0.0.1" {
		o.mu.Lock()
		o.foreign = append(o.foreign, r.Method+" "+r.URL.Host)
		o.mu.Unlock()
		return nil, errors.New("test: no network beyond loopback")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (o *offlineTransport) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.foreign)
}

// estimate_data_size on the demo catalog sends nothing to the internet (its
// items point at real s3:// and https:// hosts), says which assets it did not
// probe and why, counts a band held as COG and JP2 once, and extrapolates to
// every matched item with the basis stated (it sent HEADs to
// sentinel-cogs.s3.us-west-2.amazonaws.com and counted red and red-jp2).
func TestEstimateDataSizeOnTheDemoIsOfflineAndCountsABandOnce(t *testing.T) {
	t.Parallel()
	tr := &offlineTransport{}
	cs := newTestSession(t, testSessionOptions{Transport: tr})
	res := callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sentinel-2-l2a", "max_items": 2})
	out := structured[EstimateDataSizeOut](t, res)
	if got := tr.requests(); len(got) != 0 {
		t.Errorf("the demo sent %d request(s) off loopback: %v", len(got), got[:min(3, len(got))])
	}
	// Data assets all have size metadata; the thumbnail (left out as not
	// data unless named) is on the internet and is not probed.
	namedRes := callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sentinel-2-l2a", "max_items": 2, "asset_keys": []string{"thumbnail", "red"}})
	named := structured[EstimateDataSizeOut](t, namedRes)
	if !strings.HasPrefix(resultText(namedRes), "At least ") {
		t.Errorf("text %q does not say the total is a lower bound up front", resultText(namedRes))
	}
	if got := tr.requests(); len(got) != 0 {
		t.Errorf("the demo sent %d request(s) off loopback: %v", len(got), got[:min(3, len(got))])
	}
	offline := 0
	for _, u := range named.NotSized {
		if strings.Contains(u.Reason, "demo catalog works offline") && strings.Contains(u.Reason, "sentinel-cogs.s3.us-west-2.amazonaws.com") {
			offline++
		}
		if strings.Contains(u.Reason, "catalog_url") {
			t.Errorf("asset %s: reason %q blames catalog_url", u.Key, u.Reason)
		}
	}
	if offline == 0 {
		t.Errorf("not_sized %+v: no asset says it was left unprobed because the demo is offline", named.NotSized)
	}
	for _, k := range out.ByAssetKey {
		if strings.HasSuffix(k.Name, "-jp2") {
			t.Errorf("by_asset_key counts %s although its COG twin is counted", k.Name)
		}
	}
	copies := map[string]string{}
	for _, c := range out.Copies {
		copies[c.Key] = c.Reason
	}
	if out.CopiesCount != 32 || !strings.Contains(copies["red-jp2"], "same band as red") {
		t.Errorf("copies %d %v, want 16 per item, red-jp2 counted as red", out.CopiesCount, copies)
	}
	if out.Matched == nil || out.ExtrapolatedBytes == nil || *out.ExtrapolatedBytes != (out.TotalBytes*int64(*out.Matched)+1)/2 ||
		!strings.Contains(out.ExtrapolationBasis, "2 sized item(s)") || !strings.Contains(resultText(res), "for all 7 matched items") {
		t.Errorf("matched %v extrapolated %v basis %q: want the 2-item average scaled to all matched", out.Matched, out.ExtrapolatedBytes, out.ExtrapolationBasis)
	}
	if named.NotSizedCount == 0 || named.SizedAssets == 0 {
		t.Errorf("named thumbnail and red: %d sized, %d not sized; want both kinds", named.SizedAssets, named.NotSizedCount)
	}
	if len(out.LeftOut) == 0 || out.LeftOut[0].Role != "thumbnail" {
		t.Errorf("left out %+v, want the thumbnails first", out.LeftOut)
	}
}

// When no asset can be sized the answer is "unknown" with the reason, not
// a "0 B" that reads like a result.
func TestEstimateDataSizeSaysUnknownWhenNothingCouldBeSized(t *testing.T) {
	t.Parallel()
	url := sizingCatalog(t, sizingItem("s3only", nil, []float64{0, 0, 1, 1}, map[string]any{
		"data": map[string]any{"href": "s3://bucket/data.tif", "type": "image/tiff"},
		"meta": map[string]any{"href": "s3://bucket/meta.xml", "type": "application/xml"},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	res := callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing"})
	out := structured[EstimateDataSizeOut](t, res)
	text := resultText(res)
	if out.TotalHuman != "unknown" || out.SizedAssets != 0 || !strings.Contains(out.UnknownReason, "2 have no size metadata and a non-HTTP href") {
		t.Errorf("total_human %q sized %d unknown_reason %q; want unknown with the reason", out.TotalHuman, out.SizedAssets, out.UnknownReason)
	}
	if !strings.HasPrefix(text, "Size unknown over 1 item(s)") || !strings.Contains(text, "none of the 2 asset(s) could be sized") || strings.Contains(text, "0 B") {
		t.Errorf("text leads with %q", strings.SplitN(text, "\n", 2)[0])
	}
}

// Copies are told apart from different files: a COG and a JP2 of one band
// are one band, two JP2s at different resolutions are two files; and
// asset_keys naming both copies counts both.
func TestEstimateDataSizeCopiesOfABand(t *testing.T) {
	t.Parallel()
	cog, jp2 := "image/tiff; application=geotiff; profile=cloud-optimized", "image/jp2"
	b04 := []any{map[string]any{"name": "B04", "common_name": "red"}}
	url := sizingCatalog(t, sizingItem("bands", nil, []float64{0, 0, 1, 1}, map[string]any{
		"red":     map[string]any{"href": "https://a.invalid/red.tif", "type": cog, "file:size": 100, "eo:bands": b04},
		"red-jp2": map[string]any{"href": "s3://a/red.jp2", "type": jp2, "file:size": 80, "eo:bands": b04},
		"B04_10m": map[string]any{"href": "s3://a/B04_10m.jp2", "type": jp2, "file:size": 40, "eo:bands": b04, "proj:shape": []int{1, 1}},
		"B04_20m": map[string]any{"href": "s3://a/B04_20m.jp2", "type": jp2, "file:size": 10, "eo:bands": b04, "proj:shape": []int{1, 1}},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing"}))
	// red-jp2 is red's twin by key; the B04 JP2s list the same band as red
	// but red already has its JP2, and two JP2s are two resolutions.
	if out.TotalBytes != 150 || out.CopiesCount != 1 || out.Copies[0].Key != "red-jp2" {
		t.Errorf("total %d copies %+v; want red, B04_10m and B04_20m counted (150) and red-jp2 as red's copy", out.TotalBytes, out.Copies)
	}
	named := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing", "asset_keys": []string{"red", "red-jp2"}}))
	if named.TotalBytes != 180 || named.CopiesCount != 0 {
		t.Errorf("asset_keys red and red-jp2: total %d copies %d; want both files counted (180)", named.TotalBytes, named.CopiesCount)
	}
}

// An asset host that does not answer is not blamed on catalog_url.
func TestEstimateDataSizeBlamesTheAssetHostNotTheCatalog(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	dead := gone.URL
	gone.Close() // connection refused from now on
	url := sizingCatalog(t, sizingItem("a", nil, []float64{0, 0, 1, 1}, map[string]any{
		"data": map[string]any{"href": dead + "/data.tif", "type": "image/tiff"},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing"}))
	if out.NotSizedCount != 1 || strings.Contains(out.NotSized[0].Reason, "catalog_url") ||
		!strings.Contains(out.NotSized[0].Reason, "no HTTP answer from "+strings.TrimPrefix(dead, "http://")) {
		t.Errorf("not sized %+v; want the dead asset host named, without catalog_url advice", out.NotSized)
	}
}

// demoStore loads the embedded demo catalog into a store.
func demoStore(t *testing.T) *stacserver.Store {
	t.Helper()
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// ignoringCatalog serves the demo store but drops the given search
// parameters from every request before the server sees them, like a catalog
// without the query or filter extension.
func ignoringCatalog(t *testing.T, ignored ...string) string {
	t.Helper()
	inner := stacserver.New(demoStore(t), stacserver.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for _, p := range ignored {
			q.Del(p)
		}
		r.URL.RawQuery = q.Encode()
		if r.Method == http.MethodPost && r.Body != nil {
			var body map[string]any
			if json.NewDecoder(r.Body).Decode(&body) == nil {
				for _, p := range ignored {
					delete(body, p)
				}
				raw, _ := json.Marshal(body)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A catalog that ignores query or filter returns items that contradict
// them; search_items says so plainly, removes those items and does not
// pass the catalog's unfiltered count off as the match count (issue 10:
// only a "may be ignored" warning, and 60 % cloud cover for "lt 5").
func TestSearchItemsCatchesACatalogThatIgnoresItsFilter(t *testing.T) {
	t.Parallel()
	honest := newTestSession(t, testSessionOptions{CatalogURL: serveStore(t, demoStore(t), stacserver.Options{})})
	ignoring := newTestSession(t, testSessionOptions{CatalogURL: ignoringCatalog(t, "query", "filter", "filter-lang")})
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"query", map[string]any{"collections": "sentinel-2-l2a", "query": map[string]any{"eo:cloud_cover": map[string]any{"lt": 5}}, "max_items": 20}, "query (eo:cloud_cover lt 5)"},
		{"filter", map[string]any{"collections": "sentinel-2-l2a", "filter": `{"op":"<","args":[{"property":"eo:cloud_cover"},5]}`, "max_items": 20}, `filter ({"args":[{"property":"eo:cloud_cover"},5],"op":"<"})`},
		// CQL2 text is checked too, in its parsed form (it was not).
		{"filter text", map[string]any{"collections": "sentinel-2-l2a", "filter": "eo:cloud_cover < 5", "max_items": 20}, `filter ({"args":[{"property":"eo:cloud_cover"},5],"op":"<"})`},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := structured[SearchItemsOut](t, callOK(t, honest, "search_items", c.args))
			res := callOK(t, ignoring, "search_items", c.args)
			got := structured[SearchItemsOut](t, res)
			if want.ClientFiltered != 0 || slices.ContainsFunc(want.Warnings, func(w string) bool { return strings.Contains(w, "ignored") }) {
				t.Fatalf("the honest catalog was accused: %+v", want.Warnings)
			}
			ids := func(out SearchItemsOut) []string {
				var s []string
				for _, it := range out.Items {
					s = append(s, it.Collection+"/"+it.ID)
				}
				return s
			}
			if !slices.Equal(ids(got), ids(want)) || got.ClientFiltered == 0 || got.Matched != nil {
				t.Errorf("ignoring catalog: items %v (client_filtered %d, matched %v), want the honest catalog's %v and no unfiltered count",
					ids(got), got.ClientFiltered, got.Matched, ids(want))
			}
			text := resultText(res)
			if !strings.Contains(text, "the catalog ignored part of this search") || !strings.Contains(text, c.want) || !strings.Contains(text, "removed here") {
				t.Errorf("text does not say plainly what was ignored and done:\n%s", text)
			}
		})
	}
}

// A page continued with the cursor alone is checked too: the cursor carries
// the search's conditions.
func TestSearchItemsChecksACursorContinuation(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{CatalogURL: ignoringCatalog(t, "query")})
	first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "sentinel-2-l2a",
		"query": map[string]any{"eo:cloud_cover": map[string]any{"lt": 5}}, "limit": 2, "max_items": 1}))
	if first.Cursor == "" || len(first.Resend) != 0 {
		t.Fatalf("first page: cursor %q, cursor_requires %v; want a cursor that carries the search", first.Cursor, first.Resend)
	}
	next := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"cursor": first.Cursor, "max_items": 5}))
	for _, it := range next.Items {
		if it.CloudCover == nil || *it.CloudCover >= 5 {
			t.Errorf("continued page kept %s with cloud cover %v", it.ID, it.CloudCover)
		}
	}
	if next.ClientFiltered == 0 || !strings.Contains(strings.Join(next.Warnings, " "), "ignored part of this search") {
		t.Errorf("continued page filtered nothing; warnings %v", next.Warnings)
	}
}

// Every stac:// URI the tools doc (docs/tools.md, "Resources, prompts,
// progress") names can be read through the real server on the demo
// catalog, templates filled with a demo collection id or a place (the README
// listed stac://conformance, which does not exist).
func TestReadmeResourceURIsAreReadable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	uris := regexp.MustCompile("stac://[A-Za-z0-9_./{}-]*[A-Za-z0-9_}]").FindAllString(string(raw), -1)
	if len(uris) == 0 {
		t.Fatal("docs/tools.md names no stac:// URI")
	}
	cs := newTestSession(t, testSessionOptions{})
	seen := map[string]bool{}
	for _, uri := range uris {
		if seen[uri] {
			continue
		}
		seen[uri] = true
		filled := strings.ReplaceAll(strings.ReplaceAll(uri, "{id}", "sentinel-2-l2a"), "{name}", "Netherlands")
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: filled})
		if err != nil || len(res.Contents) != 1 || !json.Valid([]byte(res.Contents[0].Text)) {
			t.Errorf("docs/tools.md names %s: reading %s failed: %v", uri, filled, err)
		}
	}
	for _, want := range []string{ResourceCatalog, ResourceConformance, ResourceCollections, ResourceCollectionTmpl, ResourceQueryablesTmpl, ResourcePlaceTmpl} {
		if !seen[want] {
			t.Errorf("docs/tools.md does not name the resource %s", want)
		}
	}
}

// rewritingCatalog serves the demo store, with every search page's
// numberMatched replaced by matched (raw JSON) and no context object.
func rewritingCatalog(t *testing.T, matched string) string {
	t.Helper()
	inner := stacserver.New(demoStore(t), stacserver.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var page map[string]json.RawMessage
		if strings.HasSuffix(r.URL.Path, "/search") && json.Unmarshal(body, &page) == nil {
			if _, ok := page["numberMatched"]; ok {
				page["numberMatched"] = json.RawMessage(matched)
				delete(page, "context")
				body, _ = json.Marshal(page)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A numberMatched written as 12.0 or "12" is read; a negative or nonsense
// one is ignored with a note, and the search still answers (12.0
// failed the whole search while -5 was shown as the match count).
func TestSearchItemsToleratesOddMatchCounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw     string
		matched int // 0: none
		note    string
	}{
		{"12.0", 12, ""},
		{`"12"`, 12, ""},
		{"-5", 0, "numberMatched -5, which is not a count"},
		{`"lots"`, 0, `numberMatched "lots", which is not a count`},
	} {
		cs := newTestSession(t, testSessionOptions{CatalogURL: rewritingCatalog(t, c.raw)})
		res := callTool(t, cs, "search_items", map[string]any{"collections": "sentinel-2-l2a", "max_items": 2})
		if res.IsError {
			t.Errorf("numberMatched %s failed the search: %s", c.raw, resultText(res))
			continue
		}
		out := structured[SearchItemsOut](t, res)
		switch {
		case c.matched != 0 && (out.Matched == nil || *out.Matched != c.matched):
			t.Errorf("numberMatched %s: matched %v, want %d", c.raw, out.Matched, c.matched)
		case c.matched == 0 && out.Matched != nil:
			t.Errorf("numberMatched %s: matched %d shown, want none", c.raw, *out.Matched)
		case c.note != "" && !strings.Contains(strings.Join(out.Notes, " "), c.note):
			t.Errorf("numberMatched %s: notes %v lack %q", c.raw, out.Notes, c.note)
		}
	}
}

// deepItemCatalog answers every item request and search with one item whose
// properties nest depth levels deep.
func deepItemCatalog(t *testing.T, depth int) string {
	t.Helper()
	deep := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	item := `{"type":"Feature","stac_version":"1.0.0","id":"deep","collection":"c","geometry":null,"links":[],"assets":{},` +
		`"properties":{"datetime":"2024-01-01T00:00:00Z","x":` + deep + `}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/" || strings.HasSuffix(r.URL.Path, "/conformance"):
			_, _ = io.WriteString(w, `{"type":"Catalog","id":"x","description":"d","stac_version":"1.0.0","links":[{"rel":"search","href":"/search","method":"GET"}],`+
				`"conformsTo":["https://api.stacspec.org/v1.0.0/core","https://api.stacspec.org/v1.0.0/item-search","https://api.stacspec.org/v1.0.0/ogcapi-features"]}`)
		case strings.HasSuffix(r.URL.Path, "/search"):
			_, _ = io.WriteString(w, `{"type":"FeatureCollection","features":[`+item+`],"links":[]}`)
		default:
			_, _ = io.WriteString(w, item)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An item nested near or past the 1000 levels the SDK's output check
// allows is refused as a clear isError result, never a JSON-RPC error with
// code 0; a deep but sane item still comes back.
func TestDeeplyNestedItemsAreAToolError(t *testing.T) {
	t.Parallel()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"search_items", map[string]any{"max_items": 1}},
		{"search_items", map[string]any{"max_items": 1, "detail": "full"}},
		{"get_item", map[string]any{"collection_id": "c", "item_id": "deep"}},
	}
	for _, depth := range []int{995, 1000, 5000} {
		cs := newTestSession(t, testSessionOptions{CatalogURL: deepItemCatalog(t, depth)})
		for _, c := range calls {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Errorf("depth %d, %s %v: protocol error %v, want an isError result", depth, c.tool, c.args, err)
				continue
			}
			if !res.IsError || !strings.Contains(resultText(res), "nested more than 512 levels deep") {
				t.Errorf("depth %d, %s %v: %q, want an isError result about the nesting", depth, c.tool, c.args, resultText(res))
			}
		}
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: deepItemCatalog(t, 400)})
	for _, c := range calls {
		callOK(t, cs, c.tool, c.args)
	}
}
