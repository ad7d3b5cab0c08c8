package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's structuredContent is encoded here, once, rather than by the
// SDK's typed handler (mcp.AddTool with a typed Out), which encodes the
// output, decodes it, applies defaults, validates it and encodes it again:
// for get_item that was three passes over a complete item on top of the
// one the answer needs, and with the item's own re-encoding more CPU than
// fetching it. The checks stay: every output is validated
// against the output schema the tool advertises, and a failure is still a
// JSON-RPC error, not a tool result.

// checkedWithoutDecoding is implemented by outputs that carry an upstream
// JSON object as the bytes the catalog sent (GetItemOut): they give the
// decoded form of their own encoding for the schema check, from a decoding
// they already hold, instead of having those bytes decoded once more.
type checkedWithoutDecoding interface {
	decodedForCheck() (any, error)
}

// outputSchema is a tool's output schema, resolved on first use.
type outputSchema struct {
	tool   string
	schema *jsonschema.Schema
	once   sync.Once
	res    *jsonschema.Resolved
	err    error
}

func newOutputSchema[Out any](tool string, s *jsonschema.Schema) *outputSchema {
	// A pointer Out would need the SDK's rule for a nil pointer (send the
	// element's zero value); no tool has one, so none is written.
	if reflect.TypeFor[Out]().Kind() == reflect.Pointer {
		panic(fmt.Sprintf("tool %s: output type %v is a pointer; tools return output structs", tool, reflect.TypeFor[Out]()))
	}
	if where := schemaDefault(reflect.ValueOf(s), "#"); where != "" {
		panic(fmt.Sprintf("tool %s: output schema has a default at %s; structured sends the output as encoded and applies none", tool, where))
	}
	return &outputSchema{tool: tool, schema: s}
}

// schemaDefault is the location of a default in the schema v (a
// *jsonschema.Schema, or a slice or map of them, met while walking one),
// or "".
func schemaDefault(v reflect.Value, at string) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		s, ok := v.Interface().(*jsonschema.Schema)
		if !ok {
			return ""
		}
		if s.Default != nil {
			return at
		}
		e := v.Elem()
		for i := range e.NumField() {
			if where := schemaDefault(e.Field(i), at+"/"+e.Type().Field(i).Name); where != "" {
				return where
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if where := schemaDefault(v.Index(i), fmt.Sprintf("%s/%d", at, i)); where != "" {
				return where
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if where := schemaDefault(v.MapIndex(k), fmt.Sprintf("%s/%v", at, k)); where != "" {
				return where
			}
		}
	}
	return ""
}

func (o *outputSchema) resolved() (*jsonschema.Resolved, error) {
	o.once.Do(func() {
		// As the SDK resolves a tool's output schema.
		o.res, o.err = o.schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	})
	return o.res, o.err
}

// structured sets res's structuredContent to out, checked against the
// output schema. As the SDK does, a result without content gets the JSON as
// its text.
func (o *outputSchema) structured(res *mcp.CallToolResult, out any) (*mcp.CallToolResult, error) {
	b, err := encodeOutput(out)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("marshaling output: %v", err)}
	}
	if err := o.check(out, b); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("validating tool output: %v", err)}
	}
	res.StructuredContent = json.RawMessage(b)
	if res.Content == nil {
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	}
	return res, nil
}

// encodeOutput encodes out. An output with its own MarshalJSON (one that
// carries a catalog's bytes) is not passed through json.Marshal, which
// would scan those bytes once more to compact them: the SDK compacts the
// whole result when it sends it, and fails on anything invalid.
func encodeOutput(out any) ([]byte, error) {
	if m, ok := out.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(out)
}

// check validates out, whose encoding is b, against the output schema. No
// output schema has defaults (newOutputSchema refuses them), so unlike the
// SDK nothing needs applying and b is sent as it is.
func (o *outputSchema) check(out any, b []byte) error {
	resolved, err := o.resolved()
	if err != nil {
		return fmt.Errorf("resolving the output schema: %w", err)
	}
	var v any
	if c, ok := out.(checkedWithoutDecoding); ok {
		v, err = c.decodedForCheck()
	} else {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return err
	}
	return resolved.Validate(&v)
}
