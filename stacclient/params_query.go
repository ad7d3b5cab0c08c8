package stacclient

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

const queryAccepted = `an object {"eo:cloud_cover": {"lt": 10}} (or that object as a JSON string), or strings "prop<op>value" with op one of >= <= = <> > < (e.g. "eo:cloud_cover<10"); object operators: eq neq lt lte gt gte startsWith endsWith contains in`

// queryOperators are the STAC query extension's comparison operators.
var queryOperators = map[string]bool{
	"eq": true, "neq": true, "lt": true, "lte": true, "gt": true, "gte": true,
	"startsWith": true, "endsWith": true, "contains": true, "in": true,
}

// queryExpressionOperators maps "prop<op>value" symbols to query operators,
// two-character symbols first so that "<=" is not read as "<".
var queryExpressionOperators = []struct{ symbol, name string }{
	{">=", "gte"}, {"<=", "lte"}, {"<>", "neq"}, {">", "gt"}, {"<", "lt"}, {"=", "eq"},
}

// ParseQuery accepts a query object, a JSON string, or "prop<op>value" strings.
// Numbers are kept as json.Number so that they are sent exactly as given;
// in "prop<op>value" strings a numeric-looking value becomes a number and
// anything else stays a string.
func ParseQuery(v any) (map[string]any, error) {
	bad := paramErrorFor("query", v, queryAccepted)
	in, err := readLoose(v, jsonContainerText, bad)
	switch {
	case err != nil || !in.present:
		return nil, err
	case in.decoded:
		return ParseQuery(in.value)
	}
	switch x := in.value.(type) {
	case string:
		return ParseQuery([]any{x})
	case []string:
		return ParseQuery(asAnyList(x))
	case []any:
		if len(x) == 0 {
			return nil, nil
		}
		out := map[string]any{}
		for i, e := range x {
			expr, ok := e.(string)
			if !ok {
				return nil, bad(fmt.Sprintf("entry %d is a %s, not a \"prop<op>value\" string", i, jsonTypeName(e)))
			}
			prop, op, value, err := splitQueryExpression(expr)
			if err != nil {
				return nil, bad(err.Error())
			}
			ops, _ := out[prop].(map[string]any)
			if ops == nil {
				ops = map[string]any{}
				out[prop] = ops
			}
			if _, dup := ops[op]; dup {
				return nil, bad(fmt.Sprintf("%s has operator %s twice", prop, op))
			}
			ops[op] = value
		}
		return out, nil
	case map[string]any:
		return canonicalQueryObject(x, bad)
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseQuery(decoded)
		}
		return nil, bad("a " + jsonTypeName(v) + " is not a query object")
	}
}

// canonicalQueryObject checks the shape {prop: {op: value}} and returns a
// copy whose numbers are json.Number, whatever Go types the caller used.
func canonicalQueryObject(obj map[string]any, bad func(string) error) (map[string]any, error) {
	if len(obj) == 0 {
		return nil, nil
	}
	encoded, err := json.Marshal(obj)
	if err != nil {
		return nil, bad("cannot be encoded as JSON: " + err.Error())
	}
	decoded, err := decodeLooseJSON(encoded)
	if err != nil {
		return nil, bad("cannot be encoded as JSON: " + err.Error())
	}
	out := decoded.(map[string]any)
	props := slices.Sorted(maps.Keys(out)) // report the first bad property deterministically
	for _, prop := range props {
		if strings.TrimSpace(prop) == "" {
			return nil, bad("a property name is empty")
		}
		ops, ok := out[prop].(map[string]any)
		if !ok {
			return nil, bad(fmt.Sprintf("%s maps to a %s; it must be an object of operators such as {\"lt\": 10}", prop, jsonTypeName(out[prop])))
		}
		if len(ops) == 0 {
			return nil, bad(fmt.Sprintf("%s has no operators", prop))
		}
		for op := range ops {
			if !queryOperators[op] {
				return nil, bad(fmt.Sprintf("%s uses unknown operator %q", prop, op))
			}
		}
	}
	return out, nil
}

// splitQueryExpression reads "prop<op>value" at its first operator symbol.
func splitQueryExpression(expr string) (prop, op string, value any, err error) {
	at := strings.IndexAny(expr, "<>=")
	if at < 0 {
		return "", "", nil, fmt.Errorf("%q has no operator (>= <= = <> > <)", expr)
	}
	for _, candidate := range queryExpressionOperators {
		if strings.HasPrefix(expr[at:], candidate.symbol) {
			prop = strings.TrimSpace(expr[:at])
			text := strings.TrimSpace(expr[at+len(candidate.symbol):])
			if prop == "" {
				return "", "", nil, fmt.Errorf("%q has no property before the operator", expr)
			}
			if text == "" {
				return "", "", nil, fmt.Errorf("%q has no value after the operator", expr)
			}
			if strings.ContainsAny(text, "<>=") {
				// "a=>5" or "a<10,b>2" in one string: ambiguous, so ask
				// instead of guessing.
				return "", "", nil, fmt.Errorf("%q has a second operator in its value %q; write one \"prop<op>value\" per list entry with op one of >= <= = <> > <", expr, text)
			}
			return prop, candidate.name, queryExpressionValue(text), nil
		}
	}
	return "", "", nil, fmt.Errorf("%q has no operator (>= <= = <> > <)", expr)
}

// queryExpressionValue turns a numeric-looking value into a JSON number and
// keeps everything else as a string (a quoted "..." value is unquoted).
func queryExpressionValue(text string) any {
	if decoded, err := decodeLooseJSON([]byte(text)); err == nil {
		switch d := decoded.(type) {
		case json.Number:
			return d
		case string:
			return d
		}
	}
	return text
}
