package stacserver

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestLandingPage(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/")
	wantStatus(t, r, http.StatusOK)
	for key, want := range map[string]string{"type": "Catalog", "stac_version": "1.0.0", "id": "stacserver"} {
		if r.body[key] != want {
			t.Errorf("%s = %v, want %q", key, r.body[key], want)
		}
	}
	for _, rel := range []string{"self", "root", "conformance", "data", relQueryables, "aggregations"} {
		l := linkByRel(r.body, rel)
		if l == nil {
			t.Errorf("no %q link", rel)
			continue
		}
		if href, _ := l["href"].(string); !strings.HasPrefix(href, ts.URL) {
			t.Errorf("%s link %q is not absolute on the server URL %s", rel, href, ts.URL)
		}
	}
	methods := map[string]map[string]bool{"search": {}, "aggregate": {}, "child": {}}
	for _, l := range r.body["links"].([]any) {
		m := l.(map[string]any)
		rel, _ := m["rel"].(string)
		if methods[rel] != nil {
			key, _ := m["method"].(string)
			if rel == "child" {
				key, _ = m["href"].(string)
			}
			methods[rel][key] = true
		}
	}
	if !methods["search"]["GET"] || !methods["search"]["POST"] {
		t.Errorf("search links methods %v, want GET and POST", methods["search"])
	}
	if !methods["aggregate"]["GET"] || !methods["aggregate"]["POST"] {
		t.Errorf("aggregate links methods %v, want GET and POST", methods["aggregate"])
	}
	for _, id := range []string{"dem", "landsat", "sentinel"} {
		if !methods["child"][ts.URL+"/collections/"+id] {
			t.Errorf("no child link to collection %s: %v", id, methods["child"])
		}
	}
	conforms, _ := r.body["conformsTo"].([]any)
	if len(conforms) != len(DefaultConformance()) {
		t.Errorf("conformsTo has %d classes, want %d", len(conforms), len(DefaultConformance()))
	}
}

func TestConformance(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/conformance")
	wantStatus(t, r, http.StatusOK)
	got := map[string]bool{}
	for _, c := range r.body["conformsTo"].([]any) {
		got[c.(string)] = true
	}
	for _, want := range []string{
		"https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/item-search#filter",
		"https://api.stacspec.org/v1.0.0/item-search#query", "https://api.stacspec.org/v1.0.0/item-search#sort",
		"https://api.stacspec.org/v1.0.0/item-search#fields", "https://api.stacspec.org/v1.0.0/item-search#context",
		"https://api.stacspec.org/v1.0.0/collection-search", "https://api.stacspec.org/v1.0.0/collection-search#free-text",
		"https://api.stacspec.org/v0.3.0/aggregation", "https://api.stacspec.org/v1.0.0/ogcapi-features",
		"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
	} {
		if !got[want] {
			t.Errorf("conformance lacks %s", want)
		}
	}

	override := []string{"https://api.stacspec.org/v1.1.0/core", "https://api.stacspec.org/v1.1.0/item-search"}
	ts2 := startServer(t, Options{ConformsTo: override})
	r2 := ts2.get(t, "/conformance")
	if list := r2.body["conformsTo"].([]any); len(list) != 2 || list[0] != override[0] || list[1] != override[1] {
		t.Errorf("override conformsTo = %v, want %v", list, override)
	}
}

func TestDisabledFeaturesVanishFromLinksAndConformance(t *testing.T) {
	ts := startServer(t, Options{DisableFeatures: true, DisableAggregation: true, DisableQueryables: true, DisablePOSTSearch: true})
	r := ts.get(t, "/")
	for _, rel := range []string{relQueryables, "aggregate", "aggregations"} {
		if linkByRel(r.body, rel) != nil {
			t.Errorf("link %q present although disabled", rel)
		}
	}
	for _, l := range r.body["links"].([]any) {
		if m := l.(map[string]any); m["rel"] == "search" && m["method"] != "GET" {
			t.Errorf("search link with method %v although POST is disabled", m["method"])
		}
	}
	for _, c := range r.body["conformsTo"].([]any) {
		if s := c.(string); strings.HasSuffix(s, "/ogcapi-features") || strings.Contains(s, "/ogcapi-features-1/") ||
			strings.HasSuffix(s, "/aggregation") {
			t.Errorf("conformsTo still advertises %s", s)
		}
	}
	if c := ts.get(t, "/conformance"); !slices.Equal(conformsTo(t, c.body["conformsTo"]), conformsTo(t, r.body["conformsTo"])) {
		t.Errorf("/conformance %v differs from the landing page's conformsTo %v", c.body["conformsTo"], r.body["conformsTo"])
	}
	for _, path := range []string{"/collections/sentinel/items", "/collections/sentinel/items/s-01",
		"/queryables", "/collections/sentinel/queryables", "/aggregate", "/aggregations"} {
		wantStatus(t, ts.get(t, path), http.StatusNotFound)
	}
	coll := ts.get(t, "/collections/sentinel")
	if linkByRel(coll.body, "items") != nil || linkByRel(coll.body, relQueryables) != nil {
		t.Errorf("collection links items/queryables although disabled: %s", coll.raw)
	}
	post := ts.post(t, "/search", map[string]any{})
	wantStatus(t, post, http.StatusMethodNotAllowed)
	wantStatus(t, ts.get(t, "/search"), http.StatusOK)
}

func TestDisableOptionsAlsoFilterAConformanceOverride(t *testing.T) {
	kept := "https://api.stacspec.org/v1.0.0/item-search"
	override := []string{kept,
		"https://api.stacspec.org/v1.0.0/ogcapi-features",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"https://api.stacspec.org/v0.3.0/aggregation"}
	ts := startServer(t, Options{ConformsTo: override, DisableFeatures: true, DisableAggregation: true})
	got := conformsTo(t, ts.get(t, "/conformance").body["conformsTo"])
	if !slices.Equal(got, []string{kept}) {
		t.Errorf("conformsTo = %v, want only %s: the override's features and aggregation classes name disabled endpoints", got, kept)
	}
}

func TestCollectionsPaging(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/collections?limit=2")
	wantStatus(t, r, http.StatusOK)
	if numberField(t, r.body, "numberMatched") != 3 || numberField(t, r.body, "numberReturned") != 2 {
		t.Fatalf("first page counts wrong: %s", r.raw)
	}
	var ids []string
	for _, c := range r.body["collections"].([]any) {
		ids = append(ids, c.(map[string]any)["id"].(string))
	}
	next := linkByRel(r.body, "next")
	if next == nil {
		t.Fatal("no next link on the first page of 2 of 3 collections")
	}
	r2 := ts.get(t, next["href"].(string))
	wantStatus(t, r2, http.StatusOK)
	for _, c := range r2.body["collections"].([]any) {
		ids = append(ids, c.(map[string]any)["id"].(string))
	}
	if linkByRel(r2.body, "next") != nil {
		t.Errorf("last page has a next link")
	}
	if !equalStrings(ids, []string{"dem", "landsat", "sentinel"}) {
		t.Errorf("collections across pages %v", ids)
	}
}

func TestCollectionDocument(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/collections/sentinel")
	wantStatus(t, r, http.StatusOK)
	if r.body["id"] != "sentinel" || r.body["type"] != "Collection" {
		t.Fatalf("wrong collection: %s", r.raw)
	}
	if vendor, _ := r.body["x-vendor-flag"].(map[string]any); vendor["kept"] != true {
		t.Errorf("unknown field not served back: %s", r.raw)
	}
	if l := linkByRel(r.body, "self"); l == nil || l["href"] != ts.URL+"/collections/sentinel" {
		t.Errorf("self link %v", l)
	}
	if l := linkByRel(r.body, "items"); l == nil || l["href"] != ts.URL+"/collections/sentinel/items" {
		t.Errorf("items link %v", l)
	}
	if linkByRel(r.body, "license") == nil {
		t.Errorf("stored license link dropped")
	}

	nf := ts.get(t, "/collections/nope")
	wantStatus(t, nf, http.StatusNotFound)
	if nf.body["code"] != "NotFound" || !strings.Contains(nf.body["description"].(string), "nope") {
		t.Errorf("404 body %s", nf.raw)
	}
}

func TestCollectionSearch(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		query string
		want  []string
	}{
		{"q=optical", []string{"sentinel"}},
		{"q=ELEVATION,usgs", []string{"dem", "landsat"}},
		{"q=antimeridian", []string{"landsat"}},
		// q matches words, not substrings (package freetext): "lands" is
		// in "landsat" and "sent" in "sentinel", but neither is a word.
		{"q=lands", nil},
		{"q=sent,elev", nil},
		{"q=%22optical%20test%22", []string{"sentinel"}}, // a phrase
		{"q=%22test%20optical%22", nil},                  // the phrase's words out of order
		{"q=%2Busgs%20elevation", []string{"landsat"}},   // +required, optional only ranks
		{"q=collection%20-esa", []string{"dem", "landsat"}},
		{"bbox=175,-5,179,5", []string{"dem", "landsat"}}, // landsat's extent crosses the antimeridian
		{"bbox=-5,39,0,42", []string{"dem", "sentinel"}},
		{"datetime=2000-06-01T00:00:00Z", []string{"dem"}},
		{"datetime=2022-01-01T00:00:00Z/..", []string{"landsat"}}, // open-ended extent
		{"q=optical&datetime=2000-06-01T00:00:00Z", nil},
	}
	for _, c := range cases {
		r := ts.get(t, "/collections?"+c.query)
		wantStatus(t, r, http.StatusOK)
		var ids []string
		for _, coll := range r.body["collections"].([]any) {
			ids = append(ids, coll.(map[string]any)["id"].(string))
		}
		if !equalStrings(ids, c.want) {
			t.Errorf("/collections?%s = %v, want %v", c.query, ids, c.want)
		}
	}
	wantStatus(t, ts.get(t, "/collections?bbox=1,2,3"), http.StatusBadRequest)
	wantStatus(t, ts.get(t, "/collections?sort=id"), http.StatusBadRequest)

	// Without the collection-search class the parameters are ignored, as
	// Earth Search does.
	plain := startServer(t, Options{ConformsTo: []string{"https://api.stacspec.org/v1.0.0/core",
		"https://api.stacspec.org/v1.0.0/collections"}})
	r := plain.get(t, "/collections?q=optical")
	if n := numberField(t, r.body, "numberMatched"); n != 3 {
		t.Errorf("q applied although collection search is not advertised: matched %d", n)
	}
}

func TestItemsEndpoint(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/collections/sentinel/items?limit=5&datetime=2021-01-01T00:00:00Z/2021-03-01T00:00:00Z")
	wantStatus(t, r, http.StatusOK)
	if !strings.HasPrefix(r.contentType, mediaGeoJSON) {
		t.Errorf("content type %q", r.contentType)
	}
	// Items 0..5 fall in Jan–Feb (days 0..50); newest first.
	if got, want := featureIDs(t, r), []string{"s-05", "s-04", "s-03", "s-02", "s-01"}; !equalStrings(got, want) {
		t.Errorf("first page %v, want %v", got, want)
	}
	if numberField(t, r.body, "numberMatched") != 6 {
		t.Errorf("numberMatched: %s", r.raw)
	}
	next := linkByRel(r.body, "next")
	if next == nil || next["method"] != nil {
		t.Fatalf("items next link should be a plain GET link: %v", next)
	}
	r2 := ts.get(t, next["href"].(string))
	if got := featureIDs(t, r2); !equalStrings(got, []string{"s-00"}) {
		t.Errorf("second page %v", got)
	}

	bb := ts.get(t, "/collections/sentinel/items?bbox=-9.5,40.2,-8,40.8")
	if got := sortedIDs(t, bb); !equalStrings(got, []string{"s-00", "s-01", "s-02"}) {
		t.Errorf("bbox items %v", got) // touching edges count: s-00 ends at -9, s-02 starts at -8
	}
	wantStatus(t, ts.get(t, "/collections/nope/items"), http.StatusNotFound)
	wantStatus(t, ts.get(t, "/collections/sentinel/items?ids=s-01"), http.StatusBadRequest)
	// pystac-client repeats the collection in the query string.
	same := ts.get(t, "/collections/sentinel/items?collections=sentinel&limit=1")
	wantStatus(t, same, http.StatusOK)
	if got := featureIDs(t, same); !equalStrings(got, []string{"s-24"}) {
		t.Errorf("items with ?collections=sentinel: %v", got)
	}
	wantStatus(t, ts.get(t, "/collections/sentinel/items?collections=dem"), http.StatusBadRequest)
}

func TestSingleItem(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/collections/sentinel/items/s-03")
	wantStatus(t, r, http.StatusOK)
	want := map[string]string{
		"self":       ts.URL + "/collections/sentinel/items/s-03",
		"parent":     ts.URL + "/collections/sentinel",
		"collection": ts.URL + "/collections/sentinel",
		"root":       ts.URL + "/",
	}
	for rel, href := range want {
		if l := linkByRel(r.body, rel); l == nil || l["href"] != href {
			t.Errorf("%s link = %v, want %s", rel, l, href)
		}
	}
	if linkByRel(r.body, "alternate") == nil {
		t.Errorf("stored alternate link dropped")
	}
	asset := r.body["assets"].(map[string]any)["data"].(map[string]any)
	if asset["file:size"] == nil {
		t.Errorf("asset extension field dropped: %v", asset)
	}
	wantStatus(t, ts.get(t, "/collections/sentinel/items/nope"), http.StatusNotFound)
	wantStatus(t, ts.get(t, "/collections/nope/items/s-03"), http.StatusNotFound)
	wantStatus(t, ts.get(t, "/no/such/path"), http.StatusNotFound)
}

func TestRequestCountsAndHook(t *testing.T) {
	var hooked []string
	ts := startServer(t, Options{OnRequest: func(r *http.Request) { hooked = append(hooked, r.Method+" "+r.URL.Path) }})
	ts.get(t, "/search")
	ts.get(t, "/search?limit=1")
	ts.post(t, "/search", map[string]any{})
	ts.get(t, "/collections")
	if n := ts.api.RequestCount("GET", "/search"); n != 2 {
		t.Errorf("GET /search count %d, want 2", n)
	}
	counts := ts.api.requestCounts()
	if counts["POST /search"] != 1 || counts["GET /collections"] != 1 {
		t.Errorf("counts %v", counts)
	}
	if len(hooked) != 4 || hooked[2] != "POST /search" {
		t.Errorf("hook saw %v", hooked)
	}
}

// conformsTo reads a conformsTo array from a decoded response body.
func conformsTo(t testing.TB, v any) []string {
	t.Helper()
	list, err := stringList(v)
	if err != nil {
		t.Fatalf("conformsTo %v: %v", v, err)
	}
	return list
}
