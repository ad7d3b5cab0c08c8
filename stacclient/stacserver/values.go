package stacserver

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// itemValue resolves a property reference against an item: "id",
// "collection" and "datetime" are the item's own; "properties.x" and "x"
// are properties.x. The second result is false when the item lacks it.
func itemValue(it *storedItem, name string) (any, bool) {
	switch name {
	case "id":
		return it.id, true
	case "collection":
		return it.collection, true
	}
	props, _ := it.doc["properties"].(map[string]any)
	v, ok := props[strings.TrimPrefix(name, "properties.")]
	return v, ok
}

// normalizeValue turns decoded JSON into values that compare: json.Number
// becomes float64 (integers stay exact up to 2^53, which covers STAC data).
func normalizeValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return f
	case int:
		return float64(v)
	}
	return v
}

// compareValues orders a and b: numbers numerically, strings lexically,
// times chronologically (a string compared with a time is parsed as RFC
// 3339), booleans false<true. ok is false when they are not comparable.
func compareValues(a, b any) (cmp int, ok bool) {
	a, b = normalizeValue(a), normalizeValue(b)
	if ta, isTime := a.(time.Time); isTime {
		tb, ok := asTime(b)
		if !ok {
			return 0, false
		}
		return ta.Compare(tb), true
	}
	if _, isTime := b.(time.Time); isTime {
		c, ok := compareValues(b, a)
		return -c, ok
	}
	switch a := a.(type) {
	case float64:
		if b, isNum := b.(float64); isNum {
			switch {
			case a < b:
				return -1, true
			case a > b:
				return 1, true
			}
			return 0, true
		}
	case string:
		if b, isStr := b.(string); isStr {
			return strings.Compare(a, b), true
		}
	case bool:
		if b, isBool := b.(bool); isBool {
			switch {
			case a == b:
				return 0, true
			case !a:
				return -1, true
			}
			return 1, true
		}
	}
	return 0, false
}

func asTime(v any) (time.Time, bool) {
	switch v := v.(type) {
	case time.Time:
		return v, true
	case string:
		t, err := stacdoc.ParseTime(v)
		return t, err == nil
	}
	return time.Time{}, false
}
