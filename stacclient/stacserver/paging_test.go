package stacserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// pagedQuery matches s-00..s-12 (cloud cover 0..48): 13 items, 4 pages of 4.
func pagedQuery() map[string]any {
	return map[string]any{"collections": []string{"sentinel"}, "limit": 4,
		"query": map[string]any{"eo:cloud_cover": map[string]any{"lt": 50}}}
}

const pagedQueryString = "collections=sentinel&limit=4&query=%7B%22eo%3Acloud_cover%22%3A%7B%22lt%22%3A50%7D%7D"

func wantEachOnce(t *testing.T, ids []string, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("item %s seen %d times, want once (all ids %v)", id, seen[id], ids)
		}
	}
	if len(ids) != len(want) {
		t.Errorf("saw %d items, want %d: %v", len(ids), len(want), ids)
	}
}

func TestNextLinkStyles(t *testing.T) {
	want := sentinelIDs(0, 12)
	cases := []struct {
		name  string
		style NextLinkStyle
		// check inspects the first page's next link after a POST search.
		check func(t *testing.T, next map[string]any)
	}{
		{"default is stac-server POST merge false", NextDefault, checkMergeFalse},
		{"stac-server POST merge false", NextPOSTMergeFalse, checkMergeFalse},
		{"pgstac POST body token with the query repeated", NextPOSTBodyToken, func(t *testing.T, next map[string]any) {
			body := next["body"].(map[string]any)
			tok, _ := body["token"].(string)
			if next["method"] != "POST" || !strings.HasPrefix(tok, "next:") || body["collections"] == nil || body["query"] == nil {
				t.Errorf("want POST with the query and token next:…, got %v", next)
			}
			if _, has := next["merge"]; has {
				t.Errorf("pgstac links carry no merge: %v", next)
			}
		}},
		{"pgstac POST token only", NextPOSTTokenOnly, func(t *testing.T, next map[string]any) {
			body := next["body"].(map[string]any)
			if tok, _ := body["token"].(string); next["method"] != "POST" || len(body) != 1 || !strings.HasPrefix(tok, "next:") {
				t.Errorf("want POST with only a next: token, got %v", next)
			}
		}},
		{"Astraea POST merge true", NextPOSTMergeTrue, func(t *testing.T, next map[string]any) {
			body := next["body"].(map[string]any)
			if next["method"] != "POST" || next["merge"] != true || len(body) != 1 || body["next"] == nil {
				t.Errorf("want POST merge:true with body {next}, got %v", next)
			}
		}},
		{"CMR GET cursor after POST", NextGETCursor, func(t *testing.T, next map[string]any) {
			checkGETHref(t, next, "cursor")
		}},
		{"GET next token after POST", NextGETToken, func(t *testing.T, next map[string]any) {
			checkGETHref(t, next, "next")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, Options{NextLinkStyle: c.style})
			first := ts.post(t, "/search", pagedQuery())
			wantStatus(t, first, http.StatusOK)
			next := linkByRel(first.body, "next")
			if next == nil {
				t.Fatalf("no next link: %s", first.raw)
			}
			c.check(t, next)

			ids, pages, _ := ts.followAll(t, http.MethodPost, "/search", pagedQuery(), 10)
			wantEachOnce(t, ids, want)
			if pages != 4 {
				t.Errorf("POST: %d pages, want 4", pages)
			}
			// A GET search pages with GET links in every style.
			ids, pages, reqs := ts.followAll(t, http.MethodGet, "/search?"+pagedQueryString, nil, 10)
			wantEachOnce(t, ids, want)
			for _, r := range reqs {
				if !strings.HasPrefix(r, "GET ") {
					t.Errorf("GET search followed a non-GET link: %s", r)
				}
			}
			if pages != 4 {
				t.Errorf("GET: %d pages, want 4", pages)
			}
		})
	}
}

func checkMergeFalse(t *testing.T, next map[string]any) {
	t.Helper()
	body, _ := next["body"].(map[string]any)
	if next["method"] != "POST" || next["merge"] != false || body["next"] == nil || body["query"] == nil || body["collections"] == nil {
		t.Errorf("want POST merge:false with the full body plus next, got %v", next)
	}
}

func checkGETHref(t *testing.T, next map[string]any, param string) {
	t.Helper()
	if m, has := next["method"]; has && m != "GET" {
		t.Errorf("method %v, want GET", m)
	}
	u, err := url.Parse(next["href"].(string))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get(param) == "" || q.Get("collections") != "sentinel" || q.Get("query") == "" || q.Get("limit") != "4" {
		t.Errorf("GET href should repeat every parameter plus %s=: %s", param, u)
	}
}

func TestPageTokensAreDeterministicAndBoundToTheirQuery(t *testing.T) {
	ts := startServer(t, Options{})
	a := linkByRel(ts.get(t, "/search?"+pagedQueryString).body, "next")["href"].(string)
	b := linkByRel(ts.get(t, "/search?"+pagedQueryString).body, "next")["href"].(string)
	if a != b {
		t.Errorf("same query gave different next links:\n%s\n%s", a, b)
	}
	u, _ := url.Parse(a)
	token := u.Query().Get("next")
	r := ts.get(t, "/search?collections=landsat&next="+url.QueryEscape(token))
	wantStatus(t, r, http.StatusBadRequest)
	if d := r.body["description"].(string); !strings.Contains(d, "different query") || !strings.Contains(d, `parameter "next"`) {
		t.Errorf("description %q", r.body["description"])
	}
}

func TestItemsEndpointPagingFollowsAll(t *testing.T) {
	for _, style := range []NextLinkStyle{NextDefault, NextPOSTBodyToken, NextGETCursor} {
		ts := startServer(t, Options{NextLinkStyle: style})
		ids, pages, _ := ts.followAll(t, http.MethodGet, "/collections/sentinel/items?limit=7", nil, 10)
		wantEachOnce(t, ids, sentinelIDs(0, sentinelCount-1))
		if pages != 4 {
			t.Errorf("style %d: %d pages, want 4", style, pages)
		}
	}
}

func TestLimitClampAndReject(t *testing.T) {
	clamp := startServer(t, Options{MaxLimit: 5})
	r := clamp.get(t, "/search?limit=100")
	wantStatus(t, r, http.StatusOK)
	if n := len(featureIDs(t, r)); n != 5 {
		t.Errorf("clamped page has %d items, want 5", n)
	}
	if l := numberField(t, r.body["context"].(map[string]any), "limit"); l != 5 {
		t.Errorf("context.limit %d, want the clamped 5", l)
	}
	p := clamp.post(t, "/search", map[string]any{"limit": 100})
	if n := len(featureIDs(t, p)); n != 5 {
		t.Errorf("clamped POST page has %d items, want 5", n)
	}

	reject := startServer(t, Options{MaxLimit: 1000, LimitMode: LimitReject, DefaultLimit: 250})
	r = reject.get(t, "/search?limit=1001")
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if d := r.body["description"].(string); !strings.Contains(d, "limit") || !strings.Contains(d, "1000") {
		t.Errorf("422 description %q should name limit and the maximum", d)
	}
	wantStatus(t, reject.post(t, "/search", map[string]any{"limit": 5000}), http.StatusUnprocessableEntity)
	ok := reject.get(t, "/search")
	if n := len(featureIDs(t, ok)); n != totalItems {
		t.Errorf("default limit 250 should return all %d items, got %d", totalItems, n)
	}
	wantStatus(t, reject.get(t, "/collections?limit=1001"), http.StatusUnprocessableEntity)
}

func TestRequireCollections(t *testing.T) {
	ts := startServer(t, Options{RequireCollections: true})
	for _, r := range []response{ts.get(t, "/search"), ts.post(t, "/search", map[string]any{"limit": 1})} {
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if r.body["description"] != "collection is required" {
			t.Errorf("description %q", r.body["description"])
		}
	}
	wantStatus(t, ts.get(t, "/search?collections=dem"), http.StatusOK)
	byFilter := ts.post(t, "/search", map[string]any{"filter": map[string]any{"op": "=",
		"args": []any{map[string]any{"property": "collection"}, "dem"}}})
	wantStatus(t, byFilter, http.StatusOK)
	if got := sortedIDs(t, byFilter); !equalStrings(got, []string{"d-0", "d-1"}) {
		t.Errorf("filter on collection gave %v", got)
	}
}

func TestFaultRepeatNextLink(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		ts := startServer(t, Options{RepeatNextLink: true})
		var body map[string]any
		target := "/search?" + pagedQueryString
		if method == http.MethodPost {
			body, target = pagedQuery(), "/search"
		}
		_, _, reqs := followUpTo(t, ts, method, target, body, 4)
		if reqs[2] != reqs[3] || reqs[1] != reqs[2] {
			t.Errorf("%s: next link advanced; requests:\n%s", method, strings.Join(reqs, "\n"))
		}
	}
}

func TestFaultDuplicateAcrossPages(t *testing.T) {
	ts := startServer(t, Options{DuplicateAcrossPages: true})
	pagesIDs, _, _ := followUpTo(t, ts, http.MethodPost, "/search", pagedQuery(), 20)
	var all []string
	for i, ids := range pagesIDs {
		if i > 0 && ids[0] != pagesIDs[i-1][len(pagesIDs[i-1])-1] {
			t.Errorf("page %d starts with %s, want the last id of page %d (%v)", i+1, ids[0], i, pagesIDs)
		}
		all = append(all, ids...)
	}
	unique := map[string]bool{}
	for _, id := range all {
		unique[id] = true
	}
	if len(unique) != 13 || len(all) <= 13 {
		t.Errorf("want all 13 items with duplicates, got %d unique of %d", len(unique), len(all))
	}
}

func TestFaultTrailingEmptyPage(t *testing.T) {
	ts := startServer(t, Options{TrailingEmptyPage: true})
	pagesIDs, last, _ := followUpTo(t, ts, http.MethodGet, "/search?"+pagedQueryString, nil, 10)
	if len(pagesIDs) != 5 || len(pagesIDs[4]) != 0 {
		t.Fatalf("want 4 full pages and a trailing empty one, got %v", pagesIDs)
	}
	if linkByRel(last.body, "next") != nil {
		t.Errorf("the empty page still links on")
	}
	if len(pagesIDs[3]) != 1 {
		t.Errorf("page 4 should hold the last item: %v", pagesIDs)
	}
}

func TestFaultGrowingNextHref(t *testing.T) {
	ts := startServer(t, Options{GrowingNextHref: true})
	_, _, reqs := followUpTo(t, ts, http.MethodGet, "/search?"+pagedQueryString, nil, 10)
	if len(reqs) != 4 {
		t.Fatalf("want 4 pages, got %d", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if len(reqs[i]) <= len(reqs[i-1])+growthPerPage/2 {
			t.Errorf("request %d (%d bytes) did not grow from %d bytes", i, len(reqs[i]), len(reqs[i-1]))
		}
	}
	ids, _, _ := ts.followAll(t, http.MethodPost, "/search", pagedQuery(), 10)
	wantEachOnce(t, ids, sentinelIDs(0, 12))
}

// followUpTo follows next links for at most n pages and returns each
// page's ids, the last response and the requests made.
func followUpTo(t *testing.T, ts *testServer, method, target string, body map[string]any, n int) ([][]string, response, []string) {
	t.Helper()
	var pages [][]string
	var reqs []string
	var r response
	var reqBody any
	if body != nil {
		reqBody = body
	}
	for len(pages) < n {
		reqs = append(reqs, fmt.Sprintf("%s %s %s", method, target, compactJSONFull(reqBody)))
		r = ts.do(t, method, target, reqBody)
		wantStatus(t, r, http.StatusOK)
		pages = append(pages, featureIDs(t, r))
		next := linkByRel(r.body, "next")
		if next == nil {
			break
		}
		target, _ = next["href"].(string)
		method = "GET"
		reqBody = nil
		if m, _ := next["method"].(string); m == "POST" {
			method, reqBody = m, next["body"]
		}
	}
	return pages, r, reqs
}

// A token-only next request carries neither the query nor the limit; the
// server must continue the same query with the same page size.
func TestTokenOnlyKeepsQueryAndPageSize(t *testing.T) {
	ts := startServer(t, Options{NextLinkStyle: NextPOSTTokenOnly})
	pagesIDs, _, reqs := followUpTo(t, ts, http.MethodPost, "/search", map[string]any{"limit": 7}, 10)
	if len(pagesIDs) != 5 {
		t.Fatalf("%d pages, want 5 (32 items by 7): %v", len(pagesIDs), reqs)
	}
	var all []string
	for i, ids := range pagesIDs {
		if want := min(7, totalItems-7*i); len(ids) != want {
			t.Errorf("page %d has %d items, want %d", i+1, len(ids), want)
		}
		all = append(all, ids...)
	}
	var want []string
	for _, it := range newTestStore(t).allItems(nil) {
		want = append(want, it.id)
	}
	wantEachOnce(t, all, want)

	filtered, _, _ := ts.followAll(t, http.MethodPost, "/search", pagedQuery(), 10)
	wantEachOnce(t, filtered, sentinelIDs(0, 12))
}

// A POST search whose next link is a GET (CMR style) must describe the same
// query, whatever optional members the body had.
func TestGETCursorAfterPOSTKeepsTheQuery(t *testing.T) {
	ts := startServer(t, Options{NextLinkStyle: NextGETCursor})
	body := map[string]any{
		"collections": []string{"landsat", "sentinel"}, "limit": 3, "fields": map[string]any{"include": []string{}},
		"intersects": squareGeometry(-10, 0, 180, 41), "datetime": "2019-01-01T00:00:00Z/..",
		"sortby": []any{map[string]any{"field": "id", "direction": "desc"}},
		"filter": map[string]any{"op": "<", "args": []any{map[string]any{"property": "eo:cloud_cover"}, 60}}, "filter-lang": "cql2-json",
	}
	ids, pages, reqs := ts.followAll(t, http.MethodPost, "/search", body, 20)
	// Cloud cover below 60 inside lon -10..180: s-00..s-14, l-0 and l-2
	// (l-1 lies west of -178, l-3 is 75, l-4 has none).
	want := append(sentinelIDs(0, 14), "l-0", "l-2")
	wantEachOnce(t, ids, want)
	if pages != 6 {
		t.Errorf("%d pages, want 6", pages)
	}
	if sorted := sortedCopy(ids); !equalStrings(reverse(sorted), ids) {
		t.Errorf("sortby -id not kept across GET pages: %v (requests %v)", ids, reqs)
	}
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
