package tools

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

// Regression tests for the cursor findings of issues 9, 10 and 11. The
// "forged" cursors below are what an attacker can build from the published
// v1 format (JSON behind an unkeyed, truncated SHA-256): none may do
// anything but fail with an error naming the cursor.

// forgeV1 builds a token of the v1 format: six bytes of SHA-256, then JSON.
func forgeV1(t *testing.T, payload map[string]any) string {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	return base64.RawURLEncoding.EncodeToString(append(sum[:6:6], body...))
}

// hitRecorder is an httptest server that records every request it gets.
type hitRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string
}

func newHitRecorder(t *testing.T) *hitRecorder {
	t.Helper()
	h := &hitRecorder{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits = append(h.hits, fmt.Sprintf("%s %s %v", r.Method, r.URL, r.Header))
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/geo+json")
		fmt.Fprint(w, `{"type":"FeatureCollection","features":[],"links":[]}`)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hitRecorder) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hits...)
}

// A collections cursor with limit -1 panicked (slice
// bounds out of range) and the process exited.
func TestForgedCollectionsCursorWithANegativeLimitIsAnError(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	for _, listing := range []map[string]any{
		{"limit": -1},
		{"limit": 0},
		{"limit": 1 << 40},
	} {
		token := forgeV1(t, map[string]any{"v": 1, "k": "collections", "c": "demo", "u": "", "o": 3, "l": listing})
		msg := callErr(t, cs, "search_collections", map[string]any{"cursor": token})
		if !strings.Contains(msg, "cursor") {
			t.Errorf("listing %v: error %q does not name the cursor", listing, msg)
		}
	}
	// The server still answers.
	callOK(t, cs, "search_collections", map[string]any{"limit": 1})
}

// A forged items cursor could send any method with any
// headers to the catalog origin, or rebase an empty demo base URL into an
// off-host URL.
func TestForgedItemsCursorsSendNothing(t *testing.T) {
	catalog := newHitRecorder(t)
	evil := newHitRecorder(t)
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	cs := newTestSession(t, testSessionOptions{CatalogURL: catalog.URL})
	demoCS := newTestSession(t, testSessionOptions{})
	for name, c := range map[string]struct {
		session func() string
		payload map[string]any
	}{
		"DELETE with headers to the catalog": {nil, map[string]any{"v": 1, "k": "items", "c": catalog.URL, "u": catalog.URL,
			"s": map[string]any{"request": map[string]any{"method": "DELETE", "url": catalog.URL + "/collections/x", "headers": map[string]string{"X-HTTP-Method-Override": "DELETE"}}}}},
		"GET to another host": {nil, map[string]any{"v": 1, "k": "items", "c": catalog.URL, "u": catalog.URL,
			"s": map[string]any{"request": map[string]any{"method": "GET", "url": evil.URL + "/search"}}}},
		"demo rebased off-host": {func() string { return "demo" }, map[string]any{"v": 1, "k": "items", "c": "demo", "u": "",
			"s": map[string]any{"request": map[string]any{"method": "GET", "url": "@" + evilHost + "/search"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			session := cs
			if c.session != nil {
				session = demoCS
			}
			before, evilBefore := len(catalog.requests()), len(evil.requests())
			res := callTool(t, session, "search_items", map[string]any{"cursor": forgeV1(t, c.payload)})
			if msg := resultText(res); !res.IsError || !strings.Contains(msg, "cursor") {
				t.Errorf("isError %v, %q: want an error naming the cursor", res.IsError, msg)
			}
			if got := evil.requests()[evilBefore:]; len(got) > 0 {
				t.Errorf("the other host received %q", got)
			}
			if got := catalog.requests()[before:]; len(got) > 0 {
				t.Errorf("the catalog received %q", got)
			}
		})
	}
}

// STAC ids are unique only within a collection.
func TestSearchKeepsItemsThatShareAnIDAcrossCollections(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"ids": []string{"S2B_20EPT_20250731_0_L2A"}}))
	if out.Returned != 2 || out.Matched == nil || *out.Matched != 2 {
		t.Fatalf("returned %d of %v matched, want both items with that id", out.Returned, out.Matched)
	}
	if out.Items[0].Collection == out.Items[1].Collection {
		t.Errorf("both items are in %s; want one per collection", out.Items[0].Collection)
	}
}

func TestPagingTheWholeDemoYieldsEveryItemOnce(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	seen := map[string]bool{}
	args := map[string]any{"max_items": 7}
	var matched int
	for call := 0; call < 100; call++ {
		out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
		if out.Matched != nil {
			matched = *out.Matched
		}
		for _, it := range out.Items {
			key := it.Collection + "/" + it.ID
			if seen[key] {
				t.Errorf("%s returned twice", key)
			}
			seen[key] = true
		}
		if !out.HasMore {
			break
		}
		args = map[string]any{"cursor": out.Cursor, "max_items": 7}
	}
	if matched == 0 || len(seen) != matched {
		t.Errorf("paged %d distinct items, the catalog matched %d", len(seen), matched)
	}
}

// The cursor knows its catalog; following the text's own advice
// ("call search_items with cursor X") must work without catalog_url.
func TestCursorContinuesOnItsOwnCatalogWithoutCatalogURL(t *testing.T) {
	other := demoServer(t, stacserver.Options{})
	cs := newTestSession(t, testSessionOptions{CatalogURL: other})
	for _, catalog := range []string{"demo", other + "/"} {
		first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"catalog_url": catalog, "collections": "joplin", "max_items": 2}))
		next := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"cursor": first.Cursor}))
		if next.Returned == 0 || next.Items[0].ID == first.Items[0].ID || next.Items[0].ID == first.Items[1].ID {
			t.Errorf("%s: continuation returned %+v after %s, %s", catalog, next.Items, first.Items[0].ID, first.Items[1].ID)
		}
		cols := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"catalog_url": catalog, "limit": 1}))
		more := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"cursor": cols.Cursor}))
		if more.Returned == 0 || more.Collections[0].ID == cols.Collections[0].ID {
			t.Errorf("%s: collections continuation returned %+v after %s", catalog, more.Collections, cols.Collections[0].ID)
		}
	}
	// A contradicting catalog_url is refused.
	first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"catalog_url": "demo", "collections": "joplin", "max_items": 2}))
	msg := callErr(t, cs, "search_items", map[string]any{"cursor": first.Cursor, "catalog_url": other})
	if !strings.Contains(msg, "cursor") || !strings.Contains(msg, "demo") {
		t.Errorf("contradicting catalog_url: error %q should name the cursor and its catalog", msg)
	}
}

// Continuing with a new max_items or limit uses them (after
// max_items 2, asking for 30 made 15 upstream requests of 2 items).
func TestCursorHonoursANewPageSize(t *testing.T) {
	var searches atomic.Int32
	url := demoServer(t, stacserver.Options{OnRequest: func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/search") {
			searches.Add(1)
		}
	}})
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"max_items": 2}))
	searches.Store(0)
	next := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"cursor": first.Cursor, "max_items": 30}))
	if next.Returned != 30 {
		t.Fatalf("returned %d, want 30", next.Returned)
	}
	if n := searches.Load(); n > 2 {
		t.Errorf("max_items 30 after max_items 2 took %d search requests, want at most 2", n)
	}
	searches.Store(0)
	limited := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"cursor": next.Cursor, "max_items": 20, "limit": 5}))
	if limited.Returned != 20 || searches.Load() != 4 {
		t.Errorf("limit 5, max_items 20: returned %d in %d requests, want 20 in 4", limited.Returned, searches.Load())
	}
}

// A cursor stays within 512 bytes whatever the search and depth.
func TestCursorsStaySmallAtAnyDepth(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	polygon := bigPolygon(400)
	for name, args := range map[string]map[string]any{
		"plain":   {"max_items": 3},
		"polygon": {"intersects": polygon, "max_items": 3},
	} {
		t.Run(name, func(t *testing.T) {
			for page := 1; page <= 12; page++ {
				res := callOK(t, cs, "search_items", args)
				out := structured[SearchItemsOut](t, res)
				if !out.HasMore {
					t.Fatalf("page %d: no more results; the test needs 12 pages", page)
				}
				if len(out.Cursor) > cursor.MaxBytes {
					t.Fatalf("page %d: cursor is %d bytes, want at most %d", page, len(out.Cursor), cursor.MaxBytes)
				}
				next := map[string]any{"cursor": out.Cursor, "max_items": 3}
				if strings.Contains(resultText(res), "same search parameters") {
					next["intersects"] = polygon
				}
				args = next
			}
		})
	}
}

// bigPolygon is a closed ring of n vertices around most of the globe.
func bigPolygon(n int) map[string]any {
	ring := make([][]float64, 0, n+1)
	for i := range n {
		f := float64(i) / float64(n)
		var lon, lat float64
		switch q := int(f * 4); q {
		case 0:
			lon, lat = -179.9+359.8*(f*4), -89.9
		case 1:
			lon, lat = 179.9, -89.9+179.8*(f*4-1)
		case 2:
			lon, lat = 179.9-359.8*(f*4-2), 89.9
		default:
			lon, lat = -179.9, 89.9-179.8*(f*4-3)
		}
		ring = append(ring, []float64{float64(int(lon*1e6)) / 1e6, float64(int(lat*1e6)) / 1e6})
	}
	ring = append(ring, ring[0])
	return map[string]any{"type": "Polygon", "coordinates": [][][]float64{ring}}
}

// Next links from a catalog get the cursor's rules: GET or POST
// only, on the catalog's origin, under its root. One that breaks them (or
// is over 16 KiB) stops paging with a warning; has_more stays true.
func TestSearchRefusesNextLinksOutsideTheCatalog(t *testing.T) {
	other := newHitRecorder(t)
	for name, c := range map[string]struct {
		link func(base string) string // the next link object
		want string
	}{
		"other origin": {func(string) string { return fmt.Sprintf(`{"rel":"next","href":%q}`, other.URL+"/stac/search?page=2") }, "another origin"},
		"outside root": {func(base string) string { return fmt.Sprintf(`{"rel":"next","href":%q}`, base+"/admin/search?page=2") }, "outside the catalog"},
		"PUT method": {func(base string) string {
			return fmt.Sprintf(`{"rel":"next","href":%q,"method":"PUT"}`, base+"/stac/search")
		}, "PUT"},
		"over 16 KiB": {func(base string) string {
			return fmt.Sprintf(`{"rel":"next","href":%q}`, base+"/stac/search?page=2&pad="+strings.Repeat("x", 17<<10))
		}, "characters long"},
		"not a valid URL": {func(string) string { return `{"rel":"next","href":"http://[::1"}` }, "not a valid URL"},
	} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.Path)
				mu.Unlock()
				switch r.URL.Path {
				case "/stac", "/stac/":
					fmt.Fprintf(w, `{"type":"Catalog","id":"c","description":"d","stac_version":"1.0.0","conformsTo":["https://api.stacspec.org/v1.0.0/item-search"],"links":[{"rel":"search","href":%q}]}`, srv.URL+"/stac/search")
				case "/stac/search":
					fmt.Fprintf(w, `{"type":"FeatureCollection","features":[{"type":"Feature","stac_version":"1.0.0","id":"a","collection":"c","geometry":null,"properties":{"datetime":"2020-01-01T00:00:00Z"},"links":[],"assets":{}}],"links":[%s]}`, c.link(srv.URL))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			cs := newTestSession(t, testSessionOptions{CatalogURL: srv.URL + "/stac"})
			out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"max_items": 5}))
			if out.Returned != 1 || !out.HasMore || out.Cursor != "" {
				t.Errorf("returned %d, has_more %v, cursor %q: want the one item, has_more true and no cursor", out.Returned, out.HasMore, out.Cursor)
			}
			if w := strings.Join(out.Warnings, " "); !strings.Contains(w, c.want) || !strings.Contains(w, "next link") {
				t.Errorf("warnings %q should say the next link was not followed (%s)", out.Warnings, c.want)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, s := range seen {
				if s != "GET /stac" && s != "GET /stac/search" && s != "GET /stac/conformance" {
					t.Errorf("the catalog received %s", s)
				}
			}
			if got := other.requests(); len(got) > 0 {
				t.Errorf("the other origin received %q", got)
			}
		})
	}
}

// A catalog whose next links grow with every page (pystac-client#680)
// still pages through cursors of at most 512 bytes: past a size, the
// cursor keeps the position as an offset and the next call pages again
// from the start, saying so.
func TestCursorOfGrowingNextLinksReplaysItsPosition(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, stacserver.Options{GrowingNextHref: true, NextLinkStyle: stacserver.NextGETToken})})
	want := demoItemIDs(t, "joplin")
	var got []string
	replayed := false
	args := map[string]any{"collections": "joplin", "max_items": 4}
	for call := 0; call < 20; call++ {
		out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
		for _, it := range out.Items {
			got = append(got, it.ID)
		}
		replayed = replayed || strings.Contains(strings.Join(out.Notes, " "), "paged again from the start")
		if !out.HasMore {
			break
		}
		if len(out.Cursor) > cursor.MaxBytes {
			t.Fatalf("call %d: %d-byte cursor", call, len(out.Cursor))
		}
		args = map[string]any{"cursor": out.Cursor, "max_items": 4}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("paged %d ids, want the %d joplin ids:\n%v", len(got), len(want), got)
	}
	if !replayed {
		t.Error("no call said it paged again from the start; the test did not reach the replay form")
	}
}

// Sending the same search again with every cursor is accepted on every
// page (the carried parameters stay byte for byte what the first call
// sent), and a changed one is refused.
func TestCursorWithTheSearchRepeatedOnEveryPage(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	search := map[string]any{"collections": "sentinel-2-l2a", "datetime": "2018/2026", "sortby": "-properties.datetime",
		"query": `{"eo:cloud_cover":{"lte":100}}`, "filter": map[string]any{"op": ">=", "args": []any{map[string]any{"property": "eo:cloud_cover"}, 0}}, "fields": "id,properties.datetime,-geometry",
		"intersects": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{-180, -80}, {180, -80}, {180, 80}, {-180, 80}, {-180, -80}}}}}
	args := map[string]any{"max_items": 1}
	for k, v := range search {
		args[k] = v
	}
	for page := 1; page <= 4; page++ {
		out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
		if !out.HasMore {
			t.Fatalf("page %d: no more items; the test needs 4 pages", page)
		}
		args["cursor"] = out.Cursor
	}
	args["datetime"] = "2019"
	if msg := callErr(t, cs, "search_items", args); !strings.Contains(msg, "different search") {
		t.Errorf("a changed datetime with the cursor: %q", msg)
	}
}

// The collections list follows the same next-link rules, and says when it
// stopped at one.
func TestSearchCollectionsSaysWhenANextLinkIsRefused(t *testing.T) {
	other := newHitRecorder(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stac":
			fmt.Fprint(w, `{"type":"Catalog","id":"c","description":"d","stac_version":"1.0.0","links":[]}`)
		case "/stac/collections":
			fmt.Fprintf(w, `{"collections":[{"type":"Collection","id":"one","description":"d","license":"x","extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[]}],`+
				`"links":[{"rel":"next","href":%q}]}`, other.URL+"/stac/collections?page=2")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cs := newTestSession(t, testSessionOptions{CatalogURL: srv.URL + "/stac"})
	out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{}))
	if out.Returned != 1 || !strings.Contains(strings.Join(out.Notes, " "), "another origin") {
		t.Errorf("returned %d, notes %q; want the one collection and a note on the refused next link", out.Returned, out.Notes)
	}
	if got := other.requests(); len(got) > 0 {
		t.Errorf("the other origin received %q", got)
	}
}
