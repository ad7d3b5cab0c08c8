package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The SDK's schema validation errors are said in plain
// words, as the tools' own argument errors are, not in the validator's
// ("validating /properties/max_items: maximum: 500/1 is greater than
// 100.000000", "<invalid reflect.Value>").
func TestSchemaArgumentErrorsInPlainWords(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search_items", map[string]any{"max_items": 500},
			"search_items: max_items 500 is above this server's ceiling 100 (STAC_MCP_MAX_ITEMS_CEILING): ask for at most 100, then page with the cursor the answer returns."},
		{"map_items", map[string]any{"max_items": 500},
			"map_items: max_items 500 is above this server's ceiling 100 (STAC_MCP_MAX_ITEMS_CEILING): ask for at most 100, or narrow the area, period or collections."},
		{"search_items", map[string]any{"cursor": nil},
			"search_items: cursor is null: leave cursor out to start a search from its first page, or give the cursor string a previous result returned."},
		{"search_items", map[string]any{"max_items": 0}, "search_items: max_items 0 is below the smallest accepted value, 1"},
		{"search_items", map[string]any{"detail": "ful"}, `search_items: detail "ful" is not one of summary, full (did you mean full?).`},
		{"search_items", map[string]any{"sortby": 5}, "search_items: sortby is a whole number (5), but it takes a list, a string or an object"},
		{"search_items", map[string]any{"collections": []any{1}}, "search_items: an item of collections is a whole number; each item takes a string. Received: [1]."},
		{"search_items", map[string]any{"colections": []string{"naip"}}, "search_items: colections is not an argument of this tool (did you mean collections?). Accepted arguments: bbox,"},
		{"get_item", map[string]any{"collection_id": "naip"}, "get_item: missing required argument item_id; the tool's description has an example."},
	}
	for _, c := range cases {
		msg := callErr(t, cs, c.tool, c.args)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %v:\n got %q\nwant %q", c.tool, c.args, msg, c.want)
		}
	}
}

// Every argument of every tool, given a value of a type it does not take,
// gets a plain message naming it: the translation covers what the SDK's
// validator says for any schema the tools have, not only the cases above.
func TestEveryTypeErrorIsPlain(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	candidates := []any{true, 12345, "x", []any{"x"}, map[string]any{"x": 1}, nil}
	for _, tool := range Inventory() {
		s, ok := tool.Def.InputSchema.(*jsonschema.Schema)
		if !ok {
			continue
		}
		for name, prop := range s.Properties {
			types := prop.Types
			if prop.Type != "" {
				types = []string{prop.Type}
			}
			for _, v := range candidates {
				if got := valueType(v); slices.Contains(types, got) || (got == "integer" && slices.Contains(types, "number")) {
					continue
				}
				msg := callErr(t, cs, tool.Def.Name, map[string]any{name: v})
				for _, jargon := range []string{"validating", "reflect", "has type", ".000000", "/properties/"} {
					if strings.Contains(msg, jargon) {
						t.Errorf("%s {%q: %v}: %q says %q", tool.Def.Name, name, v, msg, jargon)
					}
				}
				if !strings.Contains(msg, name) && !strings.Contains(msg, "missing required argument") {
					t.Errorf("%s {%q: %v}: %q does not name the argument", tool.Def.Name, name, v, msg)
				}
				break // one wrong type per argument is enough
			}
		}
	}
}

// valueType is the JSON Schema type of one of the candidates.
func valueType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int:
		return "integer"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}
