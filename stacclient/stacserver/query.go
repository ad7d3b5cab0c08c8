package stacserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// predicate reports whether an item matches one search condition.
type predicate func(*storedItem) bool

// allOf holds when every one of conds holds (always, for none): the AND of
// search conditions, CQL2 "and" and collection-search parameters.
func allOf[P ~func(T) bool, T any](conds []P) P {
	return func(v T) bool {
		for _, cond := range conds {
			if !cond(v) {
				return false
			}
		}
		return true
	}
}

const queryAccepted = `an object {"<property>": {"<op>": <value>}} with ops eq, neq, lt, lte, gt, gte, startsWith, endsWith, contains, in`

// compileQuery compiles the STAC API query extension object. Every
// condition must hold.
func compileQuery(q map[string]any) (predicate, error) {
	raw, _ := json.Marshal(q)
	names := slices.Sorted(maps.Keys(q))
	var preds []predicate
	for _, name := range names {
		ops, ok := q[name].(map[string]any)
		if !ok {
			return nil, badParam("query", string(raw), queryAccepted, fmt.Sprintf("the value for %q is not an object of operators", name))
		}
		for op, want := range ops {
			p, err := queryCondition(name, op, want)
			if err != nil {
				return nil, badParam("query", string(raw), queryAccepted, err.Error())
			}
			preds = append(preds, p)
		}
	}
	return allOf(preds), nil
}

func queryCondition(name, op string, want any) (predicate, error) {
	get := func(it *storedItem) (any, bool) { return itemValue(it, name) }
	ordered := func(accept func(int) bool) predicate {
		return func(it *storedItem) bool {
			v, ok := get(it)
			if !ok {
				return false
			}
			c, ok := compareValues(v, want)
			return ok && accept(c)
		}
	}
	stringTest := func(test func(have, want string) bool) (predicate, error) {
		w, ok := want.(string)
		if !ok {
			return nil, fmt.Errorf("%s.%s needs a string, got %v", name, op, want)
		}
		return func(it *storedItem) bool {
			v, ok := get(it)
			s, isStr := v.(string)
			return ok && isStr && test(s, w)
		}, nil
	}
	switch op {
	case "eq":
		return ordered(func(c int) bool { return c == 0 }), nil
	case "neq":
		return func(it *storedItem) bool {
			v, ok := get(it)
			if !ok {
				return false
			}
			c, ok := compareValues(v, want)
			return !ok || c != 0
		}, nil
	case "lt":
		return ordered(func(c int) bool { return c < 0 }), nil
	case "lte":
		return ordered(func(c int) bool { return c <= 0 }), nil
	case "gt":
		return ordered(func(c int) bool { return c > 0 }), nil
	case "gte":
		return ordered(func(c int) bool { return c >= 0 }), nil
	case "startsWith":
		return stringTest(strings.HasPrefix)
	case "endsWith":
		return stringTest(strings.HasSuffix)
	case "contains":
		return stringTest(strings.Contains)
	case "in":
		list, ok := want.([]any)
		if !ok {
			return nil, fmt.Errorf("%s.in needs a list, got %v", name, want)
		}
		return func(it *storedItem) bool {
			v, ok := get(it)
			if !ok {
				return false
			}
			for _, w := range list {
				if c, ok := compareValues(v, w); ok && c == 0 {
					return true
				}
			}
			return false
		}, nil
	}
	return nil, fmt.Errorf("operator %q on %q is not supported", op, name)
}
