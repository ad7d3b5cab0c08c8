package stacclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// Tests against recordings of real catalogs, replayed offline
// (replay_server_test.go).

func replayClient(t *testing.T, baseURL string) *Client {
	t.Helper()
	c, err := New(baseURL, Options{})
	if err != nil {
		t.Fatalf("New(%q): %v", baseURL, err)
	}
	return c
}

// sameJSON compares two JSON documents semantically (key order and number
// spelling ignored).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("sameJSON: first document: %v", err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("sameJSON: second document: %v", err)
	}
	return reflect.DeepEqual(va, vb)
}

// recordedIDs lists the feature ids of a recorded search page.
func recordedIDs(t *testing.T, rs *replayServer, file string) []string {
	t.Helper()
	var ic struct {
		Features []struct {
			ID string `json:"id"`
		} `json:"features"`
	}
	if err := json.Unmarshal(rs.fixture(file).Body, &ic); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(ic.Features))
	for i, f := range ic.Features {
		ids[i] = f.ID
	}
	return ids
}

func collectIDs(t *testing.T, s *Search) []string {
	t.Helper()
	var ids []string
	for it, err := range s.Items(context.Background()) {
		if err != nil {
			t.Fatalf("search failed after %d items: %v", len(ids), err)
		}
		ids = append(ids, it.ID)
	}
	return ids
}

func TestReplayLandingPages(t *testing.T) {
	cases := []struct {
		host, path, file string
		wantMethod       string // first search method the client will use
		wantConformance  bool
	}{
		{"earth-search.aws.element84.com", "/v1", "0001-GET-v1-f63c21.json", "POST", true},
		{"eod-catalog-svc-prod.astraea.earth", "/", "0001-GET-root-c76702.json", "GET", true},
		{"stac.sage.uvt.ro", "/", "0001-GET-root-c76702.json", "POST", true},
		{"explorer.digitalearth.africa", "/stac", "0002-GET-stac-05b41c.json", "GET", true},
		{"explorer.digitalearth.africa", "/stac/", "0001-GET-stac-ccb5b0.json", "GET", true},
		{"earth-search.aws.element84.com", "/v0", "0008-GET-v0-8ad351.json", "GET", false},
	}
	for _, tc := range cases {
		t.Run(tc.host+tc.path, func(t *testing.T) {
			rs := newReplayServer(t, tc.host)
			c := replayClient(t, rs.URL+tc.path)
			root, err := c.Root(context.Background())
			if err != nil {
				t.Fatalf("Root: %v", err)
			}
			recorded := rs.rewriteOrigins(rs.fixture(tc.file).Body)
			written, err := json.Marshal(root)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, recorded, written) {
				t.Errorf("landing page did not round-trip:\nrecorded %s\nwritten  %s", recorded, written)
			}
			if got := rs.received()[0].Path; got != tc.path {
				t.Errorf("requested %q, want the base path exactly (trailing slash significant)", got)
			}
			if (len(root.ConformsTo) > 0) != tc.wantConformance {
				t.Errorf("conformsTo = %v, want present=%v", root.ConformsTo, tc.wantConformance)
			}
			target, err := c.searchTarget(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			method := "GET"
			if target.postURL != "" {
				method = "POST"
			}
			if method != tc.wantMethod {
				t.Errorf("search method = %s, want %s (from the rel=search links)", method, tc.wantMethod)
			}
			if len(rs.unrecorded()) != 0 {
				t.Errorf("unrecorded requests: %+v", rs.unrecorded())
			}
		})
	}
}

func TestReplayDigitalEarthAfricaTrailingSlash(t *testing.T) {
	for _, base := range []string{"/stac", "/stac/"} {
		rs := newReplayServer(t, "explorer.digitalearth.africa")
		c := replayClient(t, rs.URL+base)
		if got, want := c.endpoint("conformance"), rs.URL+"/stac/conformance"; got != want {
			t.Errorf("base %s: endpoint = %s, want %s", base, got, want)
		}
		q, err := c.Queryables(context.Background(), "")
		if err != nil {
			t.Fatalf("base %s: Queryables: %v", base, err)
		}
		if len(q.Properties) == 0 {
			t.Errorf("base %s: queryables without properties", base)
		}
		for _, r := range rs.received() {
			if strings.Contains(r.Path, "//") {
				t.Errorf("base %s: doubled slash in %s", base, r.Path)
			}
		}
	}
}

func TestReplayEarthSearchPostPagingEndsOnEmptyPage(t *testing.T) {
	rs := newReplayServer(t, "earth-search.aws.element84.com")
	c := replayClient(t, rs.URL+"/v1")
	params := SearchParams{
		Collections: []string{"sentinel-2-l2a", "landsat-c2-l2"},
		Intersects:  json.RawMessage(`{"type":"Point","coordinates":[-105.1019,40.1672]}`),
		Datetime:    "2023-10-08T00:00:00Z/2023-10-08T23:59:59Z",
	}
	s := c.Search(params, SearchLimits{})
	var pages []*Page
	for p, err := range s.Pages(context.Background()) {
		if err != nil {
			t.Fatalf("page %d: %v", len(pages)+1, err)
		}
		pages = append(pages, p)
	}
	if len(pages) != 2 {
		t.Fatalf("got %d pages, want 2 (2 items, then the recorded empty page)", len(pages))
	}
	if s.Method() != "POST" {
		t.Errorf("Method = %s, want POST (the landing page lists POST)", s.Method())
	}
	var got []string
	for _, it := range pages[0].Items {
		got = append(got, it.ID)
	}
	if want := recordedIDs(t, rs, "0019-POST-v1-search-6026bb.json"); !reflect.DeepEqual(got, want) {
		t.Errorf("page 1 ids = %v, want %v", got, want)
	}
	if len(pages[1].Items) != 0 || s.StopReason() != StopEmptyPage || s.Position() != nil {
		t.Errorf("end: %d items, stop %q, cursor %+v; want 0, empty_page, nil", len(pages[1].Items), s.StopReason(), s.Position())
	}
	// The second request is the next link's body exactly (merge: false).
	var link struct {
		Links []Link `json:"links"`
	}
	if err := json.Unmarshal(rs.fixture("0019-POST-v1-search-6026bb.json").Body, &link); err != nil {
		t.Fatal(err)
	}
	next := FindLink(link.Links, "next")
	reqs := rs.received()
	last := reqs[len(reqs)-1]
	if last.Method != "POST" || !sameJSON(t, last.Body, next.Body) {
		t.Errorf("second page request %s %s, want POST with the link body %s", last.Method, last.Body, next.Body)
	}
	if n, ok := s.Matched(); !ok || n != 2 {
		t.Errorf("Matched = %d, %v; want 2, true", n, ok)
	}
	if len(rs.unrecorded()) != 0 {
		t.Errorf("unrecorded requests: %+v", rs.unrecorded())
	}
}

func TestReplayEarthSearchTokenBodyCursor(t *testing.T) {
	rs := newReplayServer(t, "earth-search.aws.element84.com")
	c := replayClient(t, rs.URL+"/v1")
	params := SearchParams{Filter: json.RawMessage(`{"op":"lte","args":[{"property":"eo:cloud_cover"},40]}`), FilterLang: FilterLangCQL2JSON}
	s := c.Search(params, SearchLimits{MaxPages: 2})
	ids := collectIDs(t, s)
	want := append(recordedIDs(t, rs, "0005-POST-v1-search-b80653.json"), recordedIDs(t, rs, "0006-POST-v1-search-264dd1.json")...)
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids = %v\nwant %v", ids, want)
	}
	if s.StopReason() != StopMaxPages {
		t.Fatalf("stop = %s, want max_pages", s.StopReason())
	}
	cur := s.Position()
	if cur == nil || cur.Request.Method != "POST" || cur.Skip != 0 {
		t.Fatalf("cursor = %+v, want the POST of page 3", cur)
	}
	wantBody := `{"next":"2025-07-31T13:03:19.635000Z,S2B_24MUA_20250731_0_L2A,sentinel-2-l2a"}`
	if !sameJSON(t, cur.Request.Body, []byte(wantBody)) {
		t.Errorf("cursor body = %s, want the link body %s (merge: false)", cur.Request.Body, wantBody)
	}
	// Page 3 was never recorded: resuming sends exactly the cursor's request
	// and reports the replay's 599 as a typed server error.
	resumed := c.ContinueSearch(*cur, SearchLimits{})
	for _, err := range resumed.Items(context.Background()) {
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindServer || se.Status != 599 {
			t.Fatalf("resumed: err = %v, want the replay's 599 as KindServer", err)
		}
	}
	reqs := rs.received()
	if last := reqs[len(reqs)-1]; !sameJSON(t, last.Body, []byte(wantBody)) {
		t.Errorf("resumed request body = %s, want %s", last.Body, wantBody)
	}
	if resumed.StopReason() != StopError || resumed.Position() == nil {
		t.Errorf("after an error: stop %q cursor %+v; want error and a cursor to retry", resumed.StopReason(), resumed.Position())
	}
}

func TestReplayAstraeaGetNextChains(t *testing.T) {
	cases := []struct {
		name   string
		params SearchParams
		files  []string
	}{
		{"bbox", SearchParams{Collections: []string{"naip"}, BBox: []float64{-73.21, 43.99, -73.12, 44.05}, Limit: 10},
			[]string{"0004-GET-search-fb2f73.json", "0005-GET-search-b5feae.json", "0006-GET-search-2f5f56.json", "0007-GET-search-e6b0f9.json"}},
		{"datetime", SearchParams{Datetime: "2019-01-01T00:00:01Z/2019-01-01T00:00:10Z", Limit: 10},
			[]string{"0012-GET-search-491349.json", "0013-GET-search-d123a0.json", "0014-GET-search-8faa80.json"}},
		{"ids", SearchParams{IDs: []string{"m_3510836_se_12_060_20180508_20190331", "m_3510840_se_12_060_20180504_20190331"}},
			[]string{"0015-GET-search-044cff.json", "0016-GET-search-feee53.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := newReplayServer(t, "eod-catalog-svc-prod.astraea.earth")
			c := replayClient(t, rs.URL)
			s := c.Search(tc.params, SearchLimits{})
			ids := collectIDs(t, s)
			var want []string
			for _, f := range tc.files {
				want = append(want, recordedIDs(t, rs, f)...)
			}
			if !reflect.DeepEqual(ids, want) {
				t.Errorf("ids = %v\nwant %v", ids, want)
			}
			if s.StopReason() != StopEmptyPage || s.Method() != "GET" {
				t.Errorf("stop %s method %s; want empty_page, GET (search link without method)", s.StopReason(), s.Method())
			}
			var searches []replayedRequest
			for _, r := range rs.received() {
				if r.Path == "/search" {
					searches = append(searches, r)
				}
			}
			if len(searches) != len(tc.files) {
				t.Fatalf("%d search requests, want %d", len(searches), len(tc.files))
			}
			for i, r := range searches {
				if r.Matched != tc.files[i] {
					t.Errorf("request %d answered by %q, want %s", i+1, r.Matched, tc.files[i])
				}
				if i > 0 && (r.Method != "GET" || r.Query.Get("next") == "") {
					t.Errorf("request %d: %s ?%s; want the next href as given", i+1, r.Method, r.Query.Encode())
				}
			}
		})
	}
}

func TestReplayAstraeaPostMergeChain(t *testing.T) {
	rs := newReplayServer(t, "eod-catalog-svc-prod.astraea.earth")
	c := replayClient(t, rs.URL)
	first := Request{Method: "POST", URL: rs.URL + "/search",
		Body: json.RawMessage(`{"limit":10,"bbox":[-73.21,43.99,-73.12,44.05],"collections":["naip"]}`)}
	s := c.ContinueSearch(Position{Request: first}, SearchLimits{})
	ids := collectIDs(t, s)
	if len(ids) != 30 || s.StopReason() != StopEmptyPage {
		t.Fatalf("%d items, stop %s; want 30 and empty_page", len(ids), s.StopReason())
	}
	files := []string{"0008-POST-search-ac0daa.json", "0009-POST-search-ec2077.json", "0010-POST-search-d818db.json", "0011-POST-search-d44ebe.json"}
	for i, r := range rs.received() {
		if r.Method != "POST" || r.Matched != files[i] {
			t.Errorf("request %d: %s answered by %q, want POST answered by %s", i+1, r.Method, r.Matched, files[i])
		}
		if i == 0 {
			continue
		}
		// merge: true overlays {"next": …} on the original body.
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if body["next"] == nil || body["collections"] == nil || body["bbox"] == nil || body["limit"] == nil {
			t.Errorf("request %d body %s: want the original members plus next", i+1, r.Body)
		}
	}
}

func TestReplaySageTokenOnlyNextBody(t *testing.T) {
	rs := newReplayServer(t, "stac.sage.uvt.ro")
	c := replayClient(t, rs.URL)
	s := c.Search(SearchParams{}, SearchLimits{MaxPages: 1})
	ids := collectIDs(t, s)
	if want := recordedIDs(t, rs, "0004-POST-search-fc909d.json"); !reflect.DeepEqual(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	cur := s.Position()
	if s.StopReason() != StopMaxPages || cur == nil {
		t.Fatalf("stop %s cursor %+v; want max_pages with a cursor", s.StopReason(), cur)
	}
	want := `{"token":"next:sentinel-2-l1c:S2C_MSIL1C_20250302T085921_N0511_R007_T35TQN_20250302T110827"}`
	if cur.Request.Method != "POST" || !sameJSON(t, cur.Request.Body, []byte(want)) || cur.Request.URL != rs.URL+"/search" {
		t.Errorf("cursor request = %s %s %s; want POST %s/search %s", cur.Request.Method, cur.Request.URL, cur.Request.Body, rs.URL, want)
	}
	if _, ok := s.Matched(); ok {
		t.Errorf("Matched reported a count; the page has context without matched")
	}

	q, err := c.Queryables(context.Background(), "")
	if err != nil {
		t.Fatalf("Queryables (application/schema+json): %v", err)
	}
	if len(q.Properties) == 0 || q.Schema == "" {
		t.Errorf("queryables: %d properties, $schema %q", len(q.Properties), q.Schema)
	}
}

// radiantRoot is a SYNTHETIC landing page (MLHub's was never recorded and
// the service is gone): just enough to send a search to the recorded 401s.
func radiantRoot(searchPath string) *replayFixture {
	return syntheticJSON("https://api.radiant.earth", "GET", "/mlhub/v1", 200,
		`{"type":"Catalog","id":"mlhub-synthetic","description":"synthetic landing page","stac_version":"1.0.0",
		  "links":[{"rel":"search","href":"https://api.radiant.earth`+searchPath+`"}]}`)
}

func TestReplayRadiantUnauthorized(t *testing.T) {
	cases := []struct {
		name, searchPath, wantMessage string
	}{
		{"json detail", "/mlhub/v1/search", ""},
		// An HTML page is described, not echoed (SSRF read-back).
		{"html page", "/mlhub/v1//search", "text/html answer (not shown)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := newReplayServer(t, "api.radiant.earth", radiantRoot(tc.searchPath))
			c := replayClient(t, rs.URL+"/mlhub/v1")
			err := lastItemError(c.Search(SearchParams{}, SearchLimits{}))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if se.Kind != KindUnauthorized || se.Status != 401 || se.URL != rs.URL+tc.searchPath || se.Method != "GET" {
				t.Errorf("error = %+v; want unauthorized 401 GET %s", se, rs.URL+tc.searchPath)
			}
			want := tc.wantMessage
			if want == "" {
				var body struct {
					Detail string `json:"detail"`
				}
				if err := json.Unmarshal(rs.fixture("0003-GET-mlhub-v1-search-4e10d0.json").Body, &body); err != nil {
					t.Fatal(err)
				}
				want = upstream.TrimMessage(body.Detail)
			}
			if !strings.Contains(se.Message, want) || strings.ContainsAny(se.Message, "<>") || len([]rune(se.Message)) > upstream.MaxMessageRunes+1 {
				t.Errorf("message = %q, want it to contain %q, without markup, at most %d chars", se.Message, want, upstream.MaxMessageRunes)
			}
		})
	}
}

func TestReplayEarthSearchNotFound(t *testing.T) {
	rs := newReplayServer(t, "earth-search.aws.element84.com")
	c := replayClient(t, rs.URL+"/v1")
	_, err := c.Collection(context.Background(), "foo")
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if se.Kind != KindNotFound || se.Status != http.StatusNotFound || se.URL != rs.URL+"/v1/collections/foo" || se.Message != "Not Found" {
		t.Errorf("error = %+v; want not_found 404 at /v1/collections/foo with message %q", se, "Not Found")
	}
}

func TestReplayEarthSearchCollections(t *testing.T) {
	rs := newReplayServer(t, "earth-search.aws.element84.com")
	c := replayClient(t, rs.URL+"/v1")
	var got []string
	for page, err := range c.CollectionPages(context.Background(), CollectionQuery{}, SearchLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range page.Collections {
			got = append(got, col.ID)
		}
	}
	var recorded CollectionList
	if err := json.Unmarshal(rs.fixture("0003-GET-v1-collections-46a8d5.json").Body, &recorded); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recorded.Collections) || len(got) == 0 {
		t.Errorf("got %d collections, want the %d recorded", len(got), len(recorded.Collections))
	}
}

func TestReplayStaticCatalogServedAsTextPlain(t *testing.T) {
	rs := newReplayServer(t, "raw.githubusercontent.com")
	base := rs.URL + "/stac-utils/pystac/v1.9.0/docs/example-catalog/catalog.json"
	c := replayClient(t, base)
	ctx := context.Background()
	root, err := c.Root(ctx)
	if err != nil {
		t.Fatalf("Root of a text/plain catalog: %v", err)
	}
	child := FindLink(root.Links, "child")
	if child == nil {
		t.Fatal("no child link")
	}
	href, _ := resolveHref(c.base, child.Href)
	col, err := c.CollectionAt(ctx, href)
	if err != nil {
		t.Fatalf("CollectionAt %s: %v", href, err)
	}
	colURL, _ := c.base.Parse(href)
	items := 0
	for _, l := range FindLinks(col.Links, "item") {
		itemHref, _ := resolveHref(colURL, l.Href)
		it, err := c.ItemAt(ctx, itemHref)
		if err != nil {
			t.Fatalf("ItemAt %s: %v", itemHref, err)
		}
		items++
		var served []byte
		for _, r := range rs.received() {
			if strings.HasSuffix(itemHref, r.Path) && r.Matched != "" {
				served = rs.rewriteOrigins(rs.fixture(r.Matched).Body)
			}
		}
		written, _ := json.Marshal(it)
		if !sameJSON(t, served, written) {
			t.Errorf("item %s did not round-trip", it.ID)
		}
		if _, ok := it.Datetime(); !ok {
			t.Errorf("item %s: no datetime", it.ID)
		}
	}
	if items != 4 {
		t.Errorf("read %d items, want the 4 recorded", items)
	}
	if len(rs.unrecorded()) != 0 {
		t.Errorf("unrecorded requests: %+v", rs.unrecorded())
	}
}

func TestReplayStaticCatalogHasNoSearch(t *testing.T) {
	rs := newReplayServer(t, "raw.githubusercontent.com")
	c := replayClient(t, rs.URL+"/stac-utils/pystac/v1.9.0/docs/example-catalog/catalog.json")
	err := lastItemError(c.Search(SearchParams{}, SearchLimits{}))
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindUnsupported {
		t.Errorf("search on a static catalog: %v, want unsupported", err)
	}
	for _, r := range rs.received() {
		if strings.HasSuffix(r.Path, "/search") {
			t.Errorf("sent %s %s to a catalog without search", r.Method, r.Path)
		}
	}
}

// The replay matcher itself: recordings are worded as pystac-client asked,
// so equal searches must match however they are spelled.
func TestReplayKeyIsSemantic(t *testing.T) {
	get := replayKey(t, "GET", "/v1/search", map[string][]string{
		"collections": {"b,a"}, "datetime": {"2024-09-15T00:00:00+00:00/2024-09-16T00:00:00+00:00"},
		"limit": {"10"}, "bbox": {"60.0,0,70,10"}, "sortby": {"-properties.datetime"}, "fields": {"-geometry"},
	}, nil)
	post := replayKey(t, "POST", "/v1/search", nil, []byte(`{"limit":10,"collections":["a","b"],"bbox":[60,0,70,10],
		"datetime":"2024-09-15T00:00:00Z/2024-09-16T00:00:00Z","sortby":[{"field":"properties.datetime","direction":"desc"}],
		"fields":{"include":[],"exclude":["geometry"]}}`))
	if get != post {
		t.Errorf("same search, different keys:\n%s\n%s", get, post)
	}
	other := replayKey(t, "POST", "/v1/search", nil, []byte(`{"limit":11,"collections":["a","b"]}`))
	if other == post {
		t.Error("different searches share a key")
	}
	if replayKey(t, "GET", "/stac", nil, nil) == replayKey(t, "GET", "/stac/", nil, nil) {
		t.Error("trailing slash ignored")
	}
	if replayKey(t, "GET", "/v1/collections", nil, nil) == replayKey(t, "POST", "/v1/collections", nil, nil) {
		t.Error("method ignored outside /search")
	}
}
