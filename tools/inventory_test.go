package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools, in the order a model should meet them.
var wantToolNames = []string{
	"get_root", "get_conformance", "get_capabilities", "search_collections", "get_collection",
	"get_queryables", "search_items", "get_item", "get_aggregations", "estimate_data_size",
}

func listTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools = append(tools, tool)
	}
	return tools
}

func TestInventoryHasEveryIssueTool(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range Inventory() {
		names = append(names, tool.Def.Name)
	}
	for _, want := range wantToolNames {
		if !slices.Contains(names, want) {
			t.Errorf("Inventory() lacks %s (has %v)", want, names)
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("Inventory() lists %s twice", n)
		}
		seen[n] = true
	}
}

func TestToolsListMatchesInventory(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	var listed, inventory []string
	for _, tool := range listTools(t, cs) {
		listed = append(listed, tool.Name)
	}
	for _, tool := range Inventory() {
		inventory = append(inventory, tool.Def.Name)
	}
	slices.Sort(listed)
	slices.Sort(inventory)
	if !slices.Equal(listed, inventory) {
		t.Errorf("tools/list = %v, Inventory() = %v", listed, inventory)
	}
}

// TestToolMetadataGuard checks what a client relies on for every tool:
// metadata that tells a model when and how to call it, honest annotations
// (read-only tools otherwise make hosts ask for approval), and schemas that
// every client dialect accepts.
func TestToolMetadataGuard(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	network := map[string]bool{}
	for _, tool := range Inventory() {
		network[tool.Def.Name] = tool.Network
	}
	for _, tool := range listTools(t, cs) {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Title == "" && (tool.Annotations == nil || tool.Annotations.Title == "") {
				t.Error("no title")
			}
			if !strings.Contains(tool.Description, "Example") {
				t.Errorf("description has no worked example (the word \"Example\"): %q", tool.Description)
			}
			a := tool.Annotations
			if a == nil {
				t.Fatal("no annotations")
			}
			if tool.Name == "export" {
				// It writes a new file each call, never over one (adr/0042).
				if a.ReadOnlyHint || a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint {
					t.Errorf("export: readOnlyHint=%v idempotentHint=%v destructiveHint=%v, want false, false, false", a.ReadOnlyHint, a.IdempotentHint, a.DestructiveHint)
				}
			} else if !a.ReadOnlyHint || !a.IdempotentHint {
				t.Errorf("readOnlyHint=%v idempotentHint=%v, want both true (every other STAC tool only reads)", a.ReadOnlyHint, a.IdempotentHint)
			}
			if a.OpenWorldHint == nil {
				t.Error("openWorldHint unset (clients assume true)")
			} else if *a.OpenWorldHint != network[tool.Name] {
				t.Errorf("openWorldHint=%v but Tool.Network=%v", *a.OpenWorldHint, network[tool.Name])
			}
			if tool.OutputSchema == nil {
				t.Error("no output schema")
			} else {
				for _, path := range nullableArrays(schemaMap(t, tool.OutputSchema), "outputSchema") {
					t.Errorf("%s is a nullable array; our output arrays must be \"type\":\"array\"", path)
				}
			}
			in := schemaMap(t, tool.InputSchema)
			for _, k := range []string{"anyOf", "oneOf", "allOf"} {
				if _, ok := in[k]; ok {
					t.Errorf("input schema has top-level %s (many clients reject it)", k)
				}
			}
			if in["type"] != "object" {
				t.Errorf("input schema type = %v, want object", in["type"])
			}
			props, _ := in["properties"].(map[string]any)
			if _, ok := props["catalog_url"]; !ok {
				t.Error("input schema has no catalog_url property")
			}
		})
	}
}

func TestServerAnnouncesInstructionsAndStaticToolCapability(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	init := cs.InitializeResult()
	if init.ServerInfo.Name != ServerName || init.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", init.ServerInfo)
	}
	caps := init.Capabilities
	if caps.Tools == nil || caps.Tools.ListChanged {
		t.Errorf("tools capability = %+v, want present without listChanged", caps.Tools)
	}
	// As clients read it: the SDK deprecates ServerCapabilities.Logging
	// with the logging feature (SEP-2577).
	if raw, err := json.Marshal(caps); err != nil || strings.Contains(string(raw), `"logging"`) {
		t.Errorf("logging capability advertised but the server logs to stderr only: %s %v", raw, err)
	}
	order := []string{"get_root", "get_capabilities", "search_collections", "get_queryables", "search_items", "get_item", "estimate_data_size"}
	last := -1
	for _, name := range order {
		i := strings.Index(init.Instructions, name)
		if i < 0 {
			t.Errorf("instructions do not mention %s", name)
			continue
		}
		if i < last {
			t.Errorf("instructions mention %s out of the recommended order", name)
		}
		last = i
	}
	for _, word := range []string{"max_items", "limit", "cursor"} {
		if !strings.Contains(init.Instructions, word) {
			t.Errorf("instructions do not explain %s", word)
		}
	}
}

func schemaMap(t *testing.T, schema any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatalf("marshal schema: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("schema %s is not an object: %v", raw, err)
	}
	return m
}

// nullableArrays lists the paths of ["null","array"] types in a schema,
// skipping open objects (upstream STAC documents, see mustOutputSchema).
func nullableArrays(s map[string]any, path string) []string {
	var found []string
	if types, ok := s["type"].([]any); ok && len(types) == 2 && slices.Contains(types, any("null")) && slices.Contains(types, any("array")) {
		found = append(found, path)
	}
	props, _ := s["properties"].(map[string]any)
	if _, closed := s["additionalProperties"]; len(props) > 0 && !closed {
		return found
	}
	for name, p := range props {
		if m, ok := p.(map[string]any); ok {
			found = append(found, nullableArrays(m, path+".properties."+name)...)
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if m, ok := s[key].(map[string]any); ok {
			found = append(found, nullableArrays(m, path+"."+key)...)
		}
	}
	return found
}

func TestNullableArraysFindsThemOutsideOpenObjects(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"bad":  map[string]any{"type": []any{"null", "array"}},
			"good": map[string]any{"type": "array", "items": map[string]any{"type": []any{"null", "array"}}},
			"item": map[string]any{"type": "object", "properties": map[string]any{"links": map[string]any{"type": []any{"null", "array"}}}},
		},
	}
	got := nullableArrays(schema, "s")
	slices.Sort(got)
	want := []string{"s.properties.bad", "s.properties.good.items"}
	if !slices.Equal(got, want) {
		t.Errorf("nullableArrays = %v, want %v (the open object's links are upstream data)", got, want)
	}
}
