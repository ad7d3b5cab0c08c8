package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient/cql2"
)

// Violation is a simple search condition that a returned item plainly
// fails: a catalog that returned the item did not apply the condition.
type Violation struct {
	Param     string // "datetime", "query" or "filter"
	Condition string // the condition as the search wrote it, e.g. "eo:cloud_cover lt 20"
	Property  string // the property it tests
	Value     any    // the item's value of it
}

// Violations lists the conditions of a search that item (a STAC Item's
// JSON) plainly fails, using the rules this server searches with. A client
// uses it to catch a catalog that ignored datetime, query or a filter.
// Only what can be decided for certain is reported: a query-extension
// comparison of a property the item has with a literal of a comparable
// type; each conjunct of a CQL2 filter that is FALSE (not NULL) for the
// item, if it uses no spatial or temporal function, date or interval
// (filterViolations); and datetime against the item's datetime or
// start/end. Anything else is never reported, so that a catalog with
// different but legitimate semantics is not accused. datetime is the STAC
// parameter ("" for none), filter a CQL2-JSON object (nil for none).
func Violations(item json.RawMessage, datetime string, query map[string]any, filter json.RawMessage) []Violation {
	doc, err := decodeJSONObject(item)
	if err != nil {
		return nil
	}
	it := &storedItem{doc: doc}
	it.id, _ = doc["id"].(string)
	it.collection, _ = doc["collection"].(string)
	var out []Violation
	if datetime != "" {
		out = append(out, datetimeViolation(it, datetime)...)
	}
	for _, name := range slices.Sorted(maps.Keys(query)) {
		ops, _ := query[name].(map[string]any)
		for _, op := range slices.Sorted(maps.Keys(ops)) {
			want := normalizeLiteral(ops[op])
			if v, fails := plainlyFails(it, name, queryOps[op], want); fails {
				out = append(out, Violation{Param: "query", Condition: fmt.Sprintf("%s %s %s", name, op, compactJSON(want)), Property: name, Value: v})
			}
		}
	}
	if len(bytes.TrimSpace(filter)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(filter))
		dec.UseNumber()
		var expr any
		if dec.Decode(&expr) == nil {
			out = append(out, filterViolations(it, expr)...)
		}
	}
	return out
}

// queryOps maps the query extension's operators to the comparisons below.
var queryOps = map[string]string{
	"eq": "=", "neq": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">=", "in": "in",
	"startsWith": "startsWith", "endsWith": "endsWith", "contains": "contains",
}

// filterViolations walks the conjuncts of a CQL2-JSON expression and
// reports each one that is FALSE for the item (NULL, say for a property
// the item lacks, is not certain: a fields-trimmed answer lacks it too).
// Conjuncts that use a spatial or temporal function, a date or an interval
// are not judged: catalogs legitimately differ there (geodesic edges,
// antimeridian handling, a date as a day or as its first instant).
func filterViolations(it *storedItem, expr any) []Violation {
	obj, ok := expr.(map[string]any)
	if !ok {
		return nil
	}
	op, _ := obj["op"].(string)
	args, _ := obj["args"].([]any)
	if strings.EqualFold(op, "and") {
		var out []Violation
		for _, a := range args {
			out = append(out, filterViolations(it, a)...)
		}
		return out
	}
	if !judgeable(expr) {
		return nil
	}
	f, err := cql2.Compile(expr)
	if err != nil || f.Eval(itemRecord{it}) != false {
		return nil
	}
	name := firstProperty(expr)
	v, _ := itemValue(it, name)
	return []Violation{{Param: "filter", Condition: compactJSON(expr), Property: name, Value: normalizeValue(v)}}
}

// judgeable reports whether expr uses only operators whose result every
// conforming catalog agrees on, on item properties.
func judgeable(expr any) bool {
	switch x := expr.(type) {
	case []any:
		for _, e := range x {
			if !judgeable(e) {
				return false
			}
		}
	case map[string]any:
		if name, ok := x["property"].(string); ok {
			return name != "geometry"
		}
		if op, ok := x["op"].(string); ok {
			lower := strings.ToLower(op)
			if strings.HasPrefix(lower, "s_") || strings.HasPrefix(lower, "t_") {
				return false
			}
			return judgeable(x["args"])
		}
		_, isTimestamp := x["timestamp"]
		return isTimestamp && len(x) == 1 // dates, intervals, geometries: no
	}
	return true
}

// firstProperty is the first property an expression names ("" for none).
func firstProperty(expr any) string {
	switch x := expr.(type) {
	case []any:
		for _, e := range x {
			if p := firstProperty(e); p != "" {
				return p
			}
		}
	case map[string]any:
		if name, ok := x["property"].(string); ok {
			return name
		}
		return firstProperty(x["args"])
	}
	return ""
}

func normalizeLiteral(v any) any {
	if list, ok := v.([]any); ok {
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = normalizeValue(e)
		}
		return out
	}
	return normalizeValue(v)
}

// plainlyFails reports whether the item has property name and its value
// certainly fails the comparison cmp with literal; it returns that value.
func plainlyFails(it *storedItem, name, cmp string, literal any) (any, bool) {
	v, ok := itemValue(it, name)
	if !ok || v == nil || literal == nil {
		return nil, false
	}
	v = normalizeValue(v)
	compare := func(w any) (int, bool) { return compareValues(v, w) }
	switch cmp {
	case "=", "<>", "<", "<=", ">", ">=":
		c, ok := compare(literal)
		if !ok {
			return nil, false
		}
		holds := map[string]bool{"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[cmp]
		return v, !holds
	case "between":
		bounds, _ := literal.([]any)
		if len(bounds) != 2 {
			return nil, false
		}
		lo, okLo := compare(bounds[0])
		hi, okHi := compare(bounds[1])
		return v, okLo && okHi && (lo < 0 || hi > 0)
	case "in":
		list, _ := literal.([]any)
		comparable := false
		for _, w := range list {
			if c, ok := compare(w); ok {
				if c == 0 {
					return nil, false
				}
				comparable = true
			}
		}
		return v, comparable
	case "startsWith", "endsWith", "contains":
		s, isStr := v.(string)
		w, wIsStr := literal.(string)
		if !isStr || !wIsStr {
			return nil, false
		}
		test := map[string]func(string, string) bool{"startsWith": strings.HasPrefix, "endsWith": strings.HasSuffix, "contains": strings.Contains}[cmp]
		return v, !test(s, w)
	}
	return nil, false
}

// datetimeViolation reports an item whose datetime and start/end range both
// lie outside the requested datetime (a server may match either).
func datetimeViolation(it *storedItem, datetime string) []Violation {
	r, err := parseDatetimeParam(datetime)
	if err != nil {
		return nil
	}
	props, _ := it.doc["properties"].(map[string]any)
	start, end, has, err := itemTime(props)
	if err != nil || !has || r.overlaps(start, end) {
		return nil
	}
	value := props["datetime"]
	rangeOnly := map[string]any{"start_datetime": props["start_datetime"], "end_datetime": props["end_datetime"]}
	if s, e, hasRange, err := itemTime(rangeOnly); err == nil && hasRange {
		if r.overlaps(s, e) {
			return nil
		}
		if value == nil {
			value = fmt.Sprintf("%v/%v", props["start_datetime"], props["end_datetime"])
		}
	}
	return []Violation{{Param: "datetime", Condition: "datetime " + datetime, Property: "datetime", Value: value}}
}
