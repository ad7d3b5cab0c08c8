package federation

import (
	"cmp"
	"encoding/json"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Order is the merged order of a search of several catalogs: its sortby,
// or newest first when it has none, applied across the members' items.
type Order struct {
	fields []stacclient.SortField
}

// NewestFirst is the order of a search without sortby.
var NewestFirst = []stacclient.SortField{{Field: "properties.datetime", Direction: "desc"}}

// NewOrder is the order sortby gives (NewestFirst when empty).
func NewOrder(sortby []stacclient.SortField) Order {
	if len(sortby) == 0 {
		sortby = NewestFirst
	}
	return Order{fields: sortby}
}

// Fields are the sort fields applied.
func (o Order) Fields() []stacclient.SortField { return o.fields }

// ByDatetime reports whether the first key is the datetime, so that the
// copies of one scene, dated at most S2Tolerance apart, meet close
// together in the merged list.
func (o Order) ByDatetime() bool {
	return len(o.fields) > 0 && isDatetimeField(o.fields[0].Field)
}

func isDatetimeField(f string) bool {
	f = strings.TrimPrefix(f, "properties.")
	return f == "datetime"
}

// Compare orders two items: < 0 when a comes first. Items without a value
// for a key come after those with one, whichever the direction; equal
// keys leave the order to the caller (the catalogs' order).
func (o Order) Compare(a, b *stacclient.Item) int {
	for _, f := range o.fields {
		va, okA := sortValue(a, f.Field)
		vb, okB := sortValue(b, f.Field)
		switch {
		case !okA && !okB:
			continue
		case !okA:
			return 1
		case !okB:
			return -1
		}
		c := compareValues(va, vb)
		if strings.EqualFold(f.Direction, "desc") {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortValue reads a sort key: id, collection, or a property (with or
// without "properties."); datetime falls back to start_datetime.
func sortValue(it *stacclient.Item, field string) (any, bool) {
	switch field {
	case "id":
		return it.ID, it.ID != ""
	case "collection":
		return it.Collection, it.Collection != ""
	}
	name := strings.TrimPrefix(field, "properties.")
	if name == "datetime" {
		t, ok := it.Datetime()
		return t, ok
	}
	v, ok := it.Properties[name]
	if !ok || v == nil {
		return nil, false
	}
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t, true
		}
	}
	return v, true
}

// compareValues compares numbers as numbers, times as times, strings as
// strings, and anything else by its JSON text.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y)
		}
	case int:
		if y, ok := b.(int); ok {
			return cmp.Compare(x, y)
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0
			case !x:
				return -1
			}
			return 1
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return strings.Compare(string(ja), string(jb))
}
