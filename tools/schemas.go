package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// argTypeSchemas overrides the inferred schema of the loose argument types
// (arrays that may arrive as JSON strings, and so on; args.go and the
// files of the types below): the one table of them.
var argTypeSchemas = argTypeSchemaTable()

func argTypeSchemaTable() map[reflect.Type]*jsonschema.Schema {
	t := map[reflect.Type]*jsonschema.Schema{}
	// The schemas say which JSON types each argument takes, without a
	// description: the accepted forms are documented on the types (args.go)
	// and, for the model, once in the server instructions ("Lists and
	// objects may also be sent as JSON strings"); a field's own short
	// description is what tools/list shows.
	loose := func(types []string, items *jsonschema.Schema) *jsonschema.Schema {
		return &jsonschema.Schema{Types: types, Items: items}
	}
	str := &jsonschema.Schema{Type: "string"}
	t[reflect.TypeFor[StringList]()] = loose([]string{"null", "array", "string"}, str)
	// Coordinates may come quoted (["-105.3", "39.9", ...]).
	coordinate := &jsonschema.Schema{Types: []string{"number", "string"}}
	t[reflect.TypeFor[BBoxArg]()] = loose([]string{"null", "array", "string"}, coordinate)
	t[reflect.TypeFor[AreaArg]()] = loose([]string{"null", "array", "string", "object"}, coordinate)
	t[reflect.TypeFor[GeoJSONArg]()] = loose([]string{"null", "object", "string"}, nil)
	t[reflect.TypeFor[QueryArg]()] = loose([]string{"null", "object", "string", "array"}, str)
	t[reflect.TypeFor[FilterArg]()] = loose([]string{"null", "object", "string"}, nil)
	t[reflect.TypeFor[SortByArg]()] = loose([]string{"null", "array", "string", "object"}, nil)
	t[reflect.TypeFor[FieldsArg]()] = loose([]string{"null", "array", "string", "object"}, nil)
	t[reflect.TypeFor[IntArg]()] = loose([]string{"null", "integer", "string"}, nil)
	// minimum and maximum apply to numbers only: a string of digits is
	// range-checked by the handler, with the same message.
	bounded := func(min, max float64) *jsonschema.Schema {
		s := loose([]string{"null", "integer", "string"}, nil)
		s.Minimum = &min
		if max > 0 {
			s.Maximum = &max
		}
		return s
	}
	t[reflect.TypeFor[MaxItemsArg]()] = bounded(1, 0) // maximum: the ceiling, at registration
	t[reflect.TypeFor[PageSizeArg]()] = bounded(0, stacclient.MaxPageLimit)
	t[reflect.TypeFor[ListLimitArg]()] = bounded(1, maxCollectionsLimit)
	t[reflect.TypeFor[FilterLangArg]()] = &jsonschema.Schema{Type: "string",
		Enum: []any{stacclient.FilterLangCQL2Text, stacclient.FilterLangCQL2JSON}}
	t[reflect.TypeFor[DetailArg]()] = &jsonschema.Schema{Type: "string", Enum: []any{detailSummary, detailFull}}
	t[reflect.TypeFor[ColorByArg]()] = &jsonschema.Schema{Type: "string", Enum: []any{colorByCloud, colorByDate}}
	// catalog_url: one catalog, or several (catalogs_arg.go). The items'
	// type is left to the handler: a catalog is named by a string in every
	// form, and the 26 bytes of every tool's schema buy the pixel
	// arguments their descriptions within the tool-list budget.
	t[reflect.TypeFor[CatalogRefs]()] = &jsonschema.Schema{Types: []string{"string", "array"}}
	// The pixel tools' index and view names (pixels_index.go, render_aoi.go).
	var indices []any
	for _, n := range index.Names() {
		indices = append(indices, n)
	}
	t[reflect.TypeFor[IndexArg]()] = &jsonschema.Schema{Type: "string", Enum: indices}
	var views []any
	for _, n := range viewNames() {
		views = append(views, n)
	}
	t[reflect.TypeFor[ViewArg]()] = &jsonschema.Schema{Type: "string", Enum: views}
	// A write tool's document (write_tools.go).
	t[reflect.TypeFor[DocumentArg]()] = &jsonschema.Schema{Types: []string{"object", "string"},
		Description: "a JSON object, or its JSON-encoded string"}
	return t
}

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
