package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// searchQuery is one item search (or aggregation) request, decoded from a
// GET query string or a POST body, with its conditions compiled.
type searchQuery struct {
	Collections  []string
	IDs          []string
	BBox         []float64
	Intersects   any // decoded GeoJSON geometry
	Datetime     string
	Query        map[string]any
	Filter       any // decoded CQL2-JSON
	FilterLang   string
	SortBy       []sortField
	Fields       *fieldsSpec
	Limit        int // 0 when not given
	Token        string
	TokenParam   string   // which of token, next, cursor carried it (for messages)
	Aggregations []string // /aggregate only

	conditions []predicate
}

type sortField struct {
	Field     string `json:"field"`
	Direction string `json:"direction"`
}

type fieldsSpec struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
	// IncludeMissing: a POST body's fields had no include member, so an
	// exclude list subtracts from the whole item rather than from the
	// default set (fields extension v1.0.0, "null vs. empty vs. missing").
	IncludeMissing bool `json:"-"`
}

// MarshalJSON writes include as the request had it: absent when missing,
// a list otherwise (null and [] mean the same), so that a next link's
// body and the fingerprint keep the distinction.
func (f fieldsSpec) MarshalJSON() ([]byte, error) {
	m := map[string][]string{"exclude": orEmpty(f.Exclude)}
	if !f.IncludeMissing {
		m["include"] = orEmpty(f.Include)
	}
	return json.Marshal(m)
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// Parameter names understood by /search; /aggregate adds "aggregations".
var searchParamNames = []string{"collections", "ids", "bbox", "intersects", "datetime", "query", "filter",
	"filter-lang", "filter-crs", "sortby", "fields", "limit", "token", "next", "cursor"}

const (
	bboxAccepted   = "4 or 6 numbers west,south,east,north (west > east crosses the antimeridian), longitudes in [-180,180], latitudes in [-90,90]"
	limitAccepted  = "a whole number of at least 1"
	sortAccepted   = `GET "+field,-field"; POST [{"field": "properties.x", "direction": "asc"|"desc"}]`
	fieldsAccepted = `GET "a,-b"; POST {"include": [...], "exclude": [...]}`
	listAccepted   = `a comma-separated string or a list of strings`
)

func unknownParam(name string, accepted []string) *apiError {
	return badRequest("parameter %q is not supported here (accepted: %s)", name, strings.Join(accepted, ", "))
}

// parseSearchGET decodes a GET query string.
func parseSearchGET(values url.Values, allowed []string) (*searchQuery, error) {
	q := &searchQuery{}
	for name := range values {
		if !contains(allowed, name) {
			return nil, unknownParam(name, allowed)
		}
	}
	get := values.Get
	q.Collections = splitList(get("collections"))
	q.IDs = splitList(get("ids"))
	q.Aggregations = splitList(get("aggregations"))
	if s := get("bbox"); s != "" {
		b, err := numberList(splitList(s))
		if err != nil {
			return nil, badParam("bbox", s, bboxAccepted, err.Error())
		}
		q.BBox = b
	}
	if s := get("intersects"); s != "" {
		v, err := decodeJSONValue(s)
		if err != nil {
			return nil, badParam("intersects", s, "a GeoJSON geometry as JSON", err.Error())
		}
		q.Intersects = v
	}
	q.Datetime = get("datetime")
	if s := get("query"); s != "" {
		v, err := decodeJSONValue(s)
		m, isObj := v.(map[string]any)
		if err != nil || !isObj {
			return nil, badParam("query", s, queryAccepted, "not a JSON object")
		}
		q.Query = m
	}
	q.FilterLang = strings.ToLower(get("filter-lang"))
	if err := filterLang(q.FilterLang); err != nil {
		return nil, err
	}
	if s := get("filter"); s != "" {
		// cql2-text is GET's default; a filter that is plainly a JSON
		// object without filter-lang is taken as cql2-json.
		isJSON := q.FilterLang == "cql2-json" || q.FilterLang == "" && strings.HasPrefix(strings.TrimSpace(s), "{")
		if isJSON {
			v, err := decodeJSONValue(s)
			if err != nil {
				return nil, badParam("filter", s, cql2Accepted, "filter-lang is cql2-json but the filter is not valid JSON")
			}
			q.Filter = v
		} else {
			v, err := parseFilterText(s)
			if err != nil {
				return nil, err
			}
			q.Filter = v
		}
	}
	if s := get("filter-crs"); s != "" && s != "http://www.opengis.net/def/crs/OGC/1.3/CRS84" {
		return nil, badParam("filter-crs", s, "http://www.opengis.net/def/crs/OGC/1.3/CRS84", "only CRS84 is supported")
	}
	if s := get("sortby"); s != "" {
		for _, f := range splitList(s) {
			// An unencoded "+" arrives as a space; treat it as ascending.
			f = strings.TrimSpace(f)
			dir := "asc"
			switch {
			case strings.HasPrefix(f, "-"):
				dir, f = "desc", f[1:]
			case strings.HasPrefix(f, "+"):
				f = f[1:]
			}
			if f == "" {
				return nil, badParam("sortby", s, sortAccepted, "empty field name")
			}
			q.SortBy = append(q.SortBy, sortField{Field: f, Direction: dir})
		}
	}
	if _, present := values["fields"]; present {
		// "?fields=" asks for the default set; GET cannot say "include
		// missing", so an exclude-only list subtracts from the default set.
		s := get("fields")
		q.Fields = &fieldsSpec{}
		for _, f := range splitList(s) {
			f = strings.TrimSpace(f)
			switch {
			case strings.HasPrefix(f, "-"):
				q.Fields.Exclude = append(q.Fields.Exclude, f[1:])
			case strings.HasPrefix(f, "+"):
				q.Fields.Include = append(q.Fields.Include, f[1:])
			default:
				q.Fields.Include = append(q.Fields.Include, f)
			}
		}
	}
	if s := get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, badParam("limit", s, limitAccepted, "not a whole number")
		}
		if n < 1 {
			return nil, badParam("limit", s, limitAccepted, "must be at least 1")
		}
		q.Limit = n
	}
	for _, name := range []string{"token", "next", "cursor"} {
		if s := get(name); s != "" {
			q.Token, q.TokenParam = s, name
		}
	}
	return q, q.compile()
}

// parseSearchPOST decodes a POST body.
func parseSearchPOST(body []byte, allowed []string) (*searchQuery, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	m, err := decodeJSONObject(body)
	if err != nil {
		return nil, badRequest("the request body is not a JSON object: %v", err)
	}
	q := &searchQuery{}
	for name, v := range m {
		if !contains(allowed, name) {
			return nil, unknownParam(name, allowed)
		}
		if v == nil {
			continue
		}
		if err := q.setPOSTField(name, v); err != nil {
			return nil, err
		}
	}
	if text, isText := q.Filter.(string); isText {
		// cql2-text in a POST body (filter-lang cql2-text, or a string
		// filter without filter-lang).
		if q.FilterLang == "cql2-json" {
			return nil, badParam("filter", compactJSON(text), cql2Accepted, "filter-lang is cql2-json but the filter is a string (CQL2 text?)")
		}
		v, err := parseFilterText(text)
		if err != nil {
			return nil, err
		}
		q.Filter = v
	} else if q.Filter != nil && q.FilterLang == "cql2-text" {
		return nil, badParam("filter", compactJSON(q.Filter), cql2Accepted, "filter-lang is cql2-text but the filter is not a string")
	}
	if q.Filter != nil {
		q.FilterLang = "cql2-json"
	}
	return q, q.compile()
}

func (q *searchQuery) setPOSTField(name string, v any) error {
	got := compactJSON(v)
	var err error
	switch name {
	case "collections", "ids", "aggregations":
		var list []string
		if list, err = stringList(v); err != nil {
			return badParam(name, got, listAccepted, err.Error())
		}
		switch name {
		case "collections":
			q.Collections = list
		case "ids":
			q.IDs = list
		default:
			q.Aggregations = list
		}
	case "bbox":
		if q.BBox, err = numberList(v); err != nil {
			return badParam("bbox", got, bboxAccepted, err.Error())
		}
	case "intersects":
		q.Intersects = v
	case "datetime":
		s, ok := v.(string)
		if !ok {
			return badParam("datetime", got, datetimeAccepted, "not a string")
		}
		q.Datetime = s
	case "query":
		m, ok := v.(map[string]any)
		if !ok {
			return badParam("query", got, queryAccepted, "not an object")
		}
		q.Query = m
	case "filter":
		q.Filter = v // a string is cql2-text, parsed once filter-lang is known
	case "filter-lang":
		s, isStr := v.(string)
		if !isStr {
			return badParam("filter-lang", got, `"cql2-text" or "cql2-json"`, "not a string")
		}
		if err := filterLang(s); err != nil {
			return err
		}
		q.FilterLang = strings.ToLower(s)
	case "filter-crs":
		if s, _ := v.(string); s != "http://www.opengis.net/def/crs/OGC/1.3/CRS84" {
			return badParam("filter-crs", got, "http://www.opengis.net/def/crs/OGC/1.3/CRS84", "only CRS84 is supported")
		}
	case "sortby":
		return q.setPOSTSortBy(v, got)
	case "fields":
		m, ok := v.(map[string]any)
		if !ok {
			return badParam("fields", got, fieldsAccepted, "not an object")
		}
		q.Fields = &fieldsSpec{}
		_, hasInclude := m["include"]
		q.Fields.IncludeMissing = !hasInclude
		for key, dst := range map[string]*[]string{"include": &q.Fields.Include, "exclude": &q.Fields.Exclude} {
			if m[key] == nil {
				continue
			}
			if *dst, err = stringList(m[key]); err != nil {
				return badParam("fields", got, fieldsAccepted, key+": "+err.Error())
			}
		}
		if len(q.Fields.Exclude) == 0 {
			q.Fields.IncludeMissing = false // {} and {"include": null} both ask for the default set
		}
	case "limit":
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			return badParam("limit", got, limitAccepted, "not a whole number")
		}
		if i < 1 {
			return badParam("limit", got, limitAccepted, "must be at least 1")
		}
		q.Limit = int(i)
	case "token", "next", "cursor":
		s, ok := v.(string)
		if !ok {
			return badParam(name, got, "the opaque string from a next link", "not a string")
		}
		q.Token, q.TokenParam = s, name
	}
	return nil
}

func (q *searchQuery) setPOSTSortBy(v any, got string) error {
	list, ok := v.([]any)
	if !ok {
		if s, isStr := v.(string); isStr {
			parsed, err := parseSearchGET(url.Values{"sortby": {s}}, []string{"sortby"})
			if err != nil {
				return err
			}
			q.SortBy = parsed.SortBy
			return nil
		}
		return badParam("sortby", got, sortAccepted, "not a list")
	}
	for _, e := range list {
		m, _ := e.(map[string]any)
		field, _ := m["field"].(string)
		dir, _ := m["direction"].(string)
		if dir == "" {
			dir = "asc"
		}
		if field == "" || (dir != "asc" && dir != "desc") {
			return badParam("sortby", got, sortAccepted, fmt.Sprintf("bad entry %s", compactJSON(e)))
		}
		q.SortBy = append(q.SortBy, sortField{Field: field, Direction: dir})
	}
	return nil
}

// compile validates the decoded parameters and builds the conditions.
func (q *searchQuery) compile() error {
	if q.BBox != nil && q.Intersects != nil {
		return badRequest("parameters \"bbox\" and \"intersects\" cannot be used together; send one of them")
	}
	if q.BBox != nil {
		if err := validateBBox(q.BBox); err != nil {
			return badParam("bbox", compactJSON(q.BBox), bboxAccepted, err.Error())
		}
		shapes := shapesFromBBox(q.BBox)
		if len(q.BBox) == 6 {
			// A 3D bbox [w,s,zmin,e,n,zmax] also bounds heights (once
			// ignored, which let items at any height through).
			lo, hi := q.BBox[2], q.BBox[5]
			q.conditions = append(q.conditions, func(it *storedItem) bool { return heightsMeet(it.doc, lo, hi) })
		}
		q.conditions = append(q.conditions, func(it *storedItem) bool {
			for _, s := range shapes {
				if it.shape.intersects(s) {
					return true
				}
			}
			return false
		})
	}
	if q.Intersects != nil {
		g, err := geometryFromJSONValue(q.Intersects)
		if err != nil {
			return badParam("intersects", compactJSON(q.Intersects), "a GeoJSON geometry (Point, LineString, Polygon, Multi*, GeometryCollection)", err.Error())
		}
		s := newShape(g)
		q.conditions = append(q.conditions, func(it *storedItem) bool { return it.shape.intersects(s) })
	}
	if q.Datetime != "" {
		r, err := parseDatetimeParam(q.Datetime)
		if err != nil {
			return err
		}
		q.conditions = append(q.conditions, func(it *storedItem) bool { return it.hasTime && r.overlaps(it.start, it.end) })
	}
	if len(q.IDs) > 0 {
		ids := q.IDs
		q.conditions = append(q.conditions, func(it *storedItem) bool { return contains(ids, it.id) })
	}
	if q.Query != nil {
		p, err := compileQuery(q.Query)
		if err != nil {
			return err
		}
		q.conditions = append(q.conditions, p)
	}
	if q.Filter != nil {
		p, err := compileCQL2(q.Filter)
		if err != nil {
			return err
		}
		q.conditions = append(q.conditions, p)
	}
	for _, f := range q.SortBy {
		if f.Field == "" {
			return badParam("sortby", compactJSON(q.SortBy), sortAccepted, "empty field name")
		}
	}
	return nil
}

func (q *searchQuery) matches(it *storedItem) bool {
	for _, c := range q.conditions {
		if !c(it) {
			return false
		}
	}
	return true
}

// body is the query as a POST body (without the page token).
func (q *searchQuery) body() map[string]any {
	b := map[string]any{}
	if len(q.Collections) > 0 {
		b["collections"] = q.Collections
	}
	if len(q.IDs) > 0 {
		b["ids"] = q.IDs
	}
	if q.BBox != nil {
		b["bbox"] = q.BBox
	}
	if q.Intersects != nil {
		b["intersects"] = q.Intersects
	}
	if q.Datetime != "" {
		b["datetime"] = q.Datetime
	}
	if q.Query != nil {
		b["query"] = q.Query
	}
	if q.Filter != nil {
		b["filter"] = q.Filter
		b["filter-lang"] = "cql2-json"
	}
	if len(q.SortBy) > 0 {
		b["sortby"] = q.SortBy
	}
	if q.Fields != nil {
		b["fields"] = q.Fields
	}
	if q.Limit > 0 {
		b["limit"] = q.Limit
	}
	if len(q.Aggregations) > 0 {
		b["aggregations"] = q.Aggregations
	}
	return b
}

// values is the query as a GET query string (without the page token).
func (q *searchQuery) values() url.Values {
	v := url.Values{}
	join := func(key string, list []string) {
		if len(list) > 0 {
			v.Set(key, strings.Join(list, ","))
		}
	}
	join("collections", q.Collections)
	join("ids", q.IDs)
	join("aggregations", q.Aggregations)
	if q.BBox != nil {
		parts := make([]string, len(q.BBox))
		for i, f := range q.BBox {
			parts[i] = strconv.FormatFloat(f, 'f', -1, 64)
		}
		v.Set("bbox", strings.Join(parts, ","))
	}
	if q.Intersects != nil {
		v.Set("intersects", compactJSONFull(q.Intersects))
	}
	if q.Datetime != "" {
		v.Set("datetime", q.Datetime)
	}
	if q.Query != nil {
		v.Set("query", compactJSONFull(q.Query))
	}
	if q.Filter != nil {
		v.Set("filter", compactJSONFull(q.Filter))
		v.Set("filter-lang", "cql2-json")
	}
	if len(q.SortBy) > 0 {
		parts := make([]string, len(q.SortBy))
		for i, f := range q.SortBy {
			sign := "+"
			if f.Direction == "desc" {
				sign = "-"
			}
			parts[i] = sign + f.Field
		}
		v.Set("sortby", strings.Join(parts, ","))
	}
	if q.Fields != nil {
		parts := []string{} // "fields=" (the default set) when both lists are empty
		parts = append(parts, q.Fields.Include...)
		for _, e := range q.Fields.Exclude {
			parts = append(parts, "-"+e)
		}
		v.Set("fields", strings.Join(parts, ","))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// fingerprint identifies the query independently of GET/POST encoding, so
// a page token can be checked against the query it is used with.
func (q *searchQuery) fingerprint() string {
	b := q.body()
	delete(b, "limit")
	for _, key := range []string{"collections", "ids"} {
		if list, ok := b[key].([]string); ok {
			sorted := append([]string(nil), list...)
			sort.Strings(sorted)
			b[key] = sorted
		}
	}
	return compactJSONFull(b)
}

func validateBBox(b []float64) error {
	if len(b) != 4 && len(b) != 6 {
		return fmt.Errorf("has %d numbers", len(b))
	}
	w, s, e, n := b[0], b[1], b[2], b[3]
	if len(b) == 6 {
		w, s, e, n = b[0], b[1], b[3], b[4]
	}
	switch {
	case w < -180 || w > 180 || e < -180 || e > 180:
		return fmt.Errorf("a longitude is outside [-180,180]")
	case s < -90 || s > 90 || n < -90 || n > 90:
		return fmt.Errorf("a latitude is outside [-90,90]")
	case s > n:
		return fmt.Errorf("south %v is greater than north %v (is the order w,s,e,n?)", s, n)
	case len(b) == 6 && b[2] > b[5]:
		return fmt.Errorf("the lowest height %v is above the highest %v (the order is w,s,zmin,e,n,zmax)", b[2], b[5])
	}
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return splitList(v), nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is not a string", i)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a list of strings")
}

// numberList accepts decoded JSON numbers or strings of numbers.
func numberList(v any) ([]float64, error) {
	var elems []any
	switch v := v.(type) {
	case []any:
		elems = v
	case []string:
		for _, s := range v {
			elems = append(elems, s)
		}
	case []float64:
		return v, nil
	default:
		return nil, fmt.Errorf("not a list of numbers")
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		var s string
		switch e := e.(type) {
		case json.Number:
			s = e.String()
		case string:
			s = e
		case float64:
			out[i] = e
			continue
		default:
			return nil, fmt.Errorf("element %d is not a number", i)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("element %d (%q) is not a number", i, s)
		}
		out[i] = f
	}
	return out, nil
}

func decodeJSONValue(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func compactJSONFull(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
