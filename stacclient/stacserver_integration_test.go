package stacclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// The client against the in-process STAC API (stacclient/stacserver) over
// the embedded demo catalog. Expected results are computed here from the
// demo files themselves, not from the server.

// demoItems reads every item of the demo catalog (once).
func demoItems(t *testing.T) []stacclient.Item {
	t.Helper()
	items, err := loadDemoItems()
	if err != nil {
		t.Fatalf("demo items: %v", err)
	}
	return items
}

var loadDemoItems = sync.OnceValues(func() ([]stacclient.Item, error) {
	files, err := fs.Glob(demo.FS, "*/items/*.json")
	if err != nil {
		return nil, fmt.Errorf("no items in the demo catalog: %w", err)
	}
	if len(files) == 0 {
		return nil, errors.New("no items in the demo catalog")
	}
	items := make([]stacclient.Item, 0, len(files))
	for _, f := range files {
		raw, err := fs.ReadFile(demo.FS, f)
		if err != nil {
			return nil, err
		}
		var it stacclient.Item
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		items = append(items, it)
	}
	return items, nil
})

func demoIDs(t *testing.T, keep func(*stacclient.Item) bool) []string {
	var ids []string
	for _, it := range demoItems(t) {
		if keep(&it) {
			ids = append(ids, it.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// demoStore is loaded once: the store is read-only once serving.
var demoStore = sync.OnceValues(func() (*stacserver.Store, error) { return stacserver.LoadFS(demo.FS, demo.RootFile) })

func startDemo(t *testing.T, opts stacserver.Options) (*stacclient.Client, *stacserver.Server) {
	t.Helper()
	store, err := demoStore()
	if err != nil {
		t.Fatal(err)
	}
	srv := stacserver.New(store, opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c, err := stacclient.New(hs.URL, stacclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func searchAll(t *testing.T, s *stacclient.Search) []stacclient.Item {
	t.Helper()
	var items []stacclient.Item
	for it, err := range s.Items(t.Context()) {
		if err != nil {
			t.Fatalf("after %d items: %v", len(items), err)
		}
		items = append(items, *it)
	}
	return items
}

func sortedIDs(items []stacclient.Item) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	sort.Strings(ids)
	return ids
}

func requireUnique(t *testing.T, items []stacclient.Item) {
	t.Helper()
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.ID] {
			t.Errorf("item %s yielded twice", it.ID)
		}
		seen[it.ID] = true
	}
}

var nextLinkStyles = map[string]stacserver.NextLinkStyle{
	"default":           stacserver.NextDefault,
	"post-body-token":   stacserver.NextPOSTBodyToken,
	"post-token-only":   stacserver.NextPOSTTokenOnly,
	"post-merge-false":  stacserver.NextPOSTMergeFalse,
	"post-merge-true":   stacserver.NextPOSTMergeTrue,
	"get-cursor":        stacserver.NextGETCursor,
	"get-next-token":    stacserver.NextGETToken,
	"get-only-disabled": stacserver.NextDefault, // with POST search disabled
}

func TestStacserverEveryNextLinkStyle(t *testing.T) {
	want := demoIDs(t, func(it *stacclient.Item) bool { return it.Collection == "joplin" })
	for name, style := range nextLinkStyles {
		t.Run(name, func(t *testing.T) {
			c, srv := startDemo(t, stacserver.Options{NextLinkStyle: style, DisablePOSTSearch: name == "get-only-disabled"})
			s := c.Search(stacclient.SearchParams{Collections: []string{"joplin"}, Limit: 7}, stacclient.SearchLimits{})
			items := searchAll(t, s)
			requireUnique(t, items)
			if got := sortedIDs(items); !slices.Equal(got, want) {
				t.Errorf("got %d items, want the %d joplin items", len(got), len(want))
			}
			if s.StopReason() != stacclient.StopNoNext || s.Position() != nil {
				t.Errorf("stop %s cursor %+v", s.StopReason(), s.Position())
			}
			if n, ok := s.Matched(); ok && n != len(want) {
				t.Errorf("Matched = %d, want %d", n, len(want))
			}
			pages := srv.RequestCount("GET", "/search") + srv.RequestCount("POST", "/search")
			if pages != 5 { // 30 items at 7 per page
				t.Errorf("%d search requests, want 5", pages)
			}
		})
	}
}

// A cursor crosses tool calls as a RequestDiff against the search
// parameters; each leg may use another page size (limit), as a model's
// next call may ask for, and every item still comes exactly once.
func TestStacserverMaxItemsAcrossPagesAndCursor(t *testing.T) {
	want := demoIDs(t, func(it *stacclient.Item) bool { return it.Collection == "naip" })
	for name, style := range nextLinkStyles {
		t.Run(name, func(t *testing.T) {
			c, _ := startDemo(t, stacserver.Options{NextLinkStyle: style, DisablePOSTSearch: name == "get-only-disabled"})
			lim := stacclient.SearchLimits{MaxItems: 9}
			params := stacclient.SearchParams{Collections: []string{"naip"}, Limit: 4}
			s := c.Search(params, lim)
			var all []stacclient.Item
			for leg := 0; ; leg++ {
				items := searchAll(t, s)
				if len(items) > lim.MaxItems {
					t.Fatalf("leg %d yielded %d items, over max_items", leg, len(items))
				}
				all = append(all, items...)
				cur := s.Position()
				if cur == nil {
					break
				}
				diff, err := c.DiffRequest(params, cur.Request)
				if err != nil {
					t.Fatalf("leg %d: diff of %+v: %v", leg, cur.Request, err)
				}
				if b, _ := json.Marshal(diff); len(b) > 200 {
					t.Errorf("leg %d: the diff is %d bytes: %s", leg, len(b), b)
				}
				same, err := c.ApplyDiff(t.Context(), params, diff)
				if err != nil || same.Method != methodOf(cur.Request) || same.URL != cur.Request.URL || !sameJSON(same.Body, cur.Request.Body) {
					t.Fatalf("leg %d: diff %+v applied gives %+v (%v), want %+v", leg, diff, same, err, cur.Request)
				}
				params.Limit = 3 + leg%3
				next, err := c.ApplyDiff(t.Context(), params, diff)
				if err != nil {
					t.Fatal(err)
				}
				back := *cur
				back.Request = next
				s = c.ContinueSearch(back, lim)
				if leg > 20 {
					t.Fatal("cursor never ran out")
				}
			}
			requireUnique(t, all)
			if got := sortedIDs(all); !slices.Equal(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}
}

func TestStacserverEverySearchParameter(t *testing.T) {
	items := demoItems(t)
	byID := map[string]stacclient.Item{}
	for _, it := range items {
		byID[it.ID] = it
	}
	joplinFirst := demoIDs(t, func(it *stacclient.Item) bool { return it.Collection == "joplin" })[0]
	box := byID[joplinFirst].BBox
	cloudy := func(it *stacclient.Item) bool {
		cc, ok := it.PropertyFloat("eo:cloud_cover")
		return it.Collection == "sentinel-2-l2a" && ok && cc < 10
	}

	cases := []struct {
		name   string
		params stacclient.SearchParams
		want   []string // exact ids, sorted; nil when check says it all
		check  func(t *testing.T, got []stacclient.Item)
	}{
		{name: "collections", params: stacclient.SearchParams{Collections: []string{"naip", "cs3"}},
			want: demoIDs(t, func(it *stacclient.Item) bool { return it.Collection == "naip" || it.Collection == "cs3" })},
		{name: "ids", params: stacclient.SearchParams{IDs: []string{joplinFirst, "does-not-exist"}}, want: []string{joplinFirst}},
		{name: "bbox", params: stacclient.SearchParams{Collections: []string{"joplin"}, BBox: box},
			want: demoIDs(t, func(it *stacclient.Item) bool { return it.Collection == "joplin" && overlaps(it.BBox, box) })},
		{name: "intersects", params: stacclient.SearchParams{Collections: []string{"joplin"},
			Intersects: json.RawMessage(fmt.Sprintf(`{"type":"Point","coordinates":[%v,%v]}`, (box[0]+box[2])/2, (box[1]+box[3])/2))},
			check: func(t *testing.T, got []stacclient.Item) {
				if !slices.Contains(sortedIDs(got), joplinFirst) {
					t.Errorf("the item around the point is missing from %v", sortedIDs(got))
				}
			}},
		{name: "datetime", params: stacclient.SearchParams{Datetime: "2000-02-02T00:00:00Z/2000-02-02T23:59:59Z"},
			want: demoIDs(t, func(it *stacclient.Item) bool {
				dt, ok := it.Datetime()
				return ok && dt.Format(time.DateOnly) == "2000-02-02"
			})},
		{name: "query", params: stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"}, Query: map[string]any{"eo:cloud_cover": map[string]any{"lt": 10}}},
			want: demoIDs(t, cloudy)},
		{name: "filter", params: stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"},
			Filter: json.RawMessage(`{"op":"<","args":[{"property":"eo:cloud_cover"},10]}`), FilterLang: stacclient.FilterLangCQL2JSON},
			want: demoIDs(t, cloudy)},
		{name: "sortby", params: stacclient.SearchParams{Collections: []string{"naip"}, SortBy: []stacclient.SortField{{Field: "properties.datetime", Direction: "desc"}}},
			check: func(t *testing.T, got []stacclient.Item) {
				for i := 1; i < len(got); i++ {
					a, _ := got[i-1].Datetime()
					b, _ := got[i].Datetime()
					if b.After(a) {
						t.Fatalf("not descending at %d: %v then %v", i, a, b)
					}
				}
				if len(got) != 32 {
					t.Errorf("%d items, want 32", len(got))
				}
			}},
		{name: "fields", params: stacclient.SearchParams{Collections: []string{"cs3"}, Fields: &stacclient.Fields{Exclude: []string{"geometry", "assets"}}},
			check: func(t *testing.T, got []stacclient.Item) {
				for _, it := range got {
					if it.Geometry != nil || it.Assets != nil {
						t.Errorf("item %s kept excluded fields", it.ID)
					}
				}
				if len(got) != 2 {
					t.Errorf("%d items, want 2", len(got))
				}
			}},
	}
	for _, getOnly := range []bool{false, true} {
		c, _ := startDemo(t, stacserver.Options{DisablePOSTSearch: getOnly})
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/get-only=%v", tc.name, getOnly), func(t *testing.T) {
				if err := tc.params.Validate(); err != nil {
					t.Fatalf("params: %v", err)
				}
				s := c.Search(tc.params, stacclient.SearchLimits{})
				got := searchAll(t, s)
				requireUnique(t, got)
				if tc.want != nil && !slices.Equal(sortedIDs(got), tc.want) {
					t.Errorf("got %v\nwant %v", sortedIDs(got), tc.want)
				}
				if tc.want != nil && len(tc.want) == 0 {
					t.Fatal("test data gives an empty expectation; the case checks nothing")
				}
				if tc.check != nil {
					tc.check(t, got)
				}
				wantMethod := "POST"
				if getOnly {
					wantMethod = "GET"
				}
				if s.Method() != wantMethod {
					t.Errorf("method %s, want %s", s.Method(), wantMethod)
				}
			})
		}
	}
}

func overlaps(a, b []float64) bool {
	if len(a) < 4 || len(b) < 4 {
		return false
	}
	return a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3]
}

func TestStacserverLimitIsPageSize(t *testing.T) {
	c, _ := startDemo(t, stacserver.Options{})
	s := c.Search(stacclient.SearchParams{Collections: []string{"joplin"}, Limit: 5}, stacclient.SearchLimits{MaxPages: 2})
	var sizes []int
	for p, err := range s.Pages(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(p.Items))
	}
	if !slices.Equal(sizes, []int{5, 5}) || s.StopReason() != stacclient.StopMaxPages {
		t.Errorf("page sizes %v stop %s; want [5 5] and max_pages", sizes, s.StopReason())
	}
}

func TestStacserverPaginationFaults(t *testing.T) {
	params := stacclient.SearchParams{Collections: []string{"joplin"}, Limit: 10}
	cases := []struct {
		name  string
		opts  stacserver.Options
		stop  stacclient.StopReason
		check func(t *testing.T, s *stacclient.Search, items []stacclient.Item, dropped int)
	}{
		// The repeated link serves page 1 again: page 2 holds only seen ids,
		// which stops the iteration before the link could repeat a third time.
		{"repeated next link", stacserver.Options{RepeatNextLink: true}, stacclient.StopNoNewIDs,
			func(t *testing.T, _ *stacclient.Search, items []stacclient.Item, dropped int) {
				if len(items) != 10 || dropped != 10 {
					t.Errorf("items %d dropped %d; want 10 and 10", len(items), dropped)
				}
			}},
		{"trailing empty page", stacserver.Options{TrailingEmptyPage: true}, stacclient.StopEmptyPage,
			func(t *testing.T, _ *stacclient.Search, items []stacclient.Item, _ int) {
				if len(items) != 30 {
					t.Errorf("%d items, want 30", len(items))
				}
			}},
		{"duplicates across pages", stacserver.Options{DuplicateAcrossPages: true}, stacclient.StopNoNext,
			func(t *testing.T, _ *stacclient.Search, items []stacclient.Item, dropped int) {
				if dropped == 0 || len(items) != 30 {
					t.Errorf("dropped %d, items %d; want duplicates dropped and all 30 items once", dropped, len(items))
				}
			}},
		{"growing next href", stacserver.Options{GrowingNextHref: true}, stacclient.StopNoNext, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := startDemo(t, tc.opts)
			s := c.Search(params, stacclient.SearchLimits{})
			var items []stacclient.Item
			dropped := 0
			for p, err := range s.Pages(context.Background()) {
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, p.Items...)
				dropped += p.Dropped
			}
			requireUnique(t, items)
			if s.StopReason() != tc.stop {
				t.Errorf("stop = %s, want %s", s.StopReason(), tc.stop)
			}
			if tc.check != nil {
				tc.check(t, s, items, dropped)
			}
		})
	}
}

func TestStacserverSingleObjectsAndExtensions(t *testing.T) {
	ctx := context.Background()
	joplinFirst := demoIDs(t, func(it *stacclient.Item) bool { return it.Collection == "joplin" })[0]
	for _, disableFeatures := range []bool{false, true} {
		c, srv := startDemo(t, stacserver.Options{DisableFeatures: disableFeatures})
		it, err := c.Item(ctx, "joplin", joplinFirst)
		if err != nil || it.ID != joplinFirst {
			t.Fatalf("features disabled=%v: Item = %v, %v", disableFeatures, it, err)
		}
		// Without the items endpoints (the server still advertises the OGC
		// Features core class, so the client may try the path first and get
		// 404), the item comes from a search by ids.
		if searched := srv.RequestCount("GET", "/search"); disableFeatures && searched == 0 {
			t.Errorf("items endpoints disabled but no search by ids was made")
		} else if !disableFeatures && searched != 0 {
			t.Errorf("searched although the items endpoint answered")
		}
		_, err = c.Item(ctx, "joplin", "nope")
		var se *stacclient.Error
		if !errors.As(err, &se) || se.Kind != stacclient.KindNotFound {
			t.Errorf("features disabled=%v: missing item: %v, want not_found", disableFeatures, err)
		}
	}
	c, _ := startDemo(t, stacserver.Options{})
	col, err := c.Collection(ctx, "naip")
	if err != nil || col.ID != "naip" {
		t.Fatalf("Collection: %v %v", col, err)
	}
	_, err = c.Collection(ctx, "nope")
	var se *stacclient.Error
	if !errors.As(err, &se) || se.Kind != stacclient.KindNotFound {
		t.Errorf("missing collection: %v", err)
	}
	q, err := c.Queryables(ctx, "sentinel-2-l2a")
	if err != nil || len(q.Properties) == 0 {
		t.Errorf("Queryables: %v %v", q, err)
	}
	var total int
	for p, err := range c.CollectionPages(ctx, stacclient.CollectionQuery{Limit: 5}, stacclient.SearchLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		total += len(p.Collections)
	}
	if total != 16 {
		t.Errorf("%d collections, want the 16 of the demo catalog", total)
	}
	agg, err := c.Aggregate(ctx, stacclient.SearchParams{Collections: []string{"naip"}}, []string{"total_count"})
	if err != nil || len(agg.Aggregations) == 0 {
		t.Errorf("Aggregate: %+v %v", agg, err)
	}
	c2, _ := startDemo(t, stacserver.Options{DisableAggregation: true})
	if _, err := c2.Aggregate(ctx, stacclient.SearchParams{}, []string{"total_count"}); !errors.As(err, &se) || se.Kind != stacclient.KindUnsupported {
		t.Errorf("aggregation disabled: %v, want unsupported", err)
	}
}

func methodOf(r stacclient.Request) string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// sameJSON compares two JSON documents by value (both empty is equal).
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
