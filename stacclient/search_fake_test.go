package stacclient

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeSearch is an httptest STAC API whose /search serves fixed pages of
// item ids, with next links in a chosen style. Page numbers start at 1.
type fakeSearch struct {
	*httptest.Server
	pages [][]string
	// style is how next links are written: "GET" (href ?page=N), "POST"
	// (body {"page": N}, merge false) or "MERGE" (body {"page": N}, merge
	// true).
	style string
	// nextOf gives the page a page's next link points to; 0 means no link.
	nextOf func(page int) int
	// searchMethods are the methods of the landing page's search links.
	searchMethods []string
	// rejectPOST answers every POST /search with 405.
	rejectPOST bool
	matched    *int

	mu       sync.Mutex
	requests []fakeRequest
}

type fakeRequest struct {
	Method, Path, RawQuery string
	Body                   []byte
	Header                 http.Header
}

func newFakeSearch(t *testing.T, pages [][]string, style string) *fakeSearch {
	t.Helper()
	f := &fakeSearch{pages: pages, style: style, searchMethods: []string{"GET", "POST"}}
	f.nextOf = func(page int) int {
		if page < len(f.pages) {
			return page + 1
		}
		return 0
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSearch) log() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

func (f *fakeSearch) count(method, path string) int {
	n := 0
	for _, r := range f.log() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

func (f *fakeSearch) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Body: body, Header: r.Header.Clone()})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/":
		var links []string
		for _, m := range f.searchMethods {
			links = append(links, fmt.Sprintf(`{"rel":"search","href":%q,"method":%q}`, f.URL+"/search", m))
		}
		fmt.Fprintf(w, `{"type":"Catalog","id":"fake","description":"fake","stac_version":"1.0.0",
			"conformsTo":["https://api.stacspec.org/v1.0.0/core","https://api.stacspec.org/v1.0.0/item-search"],
			"links":[%s]}`, strings.Join(links, ","))
	case "/search":
		if r.Method == http.MethodPost && f.rejectPOST {
			w.WriteHeader(http.StatusMethodNotAllowed)
			fmt.Fprint(w, `{"code":"MethodNotAllowed","description":"POST is disabled"}`)
			return
		}
		page := 1
		if v := r.URL.Query().Get("page"); v != "" {
			page, _ = strconv.Atoi(v)
		}
		if r.Method == http.MethodPost && len(body) > 0 {
			var b struct {
				Page int `json:"page"`
			}
			if err := json.Unmarshal(body, &b); err == nil && b.Page > 0 {
				page = b.Page
			}
		}
		if page < 1 || page > len(f.pages) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"description":"no page %d"}`, page)
			return
		}
		fmt.Fprint(w, f.pageJSON(page))
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"description":"Not Found"}`)
	}
}

func fakeItemJSON(id string) string {
	return fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"geometry":null,"properties":{"datetime":"2020-01-01T00:00:00Z"},"links":[],"assets":{}}`, id)
}

func (f *fakeSearch) pageJSON(page int) string {
	items := make([]string, len(f.pages[page-1]))
	for i, id := range f.pages[page-1] {
		items[i] = fakeItemJSON(id)
	}
	links := []string{}
	if next := f.nextOf(page); next > 0 {
		switch f.style {
		case "GET":
			// relative href: resolved against the page URL
			links = append(links, fmt.Sprintf(`{"rel":"next","href":"search?page=%d"}`, next))
		case "POST":
			links = append(links, fmt.Sprintf(`{"rel":"next","href":%q,"method":"POST","body":{"page":%d}}`, f.URL+"/search", next))
		case "MERGE":
			links = append(links, fmt.Sprintf(`{"rel":"next","href":%q,"method":"POST","merge":true,"body":{"page":%d}}`, f.URL+"/search", next))
		}
	}
	matched := ""
	if f.matched != nil {
		matched = fmt.Sprintf(`,"numberMatched":%d`, *f.matched)
	}
	return fmt.Sprintf(`{"type":"FeatureCollection","features":[%s],"links":[%s]%s}`, strings.Join(items, ","), strings.Join(links, ","), matched)
}

// idPages builds n pages of size ids each: "i0", "i1", ….
func idPages(n, size int) [][]string {
	pages := make([][]string, n)
	k := 0
	for p := range pages {
		for range size {
			pages[p] = append(pages[p], "i"+strconv.Itoa(k))
			k++
		}
	}
	return pages
}
