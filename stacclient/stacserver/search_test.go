package stacserver

import (
	"net/http"
	"net/url"
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

func TestFields(t *testing.T) {
	ts := startServer(t, Options{})
	p := ts.post(t, "/search", map[string]any{"ids": []string{"s-01"},
		"fields": map[string]any{"include": []string{"properties.eo:cloud_cover", "bbox"}, "exclude": []string{"links"}}})
	wantStatus(t, p, http.StatusOK)
	f := p.body["features"].([]any)[0].(map[string]any)
	props := f["properties"].(map[string]any)
	if len(props) != 1 || props["eo:cloud_cover"] == nil {
		t.Errorf("include kept properties %v, want only eo:cloud_cover", props)
	}
	if f["geometry"] != nil || f["assets"] != nil {
		t.Errorf("include kept unlisted members: %v", f)
	}
	if f["id"] != "s-01" || f["links"] == nil {
		t.Errorf("id and links must always be kept: %v", f)
	}

	g := ts.get(t, "/search?ids=s-01&fields="+url.QueryEscape("-geometry,-properties.platform"))
	wantStatus(t, g, http.StatusOK)
	f = g.body["features"].([]any)[0].(map[string]any)
	props = f["properties"].(map[string]any)
	if _, has := f["geometry"]; has {
		t.Errorf("geometry not excluded")
	}
	if _, has := props["platform"]; has || props["eo:cloud_cover"] == nil || f["assets"] == nil {
		t.Errorf("exclude removed the wrong members: %v", f)
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
