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
		// Three-valued: items without eo:cloud_cover (d-0, d-1, l-4) are
		// NULL under the comparison and under its NOT, so not returned.
		{"not", `{"op":"not","args":[{"op":"<","args":[{"property":"eo:cloud_cover"},92]}]}`, []string{"s-23", "s-24"}},
		{"like", `{"op":"like","args":[{"property":"id"},"s-2_"]}`, sentinelIDs(20, 24)},
		// \ makes the next character literal (here "-"); it was matched
		// as a backslash.
		{"like escape", `{"op":"like","args":[{"property":"id"},"s\\-0%"]}`, sentinelIDs(0, 9)},
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
		{`{"op":"Buffer","args":[{"property":"geometry"},10]}`, `function "Buffer" is not supported`},
		{`{"op":"=","args":[{"property":"x"}]}`, "takes 2 args"},
		{`{"op":"like","args":[{"property":"id"},5]}`, `"like" cannot take a number 5`},
		{`{"op":"s_intersects","args":[{"property":"geometry"},{"bbox":[0,0,1]}]}`, "4 or 6 numbers"},
		{`{"op":"s_intersects","args":[{"property":"geometry"},"POINT(1 2)"]}`, `"s_intersects" cannot take a string`},
		{`{"op":"t_intersects","args":[{"property":"datetime"},{"timestamp":"soon"}]}`, "RFC 3339"},
		{`{"op":"<","args":[{"property":"datetime"},{"interval":["2020-01-01T00:00:00Z",".."]}]}`, `"<" cannot take an interval`},
		{`{"op":"+","args":[{"property":"gsd"},"ten"]}`, `"+" cannot take a string`},
		{`{"args":[]}`, "an operation"},
		{`"eo:cloud_cover <"`, "CQL2 text: the filter ends where an operand was expected"},
		{`"eo:cloud_cover != 10"`, `"!=" is not CQL2; use "<>"`},
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

// CQL2 text is accepted in GET (its default language) and POST, and gives
// what its JSON form gives; the JSON form is what paging links carry.
func TestCQL2Text(t *testing.T) {
	ts := startServer(t, Options{})
	for _, c := range []struct {
		text string
		want []string
	}{
		{"eo:cloud_cover < 8", []string{"s-00", "s-01"}},
		{"NOT (eo:cloud_cover < 92)", []string{"s-23", "s-24"}},
		{"collection = 'dem' OR id IN ('s-01', 'l-2')", []string{"d-0", "d-1", "l-2", "s-01"}},
		{"platform LIKE '%2b' AND eo:cloud_cover BETWEEN 10 AND 20", []string{"s-03", "s-05"}},
		{"S_INTERSECTS(geometry, BBOX(-4.6, 39, -4.4, 42))", []string{"d-0", "d-1", "s-05"}},
		{"T_INTERSECTS(datetime, INTERVAL('2021-08-01T00:00:00Z', '..'))", sentinelIDs(22, 24)},
		{"eo:cloud_cover * 2 > 180", []string{"s-23", "s-24"}},
	} {
		t.Run(c.text, func(t *testing.T) {
			got := searchBoth(t, ts,
				url.Values{"filter": {c.text}, "limit": {"100"}},
				map[string]any{"filter": c.text, "filter-lang": "cql2-text", "limit": 100})
			if !equalStrings(got, sortedCopy(c.want)) {
				t.Errorf("got %v, want %v", got, sortedCopy(c.want))
			}
		})
	}
}

// geometry IS NULL reads the item's geometry, not properties.geometry.
func TestCQL2GeometryIsNull(t *testing.T) {
	ts := startServer(t, Options{})
	all := searchBoth(t, ts, url.Values{"limit": {"100"}}, map[string]any{"limit": 100})
	got := searchBoth(t, ts, url.Values{"filter": {"geometry IS NOT NULL"}, "limit": {"100"}},
		map[string]any{"filter": "geometry IS NOT NULL", "limit": 100})
	if !equalStrings(got, all) {
		t.Errorf("geometry IS NOT NULL: %d of %d items", len(got), len(all))
	}
	got = searchBoth(t, ts, url.Values{"filter": {"geometry IS NULL"}, "limit": {"100"}},
		map[string]any{"filter": "geometry IS NULL", "limit": 100})
	if len(got) != 0 {
		t.Errorf("geometry IS NULL: %v, want none (every item has a geometry)", got)
	}
}
