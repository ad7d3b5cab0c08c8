package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// inputProperties is the properties map of a listed tool's input schema.
func inputProperties(t *testing.T, tools map[string]map[string]any, tool string) map[string]any {
	t.Helper()
	props, _ := tools[tool]["properties"].(map[string]any)
	if props == nil {
		t.Fatalf("%s: no input properties", tool)
	}
	return props
}

func listedInputSchemas(t *testing.T, opts testSessionOptions) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, tool := range listTools(t, newTestSession(t, opts)) {
		out[tool.Name] = schemaMap(t, tool.InputSchema)
	}
	return out
}

// TestSchemasSayWhatIsAccepted: enums for the closed string arguments,
// ranges for the counts (max_items up to the configured ceiling), and no
// argument a tool would ignore.
func TestSchemasSayWhatIsAccepted(t *testing.T) {
	t.Parallel()
	schemas := listedInputSchemas(t, testSessionOptions{Limits: Limits{MaxItemsDefault: 10, MaxItemsCeiling: 250}})
	prop := func(tool, name string) map[string]any {
		p, _ := inputProperties(t, schemas, tool)[name].(map[string]any)
		if p == nil {
			t.Fatalf("%s has no argument %s", tool, name)
		}
		return p
	}
	enum := func(tool, name string, want ...string) {
		got, _ := prop(tool, name)["enum"].([]any)
		var names []string
		for _, v := range got {
			names = append(names, v.(string))
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s.%s enum = %v, want %v", tool, name, names, want)
		}
	}
	enum("search_items", "detail", "summary", "full")
	for _, tool := range []string{"search_items", "get_aggregations", "estimate_data_size"} {
		enum(tool, "filter_lang", "cql2-text", "cql2-json")
	}
	bounds := func(tool, name string, lo, hi float64) {
		p := prop(tool, name)
		if p["minimum"] != lo || p["maximum"] != hi {
			t.Errorf("%s.%s range = %v..%v, want %v..%v", tool, name, p["minimum"], p["maximum"], lo, hi)
		}
	}
	bounds("search_items", "max_items", 1, 250)
	bounds("estimate_data_size", "max_items", 1, 250)
	bounds("search_items", "limit", 0, 10000)
	bounds("search_collections", "limit", 1, 100)

	agg := inputProperties(t, schemas, "get_aggregations")
	for _, ignored := range []string{"sortby", "fields", "limit"} {
		if _, ok := agg[ignored]; ok {
			t.Errorf("get_aggregations lists %s, which an aggregation ignores", ignored)
		}
	}
	est := inputProperties(t, schemas, "estimate_data_size")
	if _, ok := est["aoi"]; !ok {
		t.Error("estimate_data_size has no aoi argument")
	}
	for _, old := range []string{"bbox", "intersects", "aoi_geojson", "fields"} {
		if _, ok := est[old]; ok {
			t.Errorf("estimate_data_size lists %s: the area has one argument, aoi", old)
		}
	}
	bboxItems, _ := prop("search_items", "bbox")["items"].(map[string]any)
	if types, _ := bboxItems["type"].([]any); !slices.Contains(types, any("string")) {
		t.Errorf("bbox items %v do not accept numeric strings", bboxItems)
	}
	if types, _ := prop("search_items", "sortby")["type"].([]any); !slices.Contains(types, any("object")) {
		t.Errorf("sortby types %v do not accept a single {field, direction} object", types)
	}
}

// TestLooseBBoxAndSortByForms: a bbox of numeric strings and a single
// sortby object pass the schema and reach the catalog as their canonical
// forms.
func TestLooseBBoxAndSortByForms(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{
		"collections": []string{"sentinel-2-l2a"}, "bbox": []string{"-180", "-90", "180", "90"},
		"sortby": map[string]any{"field": "properties.datetime", "direction": "desc"}, "max_items": 3}))
	if out.Returned != 3 {
		t.Fatalf("returned %d, want 3", out.Returned)
	}
	if bbox, _ := out.Search["bbox"].([]any); len(bbox) != 4 || bbox[0] != -180.0 {
		t.Errorf("search sent bbox %v, want the numbers", out.Search["bbox"])
	}
	sortby, _ := out.Search["sortby"].([]any)
	if len(sortby) != 1 || !strings.Contains(toJSONText(t, sortby[0]), `"desc"`) {
		t.Errorf("search sent sortby %v, want one descending field", out.Search["sortby"])
	}
	for i := 1; i < len(out.Items); i++ {
		if out.Items[i].Datetime > out.Items[i-1].Datetime {
			t.Errorf("items not newest first: %s after %s", out.Items[i].Datetime, out.Items[i-1].Datetime)
		}
	}
}

func toJSONText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPixelToolArgumentsAreDescribed: every argument of the pixel tools and
// export carries a short description in tools/list (what a newcomer's
// model reads to fill it), except catalog_url, which every tool shares and
// the server instructions describe once.
func TestPixelToolArgumentsAreDescribed(t *testing.T) {
	t.Parallel()
	schemas := listedInputSchemas(t, testSessionOptions{})
	for _, tool := range []string{"aoi_statistics", "render_aoi", "index_time_series", "export"} {
		for name, p := range inputProperties(t, schemas, tool) {
			if name == "catalog_url" {
				continue
			}
			desc, _ := p.(map[string]any)["description"].(string)
			if strings.TrimSpace(desc) == "" {
				t.Errorf("%s: argument %s has no description", tool, name)
			}
		}
	}
}
