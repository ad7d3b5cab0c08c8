package stacserver

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every operator of the CQL2-JSON subset, run as POST and as GET with
// filter-lang=cql2-json.
func TestCQL2Operators(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct {
		name   string
		filter string
		want   []string
	}{
		{"=", `{"op":"=","args":[{"property":"eo:cloud_cover"},8]}`, []string{"s-02"}},
		{"<>", `{"op":"and","args":[{"op":"<>","args":[{"property":"platform"},"sentinel-2a"]},{"op":"<","args":[{"property":"eo:cloud_cover"},20]}]}`,
			[]string{"l-0", "s-01", "s-03"}},
		{"<", `{"op":"<","args":[{"property":"eo:cloud_cover"},8]}`, []string{"s-00", "s-01"}},
		{"<=", `{"op":"<=","args":[{"property":"properties.eo:cloud_cover"},8]}`, []string{"s-00", "s-01", "s-02"}},
		{">", `{"op":">","args":[{"property":"eo:cloud_cover"},90]}`, []string{"s-23", "s-24"}},
		{">=", `{"op":">=","args":[{"property":"eo:cloud_cover"},75]}`, []string{"l-3", "s-19", "s-20", "s-21", "s-22", "s-23", "s-24"}},
		{"or", `{"op":"or","args":[{"op":"=","args":[{"property":"id"},"s-01"]},{"op":"=","args":[{"property":"id"},"l-2"]}]}`,
			[]string{"l-2", "s-01"}},
		{"not", `{"op":"not","args":[{"op":"<","args":[{"property":"eo:cloud_cover"},92]}]}`, []string{"d-0", "d-1", "l-4", "s-23", "s-24"}},
		{"like", `{"op":"like","args":[{"property":"id"},"s-2_"]}`, sentinelIDs(20, 24)},
		{"like percent", `{"op":"like","args":[{"property":"platform"},"%2b"]}`,
			[]string{"s-01", "s-03", "s-05", "s-07", "s-09", "s-11", "s-13", "s-15", "s-17", "s-19", "s-21", "s-23"}},
		{"in", `{"op":"in","args":[{"property":"collection"},["dem"]]}`, []string{"d-0", "d-1"}},
		{"between", `{"op":"between","args":[{"property":"eo:cloud_cover"},10,20]}`, []string{"l-0", "s-03", "s-04", "s-05"}},
		{"isNull", `{"op":"isNull","args":[{"property":"eo:cloud_cover"}]}`, []string{"d-0", "d-1", "l-4"}},
		{"s_intersects polygon", `{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[[[-4.6,39],[-4.4,39],[-4.4,42],[-4.6,42],[-4.6,39]]]}]}`,
			[]string{"d-0", "d-1", "s-05"}},
		{"s_intersects bbox across the antimeridian", `{"op":"and","args":[{"op":"s_intersects","args":[{"property":"geometry"},{"bbox":[170,-5,-170,5]}]},{"op":"=","args":[{"property":"collection"},"landsat"]}]}`,
			[]string{"l-0", "l-1", "l-3"}},
		{"t_intersects interval", `{"op":"t_intersects","args":[{"property":"datetime"},{"interval":["2021-01-01T00:00:00Z","2021-01-31T00:00:00Z"]}]}`,
			sentinelIDs(0, 3)},
		{"t_intersects open interval", `{"op":"t_intersects","args":[{"property":"datetime"},{"interval":["2021-08-01T00:00:00Z",".."]}]}`,
			sentinelIDs(22, 24)},
		{"t_intersects date", `{"op":"t_intersects","args":[{"property":"datetime"},{"date":"2000-02-15"}]}`, []string{"d-0"}},
		{"t_intersects timestamp", `{"op":"t_intersects","args":[{"property":"datetime"},{"timestamp":"2021-01-11T00:00:00Z"}]}`, []string{"s-01"}},
		{"timestamp comparison", `{"op":">=","args":[{"property":"datetime"},{"timestamp":"2021-08-19T00:00:00Z"}]}`, []string{"s-23", "s-24"}},
		{"date comparison", `{"op":"<","args":[{"property":"datetime"},{"date":"2019-02-01"}]}`, []string{"l-0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			filter, err := decodeJSONValue(c.filter)
			if err != nil {
				t.Fatal(err)
			}
			got := searchBoth(t, ts,
				url.Values{"filter": {c.filter}, "filter-lang": {"cql2-json"}, "limit": {"100"}},
				map[string]any{"filter": filter, "filter-lang": "cql2-json", "limit": 100})
			if !equalStrings(got, sortedCopy(c.want)) {
				t.Errorf("got %v, want %v", got, sortedCopy(c.want))
			}
		})
	}
}

func TestCQL2Rejections(t *testing.T) {
	ts := startServer(t, Options{})
	cases := []struct{ filter, mention string }{
		{`{"op":"a_contains","args":[{"property":"x"},[1]]}`, `"a_contains"`},
		{`{"op":"=","args":[{"property":"x"}]}`, "takes 2 args"},
		{`{"op":"=","args":[{"op":"+","args":[1,2]},3]}`, "arithmetic"},
		{`{"op":"like","args":[{"property":"id"},5]}`, "string pattern"},
		{`{"op":"s_intersects","args":[{"property":"footprint"},{"bbox":[0,0,1,1]}]}`, "geometry"},
		{`{"op":"s_intersects","args":[{"property":"geometry"},{"bbox":[0,0,1]}]}`, "4 or 6 numbers"},
		{`{"op":"t_intersects","args":[{"property":"datetime"},{"timestamp":"soon"}]}`, "RFC 3339"},
		{`{"op":"<","args":[{"property":"datetime"},{"interval":["2020-01-01T00:00:00Z",".."]}]}`, "t_intersects"},
		{`{"args":[]}`, "expression object"},
		{`"eo:cloud_cover < 10"`, "cql2-text"},
	}
	for _, c := range cases {
		t.Run(c.mention, func(t *testing.T) {
			filter, err := decodeJSONValue(c.filter)
			if err != nil {
				t.Fatal(err)
			}
			r := ts.post(t, "/search", map[string]any{"filter": filter})
			wantStatus(t, r, http.StatusBadRequest)
			if d := r.body["description"].(string); !strings.Contains(d, c.mention) || !strings.Contains(d, `"filter"`) {
				t.Errorf("description %q should name the filter parameter and mention %q", d, c.mention)
			}
		})
	}
}
