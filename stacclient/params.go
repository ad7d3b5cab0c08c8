package stacclient

import (
	"encoding/json"
	"strconv"
	"strings"
)

// SearchParams is a normalised item search: every field already validated
// and in canonical form. Build one with ParseSearch from loose input, or fill
// it directly from Go (then call Validate, or Normalized to also get the
// canonical form).
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
// The first bad parameter (in field order) is reported.
func ParseSearch(raw RawSearch) (SearchParams, error) {
	var p SearchParams
	var err error
	if p.Collections, err = ParseStringList("collections", raw.Collections); err != nil {
		return SearchParams{}, err
	}
	if p.IDs, err = ParseStringList("ids", raw.IDs); err != nil {
		return SearchParams{}, err
	}
	if p.BBox, err = ParseBBox(raw.BBox); err != nil {
		return SearchParams{}, err
	}
	if p.Intersects, err = ParseIntersects(raw.Intersects); err != nil {
		return SearchParams{}, err
	}
	if p.BBox != nil && p.Intersects != nil {
		return SearchParams{}, &ParamError{
			Param:    "bbox",
			Got:      trimForMessage("bbox "+describeReceived(p.BBox)+" with intersects "+string(p.Intersects), maxReceivedChars),
			Reason:   "bbox and intersects cannot be combined",
			Accepted: "either bbox or intersects, not both (put the area in intersects as a Polygon to combine shapes)",
		}
	}
	if p.Datetime, err = parseLooseDatetime(raw.Datetime); err != nil {
		return SearchParams{}, err
	}
	if p.Query, err = ParseQuery(raw.Query); err != nil {
		return SearchParams{}, err
	}
	if p.Filter, p.FilterLang, err = ParseFilter(raw.Filter, raw.FilterLang); err != nil {
		return SearchParams{}, err
	}
	if p.SortBy, err = ParseSortBy(raw.SortBy); err != nil {
		return SearchParams{}, err
	}
	if p.Fields, err = ParseFields(raw.Fields); err != nil {
		return SearchParams{}, err
	}
	if p.Limit, err = ParseLimit(raw.Limit); err != nil {
		return SearchParams{}, err
	}
	return p, nil
}

// Validate checks a SearchParams built in Go (same rules as ParseSearch).
// It accepts every form ParseSearch accepts (a partial date such as "2023",
// a filter without FilterLang); use Normalized to get the canonical form
// that is sent on the wire.
func (p SearchParams) Validate() error {
	_, err := p.Normalized()
	return err
}

// Normalized re-runs the parameters through ParseSearch's rules and returns
// the canonical form (datetime expanded to UTC, filter language inferred,
// sort directions spelled "asc"/"desc", empty members dropped).
func (p SearchParams) Normalized() (SearchParams, error) {
	// Unset fields go in as typed nils ([]string(nil), "", nil RawMessage,
	// ...), which every parser reads as absent, like a nil interface.
	return ParseSearch(RawSearch{
		Collections: p.Collections,
		IDs:         p.IDs,
		BBox:        p.BBox,
		Intersects:  p.Intersects,
		Datetime:    p.Datetime,
		Query:       p.Query,
		Filter:      p.Filter,
		FilterLang:  p.FilterLang,
		SortBy:      p.SortBy,
		Fields:      p.Fields,
		Limit:       p.Limit,
	})
}

const stringListAccepted = `a list of strings ["a","b"], a JSON-encoded list "[\"a\",\"b\"]", or a comma-separated string "a,b"`

// ParseStringList accepts a list of strings, a JSON-encoded list, or a comma
// string ("a,b"). Empty input gives nil. Surrounding spaces are trimmed and
// empty entries of a comma string (as in "a,,b" or "a,b,") are skipped.
func ParseStringList(param string, v any) ([]string, error) {
	bad := paramErrorFor(param, v, stringListAccepted)
	in, err := readLoose(v, jsonListText, bad)
	switch {
	case err != nil || !in.present:
		return nil, err
	case in.decoded:
		return ParseStringList(param, in.value)
	}
	var items []string
	switch x := in.value.(type) {
	case string:
		for _, part := range strings.Split(x, ",") {
			if part = strings.TrimSpace(part); part != "" {
				items = append(items, part)
			}
		}
	case []string:
		for i, s := range x {
			s = strings.TrimSpace(s)
			if s == "" {
				return nil, bad("entry " + strconv.Itoa(i) + " is empty")
			}
			items = append(items, s)
		}
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, bad("entry " + strconv.Itoa(i) + " is " + jsonTypeName(e) + ", not a string")
			}
			if s = strings.TrimSpace(s); s == "" {
				return nil, bad("entry " + strconv.Itoa(i) + " is empty")
			}
			items = append(items, s)
		}
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseStringList(param, decoded)
		}
		return nil, bad("a " + jsonTypeName(v) + " is not a list of strings")
	}
	if len(items) == 0 {
		return nil, nil
	}
	return items, nil
}

// searchParamForms gives, per search parameter name, the accepted forms that
// ParseSearch's errors quote, so that tool descriptions and input schemas can
// say the same thing the errors say.
var searchParamForms = map[string]string{
	"collections": stringListAccepted,
	"ids":         stringListAccepted,
	"bbox":        bboxAccepted,
	"intersects":  intersectsAccepted,
	"datetime":    datetimeAccepted,
	"query":       queryAccepted,
	"filter":      filterAccepted,
	"filter-lang": filterLangAccepted,
	"sortby":      sortByAccepted,
	"fields":      fieldsAccepted,
	"limit":       limitAccepted,
}
