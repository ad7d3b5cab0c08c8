package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// mustInputSchema infers a tool's input schema from In, using the loose
// argument types' schemas (args.go). It panics on a type the inference
// cannot describe: that is a programming error, caught by the inventory
// tests before anything ships.
func mustInputSchema[In any](tool string) *jsonschema.Schema {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: argTypeSchemas})
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", tool, err))
	}
	return s
}

// mustOutputSchema infers a tool's output schema from Out. Two adjustments:
//
//   - Upstream STAC documents (stacclient types that keep unknown members in
//     an Extra field) are open objects: a catalog's extension fields must
//     not fail output validation, which the SDK reports as a protocol error.
//   - Every array of our own output types is "type":"array" instead of the
//     inferred ["null","array"]: type lists are unportable (Gemini,
//     OpenAPI-style dialects; `inspector --strict` flags them), and our
//     handlers always return non-nil slices. Arrays inside upstream
//     documents stay nullable, because we do not control what a catalog
//     sends (a null "links" must not become a protocol error).
func mustOutputSchema[Out any](tool string) *jsonschema.Schema {
	typeSchemas, err := outputTypeSchemas(reflect.TypeFor[Out]())
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", tool, err))
	}
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", tool, err))
	}
	makeArraysNonNullable(s)
	return s
}

var (
	extraType      = reflect.TypeFor[stacclient.Extra]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	anyType        = reflect.TypeFor[any]()
)

func anyJSONValueSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Description: "any JSON value"}
}

// outputTypeSchemas returns the type overrides for an output type: the
// argument types, json.RawMessage as any JSON value, and an open-object
// schema for every struct reachable from t that keeps unknown members.
func outputTypeSchemas(t reflect.Type) (map[reflect.Type]*jsonschema.Schema, error) {
	m := maps.Clone(argTypeSchemas)
	if m == nil {
		m = map[reflect.Type]*jsonschema.Schema{}
	}
	// An empty schema would serialise as the boolean `true`, which strict
	// clients (inspector --strict) reject where a schema object is expected;
	// a description keeps it an object that still accepts any JSON value.
	m[rawMessageType] = anyJSONValueSchema()
	m[anyType] = anyJSONValueSchema()
	if err := addOpenObjects(t, m, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	return m, nil
}

// addOpenObjects walks t depth-first so that nested open objects are in m
// before the structs that contain them are inferred.
func addOpenObjects(t reflect.Type, m map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || m[t] != nil {
		return nil
	}
	seen[t] = true
	keepsExtra := false
	for _, f := range reflect.VisibleFields(t) {
		if f.Type == extraType {
			keepsExtra = true
			continue
		}
		if f.IsExported() {
			if err := addOpenObjects(f.Type, m, seen); err != nil {
				return err
			}
		}
	}
	if !keepsExtra {
		return nil
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: m})
	if err != nil {
		return fmt.Errorf("%v: %w", t, err)
	}
	s.AdditionalProperties = nil // unknown members are kept and written back
	m[t] = s
	return nil
}

// makeArraysNonNullable rewrites ["null","array"] to "array" throughout our
// own output types. It does not descend into open objects (property-bearing
// objects without additionalProperties:false), which are upstream STAC
// documents; see mustOutputSchema.
func makeArraysNonNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") && slices.Contains(s.Types, "array") {
		s.Type, s.Types = "array", nil
	}
	if isOpenObject(s) {
		return
	}
	for _, p := range s.Properties {
		makeArraysNonNullable(p)
	}
	makeArraysNonNullable(s.Items)
	makeArraysNonNullable(s.AdditionalProperties)
	for _, group := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range group {
			makeArraysNonNullable(sub)
		}
	}
	for _, sub := range s.Defs {
		makeArraysNonNullable(sub)
	}
}

func isOpenObject(s *jsonschema.Schema) bool {
	isObject := s.Type == "object" || slices.Contains(s.Types, "object")
	return isObject && len(s.Properties) > 0 && s.AdditionalProperties == nil
}
