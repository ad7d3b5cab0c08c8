package stacclient

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func fakeClient(t *testing.T, f *fakeSearch) *Client {
	t.Helper()
	c, err := New(f.URL+"/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func allIDs(pages [][]string) []string {
	var out []string
	for _, p := range pages {
		out = append(out, p...)
	}
	return out
}

func TestSearchFollowsEveryNextLinkStyle(t *testing.T) {
	for _, style := range []string{"GET", "POST", "MERGE"} {
		t.Run(style, func(t *testing.T) {
			f := newFakeSearch(t, idPages(3, 4), style)
			c := fakeClient(t, f)
			s := c.Search(SearchParams{Collections: []string{"c1"}, Limit: 4}, SearchLimits{})
			got := collectIDs(t, s)
			if want := allIDs(f.pages); !reflect.DeepEqual(got, want) {
				t.Errorf("ids = %v, want %v", got, want)
			}
			if s.StopReason() != StopNoNext || s.Position() != nil {
				t.Errorf("stop %s cursor %+v, want no_next_link and nil", s.StopReason(), s.Position())
			}
			log := f.log()
			last := log[len(log)-1]
			switch style {
			case "GET":
				if last.Method != "GET" || last.RawQuery != "page=3" {
					t.Errorf("last request %s ?%s, want the relative href resolved as given (GET ?page=3)", last.Method, last.RawQuery)
				}
			case "POST":
				if last.Method != "POST" || string(last.Body) != `{"page":3}` {
					t.Errorf("last request %s %s, want POST with the link body only", last.Method, last.Body)
				}
			case "MERGE":
				var body map[string]any
				_ = json.Unmarshal(last.Body, &body)
				if body["page"] != float64(3) || body["collections"] == nil || body["limit"] != float64(4) {
					t.Errorf("last request body %s, want the original body overlaid with {page: 3}", last.Body)
				}
			}
		})
	}
}

func TestSearchStopsOnCycle(t *testing.T) {
	f := newFakeSearch(t, idPages(3, 2), "GET")
	f.nextOf = func(page int) int { return map[int]int{1: 2, 2: 3, 3: 2}[page] } // 3 → 2 again
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{})
	got := collectIDs(t, s)
	if want := allIDs(f.pages); !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if s.StopReason() != StopCycle || s.Position() != nil {
		t.Errorf("stop %s cursor %+v, want cycle and nil", s.StopReason(), s.Position())
	}
	if n := f.count("GET", "/search") + f.count("POST", "/search"); n != 3 {
		t.Errorf("%d search requests, want 3 (the repeated link is not fetched)", n)
	}
}

func TestSearchStopsOnNeverAdvancingPOSTLink(t *testing.T) {
	f := newFakeSearch(t, idPages(2, 2), "POST")
	f.nextOf = func(page int) int { return 2 } // page 2 links to itself
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{MaxPages: 50})
	if got := collectIDs(t, s); len(got) != 4 {
		t.Errorf("got %v, want 4 items", got)
	}
	if s.StopReason() != StopCycle {
		t.Errorf("stop = %s, want cycle", s.StopReason())
	}
}

func TestSearchDropsDuplicateIDs(t *testing.T) {
	f := newFakeSearch(t, [][]string{{"a", "b", "c"}, {"c", "d", "a", "d"}, {"b", "a"}, {"e"}}, "GET")
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{})
	var dropped []int
	var got []string
	for p, err := range s.Pages(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		dropped = append(dropped, p.Dropped)
		for _, it := range p.Items {
			got = append(got, it.ID)
		}
	}
	if want := []string{"a", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids = %v, want %v", got, want)
	}
	if want := []int{0, 3, 2}; !reflect.DeepEqual(dropped, want) {
		t.Errorf("dropped per page = %v, want %v", dropped, want)
	}
	if s.StopReason() != StopNoNewIDs {
		t.Errorf("stop = %s, want no_new_ids (page 3 held only seen ids; page 4 not fetched)", s.StopReason())
	}
}

func TestSearchStopsOnEmptyPageEvenWithNextLink(t *testing.T) {
	f := newFakeSearch(t, [][]string{{"a"}, {}, {"b"}}, "POST")
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{})
	if got := collectIDs(t, s); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("ids = %v, want [a]", got)
	}
	if s.StopReason() != StopEmptyPage || s.Position() != nil {
		t.Errorf("stop %s cursor %+v, want empty_page, nil", s.StopReason(), s.Position())
	}
}

func TestSearchMaxPages(t *testing.T) {
	f := newFakeSearch(t, idPages(5, 2), "GET")
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{MaxPages: 2})
	if got := collectIDs(t, s); len(got) != 4 {
		t.Errorf("got %d items, want 4", len(got))
	}
	cur := s.Position()
	if s.StopReason() != StopMaxPages || cur == nil || cur.Request.URL != f.URL+"/search?page=3" || cur.Skip != 0 {
		t.Errorf("stop %s cursor %+v, want max_pages at page 3", s.StopReason(), cur)
	}
}

// drain continues a search from cursor to cursor, each leg capped at
// maxItems, and returns every id in order.
func drain(t *testing.T, c *Client, maxItems int, useItems bool) []string {
	t.Helper()
	var got []string
	s := c.Search(SearchParams{Limit: 3}, SearchLimits{MaxItems: maxItems})
	for legs := 0; ; legs++ {
		if legs > 100 {
			t.Fatal("cursor never ran out")
		}
		n := 0
		if useItems {
			for it, err := range s.Items(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, it.ID)
				n++
			}
		} else {
			for p, err := range s.Pages(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range p.Items {
					got = append(got, it.ID)
					n++
				}
			}
		}
		if n > maxItems {
			t.Fatalf("a leg yielded %d items, over MaxItems %d", n, maxItems)
		}
		cur := s.Position()
		if cur == nil {
			return got
		}
		if s.StopReason() != StopMaxItems {
			t.Fatalf("cursor %+v with stop %s", cur, s.StopReason())
		}
		roundTripped := roundTripPosition(t, *cur)
		s = c.ContinueSearch(roundTripped, SearchLimits{MaxItems: maxItems})
	}
}

// roundTripPosition passes a position through JSON, as a tool call would.
func roundTripPosition(t *testing.T, cur Position) Position {
	t.Helper()
	b, err := json.Marshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	var back Position
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestSearchMaxItemsAndCursorLoseNothingRepeatNothing(t *testing.T) {
	pages := [][]string{{"a", "b", "c"}, {"d", "b", "e"}, {"f", "g", "h"}, {"i"}}
	want := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	for _, style := range []string{"GET", "POST", "MERGE"} {
		for _, useItems := range []bool{false, true} {
			for maxItems := 1; maxItems <= 10; maxItems++ {
				f := newFakeSearch(t, pages, style)
				got := drain(t, fakeClient(t, f), maxItems, useItems)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s items=%v max_items=%d: got %v, want %v", style, useItems, maxItems, got, want)
				}
			}
		}
	}
}

func TestSearchMaxItemsSkippedAndCursorMidPage(t *testing.T) {
	f := newFakeSearch(t, idPages(3, 4), "GET")
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{MaxItems: 6})
	var pages []*Page
	for p, err := range s.Pages(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	if len(pages) != 2 || len(pages[1].Items) != 2 || pages[1].Skipped != 2 {
		t.Fatalf("pages %d, last page items/skipped = %d/%d; want 2 pages, 2 yielded, 2 skipped", len(pages), len(pages[len(pages)-1].Items), pages[len(pages)-1].Skipped)
	}
	cur := s.Position()
	if cur == nil || cur.Skip != 2 || cur.Request.URL != f.URL+"/search?page=2" {
		t.Errorf("cursor = %+v, want page 2 with skip 2", cur)
	}
}

func TestSearchItemsBreakLeavesCursorAfterLastItem(t *testing.T) {
	f := newFakeSearch(t, idPages(3, 3), "POST")
	c := fakeClient(t, f)
	s := c.Search(SearchParams{}, SearchLimits{})
	var got []string
	for it, err := range s.Items(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, it.ID)
		if len(got) == 4 {
			break
		}
	}
	if s.StopReason() != StopConsumer {
		t.Errorf("stop = %s, want %s", s.StopReason(), StopConsumer)
	}
	rest := collectIDs(t, c.ContinueSearch(*s.Position(), SearchLimits{}))
	if all := append(got, rest...); !reflect.DeepEqual(all, allIDs(f.pages)) {
		t.Errorf("before+after break = %v, want %v", all, allIDs(f.pages))
	}
}

func TestSearchFallsBackToGETAfterPOST405(t *testing.T) {
	f := newFakeSearch(t, idPages(2, 2), "GET")
	f.rejectPOST = true
	c := fakeClient(t, f)
	s := c.Search(SearchParams{Collections: []string{"c1"}}, SearchLimits{})
	if got := collectIDs(t, s); len(got) != 4 {
		t.Fatalf("got %v, want 4 items via GET", got)
	}
	if s.Method() != "GET" {
		t.Errorf("Method = %s, want GET after the 405", s.Method())
	}
	// The client remembers: a second search goes straight to GET.
	if got := collectIDs(t, c.Search(SearchParams{}, SearchLimits{})); len(got) != 4 {
		t.Fatalf("second search: %v", got)
	}
	if n := f.count("POST", "/search"); n != 1 {
		t.Errorf("%d POST searches, want exactly 1 (then remembered)", n)
	}
	first := f.log()[2] // after "/" and the rejected POST
	if first.Method != "GET" || first.RawQuery != "collections=c1" {
		t.Errorf("fallback request %s ?%s, want GET ?collections=c1", first.Method, first.RawQuery)
	}
}

func TestSearchUsesGETWhenSearchLinkHasNoMethod(t *testing.T) {
	f := newFakeSearch(t, idPages(1, 2), "GET")
	f.searchMethods = []string{""}
	s := fakeClient(t, f).Search(SearchParams{IDs: []string{"i0"}}, SearchLimits{})
	collectIDs(t, s)
	if s.Method() != "GET" || f.count("POST", "/search") != 0 {
		t.Errorf("method %s, POSTs %d; a search link without method means GET", s.Method(), f.count("POST", "/search"))
	}
}

func TestSearchMatchedAndRootReuse(t *testing.T) {
	f := newFakeSearch(t, idPages(3, 2), "POST")
	n := 42
	f.matched = &n
	c := fakeClient(t, f)
	s := c.Search(SearchParams{}, SearchLimits{})
	collectIDs(t, s)
	if got, ok := s.Matched(); !ok || got != 42 {
		t.Errorf("Matched = %d, %v; want 42", got, ok)
	}
	collectIDs(t, c.Search(SearchParams{}, SearchLimits{}))
	if roots := f.count("GET", "/"); roots != 1 {
		t.Errorf("landing page fetched %d times for two searches, want 1 (cached)", roots)
	}
}

func TestSearchErrorKeepsCursorToRetry(t *testing.T) {
	f := newFakeSearch(t, idPages(2, 2), "GET")
	f.nextOf = func(page int) int { return page + 1 } // page 2 links to a page that does not exist
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{})
	var got []string
	var err error
	for it, e := range s.Items(context.Background()) {
		if e != nil {
			err = e
			break
		}
		got = append(got, it.ID)
	}
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindBadRequest || se.Status != 400 || se.Message != "no page 3" {
		t.Fatalf("err = %v, want bad_request 400 'no page 3'", err)
	}
	if len(got) != 4 || s.StopReason() != StopError {
		t.Errorf("got %v stop %s", got, s.StopReason())
	}
	if cur := s.Position(); cur == nil || cur.Request.URL != f.URL+"/search?page=3" {
		t.Errorf("cursor = %+v, want the failed request", cur)
	}
}

func TestSearchInvalidParamsSendNothing(t *testing.T) {
	f := newFakeSearch(t, idPages(1, 1), "GET")
	s := fakeClient(t, f).Search(SearchParams{BBox: []float64{1, 2, 3}}, SearchLimits{})
	err := lastItemError(s)
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Param != "bbox" {
		t.Fatalf("err = %v, want a ParamError for bbox", err)
	}
	if len(f.log()) != 0 {
		t.Errorf("%d requests sent for invalid parameters", len(f.log()))
	}
}

func TestCanonicalRequestKeyIgnoresKeyOrder(t *testing.T) {
	a := Request{Method: "POST", URL: "http://x/search", Body: json.RawMessage(`{"b":1,"a":[1,2]}`)}
	b := Request{Method: "post", URL: "http://x/search", Body: json.RawMessage(`{ "a":[1,2], "b":1 }`)}
	c := Request{Method: "POST", URL: "http://x/search", Body: json.RawMessage(`{"a":[2,1],"b":1}`)}
	if requestKey(a) != requestKey(b) {
		t.Errorf("same request, different keys: %q %q", requestKey(a), requestKey(b))
	}
	if requestKey(a) == requestKey(c) {
		t.Errorf("different bodies, same key %q", requestKey(a))
	}
}

func TestNextRequestRefusesAGrowingHref(t *testing.T) {
	c, _ := New("http://x/", Options{})
	long := "http://x/search?next=" + string(slices.Repeat([]byte("a"), maxNextURLLength))
	next, why := c.nextRequest(&Link{Rel: "next", Href: long}, Request{Method: "GET", URL: "http://x/search"}, nil)
	if next != nil || !strings.Contains(why, strconv.Itoa(len(long))+" characters long") {
		t.Errorf("next %+v, refusal %q; want no request and the length named", next, why)
	}
}

func TestCursorCarriesRecentKeysOnly(t *testing.T) {
	f := newFakeSearch(t, idPages(30, 10), "GET")
	s := fakeClient(t, f).Search(SearchParams{}, SearchLimits{MaxItems: 255})
	collectIDs(t, s)
	cur := s.Position()
	// fakeItemJSON items have no collection: the key is "\x00" + id.
	if cur == nil || len(cur.Seen) != MaxPositionSeen || cur.Seen[len(cur.Seen)-1] != keyFingerprint("\x00i254") ||
		cur.Seen[0] != keyFingerprint("\x00i239") || cur.Skip != 5 || cur.Offset != 250 {
		t.Fatalf("cursor = %+v; want skip 5 on the page at offset 250 and the fingerprints of i239..i254", cur)
	}
}

func TestNegativeLimitsAreParamErrors(t *testing.T) {
	f := newFakeSearch(t, idPages(1, 1), "GET")
	c := fakeClient(t, f)
	for param, lim := range map[string]SearchLimits{"max_items": {MaxItems: -1}, "max_pages": {MaxPages: -2}} {
		err := lastItemError(c.Search(SearchParams{}, lim))
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != param {
			t.Errorf("%+v: err = %v, want a ParamError for %s", lim, err, param)
		}
	}
	if n := len(f.log()); n != 0 {
		t.Errorf("%d requests sent for invalid limits", n)
	}
}

// lastItemError drains a search's items and returns the last error it
// yielded, nil when there was none.
func lastItemError(s *Search) error {
	var err error
	for _, e := range s.Items(context.Background()) {
		err = e
	}
	return err
}
