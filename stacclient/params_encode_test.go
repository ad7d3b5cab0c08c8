package stacclient

import (
	"encoding/json"
	"net/url"
	"testing"
)

// goldenParams exercises every member of the wire encodings at once.
func goldenParams() SearchParams {
	return SearchParams{
		Collections: []string{"sentinel-2-l2a", "landsat-c2-l2"},
		IDs:         []string{"a b", "c,d"},
		BBox:        []float64{170.5, -10, -170.25, 5},
		Datetime:    "2023-06-01T00:00:00Z/2023-06-30T23:59:59Z",
		Query:       map[string]any{"eo:cloud_cover": map[string]any{"lt": json.Number("10")}},
		Filter:      json.RawMessage(`"eo:cloud_cover < 10 AND platform = 'sentinel-2a'"`),
		FilterLang:  FilterLangCQL2Text,
		SortBy:      []SortField{{Field: "properties.datetime", Direction: "desc"}, {Field: "id", Direction: "asc"}},
		Fields:      &Fields{Include: []string{"id", "properties.eo:cloud_cover"}, Exclude: []string{"links"}},
		Limit:       50,
	}
}

func TestParamPostBodyGolden(t *testing.T) {
	tests := []struct {
		name   string
		params SearchParams
		want   string
	}{
		{"empty params give an empty object", SearchParams{}, `{}`},
		{"empty members are omitted", SearchParams{Collections: []string{}, Fields: &Fields{}, Query: map[string]any{}}, `{}`},
		{"every member in stable order", goldenParams(),
			`{"collections":["sentinel-2-l2a","landsat-c2-l2"],"ids":["a b","c,d"],"bbox":[170.5,-10,-170.25,5],` +
				`"datetime":"2023-06-01T00:00:00Z/2023-06-30T23:59:59Z","query":{"eo:cloud_cover":{"lt":10}},` +
				`"filter":"eo:cloud_cover < 10 AND platform = 'sentinel-2a'","filter-lang":"cql2-text",` +
				`"sortby":[{"field":"properties.datetime","direction":"desc"},{"field":"id","direction":"asc"}],` +
				`"fields":{"include":["id","properties.eo:cloud_cover"],"exclude":["links"]},"limit":50}`},
		{"json filter without lang gets cql2-json; JSON members canonical (compact, sorted keys)",
			SearchParams{Intersects: json.RawMessage(`{ "type": "Point", "coordinates": [1, 2] }`), Filter: json.RawMessage(`{"op":"<","args":[{"property":"eo:cloud_cover"},10]}`)},
			`{"intersects":{"coordinates":[1,2],"type":"Point"},"filter":{"args":[{"property":"eo:cloud_cover"},10],"op":"<"},"filter-lang":"cql2-json"}`},
		{"filter-lang without filter is not sent", SearchParams{FilterLang: FilterLangCQL2JSON, Limit: 1}, `{"limit":1}`},
		{"Go-built loose values go out normalised",
			SearchParams{Datetime: "2023", SortBy: []SortField{{Field: "id", Direction: "Descending"}}, Query: map[string]any{"gsd": map[string]any{"lt": 30}}},
			`{"datetime":"2023-01-01T00:00:00Z/2023-12-31T23:59:59.999999Z","query":{"gsd":{"lt":30}},"sortby":[{"field":"id","direction":"desc"}]}`},
		{"invalid params are encoded as they are", SearchParams{Datetime: "last week", Limit: 1}, `{"datetime":"last week","limit":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(tt.params.PostBody()); got != tt.want {
				t.Errorf("PostBody()\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

func TestParamQueryStringGolden(t *testing.T) {
	tests := []struct {
		name   string
		params SearchParams
		want   string
	}{
		{"empty params give an empty string", SearchParams{}, ``},
		{"every member in fixed order, + as %2B", goldenParams(),
			`collections=sentinel-2-l2a,landsat-c2-l2&ids=a%20b,c%2Cd&bbox=170.5,-10,-170.25,5` +
				`&datetime=2023-06-01T00:00:00Z/2023-06-30T23:59:59Z&query=%7B%22eo:cloud_cover%22:%7B%22lt%22:10%7D%7D` +
				`&filter=eo:cloud_cover%20%3C%2010%20AND%20platform%20%3D%20%27sentinel-2a%27&filter-lang=cql2-text` +
				`&sortby=-properties.datetime,%2Bid&fields=id,properties.eo:cloud_cover,-links&limit=50`},
		{"cql2-json filter over GET says so", SearchParams{Filter: json.RawMessage(`{"op":"=","args":[{"property":"id"},"x"]}`)},
			`filter=%7B%22args%22:%5B%7B%22property%22:%22id%22%7D%2C%22x%22%5D%2C%22op%22:%22%3D%22%7D&filter-lang=cql2-json`},
		{"intersects as compact JSON", SearchParams{Intersects: json.RawMessage(`{"type": "Point", "coordinates": [1.5, -2]}`)},
			`intersects=%7B%22coordinates%22:%5B1.5%2C-2%5D%2C%22type%22:%22Point%22%7D`},
		{"ascending sort is %2B, never a raw plus", SearchParams{SortBy: []SortField{{Field: "datetime", Direction: "asc"}}},
			`sortby=%2Bdatetime`},
		{"Go-built loose values go out normalised", SearchParams{Datetime: "2023-06-10T12:00:00+02:00", Collections: []string{" a "}},
			`collections=a&datetime=2023-06-10T10:00:00Z`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.params.QueryString()
			if got != tt.want {
				t.Errorf("QueryString()\n got  %s\n want %s", got, tt.want)
			}
			if _, err := url.ParseQuery(got); err != nil {
				t.Errorf("QueryString() is not a valid query: %v", err)
			}
		})
	}
}

func TestParamQueryStringDecodesToTheValues(t *testing.T) {
	values, err := url.ParseQuery(goldenParams().QueryString())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"collections": "sentinel-2-l2a,landsat-c2-l2",
		"bbox":        "170.5,-10,-170.25,5",
		"sortby":      "-properties.datetime,+id",
		"filter":      "eo:cloud_cover < 10 AND platform = 'sentinel-2a'",
		"query":       `{"eo:cloud_cover":{"lt":10}}`,
		"limit":       "50",
	}
	for key, value := range want {
		if got := values.Get(key); got != value {
			t.Errorf("decoded %s = %q, want %q", key, got, value)
		}
	}
}
