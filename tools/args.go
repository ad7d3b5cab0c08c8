package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Loose argument types. Real LLM clients send arrays and objects as JSON
// strings ("[\"a\",\"b\"]"), lists as comma strings ("a,b") and numbers as
// strings ("10"). The SDK validates arguments against the input schema before
// a handler runs, so each of these types keeps the raw JSON it was given and
// widens its schema (argTypeSchemas) to the forms it accepts; parsing and the
// error messages live in stacclient.Parse*, the one place loose input is read.

// StringList is a list of strings: ["a","b"], "[\"a\",\"b\"]" or "a,b".
type StringList json.RawMessage

// BBoxArg is a bounding box: [w,s,e,n], "[w,s,e,n]" or "w,s,e,n" (or 6 numbers).
type BBoxArg json.RawMessage

// GeoJSONArg is a GeoJSON geometry (or Feature), as an object or a JSON string.
type GeoJSONArg json.RawMessage

// QueryArg is a STAC query-extension object, its JSON string, or
// "prop<op>value" strings.
type QueryArg json.RawMessage

// FilterArg is a CQL2 filter: a cql2-json object (or its JSON string) or cql2-text.
type FilterArg json.RawMessage

// SortByArg is "-properties.datetime,+id", a list of such strings, or a list
// of {field, direction} objects.
type SortByArg json.RawMessage

// FieldsArg is "a,-b", a list of such strings, or {include, exclude}.
type FieldsArg json.RawMessage

// IntArg is a whole number, also accepted as a string of digits.
type IntArg json.RawMessage

func init() {
	anyOf := func(types []string, items *jsonschema.Schema, desc string) *jsonschema.Schema {
		return &jsonschema.Schema{Types: types, Items: items, Description: desc}
	}
	str := &jsonschema.Schema{Type: "string"}
	argTypeSchemas[reflect.TypeFor[StringList]()] = anyOf([]string{"null", "array", "string"}, str,
		`list of strings: ["a","b"], a JSON-encoded list "[\"a\",\"b\"]", or a comma-separated string "a,b"`)
	argTypeSchemas[reflect.TypeFor[BBoxArg]()] = anyOf([]string{"null", "array", "string"}, &jsonschema.Schema{Type: "number"},
		`[west,south,east,north] in degrees (or 6 numbers with heights), as a list, a JSON-encoded list or "w,s,e,n"; west > east crosses the antimeridian`)
	argTypeSchemas[reflect.TypeFor[GeoJSONArg]()] = anyOf([]string{"null", "object", "string"}, nil,
		`GeoJSON geometry (Polygon, MultiPolygon, Point, ...) or Feature, as an object or a JSON-encoded string`)
	argTypeSchemas[reflect.TypeFor[QueryArg]()] = anyOf([]string{"null", "object", "string", "array"}, str,
		`STAC query extension: {"eo:cloud_cover":{"lt":10}}, its JSON string, or strings like "eo:cloud_cover<10"`)
	argTypeSchemas[reflect.TypeFor[FilterArg]()] = anyOf([]string{"null", "object", "string"}, nil,
		`CQL2 filter: a cql2-json object (or its JSON string), or cql2-text such as "eo:cloud_cover < 10"`)
	argTypeSchemas[reflect.TypeFor[SortByArg]()] = anyOf([]string{"null", "array", "string"}, nil,
		`"-properties.datetime,+id", a list of such strings, or [{"field":"properties.datetime","direction":"desc"}]`)
	argTypeSchemas[reflect.TypeFor[FieldsArg]()] = anyOf([]string{"null", "array", "string", "object"}, nil,
		`"id,-geometry", a list of such strings, or {"include":[...],"exclude":[...]}`)
	argTypeSchemas[reflect.TypeFor[IntArg]()] = anyOf([]string{"null", "integer", "string"}, nil,
		`a whole number, or a string of digits`)
}

// keepRaw copies b, because the decoder may reuse its buffer.
func keepRaw(b []byte) []byte { return append([]byte(nil), b...) }

// rawOrNull writes a loose argument back as the JSON it was given.
func rawOrNull(b []byte) ([]byte, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return []byte("null"), nil
	}
	return b, nil
}

func (a *StringList) UnmarshalJSON(b []byte) error { *a = keepRaw(b); return nil }
func (a StringList) MarshalJSON() ([]byte, error)  { return rawOrNull(a) }
func (a *BBoxArg) UnmarshalJSON(b []byte) error    { *a = keepRaw(b); return nil }
func (a BBoxArg) MarshalJSON() ([]byte, error)     { return rawOrNull(a) }
func (a *GeoJSONArg) UnmarshalJSON(b []byte) error { *a = keepRaw(b); return nil }
func (a GeoJSONArg) MarshalJSON() ([]byte, error)  { return rawOrNull(a) }
func (a *QueryArg) UnmarshalJSON(b []byte) error   { *a = keepRaw(b); return nil }
func (a QueryArg) MarshalJSON() ([]byte, error)    { return rawOrNull(a) }
func (a *FilterArg) UnmarshalJSON(b []byte) error  { *a = keepRaw(b); return nil }
func (a FilterArg) MarshalJSON() ([]byte, error)   { return rawOrNull(a) }
func (a *SortByArg) UnmarshalJSON(b []byte) error  { *a = keepRaw(b); return nil }
func (a SortByArg) MarshalJSON() ([]byte, error)   { return rawOrNull(a) }
func (a *FieldsArg) UnmarshalJSON(b []byte) error  { *a = keepRaw(b); return nil }
func (a FieldsArg) MarshalJSON() ([]byte, error)   { return rawOrNull(a) }
func (a *IntArg) UnmarshalJSON(b []byte) error     { *a = keepRaw(b); return nil }
func (a IntArg) MarshalJSON() ([]byte, error)      { return rawOrNull(a) }

// decodeArg turns the raw JSON of a loose argument into the decoded value the
// stacclient Parse* functions take (nil when absent or null).
func decodeArg(param string, raw []byte, accepted string) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &stacclient.ParamError{Param: param, Got: trimText(string(raw), 200), Reason: "not valid JSON: " + err.Error(), Accepted: accepted}
	}
	return v, nil
}

// Strings parses the list; param names it in errors.
func (a StringList) Strings(param string) ([]string, error) {
	v, err := decodeArg(param, a, "a list of strings")
	if err != nil {
		return nil, err
	}
	return stacclient.ParseStringList(param, v)
}

// Int parses a whole number in [min, max]; absent gives def.
func (a IntArg) Int(param string, def, min, max int, hint string) (int, error) {
	accepted := fmt.Sprintf("a whole number from %d to %d (a number or a string of digits)%s", min, max, hint)
	v, err := decodeArg(param, a, accepted)
	if err != nil {
		return 0, err
	}
	bad := func(reason string) error {
		return &stacclient.ParamError{Param: param, Got: trimText(string(a), 200), Reason: reason, Accepted: accepted}
	}
	var f float64
	switch x := v.(type) {
	case nil:
		return def, nil
	case float64:
		f = x
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return def, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, bad("not a whole number")
		}
		f = float64(n)
	default:
		return 0, bad("not a number")
	}
	if f != math.Trunc(f) {
		return 0, bad("has a fractional part")
	}
	if f < float64(min) || f > float64(max) {
		return 0, bad(fmt.Sprintf("out of range %d..%d", min, max))
	}
	return int(f), nil
}

// SearchArgs are the item-search parameters shared by search_items,
// estimate_data_size and get_aggregations, named as in the Python stac-mcp.
type SearchArgs struct {
	Collections StringList `json:"collections,omitempty" jsonschema:"collection ids to search, e.g. [\"sentinel-2-l2a\"] or \"sentinel-2-l2a,landsat-c2-l2\"; call search_collections to list ids"`
	IDs         StringList `json:"ids,omitempty" jsonschema:"item ids to fetch, as a list or comma string"`
	BBox        BBoxArg    `json:"bbox,omitempty" jsonschema:"bounding box [west,south,east,north] in degrees; cannot be combined with intersects"`
	Intersects  GeoJSONArg `json:"intersects,omitempty" jsonschema:"GeoJSON geometry the items must intersect; cannot be combined with bbox"`
	Datetime    string     `json:"datetime,omitempty" jsonschema:"RFC 3339 instant or interval: 2024-06-01, 2024-06, 2024-06-01/2024-06-30, 2024-01-01/.. (partial dates expand to their whole period; UTC)"`
	Query       QueryArg   `json:"query,omitempty" jsonschema:"STAC query extension, e.g. {\"eo:cloud_cover\":{\"lt\":10}} or \"eo:cloud_cover<10\"; see get_queryables for property names"`
	Filter      FilterArg  `json:"filter,omitempty" jsonschema:"CQL2 filter (filter extension): cql2-text \"eo:cloud_cover < 10\" or a cql2-json object"`
	FilterLang  string     `json:"filter_lang,omitempty" jsonschema:"cql2-text or cql2-json; inferred from filter when absent"`
	SortBy      SortByArg  `json:"sortby,omitempty" jsonschema:"sort order, e.g. \"-properties.datetime\" for newest first (sort extension)"`
	Fields      FieldsArg  `json:"fields,omitempty" jsonschema:"fields extension include/exclude, e.g. \"id,properties.datetime,-geometry\""`
	Limit       IntArg     `json:"limit,omitempty" jsonschema:"page size hint sent to the catalog (1..10000); the total returned is max_items (when max_items is absent, limit caps the total too, as in the Python stac-mcp)"`
}

// useAOIGeoJSON makes aoi_geojson (the Python stac-mcp's name for an area
// given as GeoJSON) the search's intersects; it is refused together with
// intersects or bbox, which name an area too.
func (a *SearchArgs) useAOIGeoJSON(aoi GeoJSONArg) error {
	if !argGiven(aoi) {
		return nil
	}
	if argGiven(a.Intersects) || argGiven(a.BBox) {
		return &stacclient.ParamError{Param: "aoi_geojson", Got: trimText(string(aoi), 80),
			Reason: "given together with intersects or bbox", Accepted: "one area: aoi_geojson (the Python stac-mcp name), intersects, or bbox"}
	}
	a.Intersects = aoi
	return nil
}

// params validates the arguments through stacclient.ParseSearch.
func (a SearchArgs) params() (stacclient.SearchParams, error) {
	raw := stacclient.RawSearch{FilterLang: a.FilterLang}
	fields := []struct {
		param string
		data  []byte
		dst   *any
	}{
		{"collections", a.Collections, &raw.Collections},
		{"ids", a.IDs, &raw.IDs},
		{"bbox", a.BBox, &raw.BBox},
		{"intersects", a.Intersects, &raw.Intersects},
		{"query", a.Query, &raw.Query},
		{"filter", a.Filter, &raw.Filter},
		{"sortby", a.SortBy, &raw.SortBy},
		{"fields", a.Fields, &raw.Fields},
		{"limit", a.Limit, &raw.Limit},
	}
	for _, f := range fields {
		v, err := decodeArg(f.param, f.data, "valid JSON in one of the forms the parameter's description lists")
		if err != nil {
			return stacclient.SearchParams{}, err
		}
		*f.dst = v
	}
	if a.Datetime != "" {
		raw.Datetime = a.Datetime
	}
	return stacclient.ParseSearch(raw)
}

// trimText cuts s to limit runes, saying how much was cut.
func trimText(s string, limit int) string {
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit]) + fmt.Sprintf("…(%d more characters)", len(r)-limit)
}

// paramWarnings are cautions about valid search parameters that are most
// likely not what the caller meant (a bbox with swapped corners).
func paramWarnings(p stacclient.SearchParams) []string {
	if w := stacclient.BBoxWarning(p.BBox); w != "" {
		return []string{w}
	}
	return nil
}
