package stacclient

import "encoding/json"

// SearchParams is a normalised item search: every field already validated
// and in canonical form. Build one with ParseSearch from loose input, or fill
// it directly from Go (then call Validate).
//
// Limit is the page size hint sent to the server, NOT a total cap; the total
// cap is SearchLimits.MaxItems.
type SearchParams struct {
	Collections []string        `json:"collections,omitempty"`
	IDs         []string        `json:"ids,omitempty"`
	BBox        []float64       `json:"bbox,omitempty"`       // 4 or 6 numbers; west > east crosses the antimeridian
	Intersects  json.RawMessage `json:"intersects,omitempty"` // a validated GeoJSON geometry
	Datetime    string          `json:"datetime,omitempty"`   // RFC 3339 instant or interval, UTC "Z"
	Query       map[string]any  `json:"query,omitempty"`      // STAC query extension object
	Filter      json.RawMessage `json:"filter,omitempty"`     // CQL2 JSON object, or a JSON string holding CQL2 text
	FilterLang  string          `json:"filter-lang,omitempty"`
	SortBy      []SortField     `json:"sortby,omitempty"`
	Fields      *Fields         `json:"fields,omitempty"`
	Limit       int             `json:"limit,omitempty"` // page size; 0 = server default
}

// FilterLang values.
const (
	FilterLangCQL2JSON = "cql2-json"
	FilterLangCQL2Text = "cql2-text"
)

// SortField is one sortby entry.
type SortField struct {
	Field     string `json:"field"`
	Direction string `json:"direction"` // "asc" or "desc"
}

// Fields is the fields extension's include/exclude object.
type Fields struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// SearchLimits bounds one iteration over search results. Zero values mean
// the defaults (DefaultMaxPages; MaxItems 0 = no item cap).
type SearchLimits struct {
	MaxItems int // total items yielded across all pages
	MaxPages int // pages fetched, the first included
}

// DefaultMaxPages caps pagination when SearchLimits.MaxPages is zero.
const DefaultMaxPages = 100

// RawSearch is search input in the loose forms people and LLM clients send:
// each field may be a Go value or a decoded JSON value (string, []any,
// map[string]any, float64), including arrays and objects sent as JSON strings
// and comma-separated strings where pystac-client accepts them.
type RawSearch struct {
	Collections any
	IDs         any
	BBox        any
	Intersects  any
	Datetime    any
	Query       any
	Filter      any
	FilterLang  string
	SortBy      any
	Fields      any
	Limit       any
}

// ParseSearch validates and normalises loose search input. A bad value gives
// a *ParamError naming the parameter, what was received and what is accepted.
func ParseSearch(raw RawSearch) (SearchParams, error) { panic("unimplemented") }

// Validate checks a SearchParams built in Go (same rules as ParseSearch).
func (p SearchParams) Validate() error { panic("unimplemented") }

// ParseStringList accepts a list of strings, a JSON-encoded list, or a comma
// string ("a,b"). Empty input gives nil.
func ParseStringList(param string, v any) ([]string, error) { panic("unimplemented") }

// ParseBBox accepts 4 or 6 numbers as a list, a JSON-encoded list or "w,s,e,n".
func ParseBBox(v any) ([]float64, error) { panic("unimplemented") }

// ParseIntersects accepts a GeoJSON geometry (object or JSON string) or a
// Feature (its geometry is taken) and validates it.
func ParseIntersects(v any) (json.RawMessage, error) { panic("unimplemented") }

// ParseDatetime normalises an instant or interval: partial dates expand to
// their whole period, open ends are "..", everything is UTC "Z".
func ParseDatetime(s string) (string, error) { panic("unimplemented") }

// ParseQuery accepts a query object, a JSON string, or "prop<op>value" strings.
func ParseQuery(v any) (map[string]any, error) { panic("unimplemented") }

// ParseFilter accepts a CQL2 JSON object (or JSON string of one) or CQL2 text,
// and returns the filter with its language.
func ParseFilter(v any, lang string) (json.RawMessage, string, error) { panic("unimplemented") }

// ParseSortBy accepts "-properties.datetime,+id", a list of such strings, or
// a list of {field, direction} objects.
func ParseSortBy(v any) ([]SortField, error) { panic("unimplemented") }

// ParseFields accepts "a,-b", a list of such strings, or {include, exclude}.
func ParseFields(v any) (*Fields, error) { panic("unimplemented") }

// PostBody is the JSON body of a POST /search for these parameters.
func (p SearchParams) PostBody() json.RawMessage { panic("unimplemented") }

// QueryValues is the GET /search query string for these parameters
// (collections=a,b; bbox=w,s,e,n; sortby=%2Bid; filter-lang defaults to cql2-text).
func (p SearchParams) QueryString() string { panic("unimplemented") }
