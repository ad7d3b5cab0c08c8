package stacclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// pagedCatalog is a STAC API under /stac whose /stac/search serves pages of
// "collection/id" keys; page N links to page N+1 with the link nextLink
// writes (its default: GET search?page=N+1).
type pagedCatalog struct {
	*httptest.Server
	pages    [][]string
	nextLink func(c *pagedCatalog, page int) string

	mu   sync.Mutex
	seen []string // "METHOD path?query"
}

func newPagedCatalog(t *testing.T, pages ...[]string) *pagedCatalog {
	t.Helper()
	c := &pagedCatalog{pages: pages}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *pagedCatalog) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.seen = append(c.seen, r.Method+" "+r.URL.RequestURI())
	c.mu.Unlock()
	switch r.URL.Path {
	case "/stac":
		fmt.Fprintf(w, `{"type":"Catalog","id":"c","links":[{"rel":"search","href":%q}]}`, c.URL+"/stac/search")
	case "/stac/search":
		page := 1
		_, _ = fmt.Sscan(r.URL.Query().Get("page"), &page) // no page parameter: the first
		if page < 1 || page > len(c.pages) {
			http.Error(w, `{"description":"no such page"}`, http.StatusBadRequest)
			return
		}
		var feats []string
		for _, key := range c.pages[page-1] {
			coll, id, _ := strings.Cut(key, "/")
			feats = append(feats, fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"collection":%q,"geometry":null,"properties":{"datetime":"2020-01-01T00:00:00Z"},"links":[],"assets":{}}`, id, coll))
		}
		var links []string
		if page < len(c.pages) {
			link := fmt.Sprintf(`{"rel":"next","href":"search?page=%d"}`, page+1)
			if c.nextLink != nil {
				link = c.nextLink(c, page)
			}
			links = append(links, link)
		}
		fmt.Fprintf(w, `{"type":"FeatureCollection","features":[%s],"links":[%s]}`, strings.Join(feats, ","), strings.Join(links, ","))
	default:
		http.NotFound(w, r)
	}
}

func (c *pagedCatalog) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

func (c *pagedCatalog) client(t *testing.T) *Client {
	t.Helper()
	cl, err := New(c.URL+"/stac", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func keysOf(t *testing.T, s *Search) []string {
	t.Helper()
	var keys []string
	for it, err := range s.Items(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, it.Collection+"/"+it.ID)
	}
	return keys
}

func TestNextLinksOutsideTheCatalogAreNotFollowed(t *testing.T) {
	other := newPagedCatalog(t, []string{"x/evil"})
	for name, c := range map[string]struct {
		link func(c *pagedCatalog, page int) string
		want string
	}{
		"other origin": {func(*pagedCatalog, int) string {
			return fmt.Sprintf(`{"rel":"next","href":%q}`, other.URL+"/stac/search?page=2")
		}, "another origin"},
		"other port": {func(c *pagedCatalog, _ int) string {
			u, _ := url.Parse(other.URL)
			return fmt.Sprintf(`{"rel":"next","href":"http://127.0.0.1:%s/stac/search?page=2"}`, u.Port())
		}, "another origin"},
		"outside the root": {func(*pagedCatalog, int) string { return `{"rel":"next","href":"/admin/search?page=2"}` }, "outside the catalog"},
		"climbing out": {func(c *pagedCatalog, _ int) string {
			return fmt.Sprintf(`{"rel":"next","href":%q}`, c.URL+"/stac/../admin?page=2")
		}, "outside the catalog"},
		"DELETE": {func(*pagedCatalog, int) string { return `{"rel":"next","href":"search?page=2","method":"DELETE"}` }, "method DELETE"},
		"too long": {func(*pagedCatalog, int) string {
			return `{"rel":"next","href":"search?page=2&pad=` + strings.Repeat("p", maxNextURLLength) + `"}`
		}, "characters long"},
		"not a URL": {func(*pagedCatalog, int) string { return `{"rel":"next","href":"http://[::1"}` }, "not a valid URL"},
	} {
		t.Run(name, func(t *testing.T) {
			cat := newPagedCatalog(t, []string{"c/a"}, []string{"c/b"})
			cat.nextLink = c.link
			s := cat.client(t).Search(SearchParams{}, SearchLimits{})
			if got := keysOf(t, s); len(got) != 1 {
				t.Errorf("got %v, want only the first page", got)
			}
			if s.StopReason() != StopNextRefused || !strings.Contains(s.Refusal(), c.want) || s.Position() != nil {
				t.Errorf("stop %s, refusal %q, cursor %+v; want next_link_refused naming %q and no cursor", s.StopReason(), s.Refusal(), s.Position(), c.want)
			}
			for _, r := range cat.requests() {
				if r != "GET /stac" && r != "GET /stac/search" {
					t.Errorf("the catalog received %s", r)
				}
			}
			if got := other.requests(); len(got) > 0 {
				t.Errorf("the other server received %v", got)
			}
		})
	}
}

func TestAnHTTPNextLinkOfAnHTTPSCatalogIsUpgraded(t *testing.T) {
	c, _ := New("https://stac.example.test/v1", Options{})
	for href, want := range map[string]string{
		"http://stac.example.test/v1/search?page=2":    "https://stac.example.test/v1/search?page=2",
		"http://stac.example.test:80/v1/search?page=2": "https://stac.example.test/v1/search?page=2",
		"https://stac.example.test/v1/search?page=2":   "https://stac.example.test/v1/search?page=2",
	} {
		next, why := c.nextRequest(&Link{Rel: "next", Href: href}, Request{}, nil)
		if next == nil || next.URL != want {
			t.Errorf("%s: next %+v (%s), want %s", href, next, why, want)
		}
	}
	// Never a downgrade, nor another port.
	d, _ := New("http://stac.example.test/v1", Options{})
	if next, _ := d.nextRequest(&Link{Rel: "next", Href: "http://stac.example.test:8080/v1/search"}, Request{}, nil); next != nil {
		t.Errorf("followed a next link to another port: %+v", next)
	}
}

// STAC ids are unique only within a collection: the same id in
// two collections is two items; the same collection and id again is a
// duplicate.
func TestDuplicatesAreKeyedOnCollectionAndID(t *testing.T) {
	cat := newPagedCatalog(t, []string{"s2/a", "l8/a"}, []string{"s2/a", "s2/b"})
	got := keysOf(t, cat.client(t).Search(SearchParams{}, SearchLimits{}))
	if strings.Join(got, " ") != "s2/a l8/a s2/b" {
		t.Errorf("got %v, want s2/a l8/a s2/b", got)
	}
}

// A continued search drops what the cursor says its caller already got,
// even though the continuing process never saw it.
func TestContinuedSearchDropsItemsItsCursorSaw(t *testing.T) {
	cat := newPagedCatalog(t, []string{"c/a", "c/b", "c/c"}, []string{"c/c", "c/d"})
	c := cat.client(t)
	s := c.Search(SearchParams{}, SearchLimits{MaxItems: 3})
	keysOf(t, s)
	cur := s.Position()
	if cur == nil || cur.Offset != 3 || len(cur.Seen) != 3 {
		t.Fatalf("cursor %+v, want the page at offset 3 with 3 fingerprints", cur)
	}
	if got := keysOf(t, c.ContinueSearch(*cur, SearchLimits{})); strings.Join(got, " ") != "c/d" {
		t.Errorf("continued with %v, want only c/d", got)
	}
}

// A replay position (Position.Replay) pages again from the first request to its
// position without yielding what it passes, and fetches the page holding
// the position once.
func TestReplayPositionPagesBackToItsPlace(t *testing.T) {
	cat := newPagedCatalog(t, []string{"c/0", "c/1", "c/2"}, []string{"c/3", "c/4", "c/5"}, []string{"c/6", "c/7", "c/8"}, []string{"c/9"})
	c := cat.client(t)
	first := Request{Method: "GET", URL: cat.URL + "/stac/search"}
	s := c.ContinueSearch(Position{Request: first, Replay: true, Offset: 5, Skip: 2}, SearchLimits{MaxItems: 2})
	if got := keysOf(t, s); strings.Join(got, " ") != "c/7 c/8" {
		t.Errorf("got %v, want c/7 c/8", got)
	}
	if cur := s.Position(); cur == nil || cur.Offset != 9 || cur.Skip != 0 || cur.Replay {
		t.Errorf("cursor %+v, want the start of the page at offset 9", cur)
	}
	if n := len(cat.requests()); n != 3 {
		t.Errorf("%d requests (%v), want 3: the three pages up to the position, once each", n, cat.requests())
	}
	past := c.ContinueSearch(Position{Request: first, Replay: true, Offset: 10}, SearchLimits{})
	if got := keysOf(t, past); len(got) != 0 || past.StopReason() != StopNoNext {
		t.Errorf("replaying past the end: got %v, stop %s", got, past.StopReason())
	}
}

func TestContinueSearchSendsOnlyRequestsInTheCatalogsScope(t *testing.T) {
	cat := newPagedCatalog(t, []string{"c/a"})
	other := newPagedCatalog(t, []string{"x/evil"})
	c := cat.client(t)
	for name, r := range map[string]Request{
		"DELETE":       {Method: "DELETE", URL: cat.URL + "/stac/collections/c"},
		"other origin": {Method: "GET", URL: other.URL + "/stac/search"},
		"outside root": {Method: "GET", URL: cat.URL + "/admin"},
		"userinfo":     {Method: "GET", URL: "http://" + strings.TrimPrefix(cat.URL, "http://") + "@" + strings.TrimPrefix(other.URL, "http://") + "/stac/search"},
	} {
		var pe *ParamError
		if err := lastItemError(c.ContinueSearch(Position{Request: r}, SearchLimits{})); !errors.As(err, &pe) || pe.Param != "cursor" {
			t.Errorf("%s: err %v, want a cursor ParamError", name, err)
		}
	}
	if got := append(cat.requests(), other.requests()...); len(got) > 0 {
		t.Errorf("sent %v", got)
	}
}

// ApplyDiff rebuilds URLs on the client's own base: no diff, however
// crafted, names another host, a path outside the root or another method.
func TestApplyDiffStaysInTheCatalog(t *testing.T) {
	c, _ := New("https://stac.example.test/api/v1?key=k", Options{})
	p := SearchParams{Collections: []string{"a"}, Limit: 5}
	ok, err := c.ApplyDiff(context.Background(), p, RequestDiff{Method: "GET", Path: "/search", Query: []QueryPart{{Base: 0}, {Base: 2}, {Base: -1, Literal: "token=t"}}})
	if err != nil || ok.URL != "https://stac.example.test/api/v1/search?key=k&limit=5&token=t" {
		t.Fatalf("got %+v (%v)", ok, err)
	}
	for name, d := range map[string]RequestDiff{
		"DELETE":            {Method: "DELETE", Path: "/search"},
		"no method":         {Path: "/search"},
		"network path":      {Method: "GET", Path: "//evil.test/search"},
		"absolute":          {Method: "GET", Path: "https://evil.test/search"},
		"userinfo":          {Method: "GET", Path: "@evil.test/search"},
		"relative":          {Method: "GET", Path: "search"},
		"dot segments":      {Method: "GET", Path: "/../../admin"},
		"encoded dots":      {Method: "GET", Path: "/%2e%2e/%2e%2e/admin"},
		"query in path":     {Method: "GET", Path: "/search?x=1"},
		"base out of range": {Method: "GET", Path: "/search", Query: []QueryPart{{Base: 9}}},
		"fragment literal":  {Method: "GET", Path: "/search", Query: []QueryPart{{Base: -1, Literal: "a=b#frag"}}},
		"two pairs":         {Method: "GET", Path: "/search", Query: []QueryPart{{Base: -1, Literal: "a=b&c=d"}}},
		"empty literal":     {Method: "GET", Path: "/search", Query: []QueryPart{{Base: -1}}},
		"patch not object":  {Method: "POST", Path: "/search", Patch: []byte(`[1]`)},
	} {
		if r, err := c.ApplyDiff(context.Background(), p, d); err == nil {
			t.Errorf("%s: applied to %+v, want an error", name, r)
		}
	}
}
