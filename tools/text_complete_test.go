package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Hosts differ in what they give the model: Claude Desktop forwards the
// text content only, Claude Code the structuredContent only. So the text
// block must carry every datum the structured output has. missingFromText
// walks a result's structuredContent and lists the values its text lacks:
// every string and number (numbers as formatNumber writes them), and every
// key of a data map (a key that is not a property name of the tool's
// output schema, such as an item property or an asset key). Booleans are
// left out (the text states flags in words), and so is exempt (paths like
// "features.*.links" that a test has reasons to skip).
func missingFromText(t *testing.T, tool *mcp.Tool, res *mcp.CallToolResult, exempt ...string) []string {
	t.Helper()
	text := resultText(res)
	schemaNames := map[string]bool{}
	collectPropertyNames(schemaMap(t, tool.OutputSchema), schemaNames)
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var missing []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		for _, e := range exempt {
			if pathMatches(e, path) {
				return
			}
		}
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !schemaNames[k] && !strings.Contains(text, k) {
					missing = append(missing, fmt.Sprintf("key %s.%s", path, k))
				}
				walk(path+"."+k, x[k])
			}
		case []any:
			for _, e := range x {
				walk(path+".*", e)
			}
		case string:
			if x != "" && !strings.Contains(text, x) {
				missing = append(missing, fmt.Sprintf("%s = %q", path, trimText(x, 80)))
			}
		case float64:
			if s := formatNumber(x); !strings.Contains(text, s) {
				missing = append(missing, fmt.Sprintf("%s = %s", path, s))
			}
		}
	}
	walk("", v)
	return missing
}

// pathMatches compares a dotted path with a pattern whose "*" matches one
// segment; the pattern matches the path and everything under it.
func pathMatches(pattern, path string) bool {
	p, q := strings.Split(strings.TrimPrefix(pattern, "."), "."), strings.Split(strings.TrimPrefix(path, "."), ".")
	if len(q) < len(p) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != q[i] {
			return false
		}
	}
	return true
}

func collectPropertyNames(s map[string]any, names map[string]bool) {
	if props, ok := s["properties"].(map[string]any); ok {
		for name, sub := range props {
			names[name] = true
			if m, ok := sub.(map[string]any); ok {
				collectPropertyNames(m, names)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if m, ok := s[key].(map[string]any); ok {
			collectPropertyNames(m, names)
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[key].([]any); ok {
			for _, sub := range list {
				if m, ok := sub.(map[string]any); ok {
					collectPropertyNames(m, names)
				}
			}
		}
	}
}

// TestTextCarriesTheStructuredData checks, for a typical call of every
// tool, that the text block holds all of structuredContent's data, and that
// no text points to "the structured output" a Claude Desktop model never
// sees.
func TestTextCarriesTheStructuredData(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	previews, _, _ := newPreviewCatalog(t)
	previewSession := newTestSession(t, testSessionOptions{CatalogURL: previews})
	scene := newPixelScene(t)
	pixelSession := newTestSession(t, testSessionOptions{CatalogURL: scene.catalog})
	pixelItem := map[string]any{"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "aoi": scene.aoi}
	season := newSeasonScene(t, nil)
	seasonSession := newTestSession(t, testSessionOptions{CatalogURL: season.catalog, SeriesPage: 4})
	seasonArgs := func(kv ...any) map[string]any {
		m := map[string]any{"collections": "sentinel-2-l2a", "aoi": season.aoi}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	withArg := func(m map[string]any, k string, v any) map[string]any {
		out := maps.Clone(m)
		out[k] = v
		return out
	}
	defs := map[string]*mcp.Tool{}
	for _, tool := range listTools(t, cs) {
		defs[tool.Name] = tool
	}
	calls := []struct {
		tool    string
		args    map[string]any
		exempt  []string
		session *mcp.ClientSession // default cs
	}{
		{"list_catalogs", map[string]any{}, nil, nil},
		{"get_root", map[string]any{}, nil, nil},
		{"get_conformance", map[string]any{"check": "sort,transaction"}, nil, nil},
		{"get_capabilities", map[string]any{}, nil, nil},
		{"search_collections", map[string]any{"q": "sentinel", "limit": 3}, nil, nil},
		{"get_collection", map[string]any{"collection_id": "sentinel-2-l2a"}, nil, nil},
		{"get_queryables", map[string]any{"collection_id": "sentinel-2-l2a"}, nil, nil},
		{"search_items", map[string]any{"collections": "sentinel-2-l2a", "bbox": []float64{-40, -6, -38, -4}, "max_items": 2}, nil, nil},
		{"search_items", map[string]any{"collections": "sentinel-2-l2a", "max_items": 2, "detail": "full"}, nil, nil},
		{"get_item", map[string]any{"collection_id": "sentinel-2-l2a", "item_id": "S2B_24MUA_20250731_0_L2A"}, nil, nil},
		{"get_aggregations", map[string]any{"collections": "sentinel-2-l2a", "aggregations": "total_count,datetime_frequency"}, nil, nil},
		{"estimate_data_size", map[string]any{"collections": "sentinel-2-l2a", "max_items": 2, "force_metadata_only": true, "aoi": []float64{-40, -6, -38, -4}}, nil, nil},
		{"get_item_preview", map[string]any{"collection_id": "previews", "item_id": "thumb-jpeg"}, nil, previewSession},
		// On the offline demo: no preview, and the text says why.
		{"get_item_preview", map[string]any{"collection_id": "sentinel-2-l2a", "item_id": "S2B_24MUA_20250731_0_L2A"}, nil, nil},
		{"map_items", map[string]any{"collections": "sentinel-2-l2a", "bbox": []float64{-40.5, -5.3, -37.5, -3.5}, "max_items": 5}, nil, nil},
		{"check_coverage", map[string]any{"collections": "sentinel-2-l2a", "bbox": []float64{-40.5, -5.3, -37.5, -3.5}, "max_items": 8}, nil, nil},
		{"get_service_health", map[string]any{}, nil, nil},
		// Places (places.go): the place field is carried by the text's first line.
		{"search_items", map[string]any{"collections": "sentinel-2-l2a", "bbox": "Paris", "max_items": 1}, nil, nil},
		{"check_coverage", map[string]any{"collections": "sentinel-2-l2a", "aoi": "Netherlands"}, nil, nil},
		{"map_items", map[string]any{"collections": "sentinel-2-l2a", "aoi": "-4.6, -39.5, 20 km"}, nil, nil},
		{"search_collections", map[string]any{"bbox": "Colorado", "limit": 3}, nil, nil},
		{"get_aggregations", map[string]any{"collections": "sentinel-2-l2a", "intersects": "Ceara"}, nil, nil},
		{"aoi_statistics", withArg(pixelItem, "bands", "red,nir,swir16"), nil, pixelSession},
		{"render_aoi", withArg(pixelItem, "view", "ndvi"), nil, pixelSession},
		{"render_aoi", withArg(pixelItem, "view", "swir"), nil, pixelSession},
		{"index_time_series", map[string]any{"collections": "s2-synthetic", "aoi": scene.aoi}, nil, pixelSession},
		{"aoi_statistics", seasonArgs("datetime", "2023-03-15"), nil, seasonSession},
		{"aoi_statistics", seasonArgs("datetime", "2023-06/2023-08", "bands", "nir"), nil, seasonSession},
		{"render_aoi", seasonArgs("datetime", "2023-03-15", "view", "ndvi"), nil, seasonSession},
		{"render_aoi", seasonArgs("datetime", "2023-06/2023-08", "view", "ndvi"), nil, seasonSession},
		{"render_aoi", seasonArgs("datetime", "2023-06/2023-08", "baseline", "2023-01/2023-03", "view", "ndvi"), nil, seasonSession},
		{"index_time_series", seasonArgs("datetime", "2023"), nil, seasonSession},
		{"export", withArg(withArg(pixelItem, "kind", "pixels"), "bands", "red,nir"), nil, pixelSession},
		{"export", withArg(withArg(pixelItem, "kind", "pixels"), "bands", "ndvi"), nil, pixelSession},
		{"export", map[string]any{"kind": "series", "collections": "s2-synthetic", "aoi": scene.aoi}, nil, pixelSession},
		{"export", map[string]any{"kind": "items", "collections": "sentinel-2-l2a"}, nil, nil},
	}
	covered := map[string]bool{}
	for _, c := range calls {
		covered[c.tool] = true
		t.Run(c.tool, func(t *testing.T) {
			session := cs
			if c.session != nil {
				session = c.session
			}
			res := callOK(t, session, c.tool, c.args)
			text := resultText(res)
			if strings.Contains(strings.ToLower(text), "structured output") || strings.Contains(strings.ToLower(text), "structuredcontent") {
				t.Errorf("text refers to the structured output:\n%s", text)
			}
			if missing := missingFromText(t, defs[c.tool], res, c.exempt...); len(missing) > 0 {
				t.Errorf("%d value(s) of structuredContent are not in the text, e.g.:\n%s\ntext:\n%s",
					len(missing), strings.Join(missing[:min(len(missing), 15)], "\n"), trimText(text, 3000))
			}
		})
	}
	for name := range defs {
		if !covered[name] && !slices.Contains(textExemptTools, name) {
			t.Errorf("no call of %s checks its text", name)
		}
	}
}

// textExemptTools are tools whose text is checked elsewhere.
var textExemptTools = []string{}

// TestWriteToolTextsCarryTheStructuredData: the write tools (listed with
// --allow-writes) answer in text with everything their structured output
// says, first time and on a duplicate.
func TestWriteToolTextsCarryTheStructuredData(t *testing.T) {
	t.Parallel()
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	defs := map[string]*mcp.Tool{}
	for _, tool := range listTools(t, cs) {
		defs[tool.Name] = tool
	}
	updated := itemArg(t, "existing", 3)
	collection := map[string]any{"type": "Collection", "stac_version": "1.0.0", "id": "survey-2", "description": "d", "license": "CC0-1.0",
		"extent": map[string]any{"spatial": map[string]any{"bbox": [][]float64{{-180, -90, 180, 90}}},
			"temporal": map[string]any{"interval": [][]any{{nil, nil}}}}, "links": []any{}}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"create_item", map[string]any{"collection_id": "survey", "item": itemArg(t, "new-1", 2), "idempotency_key": "k1"}},
		{"create_item", map[string]any{"collection_id": "survey", "item": itemArg(t, "new-1", 2), "idempotency_key": "k1"}}, // duplicate
		{"update_item", map[string]any{"collection_id": "survey", "item_id": "existing", "item": updated, "idempotency_key": "k2"}},
		{"delete_item", map[string]any{"collection_id": "survey", "item_id": "new-1", "idempotency_key": "k3"}},
		{"create_collection", map[string]any{"collection": collection, "idempotency_key": "k4"}},
		{"update_collection", map[string]any{"collection_id": "survey-2", "collection": collection, "idempotency_key": "k5"}},
	}
	covered := map[string]bool{}
	for _, c := range calls {
		covered[c.tool] = true
		res := callOK(t, cs, c.tool, c.args)
		if missing := missingFromText(t, defs[c.tool], res); len(missing) > 0 {
			t.Errorf("%s: %d value(s) of structuredContent are not in the text, e.g.:\n%s\ntext:\n%s",
				c.tool, len(missing), strings.Join(missing[:min(len(missing), 15)], "\n"), resultText(res))
		}
	}
	for _, name := range writeToolNames {
		if !covered[name] {
			t.Errorf("no call of %s checks its text", name)
		}
	}
}
