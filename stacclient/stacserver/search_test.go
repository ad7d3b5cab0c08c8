package stacserver

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// searchBoth runs the same search as GET (query string) and POST (body) and
// checks both give the same ids; it returns them sorted.
func searchBoth(t *testing.T, ts *testServer, get url.Values, post map[string]any) []string {
	t.Helper()
	g := ts.get(t, "/search?"+get.Encode())
	wantStatus(t, g, http.StatusOK)
	p := ts.post(t, "/search", post)
	wantStatus(t, p, http.StatusOK)
	gi, pi := sortedIDs(t, g), sortedIDs(t, p)
	if !equalStrings(gi, pi) {
		t.Fatalf("GET %v and POST %v disagree: %v vs %v", get, post, gi, pi)
	}
	return gi
}

func TestSearchFilters(t *testing.T) {
	ts := startServer(t, Options{})
	square := func(w, s, e, n float64) map[string]any { return squareGeometry(w, s, e, n) }
	cases := []struct {
		name string
		get  url.Values
		post map[string]any
		want []string
	}{
		{"collections", url.Values{"collections": {"landsat"}}, map[string]any{"collections": []string{"landsat"}},
			[]string{"l-0", "l-1", "l-2", "l-3", "l-4"}},
		{"ids", url.Values{"ids": {"s-01,l-2"}}, map[string]any{"ids": []string{"s-01", "l-2"}}, []string{"l-2", "s-01"}},
		{"ids and collections", url.Values{"ids": {"s-01,l-2"}, "collections": {"sentinel"}},
			map[string]any{"ids": []string{"s-01", "l-2"}, "collections": []string{"sentinel"}}, []string{"s-01"}},
		{"bbox", url.Values{"bbox": {"9,-1,12,2"}}, map[string]any{"bbox": []float64{9, -1, 12, 2}}, []string{"d-0", "d-1", "l-2"}},
		{"bbox 3D", url.Values{"bbox": {"9,-1,0,12,2,100"}, "collections": {"landsat"}},
			map[string]any{"bbox": []float64{9, -1, 0, 12, 2, 100}, "collections": []string{"landsat"}}, []string{"l-2"}},
		{"bbox across the antimeridian", url.Values{"bbox": {"170,-5,-170,5"}, "collections": {"landsat"}},
			map[string]any{"bbox": []float64{170, -5, -170, 5}, "collections": []string{"landsat"}},
			[]string{"l-0", "l-1", "l-3"}},
		{"intersects polygon with vertices inside items", url.Values{"intersects": {`{"type":"Polygon","coordinates":[[[-7.5,40.5],[-5.5,40.5],[-6.5,45],[-7.5,40.5]]]}`}},
			map[string]any{"intersects": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{-7.5, 40.5}, {-5.5, 40.5}, {-6.5, 45}, {-7.5, 40.5}}}}},
			[]string{"d-0", "d-1", "s-02", "s-03", "s-04"}}, // the dem items cover the globe
		{"intersects crossing edges only", url.Values{"intersects": {`{"type":"Polygon","coordinates":[[[-4.6,39],[-4.4,39],[-4.4,42],[-4.6,42],[-4.6,39]]]}`}},
			map[string]any{"intersects": square(-4.6, 39, -4.4, 42)}, []string{"d-0", "d-1", "s-05"}},
		{"intersects point", url.Values{"intersects": {`{"type":"Point","coordinates":[178.5,0.5]}`}, "collections": {"landsat"}},
			map[string]any{"intersects": map[string]any{"type": "Point", "coordinates": []float64{178.5, 0.5}}, "collections": []string{"landsat"}},
			[]string{"l-0"}},
		{"intersects line crossing a line", url.Values{"intersects": {`{"type":"LineString","coordinates":[[21,19],[21,23]]}`}, "collections": {"landsat"}},
			map[string]any{"intersects": map[string]any{"type": "LineString", "coordinates": [][]float64{{21, 19}, {21, 23}}}, "collections": []string{"landsat"}},
			[]string{"l-4"}},
		{"intersects multipolygon", url.Values{"intersects": {`{"type":"MultiPolygon","coordinates":[[[[10.2,0.2],[10.4,0.2],[10.4,0.4],[10.2,0.2]]],[[[179.4,0.4],[179.6,0.4],[179.6,0.6],[179.4,0.4]]]]}`}, "collections": {"landsat"}},
			map[string]any{"intersects": map[string]any{"type": "MultiPolygon", "coordinates": [][][][]float64{
				{{{10.2, 0.2}, {10.4, 0.2}, {10.4, 0.4}, {10.2, 0.2}}}, {{{179.4, 0.4}, {179.6, 0.4}, {179.6, 0.6}, {179.4, 0.4}}}}},
				"collections": []string{"landsat"}},
			[]string{"l-2", "l-3"}},
		{"datetime instant", url.Values{"datetime": {"2021-01-11T00:00:00Z"}}, map[string]any{"datetime": "2021-01-11T00:00:00Z"}, []string{"s-01"}},
		{"datetime interval", url.Values{"datetime": {"2021-01-01T00:00:00Z/2021-01-31T00:00:00Z"}},
			map[string]any{"datetime": "2021-01-01T00:00:00Z/2021-01-31T00:00:00Z"}, sentinelIDs(0, 3)},
		{"datetime open start", url.Values{"datetime": {"../2019-12-31T00:00:00Z"}}, map[string]any{"datetime": "../2019-12-31T00:00:00Z"},
			[]string{"d-0", "d-1", "l-0", "l-1", "l-2", "l-3", "l-4"}},
		{"datetime open end (empty)", url.Values{"datetime": {"2021-08-01T00:00:00Z/"}}, map[string]any{"datetime": "2021-08-01T00:00:00Z/"},
			sentinelIDs(22, 24)},
		{"datetime within an item's range", url.Values{"datetime": {"2000-02-15T00:00:00+00:00"}}, map[string]any{"datetime": "2000-02-15T00:00:00+00:00"},
			[]string{"d-0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := searchBoth(t, ts, c.get, c.post); !equalStrings(got, sortedCopy(c.want)) {
				t.Errorf("got %v, want %v", got, sortedCopy(c.want))
			}
		})
	}
}

func TestSearchQueryExtension(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		query string
		want  []string
	}{
		{`{"eo:cloud_cover":{"eq":8}}`, []string{"s-02"}},
		{`{"eo:cloud_cover":{"lt":8}}`, []string{"s-00", "s-01"}},
		{`{"eo:cloud_cover":{"lte":8}}`, []string{"s-00", "s-01", "s-02"}},
		{`{"eo:cloud_cover":{"gt":90}}`, []string{"s-23", "s-24"}},
		{`{"eo:cloud_cover":{"gte":92,"lt":96}}`, []string{"s-23"}},
		{`{"eo:cloud_cover":{"neq":0},"platform":{"eq":"sentinel-2a"}}`, []string{"s-02", "s-04", "s-06", "s-08", "s-10", "s-12", "s-14", "s-16", "s-18", "s-20", "s-22", "s-24"}},
		{`{"platform":{"startsWith":"landsat"},"eo:cloud_cover":{"in":[15,75]}}`, []string{"l-0", "l-3"}},
		{`{"platform":{"endsWith":"-2b"},"eo:cloud_cover":{"lt":20}}`, []string{"s-01", "s-03"}},
		{`{"id":{"contains":"-1"},"collection":{"eq":"sentinel"}}`, sentinelIDs(10, 19)},
		{`{"properties.datetime":{"gte":"2021-08-19T00:00:00Z"}}`, []string{"s-23", "s-24"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			var q map[string]any
			v, err := decodeJSONValue(c.query)
			if err != nil {
				t.Fatal(err)
			}
			q = v.(map[string]any)
			got := searchBoth(t, ts, url.Values{"query": {c.query}, "limit": {"100"}}, map[string]any{"query": q, "limit": 100})
			if !equalStrings(got, sortedCopy(c.want)) {
				t.Errorf("got %v, want %v", got, sortedCopy(c.want))
			}
		})
	}
}

func TestSearchBadParameters(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		name    string
		get     string
		post    any
		mention string // the description must name this
	}{
		{"bbox three numbers", "bbox=1,2,3", map[string]any{"bbox": []int{1, 2, 3}}, "bbox"},
		{"bbox south above north", "bbox=0,10,1,5", map[string]any{"bbox": []int{0, 10, 1, 5}}, "south"},
		{"bbox latitude", "bbox=0,-100,1,5", map[string]any{"bbox": []int{0, -100, 1, 5}}, "latitude"},
		{"bbox not numbers", "bbox=a,b,c,d", map[string]any{"bbox": "a,b,c,d"}, "bbox"},
		{"bbox and intersects", "bbox=0,0,1,1&intersects=" + url.QueryEscape(`{"type":"Point","coordinates":[0,0]}`),
			map[string]any{"bbox": []int{0, 0, 1, 1}, "intersects": map[string]any{"type": "Point", "coordinates": []int{0, 0}}}, "together"},
		{"intersects not geometry", "intersects=" + url.QueryEscape(`{"type":"Blob"}`), map[string]any{"intersects": map[string]any{"type": "Blob"}}, "intersects"},
		{"datetime garbage", "datetime=yesterday", map[string]any{"datetime": "yesterday"}, "datetime"},
		{"datetime both open", "datetime=../", map[string]any{"datetime": "../"}, "both ends"},
		{"datetime reversed", "datetime=2021-02-01T00:00:00Z/2021-01-01T00:00:00Z", map[string]any{"datetime": "2021-02-01T00:00:00Z/2021-01-01T00:00:00Z"}, "before"},
		{"limit zero", "limit=0", map[string]any{"limit": 0}, "limit"},
		{"limit text", "limit=ten", map[string]any{"limit": "ten"}, "limit"},
		{"query unknown op", "query=" + url.QueryEscape(`{"gsd":{"approx":10}}`), map[string]any{"query": map[string]any{"gsd": map[string]any{"approx": 10}}}, "approx"},
		{"query not object", "query=" + url.QueryEscape(`[1]`), map[string]any{"query": []int{1}}, "query"},
		{"sortby bad direction", "sortby=" + url.QueryEscape("-"), map[string]any{"sortby": []any{map[string]any{"field": "id", "direction": "up"}}}, "sortby"},
		{"unknown parameter", "colections=a", map[string]any{"colections": []string{"a"}}, "colections"},
		{"token forged", "token=bogus", map[string]any{"token": "bogus"}, "token"},
		{"cql2-text syntax", "filter=" + url.QueryEscape("eo:cloud_cover << 10"), map[string]any{"filter": "eo:cloud_cover << 10", "filter-lang": "cql2-text"}, "CQL2 text"},
		{"filter-lang unknown", "filter-lang=cql3&filter=" + url.QueryEscape("eo:cloud_cover < 10"), map[string]any{"filter": "eo:cloud_cover < 10", "filter-lang": "cql3"}, "filter-lang"},
		{"filter-crs", "filter-crs=EPSG:4326&filter-lang=cql2-json&filter=" + url.QueryEscape(`{"op":"=","args":[{"property":"id"},"x"]}`),
			map[string]any{"filter-crs": "EPSG:4326"}, "CRS84"},
		{"body not object", "", []byte(`[1,2]`), "JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.get != "" {
				g := ts.get(t, "/search?"+c.get)
				wantStatus(t, g, http.StatusBadRequest)
				if d := g.body["description"].(string); !strings.Contains(d, c.mention) {
					t.Errorf("GET description %q does not mention %q", d, c.mention)
				}
			}
			p := ts.post(t, "/search", c.post)
			wantStatus(t, p, http.StatusBadRequest)
			if p.body["code"] != "BadRequest" {
				t.Errorf("code %v", p.body["code"])
			}
			if d := p.body["description"].(string); !strings.Contains(d, c.mention) {
				t.Errorf("POST description %q does not mention %q", d, c.mention)
			}
		})
	}
}

func TestSortBy(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		name string
		get  string // raw query string, encoded by hand to test "+" handling
		post []any
		want []string
	}{
		{"cloud cover ascending", "collections=sentinel&limit=3&sortby=%2Bproperties.eo:cloud_cover",
			[]any{map[string]any{"field": "properties.eo:cloud_cover", "direction": "asc"}}, []string{"s-00", "s-01", "s-02"}},
		{"cloud cover descending, bare name", "collections=sentinel&limit=2&sortby=-eo:cloud_cover",
			[]any{map[string]any{"field": "eo:cloud_cover", "direction": "desc"}}, []string{"s-24", "s-23"}},
		{"missing values last ascending", "collections=landsat&sortby=eo:cloud_cover",
			[]any{map[string]any{"field": "properties.eo:cloud_cover"}}, []string{"l-0", "l-1", "l-2", "l-3", "l-4"}},
		{"missing values last descending", "collections=landsat&sortby=-eo:cloud_cover",
			[]any{map[string]any{"field": "properties.eo:cloud_cover", "direction": "desc"}}, []string{"l-3", "l-2", "l-1", "l-0", "l-4"}},
		{"unencoded plus is ascending", "collections=landsat&sortby=+id",
			[]any{map[string]any{"field": "id", "direction": "asc"}}, []string{"l-0", "l-1", "l-2", "l-3", "l-4"}},
		{"two keys", "collections=sentinel&limit=4&sortby=-platform,%2Bdatetime",
			[]any{map[string]any{"field": "properties.platform", "direction": "desc"}, map[string]any{"field": "datetime", "direction": "asc"}},
			[]string{"s-01", "s-03", "s-05", "s-07"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ts.get(t, "/search?"+c.get)
			wantStatus(t, g, http.StatusOK)
			if got := featureIDs(t, g); !equalStrings(got, c.want) {
				t.Errorf("GET order %v, want %v", got, c.want)
			}
			vals, _ := url.ParseQuery(c.get)
			body := map[string]any{"collections": []string{vals.Get("collections")}, "sortby": c.post}
			if l := vals.Get("limit"); l != "" {
				body["limit"] = map[string]int{"2": 2, "3": 3, "4": 4}[l]
			}
			p := ts.post(t, "/search", body)
			wantStatus(t, p, http.StatusOK)
			if got := featureIDs(t, p); !equalStrings(got, c.want) {
				t.Errorf("POST order %v, want %v", got, c.want)
			}
		})
	}
}

// TestFields follows the fields extension v1.0.0 ("Include/Exclude
// Semantics" and its null/empty/missing table).
func TestFields(t *testing.T) {
	ts := startServer(t, Options{})
	first := func(t *testing.T, r response) map[string]any {
		t.Helper()
		wantStatus(t, r, http.StatusOK)
		return r.body["features"].([]any)[0].(map[string]any)
	}
	post := func(fields any) map[string]any {
		return first(t, ts.post(t, "/search", map[string]any{"ids": []string{"s-01"}, "fields": fields}))
	}
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}

	// An include list is what comes back (with type, id and collection);
	// an excluded links is honoured (it was once kept).
	f := post(map[string]any{"include": []string{"properties.eo:cloud_cover", "geometry"}, "exclude": []string{"links"}})
	if got := keys(f); got != "collection,geometry,id,properties,type" {
		t.Errorf("include: members %s", got)
	}
	if got := keys(f["properties"].(map[string]any)); got != "eo:cloud_cover" {
		t.Errorf("include: properties %s", got)
	}

	// A field both included and excluded is included (rule 6).
	f = post(map[string]any{"include": []string{"properties"}, "exclude": []string{"properties"}})
	if _, ok := f["properties"].(map[string]any)["platform"]; !ok {
		t.Errorf("properties in both lists was dropped: %v", f)
	}

	// An excluded parent with an included child keeps the child alone
	// (rule 5.1); an included parent loses an excluded child (5.2).
	f = post(map[string]any{"include": []string{"properties.platform"}, "exclude": []string{"properties"}})
	if got := keys(f["properties"].(map[string]any)); got != "platform" {
		t.Errorf("excluded parent, included child: properties %s", got)
	}
	f = post(map[string]any{"include": []string{"properties"}, "exclude": []string{"properties.platform"}})
	if p := f["properties"].(map[string]any); p["platform"] != nil || p["eo:cloud_cover"] == nil {
		t.Errorf("included parent, excluded child: properties %v", p)
	}

	// {} and "?fields=" are the default set (rule 1), not the whole item.
	const defaults = "assets,collection,geometry,id,links,properties,stac_version,type"
	for name, f := range map[string]map[string]any{
		"POST {}":         post(map[string]any{}),
		"GET ?fields=":    first(t, ts.get(t, "/search?ids=s-01&fields=")),
		"POST include []": post(map[string]any{"include": []string{}}),
	} {
		if got := keys(f); got != defaults {
			t.Errorf("%s: members %s, want the default set %s", name, got, defaults)
		}
		if got := keys(f["properties"].(map[string]any)); got != "datetime" {
			t.Errorf("%s: properties %s, want datetime", name, got)
		}
	}

	// Exclude only: from the whole item when a POST body has no include,
	// from the default set otherwise (GET cannot say "missing").
	f = post(map[string]any{"exclude": []string{"geometry", "properties.platform"}})
	if p := f["properties"].(map[string]any); f["geometry"] != nil || p["platform"] != nil || p["eo:cloud_cover"] == nil {
		t.Errorf("POST exclude only: %v", f)
	}
	f = first(t, ts.get(t, "/search?ids=s-01&fields="+url.QueryEscape("-geometry,-links")))
	if got := keys(f); got != "assets,collection,id,properties,stac_version,type" {
		t.Errorf("GET exclude only: members %s", got)
	}

	// Trimming answers must not have changed the stored item.
	full := ts.get(t, "/collections/sentinel/items/s-01")
	fp := full.body["properties"].(map[string]any)
	if fp["platform"] == nil || fp["datetime"] == nil || full.body["geometry"] == nil {
		t.Errorf("stored item was modified by fields: %s", full.raw)
	}
}

func TestSearchDefaultLimitAndContext(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/search")
	wantStatus(t, r, http.StatusOK)
	if n := len(featureIDs(t, r)); n != 10 {
		t.Errorf("default page size %d, want 10", n)
	}
	ctx := r.body["context"].(map[string]any)
	if numberField(t, ctx, "matched") != totalItems || numberField(t, ctx, "returned") != 10 || numberField(t, ctx, "limit") != 10 {
		t.Errorf("context %v", ctx)
	}
	if numberField(t, r.body, "numberMatched") != totalItems {
		t.Errorf("numberMatched %v", r.body["numberMatched"])
	}
	// A hit-less ids search is a 200 with no features.
	empty := ts.get(t, "/search?ids=nothing")
	wantStatus(t, empty, http.StatusOK)
	if len(featureIDs(t, empty)) != 0 || linkByRel(empty.body, "next") != nil {
		t.Errorf("empty search %s", empty.raw)
	}
}
