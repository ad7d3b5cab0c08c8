package stacclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// The STAC model types keep every JSON member they do not name in Extra, so
// that an object read and written back is the same JSON (keys may reorder).
// One reflective codec serves all of them instead of sixteen hand-written
// pairs: each type converts itself to a method-less alias and calls
// decodeWithExtra / encodeWithExtra.
//
// Round-trip fidelity needs two rules beyond "unknown keys go to Extra":
//   - A known member whose typed field would not be written back (an empty
//     value under omitempty such as "stac_extensions": [], or an explicit
//     null) is also kept in Extra with its original text.
//   - A nil slice, map, pointer or raw message, and an empty string, are not
//     written at all, so an absent member stays absent instead of becoming
//     null or "".
// When the typed field is later set to a value, the typed value wins.

// modelField is one JSON-named field of a model struct.
type modelField struct {
	index     int
	name      string
	omitEmpty bool
}

var modelFieldsCache sync.Map // reflect.Type → []modelField

func modelFieldsOf(t reflect.Type) []modelField {
	if cached, ok := modelFieldsCache.Load(t); ok {
		return cached.([]modelField)
	}
	var fields []modelField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fields = append(fields, modelField{index: i, name: name, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
	}
	modelFieldsCache.Store(t, fields)
	return fields
}

// isNilable reports whether a nil v means "member absent".
func isNilValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// isOmittedEmpty mirrors encoding/json's omitempty test.
func isOmittedEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

func fieldIsWritten(f modelField, v reflect.Value) bool {
	if isNilValue(v) {
		return false
	}
	// An empty string is never a meaningful STAC value, so it is treated as
	// absent even without omitempty: a Catalog without "type" (STAC beta)
	// must not gain "type": "" when written back.
	if v.Kind() == reflect.String && v.Len() == 0 {
		return false
	}
	return !f.omitEmpty || !isOmittedEmpty(v)
}

// decodeWithExtra decodes data into typed (a pointer to a method-less alias
// struct) with numbers in interface values kept as json.Number, and fills
// extra with every member the typed fields will not write back.
func decodeWithExtra(data []byte, typed any, extra *Extra) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(typed); err != nil {
		return err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	v := reflect.ValueOf(typed).Elem()
	for _, f := range modelFieldsOf(v.Type()) {
		raw, present := members[f.name]
		if !present {
			continue
		}
		if fieldIsWritten(f, v.Field(f.index)) {
			delete(members, f.name)
			continue
		}
		members[f.name] = raw // known but would be lost: keep its text
	}
	if len(members) == 0 {
		*extra = nil
		return nil
	}
	*extra = members
	return nil
}

// encodeWithExtra writes typed (an alias struct value) followed by the
// members of extra that no typed field wrote, in sorted key order.
func encodeWithExtra(typed any, extra Extra) ([]byte, error) {
	v := reflect.ValueOf(typed)
	var buf bytes.Buffer
	buf.WriteByte('{')
	written := make(map[string]bool)
	writeMember := func(name string, value []byte) {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(value)
		written[name] = true
	}
	for _, f := range modelFieldsOf(v.Type()) {
		fv := v.Field(f.index)
		if !fieldIsWritten(f, fv) {
			continue
		}
		b, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, fmt.Errorf("encoding %q: %w", f.name, err)
		}
		writeMember(f.name, b)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !written[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := extra[k]
		if len(raw) == 0 || !json.Valid(raw) {
			return nil, fmt.Errorf("encoding extra member %q: not valid JSON", k)
		}
		writeMember(k, raw)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

type (
	linkAlias              Link
	assetAlias             Asset
	providerAlias          Provider
	extentAlias            Extent
	spatialExtentAlias     SpatialExtent
	temporalExtentAlias    TemporalExtent
	catalogAlias           Catalog
	collectionAlias        Collection
	itemAlias              Item
	searchContextAlias     SearchContext
	itemCollectionAlias    ItemCollection
	collectionListAlias    CollectionList
	queryablesAlias        Queryables
	aggregationResultAlias AggregationResult
	aggregationAlias       Aggregation
	bucketAlias            Bucket
)

func (l *Link) UnmarshalJSON(b []byte) error {
	*l = Link{}
	return decodeWithExtra(b, (*linkAlias)(l), &l.Extra)
}
func (l Link) MarshalJSON() ([]byte, error) { return encodeWithExtra(linkAlias(l), l.Extra) }

func (a *Asset) UnmarshalJSON(b []byte) error {
	*a = Asset{}
	return decodeWithExtra(b, (*assetAlias)(a), &a.Extra)
}
func (a Asset) MarshalJSON() ([]byte, error) { return encodeWithExtra(assetAlias(a), a.Extra) }

func (p *Provider) UnmarshalJSON(b []byte) error {
	*p = Provider{}
	return decodeWithExtra(b, (*providerAlias)(p), &p.Extra)
}
func (p Provider) MarshalJSON() ([]byte, error) { return encodeWithExtra(providerAlias(p), p.Extra) }

func (e *Extent) UnmarshalJSON(b []byte) error {
	*e = Extent{}
	return decodeWithExtra(b, (*extentAlias)(e), &e.Extra)
}
func (e Extent) MarshalJSON() ([]byte, error) { return encodeWithExtra(extentAlias(e), e.Extra) }

func (s *SpatialExtent) UnmarshalJSON(b []byte) error {
	*s = SpatialExtent{}
	return decodeWithExtra(b, (*spatialExtentAlias)(s), &s.Extra)
}
func (s SpatialExtent) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(spatialExtentAlias(s), s.Extra)
}

func (t *TemporalExtent) UnmarshalJSON(b []byte) error {
	*t = TemporalExtent{}
	return decodeWithExtra(b, (*temporalExtentAlias)(t), &t.Extra)
}
func (t TemporalExtent) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(temporalExtentAlias(t), t.Extra)
}

func (c *Catalog) UnmarshalJSON(b []byte) error {
	*c = Catalog{}
	return decodeWithExtra(b, (*catalogAlias)(c), &c.Extra)
}
func (c Catalog) MarshalJSON() ([]byte, error) { return encodeWithExtra(catalogAlias(c), c.Extra) }

func (c *Collection) UnmarshalJSON(b []byte) error {
	*c = Collection{}
	return decodeWithExtra(b, (*collectionAlias)(c), &c.Extra)
}
func (c Collection) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(collectionAlias(c), c.Extra)
}

func (it *Item) UnmarshalJSON(b []byte) error {
	*it = Item{}
	return decodeWithExtra(b, (*itemAlias)(it), &it.Extra)
}
func (it Item) MarshalJSON() ([]byte, error) { return encodeWithExtra(itemAlias(it), it.Extra) }

func (s *SearchContext) UnmarshalJSON(b []byte) error {
	*s = SearchContext{}
	return decodeWithExtra(b, (*searchContextAlias)(s), &s.Extra)
}
func (s SearchContext) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(searchContextAlias(s), s.Extra)
}

func (ic *ItemCollection) UnmarshalJSON(b []byte) error {
	*ic = ItemCollection{}
	return decodeWithExtra(b, (*itemCollectionAlias)(ic), &ic.Extra)
}
func (ic ItemCollection) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(itemCollectionAlias(ic), ic.Extra)
}

func (cl *CollectionList) UnmarshalJSON(b []byte) error {
	*cl = CollectionList{}
	return decodeWithExtra(b, (*collectionListAlias)(cl), &cl.Extra)
}
func (cl CollectionList) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(collectionListAlias(cl), cl.Extra)
}

func (q *Queryables) UnmarshalJSON(b []byte) error {
	*q = Queryables{}
	return decodeWithExtra(b, (*queryablesAlias)(q), &q.Extra)
}
func (q Queryables) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(queryablesAlias(q), q.Extra)
}

func (r *AggregationResult) UnmarshalJSON(b []byte) error {
	*r = AggregationResult{}
	return decodeWithExtra(b, (*aggregationResultAlias)(r), &r.Extra)
}
func (r AggregationResult) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(aggregationResultAlias(r), r.Extra)
}

func (a *Aggregation) UnmarshalJSON(b []byte) error {
	*a = Aggregation{}
	return decodeWithExtra(b, (*aggregationAlias)(a), &a.Extra)
}
func (a Aggregation) MarshalJSON() ([]byte, error) {
	return encodeWithExtra(aggregationAlias(a), a.Extra)
}

func (bk *Bucket) UnmarshalJSON(b []byte) error {
	*bk = Bucket{}
	return decodeWithExtra(b, (*bucketAlias)(bk), &bk.Extra)
}
func (bk Bucket) MarshalJSON() ([]byte, error) { return encodeWithExtra(bucketAlias(bk), bk.Extra) }
