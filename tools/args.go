package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
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

// BBoxArg is a bounding box: [w,s,e,n] (numbers or numeric strings),
// "[w,s,e,n]" or "w,s,e,n" (or 6 numbers); or a place (places.go).
type BBoxArg json.RawMessage

// GeoJSONArg is a GeoJSON geometry (or Feature), as an object or a JSON
// string; or a place (places.go).
type GeoJSONArg json.RawMessage

// QueryArg is a STAC query-extension object, its JSON string, or
// "prop<op>value" strings.
type QueryArg json.RawMessage

// FilterArg is a CQL2 filter: a cql2-json object (or its JSON string) or cql2-text.
type FilterArg json.RawMessage

// SortByArg is "-properties.datetime,+id", a list of such strings, a
// {field, direction} object, or a list of them.
type SortByArg json.RawMessage

// FieldsArg is "a,-b", a list of such strings, or {include, exclude}.
type FieldsArg json.RawMessage

// IntArg is a whole number, also accepted as a string of digits.
type IntArg json.RawMessage

// MaxItemsArg is max_items: an IntArg whose schema says its range, 1 to
// the server's ceiling (set when the tool is registered; see define).
type MaxItemsArg IntArg

// PageSizeArg is the page size (limit) sent to the catalog: an IntArg from
// 0 (the catalog's default) to stacclient.MaxPageLimit.
type PageSizeArg IntArg

// ListLimitArg is search_collections' limit: 1 to maxCollectionsLimit.
type ListLimitArg IntArg

// AreaArg is an area of interest in one argument: a bbox or a GeoJSON
// geometry or Feature (stacclient.ParseArea), or a place (places.go).
type AreaArg json.RawMessage

// FilterLangArg is the filter language, one of the schema's enum.
type FilterLangArg string

// DetailArg is how much of each item search_items returns.
type DetailArg string

// ColorByArg is what map_items shades footprints by.
type ColorByArg string

// withItemCeiling returns schema with max_items' maximum set to the
// configured ceiling: the schema then says what a call may ask for.
func withItemCeiling(schema any, lim Limits) any {
	s, ok := schema.(*jsonschema.Schema)
	if !ok || s.Properties["max_items"] == nil {
		return schema
	}
	_, ceiling := itemLimits(lim)
	c := s.CloneSchemas()
	maximum := float64(ceiling)
	c.Properties["max_items"].Maximum = &maximum
	return c
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

func (a *StringList) UnmarshalJSON(b []byte) error   { *a = keepRaw(b); return nil }
func (a StringList) MarshalJSON() ([]byte, error)    { return rawOrNull(a) }
func (a *BBoxArg) UnmarshalJSON(b []byte) error      { *a = keepRaw(b); return nil }
func (a BBoxArg) MarshalJSON() ([]byte, error)       { return rawOrNull(a) }
func (a *GeoJSONArg) UnmarshalJSON(b []byte) error   { *a = keepRaw(b); return nil }
func (a GeoJSONArg) MarshalJSON() ([]byte, error)    { return rawOrNull(a) }
func (a *QueryArg) UnmarshalJSON(b []byte) error     { *a = keepRaw(b); return nil }
func (a QueryArg) MarshalJSON() ([]byte, error)      { return rawOrNull(a) }
func (a *FilterArg) UnmarshalJSON(b []byte) error    { *a = keepRaw(b); return nil }
func (a FilterArg) MarshalJSON() ([]byte, error)     { return rawOrNull(a) }
func (a *SortByArg) UnmarshalJSON(b []byte) error    { *a = keepRaw(b); return nil }
func (a SortByArg) MarshalJSON() ([]byte, error)     { return rawOrNull(a) }
func (a *FieldsArg) UnmarshalJSON(b []byte) error    { *a = keepRaw(b); return nil }
func (a FieldsArg) MarshalJSON() ([]byte, error)     { return rawOrNull(a) }
func (a *IntArg) UnmarshalJSON(b []byte) error       { *a = keepRaw(b); return nil }
func (a IntArg) MarshalJSON() ([]byte, error)        { return rawOrNull(a) }
func (a *MaxItemsArg) UnmarshalJSON(b []byte) error  { *a = keepRaw(b); return nil }
func (a MaxItemsArg) MarshalJSON() ([]byte, error)   { return rawOrNull(a) }
func (a *PageSizeArg) UnmarshalJSON(b []byte) error  { *a = keepRaw(b); return nil }
func (a PageSizeArg) MarshalJSON() ([]byte, error)   { return rawOrNull(a) }
func (a *ListLimitArg) UnmarshalJSON(b []byte) error { *a = keepRaw(b); return nil }
func (a ListLimitArg) MarshalJSON() ([]byte, error)  { return rawOrNull(a) }
func (a *AreaArg) UnmarshalJSON(b []byte) error      { *a = keepRaw(b); return nil }
func (a AreaArg) MarshalJSON() ([]byte, error)       { return rawOrNull(a) }

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

// The item-search arguments come in parts, so that each tool lists only
// what it uses: SearchFilter (what matches) and AreaArgs (where) are shared
// by every tool that searches; SearchArgs adds the order, the fields and the
// page size for the tools that return items. Their formats are explained
// once, in the server instructions (instructions.md), so the descriptions
// here stay short.

// SearchFilter is what items must match.
type SearchFilter struct {
	Collections StringList    `json:"collections,omitempty"`
	IDs         StringList    `json:"ids,omitempty"`
	Datetime    string        `json:"datetime,omitempty" jsonschema:"e.g. 2024-06 or 2024-06-01/2024-06-30"`
	Query       QueryArg      `json:"query,omitempty"`
	Filter      FilterArg     `json:"filter,omitempty" jsonschema:"CQL2"`
	FilterLang  FilterLangArg `json:"filter_lang,omitempty"`
}

// AreaArgs is where items must be: a bbox or a geometry, not both.
type AreaArgs struct {
	BBox       BBoxArg    `json:"bbox,omitempty" jsonschema:"[west,south,east,north] or place"`
	Intersects GeoJSONArg `json:"intersects,omitempty" jsonschema:"GeoJSON or place"`
}

// SearchArgs are search_items' parameters, named as in the Python stac-mcp.
type SearchArgs struct {
	SearchFilter
	AreaArgs
	SortBy SortByArg   `json:"sortby,omitempty" jsonschema:"e.g. -properties.datetime"`
	Fields FieldsArg   `json:"fields,omitempty"`
	Limit  PageSizeArg `json:"limit,omitempty" jsonschema:"page size, not the total"`
}

// AreaSearch are the search arguments of the tools that size, draw or
// measure an area (estimate_data_size, map_items, check_coverage): the
// filter, the area in one argument, aoi, and the order. The names bbox,
// intersects and aoi_geojson (the Python stac-mcp's) are still accepted
// for aoi, but not listed (areaAliases).
type AreaSearch struct {
	SearchFilter
	AOI    AreaArg   `json:"aoi,omitempty" jsonschema:"[west,south,east,north], GeoJSON or place"`
	SortBy SortByArg `json:"sortby,omitempty"`
}

// areaAliases are the older names of aoi.
var areaAliases = map[string]string{"bbox": "aoi", "intersects": "aoi", "aoi_geojson": "aoi"}

// params validates the search, with the area from aoi and the given page
// size (nil: the catalog's default).
func (a AreaSearch) params(limit PageSizeArg) (stacclient.SearchParams, error) {
	v, err := decodeArg("aoi", a.AOI, "a bbox or a GeoJSON geometry")
	if err != nil {
		return stacclient.SearchParams{}, err
	}
	bbox, intersects, err := stacclient.ParseArea("aoi", v)
	if err != nil {
		return stacclient.SearchParams{}, err
	}
	raw := a.SearchFilter.raw()
	if bbox != nil {
		raw.BBox = bbox
	}
	if intersects != nil {
		raw.Intersects = intersects
	}
	return parseSearch(raw, func(raw *stacclient.RawSearch) []rawSearchArg {
		return append(a.SearchFilter.args(raw),
			rawSearchArg{"sortby", a.SortBy, &raw.SortBy},
			rawSearchArg{"limit", limit, &raw.Limit})
	})
}

// rawSearchArg is one loose argument on its way into a RawSearch.
type rawSearchArg struct {
	param string
	data  []byte
	dst   *any
}

// parseSearch decodes loose arguments into raw and validates the whole
// search through stacclient.ParseSearch.
func parseSearch(raw stacclient.RawSearch, args func(*stacclient.RawSearch) []rawSearchArg) (stacclient.SearchParams, error) {
	for _, f := range args(&raw) {
		v, err := decodeArg(f.param, f.data, "valid JSON in one of the forms the parameter's description lists")
		if err != nil {
			return stacclient.SearchParams{}, err
		}
		*f.dst = v
	}
	return stacclient.ParseSearch(raw)
}

// raw starts a RawSearch with the filter's plain fields.
func (f SearchFilter) raw() stacclient.RawSearch {
	raw := stacclient.RawSearch{FilterLang: string(f.FilterLang)}
	if f.Datetime != "" {
		raw.Datetime = f.Datetime
	}
	return raw
}

func (f SearchFilter) args(raw *stacclient.RawSearch) []rawSearchArg {
	return []rawSearchArg{
		{"collections", f.Collections, &raw.Collections},
		{"ids", f.IDs, &raw.IDs},
		{"query", f.Query, &raw.Query},
		{"filter", f.Filter, &raw.Filter},
	}
}

func (a AreaArgs) args(raw *stacclient.RawSearch) []rawSearchArg {
	return []rawSearchArg{{"bbox", a.BBox, &raw.BBox}, {"intersects", a.Intersects, &raw.Intersects}}
}

// params validates the filter and area alone (tools that neither sort nor
// page, such as get_aggregations).
func (f SearchFilter) params(area AreaArgs) (stacclient.SearchParams, error) {
	return parseSearch(f.raw(), func(raw *stacclient.RawSearch) []rawSearchArg {
		return append(f.args(raw), area.args(raw)...)
	})
}

// params validates every argument through stacclient.ParseSearch.
func (a SearchArgs) params() (stacclient.SearchParams, error) {
	return parseSearch(a.SearchFilter.raw(), func(raw *stacclient.RawSearch) []rawSearchArg {
		return append(append(a.SearchFilter.args(raw), a.AreaArgs.args(raw)...),
			rawSearchArg{"sortby", a.SortBy, &raw.SortBy},
			rawSearchArg{"fields", a.Fields, &raw.Fields},
			rawSearchArg{"limit", a.Limit, &raw.Limit})
	})
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
