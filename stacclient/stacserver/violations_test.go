package stacserver

import (
	"encoding/json"
	"testing"
)

func TestViolationsReportsOnlyWhatIsPlainlyFailed(t *testing.T) {
	item := json.RawMessage(`{"type": "Feature", "id": "a", "collection": "c", "properties": {
		"datetime": "2024-06-01T10:00:00Z", "eo:cloud_cover": 54.3, "platform": "sentinel-2a", "gsd": 10, "s2:tile": "32TPT"}}`)
	cases := []struct {
		name     string
		datetime string
		query    map[string]any
		filter   string
		want     []string // conditions reported
	}{
		{"query lt fails", "", map[string]any{"eo:cloud_cover": map[string]any{"lt": 20}}, "", []string{"eo:cloud_cover lt 20"}},
		{"query lt holds", "", map[string]any{"eo:cloud_cover": map[string]any{"lt": 60}}, "", nil},
		{"query on a missing property", "", map[string]any{"view:sun_elevation": map[string]any{"gt": 10}}, "", nil},
		{"query incomparable literal", "", map[string]any{"eo:cloud_cover": map[string]any{"lt": "20"}}, "", nil},
		{"query in and eq", "", map[string]any{"platform": map[string]any{"in": []any{"sentinel-2b"}, "eq": "sentinel-2a"}}, "", []string{`platform in ["sentinel-2b"]`}},
		{"query startsWith", "", map[string]any{"s2:tile": map[string]any{"startsWith": "33"}}, "", []string{`s2:tile startsWith "33"`}},
		{"filter comparison", "", nil, `{"op":"<=","args":[{"property":"eo:cloud_cover"},10]}`, []string{`{"args":[{"property":"eo:cloud_cover"},10],"op":"<="}`}},
		{"filter flipped", "", nil, `{"op":">","args":[10,{"property":"eo:cloud_cover"}]}`, []string{`{"args":[10,{"property":"eo:cloud_cover"}],"op":">"}`}},
		{"filter and", "", nil, `{"op":"and","args":[{"op":"=","args":[{"property":"platform"},"sentinel-2a"]},{"op":"between","args":[{"property":"gsd"},20,60]}]}`,
			[]string{`{"args":[{"property":"gsd"},20,60],"op":"between"}`}},
		{"filter or, both false", "", nil, `{"op":"or","args":[{"op":"<","args":[{"property":"eo:cloud_cover"},10]},{"op":"=","args":[{"property":"platform"},"x"]}]}`,
			[]string{`{"args":[{"args":[{"property":"eo:cloud_cover"},10],"op":"<"},{"args":[{"property":"platform"},"x"],"op":"="}],"op":"or"}`}},
		{"filter or, one unknown", "", nil, `{"op":"or","args":[{"op":"<","args":[{"property":"eo:cloud_cover"},10]},{"op":"=","args":[{"property":"missing"},"x"]}]}`, nil},
		{"filter not on a missing property", "", nil, `{"op":"not","args":[{"op":"=","args":[{"property":"missing"},"x"]}]}`, nil},
		{"filter like", "", nil, `{"op":"like","args":[{"property":"platform"},"landsat%"]}`, []string{`{"args":[{"property":"platform"},"landsat%"],"op":"like"}`}},
		{"filter spatial is not judged", "", nil, `{"op":"s_intersects","args":[{"property":"geometry"},{"bbox":[0,0,1,1]}]}`, nil},
		{"filter timestamp", "", nil, `{"op":"<","args":[{"property":"datetime"},{"timestamp":"2024-01-01T00:00:00Z"}]}`, []string{`{"args":[{"property":"datetime"},{"timestamp":"2024-01-01T00:00:00Z"}],"op":"<"}`}},
		{"filter date is not judged", "", nil, `{"op":"=","args":[{"property":"datetime"},{"date":"2024-06-01"}]}`, nil},
		{"datetime outside", "2024-01-01T00:00:00Z/2024-01-31T23:59:59Z", nil, "", []string{"datetime 2024-01-01T00:00:00Z/2024-01-31T23:59:59Z"}},
		{"datetime inside", "2024-06-01T00:00:00Z/..", nil, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Violations(item, c.datetime, c.query, json.RawMessage(c.filter))
			if len(got) != len(c.want) {
				t.Fatalf("Violations = %+v, want %v", got, c.want)
			}
			for i, v := range got {
				if v.Condition != c.want[i] || v.Value == nil {
					t.Errorf("violation %d = %+v, want condition %s with the item's value", i, v, c.want[i])
				}
			}
		})
	}
	if v := Violations(item, "", map[string]any{"eo:cloud_cover": map[string]any{"lt": 20}}, nil); len(v) != 1 || v[0].Value != 54.3 {
		t.Errorf("value = %+v, want the item's 54.3", v)
	}
}
