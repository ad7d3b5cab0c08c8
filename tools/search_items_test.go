package tools

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

func TestSearchItemsSummaryPage(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "search_items", map[string]any{"collections": []string{"joplin"}, "max_items": 5})
	out := structured[SearchItemsOut](t, res)
	if out.Returned != 5 || len(out.Items) != 5 || len(out.Features) != 0 {
		t.Fatalf("returned %d, items %d, features %d; want 5, 5, 0", out.Returned, len(out.Items), len(out.Features))
	}
	if out.Matched == nil || *out.Matched != 30 {
		t.Errorf("matched = %v, want 30 (the catalog reports it)", out.Matched)
	}
	if !out.HasMore || out.Cursor == "" || !out.Truncated {
		t.Errorf("has_more %v, cursor %q, truncated %v: want more results with a cursor", out.HasMore, out.Cursor, out.Truncated)
	}
	joplin := demoItemIDs(t, "joplin")
	for _, it := range out.Items {
		if !slices.Contains(joplin, it.ID) || it.Collection != "joplin" || it.Datetime == "" || len(it.BBox) != 4 {
			t.Errorf("summary %+v: want a joplin item with datetime and bbox", it)
		}
		if it.AssetCount == 0 || len(it.Assets) == 0 || it.Assets[0].Href == "" {
			t.Errorf("summary %s has no asset details: %+v", it.ID, it.Assets)
		}
	}
	if text := resultText(res); !strings.Contains(text, out.Items[0].ID) || !strings.Contains(text, out.Cursor) {
		t.Errorf("text block lacks the first id or the cursor:\n%s", text)
	}
	if out.Search["collections"] == nil {
		t.Errorf("search echo lacks collections: %v", out.Search)
	}
}

func TestSearchItemsSummaryCapsAssetsAndSaysSo(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "sentinel-2-l2a", "max_items": 1}))
	it := out.Items[0]
	if len(it.Assets) != maxSummaryAssets || len(it.Assets)+len(it.OtherAssetKeys) != it.AssetCount {
		t.Fatalf("assets %d + other %d, asset_count %d: want %d detailed and the rest named", len(it.Assets), len(it.OtherAssetKeys), it.AssetCount, maxSummaryAssets)
	}
	if it.CloudCover == nil || it.Platform == "" {
		t.Errorf("sentinel-2 summary lacks cloud cover or platform: %+v", it)
	}
	for _, a := range it.Assets {
		if !strings.HasPrefix(a.Href, "https://") {
			t.Errorf("asset %s (%s) is detailed before the HTTP-fetchable ones", a.Key, a.Href)
		}
	}
	if !out.Truncated {
		t.Error("truncated = false although assets were left out of the summary")
	}
}

func TestSearchItemsFullDetailReturnsCompleteItems(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "max_items": 2, "detail": "full"}))
	if len(out.Features) != 2 || len(out.Items) != 0 {
		t.Fatalf("features %d, items %d; want 2 full items and no summaries", len(out.Features), len(out.Items))
	}
	for _, f := range out.Features {
		for _, key := range []string{"type", "stac_version", "id", "geometry", "properties", "links", "assets"} {
			if _, ok := f[key]; !ok {
				t.Errorf("full item lacks %q: %v", key, f)
			}
		}
	}
}

// TestSearchItemsCursorWalksWholeCollection pages through every joplin item
// with max_items 3, under several next-link styles, and checks that no item
// is lost or repeated.
func TestSearchItemsCursorWalksWholeCollection(t *testing.T) {
	t.Parallel()
	want := demoItemIDs(t, "joplin")
	for name, opts := range map[string]stacserver.Options{
		"default (POST merge:false)": {},
		"pgstac body token":          {NextLinkStyle: stacserver.NextPOSTBodyToken},
		"merge:true":                 {NextLinkStyle: stacserver.NextPOSTMergeTrue},
		"CMR GET cursor":             {NextLinkStyle: stacserver.NextGETCursor},
		"GET only, page size 4":      {DisablePOSTSearch: true, DefaultLimit: 4},
	} {
		t.Run(name, func(t *testing.T) {
			cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, opts)})
			var got []string
			args := map[string]any{"collections": "joplin", "max_items": 3}
			for call := 0; ; call++ {
				if call > 20 {
					t.Fatalf("still paging after %d calls; got %d ids", call, len(got))
				}
				out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
				for _, it := range out.Items {
					got = append(got, it.ID)
				}
				if !out.HasMore {
					if out.Cursor != "" {
						t.Errorf("last page has a cursor %q", out.Cursor)
					}
					break
				}
				if out.Returned != 3 {
					t.Errorf("call %d returned %d items before the end, want 3", call, out.Returned)
				}
				args = map[string]any{"cursor": out.Cursor, "max_items": 3}
			}
			sorted := slices.Clone(got)
			sort.Strings(sorted)
			if !slices.Equal(sorted, want) {
				t.Fatalf("paged ids (%d) differ from the collection's %d ids:\ngot  %v\nwant %v", len(got), len(want), sorted, want)
			}
		})
	}
}

func TestSearchItemsCursorWithTheSameParametersContinues(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	args := map[string]any{"collections": "joplin", "max_items": 4}
	first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
	args["cursor"] = first.Cursor
	second := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
	if second.Returned != 4 || second.Items[0].ID == first.Items[0].ID {
		t.Fatalf("continuation returned %d items starting at %s; want the next 4 after %s", second.Returned, second.Items[0].ID, first.Items[3].ID)
	}
	// A page size alone does not change the search (Python-style limit sets the total).
	third := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"cursor": second.Cursor, "limit": 2}))
	if third.Returned != 2 || third.Items[0].ID == second.Items[0].ID {
		t.Fatalf("cursor with limit 2 returned %d items starting at %s", third.Returned, third.Items[0].ID)
	}
}

func TestSearchItemsCursorMisuseIsAClearError(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "max_items": 2}))
	other := demoServer(t, stacserver.Options{})
	tampered := []byte(first.Cursor)
	// Swap one character for another valid base64url character, so only the checksum can tell.
	if mid := len(tampered) / 2; tampered[mid] == 'A' {
		tampered[mid] = 'B'
	} else {
		tampered[mid] = 'A'
	}
	for name, c := range map[string]struct {
		args map[string]any
		want []string
	}{
		"tampered":         {map[string]any{"cursor": string(tampered)}, []string{`"cursor"`, "damaged"}},
		"cut":              {map[string]any{"cursor": first.Cursor[:len(first.Cursor)-10]}, []string{`"cursor"`}},
		"not a cursor":     {map[string]any{"cursor": "page-2!"}, []string{`"cursor"`, "not a cursor"}},
		"other search":     {map[string]any{"cursor": first.Cursor, "collections": "naip"}, []string{`"cursor"`, "different search"}},
		"other catalog":    {map[string]any{"cursor": first.Cursor, "catalog_url": other}, []string{`"cursor"`, "issued for catalog"}},
		"collections kind": {map[string]any{"cursor": collectionsCursor(t, cs)}, []string{`"cursor"`, "collections cursor"}},
	} {
		t.Run(name, func(t *testing.T) {
			msg := callErr(t, cs, "search_items", c.args)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}

func collectionsCursor(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"limit": 1}))
	if out.Cursor == "" {
		t.Fatal("search_collections with limit 1 gave no cursor")
	}
	return out.Cursor
}

func TestSearchItemsAcceptsLooseForms(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	ids := func(args map[string]any) []string {
		out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
		var got []string
		for _, it := range out.Items {
			got = append(got, it.ID)
		}
		sort.Strings(got)
		return got
	}
	base := ids(map[string]any{"collections": []string{"joplin"}, "bbox": []float64{-94.6, 37.0, -94.5, 37.1}, "max_items": 50})
	if len(base) == 0 {
		t.Fatal("the array form found nothing; the comparison would be vacuous")
	}
	for name, args := range map[string]map[string]any{
		"JSON strings": {"collections": `["joplin"]`, "bbox": "[-94.6, 37.0, -94.5, 37.1]", "max_items": "50"},
		"comma forms":  {"collections": "joplin", "bbox": "-94.6,37.0,-94.5,37.1", "max_items": 50},
	} {
		if got := ids(args); !slices.Equal(got, base) {
			t.Errorf("%s: ids %v, want %v", name, got, base)
		}
	}
	filtered := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{
		"collections": "sentinel-2-l2a", "query": `{"eo:cloud_cover":{"lt":30}}`, "sortby": "-properties.datetime", "max_items": 10}))
	for _, it := range filtered.Items {
		if it.CloudCover == nil || *it.CloudCover >= 30 {
			t.Errorf("query string form not applied: %s has cloud cover %v", it.ID, it.CloudCover)
		}
	}
}

func TestSearchItemsRejectsGarbageNamingTheParameter(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	for _, c := range []struct {
		args  map[string]any
		param string
	}{
		{map[string]any{"bbox": "north of Paris"}, "bbox"},
		{map[string]any{"bbox": []float64{1, 2, 3}}, "bbox"},
		{map[string]any{"collections": `["joplin"`}, "collections"},
		{map[string]any{"datetime": "last tuesday"}, "datetime"},
		{map[string]any{"max_items": "lots"}, "max_items"},
		{map[string]any{"max_items": 1000}, "max_items"},
		{map[string]any{"limit": 20000}, "limit"},
		{map[string]any{"detail": "everything"}, "detail"},
		{map[string]any{"collections": 42}, "collections"},
	} {
		msg := callErr(t, cs, "search_items", c.args)
		if !strings.Contains(msg, c.param) {
			t.Errorf("%v: error %q does not name %q", c.args, msg, c.param)
		}
	}
	msg := callErr(t, cs, "search_items", map[string]any{"bbox": "north of Paris"})
	if !strings.Contains(msg, "north of Paris") || !strings.Contains(msg, "Accepted") {
		t.Errorf("bbox error %q should quote what was received and say what is accepted", msg)
	}
}

func TestSearchItemsWarnsAboutUndeclaredCapabilities(t *testing.T) {
	t.Parallel()
	url := demoServer(t, stacserver.Options{ConformsTo: conformanceWithout("#query", "#sort")})
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{
		"collections": "joplin", "query": "gsd>0", "sortby": "id", "max_items": 2}))
	joined := strings.Join(out.Warnings, "\n")
	for _, want := range []string{"query was sent", "sortby was sent"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q lack %q", out.Warnings, want)
		}
	}
	plain := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "max_items": 2}))
	if len(plain.Warnings) != 0 {
		t.Errorf("a search with only supported parameters warned: %q", plain.Warnings)
	}
}

func TestSearchItemsEmptyResultSaysWhatToRelax(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "datetime": "1990"}))
	if out.Returned != 0 || out.HasMore {
		t.Fatalf("returned %d, has_more %v; want an empty result", out.Returned, out.HasMore)
	}
	// The collection exists; its temporal extent (February 2000) says
	// which constraint emptied the search.
	if notes := strings.Join(out.Notes, " "); !strings.Contains(notes, "joplin': its temporal extent 2000-02-01T00:00:00Z to 2000-02-12T00:00:00Z does not overlap datetime 1990") {
		t.Errorf("notes %q do not name the datetime against joplin's extent", out.Notes)
	}
	// Nothing can be told from the extents (a threshold on a queryable
	// emptied it): the generic advice stays. (joplin's items carry no
	// eo:cloud_cover: a query on it is named as the cause instead.)
	out = structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "query": map[string]any{"gsd": map[string]any{"lt": -1}}}))
	if out.Returned != 0 || !strings.Contains(strings.Join(out.Notes, " "), "relax query/filter") {
		t.Errorf("returned %d, notes %q; want the advice to relax the query", out.Returned, out.Notes)
	}
}

// TestEmptySearchSaysWhichConstraintEmptiedIt: a bbox or an intersects
// geometry outside the collection's spatial extent, and an unknown
// collection id (with the closest real ones), are named; the same notes
// reach get_aggregations and estimate_data_size.
func TestEmptySearchSaysWhichConstraintEmptiedIt(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	notes := func(tool string, args map[string]any) string {
		t.Helper()
		raw := structured[struct {
			Notes []string `json:"notes"`
		}](t, callOK(t, cs, tool, args))
		return strings.Join(raw.Notes, " ")
	}
	paris := []float64{2.2, 48.8, 2.4, 48.9}
	if n := notes("search_items", map[string]any{"collections": "naip", "bbox": paris}); !strings.Contains(n, "naip': its spatial extent [-160, 17, -67, 50] does not meet the bbox [2.2, 48.8, 2.4, 48.9]") {
		t.Errorf("bbox outside naip: notes %q", n)
	}
	square := map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{2, 48}, {3, 48}, {3, 49}, {2, 49}, {2, 48}}}}
	if n := notes("search_items", map[string]any{"collections": "naip", "intersects": square}); !strings.Contains(n, "does not meet the intersects geometry (bounds [2, 48, 3, 49])") {
		t.Errorf("intersects outside naip: notes %q", n)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_items", map[string]any{"collections": "Sentinel-2-L2A"}},
		{"get_aggregations", map[string]any{"collections": "Sentinel-2-L2A", "aggregations": "total_count"}},
		{"estimate_data_size", map[string]any{"collections": "Sentinel-2-L2A"}},
	} {
		if n := notes(c.tool, c.args); !strings.Contains(n, "collection 'Sentinel-2-L2A' does not exist in this catalog: did you mean sentinel-2-l2a?") {
			t.Errorf("%s with a miscased collection: notes %q", c.tool, n)
		}
	}
}

// TestUnknownCollectionIDsGetSuggestions: every tool that takes one
// collection id answers a near miss with the closest real ids.
func TestUnknownCollectionIDsGetSuggestions(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_collection", map[string]any{"collection_id": "Sentinel-2-L2A"}, "did you mean sentinel-2-l2a?"},
		{"get_collection", map[string]any{"collection_id": "sentinel-2-l2"}, "did you mean sentinel-2-l2a or sentinel-2-l1c?"},
		{"get_queryables", map[string]any{"collection_id": "landsat"}, "did you mean landsat-8-l1 or landsat-c2-l2?"},
		{"get_item", map[string]any{"collection_id": "cop-dem-glo30", "item_id": "x"}, "did you mean cop-dem-glo-30?"},
	} {
		if msg := callErr(t, cs, c.tool, c.args); !strings.Contains(msg, c.want) || !strings.Contains(msg, "search_collections") {
			t.Errorf("%s %v: error %q, want %q and search_collections", c.tool, c.args, msg, c.want)
		}
	}
	if msg := callErr(t, cs, "get_collection", map[string]any{"collection_id": "zzzz"}); strings.Contains(msg, "did you mean") {
		t.Errorf("a far miss got suggestions: %q", msg)
	}
}

// TestSearchRefusedForAnUnknownCollection: a catalog that answers 404 to a
// search naming an unknown collection (as some do) gets the same
// suggestion in the error.
func TestSearchRefusedForAnUnknownCollection(t *testing.T) {
	t.Parallel()
	upstream := demoServer(t, stacserver.Options{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"code":"NotFoundError","description":"collection not found"}`))
			return
		}
		proxy, err := http.NewRequest(r.Method, upstream+r.URL.RequestURI(), r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		proxy.Host = r.Host // the catalog's links then point here
		res, err := http.DefaultClient.Do(proxy)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(front.Close)
	cs := newTestSession(t, testSessionOptions{CatalogURL: front.URL})
	msg := callErr(t, cs, "search_items", map[string]any{"collections": "sentinel2-l2a"})
	if !strings.Contains(msg, "collection 'sentinel2-l2a' does not exist in this catalog: did you mean sentinel-2-l2a or sentinel2_l2a?") {
		t.Errorf("error %q does not name the unknown collection with suggestions", msg)
	}
}

func TestSearchItemsLimitCapsTheTotalOnlyWithoutMaxItems(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	pyStyle := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "limit": 1}))
	if pyStyle.Returned != 1 || !strings.Contains(strings.Join(pyStyle.Notes, " "), "follows limit") {
		t.Errorf("limit 1 alone: returned %d, notes %q; want 1 item and a note that max_items followed limit", pyStyle.Returned, pyStyle.Notes)
	}
	paged := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "limit": 2, "max_items": 7}))
	if paged.Returned != 7 || len(paged.Notes) != 0 {
		t.Errorf("limit 2 with max_items 7: returned %d, notes %q; want 7 items over several pages", paged.Returned, paged.Notes)
	}
}

func TestSearchItemsWarnsWhenFullDetailIsLarge(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "sentinel-2-l2a", "max_items": 7, "detail": "full"}))
	if out.Returned != 7 || !strings.Contains(strings.Join(out.Warnings, " "), "detail=full output is") {
		t.Errorf("returned %d, warnings %q; want a size warning for 7 full Sentinel-2 items", out.Returned, out.Warnings)
	}
}

func TestSearchItemsExplainsCatalogsThatRequireCollections(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, stacserver.Options{RequireCollections: true})})
	msg := callErr(t, cs, "search_items", map[string]any{"bbox": "-94.7,37.0,-94.4,37.2"})
	if !strings.Contains(msg, "pass collections") || !strings.Contains(msg, "search_collections") {
		t.Errorf("error %q should tell the model to pass collections", msg)
	}
	if out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "joplin", "max_items": 1})); out.Returned != 1 {
		t.Errorf("with collections: returned %d, want 1", out.Returned)
	}
}
