package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type brokenOut struct {
	Names []string `json:"names"`
}

// Outputs are still checked against the schema the tool advertises, now
// that define encodes them instead of the SDK: an output that breaks it is
// a protocol error, as the SDK made it, not an answer.
func TestOutputThatBreaksItsSchemaIsRefused(t *testing.T) {
	t.Parallel()
	broken := define(&mcp.Tool{Name: "broken_output", Description: "test"}, false,
		func(ctx context.Context, c *Call, in GetRootIn) (brokenOut, string, error) {
			return brokenOut{}, "nil names: null where the schema says array", nil
		})
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{broken}})
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "broken_output", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "validating tool output") {
		t.Fatalf("err = %v; want a protocol error validating tool output", err)
	}
	fixed := define(&mcp.Tool{Name: "fixed_output", Description: "test"}, false,
		func(ctx context.Context, c *Call, in GetRootIn) (brokenOut, string, error) {
			return brokenOut{Names: []string{"a"}}, "", nil
		})
	cs = newTestSession(t, testSessionOptions{Tools: []Tool{fixed}})
	res := callOK(t, cs, "fixed_output", map[string]any{})
	if got := structured[brokenOut](t, res); !reflect.DeepEqual(got.Names, []string{"a"}) {
		t.Errorf("structured = %+v", got)
	}
	// Without a text block the JSON is the text, as the SDK does.
	var fromText brokenOut
	if err := json.Unmarshal([]byte(resultText(res)), &fromText); err != nil || !reflect.DeepEqual(fromText.Names, []string{"a"}) {
		t.Errorf("text = %q (%v); want the structured JSON", resultText(res), err)
	}
}

// structured.go sends outputs as encoded, without the defaults the SDK
// would apply: a schema with one is refused when the tool is defined.
func TestOutputSchemaDefaultsAreFound(t *testing.T) {
	for _, tool := range Candidates(true) {
		if where := schemaDefault(reflect.ValueOf(tool.Def.OutputSchema), "#"); where != "" {
			t.Errorf("%s: default at %s", tool.Def.Name, where)
		}
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"a": {Type: "array", Items: &jsonschema.Schema{Type: "string", Default: json.RawMessage(`"x"`)}},
	}}
	if where := schemaDefault(reflect.ValueOf(s), "#"); where != "#/Properties/a/Items" {
		t.Errorf("default found at %q, want #/Properties/a/Items", where)
	}
}
