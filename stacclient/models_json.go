package stacclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
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

// decodeWithExtra decodes the JSON object data into typed (a pointer to a
// method-less alias struct) and fills extra with every member the typed
// fields will not write back. Numbers in interface values (properties,
// link headers) are kept as json.Number.
//
// The object is split into members once, and each member is decoded only
// into its own field: decoding the whole object twice (once typed, once as
// a map) cost a full re-scan per nesting level.
func decodeWithExtra(data []byte, typed any, extra *Extra) error {
	if isJSONNull(data) {
		return nil // like encoding/json: null leaves the value as it is
	}
	list, err := objectMembers(data)
	if err != nil {
		// Not an object: let encoding/json word the error.
		if jerr := json.Unmarshal(data, typed); jerr != nil {
			return jerr
		}
		return err
	}
	defer list.release()
	v := reflect.ValueOf(typed).Elem()
	fields := modelFieldsOf(v.Type())
	byName := modelFieldIndex(v.Type(), fields)
	var rest Extra
	keep := func(name string, raw []byte) {
		if rest == nil {
			rest = make(Extra)
		}
		rest[name] = append(json.RawMessage(nil), raw...)
	}
	for _, m := range list.members {
		f, known := byName[string(m.key)]
		if !known {
			keep(string(m.key), m.value)
			continue
		}
		fv := v.Field(f.index)
		if err := decodeField(fv, m.value); err != nil {
			return fmt.Errorf("member %q: %w", m.key, err)
		}
		if !fieldIsWritten(f, fv) {
			keep(string(m.key), m.value) // known but would be lost: keep its text
		} else if rest != nil {
			delete(rest, string(m.key)) // a later duplicate key won
		}
	}
	*extra = rest
	return nil
}

var modelFieldIndexCache sync.Map // reflect.Type → map[string]modelField

func modelFieldIndex(t reflect.Type, fields []modelField) map[string]modelField {
	if cached, ok := modelFieldIndexCache.Load(t); ok {
		return cached.(map[string]modelField)
	}
	index := make(map[string]modelField, len(fields))
	for _, f := range fields {
		index[f.name] = f
	}
	modelFieldIndexCache.Store(t, index)
	return index
}

var (
	countType       = reflect.TypeFor[*int]()
	stringsType     = reflect.TypeFor[[]string]()
	anyType         = reflect.TypeFor[any]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func isJSONNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// isModelStruct reports whether t is one of our model structs (decoded by
// its own UnmarshalJSON).
func isModelStruct(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(unmarshalerType)
}

// decodeField decodes one member's raw value into its field. Plain strings
// skip encoding/json; model structs, and slices, maps and pointers of them,
// are split here and decoded by their own methods, so that bytes already
// validated are not validated again at every nesting level; values that
// hold interfaces decode with UseNumber.
func decodeField(fv reflect.Value, raw []byte) error {
	t := fv.Type()
	if t.Kind() == reflect.String && len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		fv.SetString(string(raw[1 : len(raw)-1]))
		return nil
	}
	switch {
	case isModelStruct(t):
		return fv.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw)
	case t.Kind() == reflect.Pointer && isModelStruct(t.Elem()):
		if isJSONNull(raw) {
			fv.SetZero()
			return nil
		}
		ptr := reflect.New(t.Elem())
		if err := ptr.Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return err
		}
		fv.Set(ptr)
		return nil
	case t.Kind() == reflect.Slice && isModelStruct(t.Elem()):
		return decodeModelSlice(fv, raw)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && isModelStruct(t.Elem()):
		return decodeModelMap(fv, raw)
	}
	if t == stringsType {
		if strs, ok := plainStrings(raw); ok {
			fv.Set(reflect.ValueOf(strs))
			return nil
		}
	}
	if t == countType {
		// The model's *int members are counts (numberMatched, context
		// matched, overflow …). Catalogs write them as 12, 12.0 or "12";
		// a negative, fractional or non-numeric one is left out rather than
		// failing the whole page, and decodeWithExtra keeps its text in Extra.
		if !json.Valid(raw) {
			return json.Unmarshal(raw, new(any)) // malformed JSON stays an error, worded by encoding/json
		}
		fv.SetZero()
		if n, ok := looseCount(raw); ok {
			fv.Set(reflect.ValueOf(&n))
		}
		return nil
	}
	holdsInterface := t == anyType || (t.Kind() == reflect.Map && t.Elem() == anyType) || (t.Kind() == reflect.Slice && t.Elem() == anyType)
	if holdsInterface {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		return dec.Decode(fv.Addr().Interface())
	}
	return json.Unmarshal(raw, fv.Addr().Interface())
}

// plainStrings decodes a JSON array of strings without escapes (roles,
// stac_extensions) as encoding/json does, without its reflection: an
// asset's roles went through json.Unmarshal once per asset.
// Anything else (null, escapes, bytes that are not UTF-8, another type) is
// not ok and left to encoding/json.
func plainStrings(raw []byte) ([]string, bool) {
	elems, err := arrayElements(raw)
	if err != nil {
		return nil, false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if len(e) < 2 || e[0] != '"' || e[len(e)-1] != '"' || bytes.IndexByte(e, '\\') >= 0 || !utf8.Valid(e) {
			return nil, false
		}
		out[i] = string(e[1 : len(e)-1])
	}
	return out, true
}

func decodeModelSlice(fv reflect.Value, raw []byte) error {
	if isJSONNull(raw) {
		fv.SetZero()
		return nil
	}
	elems, err := arrayElements(raw)
	if err != nil {
		return json.Unmarshal(raw, fv.Addr().Interface()) // let encoding/json word it
	}
	out := reflect.MakeSlice(fv.Type(), len(elems), len(elems))
	for i, e := range elems {
		if err := out.Index(i).Addr().Interface().(json.Unmarshaler).UnmarshalJSON(e); err != nil {
			return err
		}
	}
	fv.Set(out)
	return nil
}

func decodeModelMap(fv reflect.Value, raw []byte) error {
	if isJSONNull(raw) {
		fv.SetZero()
		return nil
	}
	list, err := objectMembers(raw)
	if err != nil {
		return json.Unmarshal(raw, fv.Addr().Interface())
	}
	defer list.release()
	out := reflect.MakeMapWithSize(fv.Type(), len(list.members))
	for _, m := range list.members {
		elem := reflect.New(fv.Type().Elem())
		if err := elem.Interface().(json.Unmarshaler).UnmarshalJSON(m.value); err != nil {
			return fmt.Errorf("%q: %w", m.key, err)
		}
		out.SetMapIndex(reflect.ValueOf(string(m.key)).Convert(fv.Type().Key()), elem.Elem())
	}
	fv.Set(out)
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
	if err := decodeWithExtra(b, (*itemAlias)(it), &it.Extra); err != nil {
		return err
	}
	// Kept (a copy: encoding/json lets b be reused) so that a tool passing
	// the item on complete can send these bytes instead of encoding the
	// typed Item and decoding it again, which cost more than the fetch.
	// Invalid UTF-8 is not kept: sent on as it is, it would
	// reach the MCP client unrepaired, while the typed route replaces it.
	if raw := bytes.TrimSpace(b); len(raw) > 0 && raw[0] == '{' && utf8.Valid(raw) {
		it.source = append(json.RawMessage(nil), raw...)
	}
	return nil
}

// Source is the JSON object this Item was decoded from, byte for byte
// (nil for an Item built in code, or whose JSON was not valid UTF-8). It
// does not follow later changes: a caller that changes the Item's fields
// (signing asset hrefs, say) must encode the Item instead. Decoded, it
// equals the Item's own encoding (the model types keep every member).
func (it *Item) Source() json.RawMessage { return it.source }

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

// maxCount is the largest count looseCount accepts: every integer up to it
// is exact in a float64.
const maxCount = 1 << 53

// looseCount reads a JSON count: a non-negative whole number, written as a
// number (12, 12.0, 1.2e1) or a string holding one ("12").
func looseCount(raw []byte) (int, bool) {
	raw = bytes.TrimSpace(raw)
	var text string
	if len(raw) > 0 && raw[0] == '"' {
		if json.Unmarshal(raw, &text) != nil {
			return 0, false
		}
		text = strings.TrimSpace(text)
	} else {
		var num json.Number
		if json.Unmarshal(raw, &num) != nil {
			return 0, false
		}
		text = num.String()
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f < 0 || f > maxCount || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}
