package tools

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// fullItemTextRaw is fullItemText written straight from the item's JSON,
// the bytes the catalog sent, without decoding them into a map first:
// that decoding (a map, a string and a boxed number per value) and the
// encoding of every value back to JSON were half of get_item's own CPU
// and most of its allocations. Every value is written as
// fullItemText writes its decoding: objects with their keys sorted and a
// repeated key's last value, numbers as encoding/json writes a float64,
// strings as decoded and re-encoded. ok is false for what it does not
// handle (a number out of float64's range, say), and the caller then
// takes the decoding route; TestFullItemTextRawIsFullItemText holds the
// two to the same bytes. names are the item's member names.
func fullItemTextRaw(src []byte, s ItemSummary) (text string, names []string, ok bool) {
	r := rawTexts.Get().(*rawText)
	defer r.release()
	item, ok := r.object(src)
	if !ok {
		return "", nil, false
	}
	names = make([]string, len(item))
	for i, m := range item {
		names[i] = string(m.key)
	}
	r.b = append(r.b, summaryLine(s)...)
	r.b = append(r.b, '\n')
	if len(s.BBox) > 0 {
		r.b = append(r.b, "bbox "+bboxText(s.BBox)+"\n"...)
	}
	if g, found := rawGet(item, "geometry"); found {
		r.b = append(r.b, "geometry "...)
		r.json(g)
		r.b = append(r.b, '\n')
	}
	props, _ := r.objectOrNil(rawGetValue(item, "properties"))
	r.b = append(r.b, "properties ("...)
	r.b = strconv.AppendInt(r.b, int64(len(props)), 10)
	r.b = append(r.b, "):\n"...)
	for _, m := range props {
		r.b = append(r.b, "- "...)
		r.b = append(r.b, m.key...)
		r.b = append(r.b, ": "...)
		r.value(m.value)
		r.b = append(r.b, '\n')
	}
	assets, _ := r.objectOrNil(rawGetValue(item, "assets"))
	r.b = append(r.b, "assets ("...)
	r.b = strconv.AppendInt(r.b, int64(len(assets)), 10)
	r.b = append(r.b, "):\n"...)
	assetMembers := make(map[string][]rawMember, len(assets))
	typed := make(map[string]stacclient.Asset, len(assets))
	for _, m := range assets {
		a, _ := r.objectOrNil(m.value) // not an object: no members, as fullItemText reads it
		assetMembers[string(m.key)] = a
		typed[string(m.key)] = r.rankedAsset(a)
	}
	for _, k := range orderedAssetKeys(typed) {
		r.b = append(r.b, "- "...)
		r.asset(k, assetMembers[k])
		r.b = append(r.b, '\n')
	}
	links := r.arrayOrNil(rawGetValue(item, "links"))
	r.b = append(r.b, "links ("...)
	r.b = strconv.AppendInt(r.b, int64(len(links)), 10)
	r.b = append(r.b, "; rel href):\n"...)
	for _, l := range links {
		m, _ := r.objectOrNil(l)
		r.b = append(r.b, "- "...)
		r.link(m)
		r.b = append(r.b, '\n')
	}
	r.b = append(r.b, "type "...)
	r.valueOrNull(item, "type")
	r.b = append(r.b, ", stac_version "...)
	r.valueOrNull(item, "stac_version")
	if ext := r.arrayOrNil(rawGetValue(item, "stac_extensions")); len(ext) > 0 {
		r.b = append(r.b, ", stac_extensions "...)
		r.json(rawGetValue(item, "stac_extensions"))
	}
	if hasOthers(item, itemTextMembers) {
		r.b = append(r.b, "\nother members "...)
		r.membersExcept(item, itemTextMembers)
	}
	if r.failed {
		return "", nil, false
	}
	return string(r.b), names, true // a copy: r.b goes back to the pool
}

// rawMember is one member of a JSON object: its name decoded, its value
// as written.
type rawMember struct {
	key   []byte
	value []byte
}

// rawText writes the text; failed is set when a value is outside what it
// writes exactly. Its buffers are reused from call to call: the text is
// copied out, and the members of every object of the item go to one arena
// (each object's a slice of it that later appends do not touch), where a
// slice per object was most of what writing the text allocated.
type rawText struct {
	b      []byte
	failed bool
	str    []byte      // scratch for a decoded string
	arena  []rawMember // the members of the objects read so far
}

var rawTexts = sync.Pool{New: func() any {
	return &rawText{b: make([]byte, 0, 32<<10), arena: make([]rawMember, 0, 512)} // a Sentinel-2 item: ~20 KB of text, ~400 members
}}

// release clears r (its members point into the item) and returns it to
// the pool, unless it grew past what a large item needs.
func (r *rawText) release() {
	if cap(r.b) > 1<<20 || cap(r.arena) > 1<<14 {
		return
	}
	clear(r.arena) // beyond len, cleared by an earlier release
	*r = rawText{b: r.b[:0], str: r.str[:0], arena: r.arena[:0]}
	rawTexts.Put(r)
}

// rawGet is the value of the member named key.
func rawGet(members []rawMember, key string) ([]byte, bool) {
	i, found := slices.BinarySearchFunc(members, key, func(m rawMember, k string) int { return bytes.Compare(m.key, []byte(k)) })
	if !found {
		return nil, false
	}
	return members[i].value, true
}

func rawGetValue(members []rawMember, key string) []byte {
	v, _ := rawGet(members, key)
	return v
}

// hasOthers reports whether members has a name not in names.
func hasOthers(members []rawMember, names map[string]bool) bool {
	for _, m := range members {
		if !names[string(m.key)] {
			return true
		}
	}
	return false
}

// object splits the JSON object v into its members, sorted by name, a
// repeated name keeping its last value (as decoding into a map does). ok
// is false when v is not an object.
func (r *rawText) object(v []byte) ([]rawMember, bool) {
	i := skipJSONSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	start := len(r.arena)
	i = skipJSONSpace(v, i+1)
	if i < len(v) && v[i] == '}' {
		return nil, true
	}
	for i < len(v) {
		end := skipJSONString(v, i)
		key, ok := r.decodedString(v[i:end], true)
		if !ok {
			return nil, false
		}
		i = skipJSONSpace(v, end)
		if i >= len(v) || v[i] != ':' {
			r.failed = true
			return nil, false
		}
		i = skipJSONSpace(v, i+1)
		vend := skipJSONValue(v, i)
		r.arena = append(r.arena, rawMember{key: key, value: v[i:vend]})
		i = skipJSONSpace(v, vend)
		if i < len(v) && v[i] == '}' {
			break
		}
		i = skipJSONSpace(v, i+1) // past the comma
	}
	// Sorted by name; of members with one name, the last written is kept.
	members := r.arena[start:len(r.arena):len(r.arena)]
	slices.SortStableFunc(members, func(a, b rawMember) int { return bytes.Compare(a.key, b.key) })
	out := members[:0]
	for _, m := range members {
		if len(out) > 0 && bytes.Equal(out[len(out)-1].key, m.key) {
			out[len(out)-1] = m
			continue
		}
		out = append(out, m)
	}
	return out, true
}

// objectOrNil is object, with no members (and no failure) when v is not
// an object: fullItemText reads a member that is not an object as empty.
func (r *rawText) objectOrNil(v []byte) ([]rawMember, bool) {
	i := skipJSONSpace(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	return r.object(v)
}

// arrayOrNil splits the JSON array v into its elements (nil when v is not
// an array).
func (r *rawText) arrayOrNil(v []byte) [][]byte {
	i := skipJSONSpace(v, 0)
	if i >= len(v) || v[i] != '[' {
		return nil
	}
	elems := [][]byte{}
	i = skipJSONSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return elems
	}
	for i < len(v) {
		end := skipJSONValue(v, i)
		elems = append(elems, v[i:end])
		i = skipJSONSpace(v, end)
		if i < len(v) && v[i] == ']' {
			break
		}
		i = skipJSONSpace(v, i+1)
	}
	return elems
}

// rankedAsset is what orderedAssetKeys ranks an asset by: its href when a
// string, its roles that are strings.
func (r *rawText) rankedAsset(members []rawMember) stacclient.Asset {
	var a stacclient.Asset
	if href, ok := rawGet(members, "href"); ok {
		if s, isString := r.stringValue(href); isString {
			a.Href = string(s)
		}
	}
	if roles, ok := rawGet(members, "roles"); ok {
		for _, e := range r.arrayOrNil(roles) {
			if s, isString := r.stringValue(e); isString {
				a.Roles = append(a.Roles, string(s))
			}
		}
	}
	return a
}

// asset writes one asset as itemText.asset does.
func (r *rawText) asset(key string, members []rawMember) {
	r.b = append(r.b, key...)
	if typ, ok := rawGet(members, "type"); ok {
		if s, isString := r.stringValue(typ); isString && len(s) > 0 {
			r.b = append(r.b, " ["...)
			r.b = append(r.b, s...)
			r.b = append(r.b, ']')
		}
	}
	if roles := r.arrayOrNil(rawGetValue(members, "roles")); len(roles) > 0 {
		r.b = append(r.b, " (roles "...)
		for i, role := range roles {
			if i > 0 {
				r.b = append(r.b, ", "...)
			}
			r.value(role)
		}
		r.b = append(r.b, ')')
	}
	r.b = append(r.b, ' ')
	r.stringOrEmpty(members, "href")
	if hasOthers(members, assetTextMembers) {
		r.b = append(r.b, ' ')
		r.membersExcept(members, assetTextMembers)
	}
}

// link writes one link as itemText.link does.
func (r *rawText) link(members []rawMember) {
	r.stringOrEmpty(members, "rel")
	r.b = append(r.b, ' ')
	r.stringOrEmpty(members, "href")
	if hasOthers(members, linkTextMembers) {
		r.b = append(r.b, ' ')
		r.membersExcept(members, linkTextMembers)
	}
}

// stringOrEmpty writes the member key when it is a string.
func (r *rawText) stringOrEmpty(members []rawMember, key string) {
	if v, ok := rawGet(members, key); ok {
		if s, isString := r.stringValue(v); isString {
			r.b = append(r.b, s...)
		}
	}
}

// valueOrNull writes the member key as value does, null when absent.
func (r *rawText) valueOrNull(members []rawMember, key string) {
	if v, ok := rawGet(members, key); ok {
		r.value(v)
		return
	}
	r.b = append(r.b, "null"...)
}

// value writes v as itemText.value does: a string as it is, anything else
// as JSON.
func (r *rawText) value(v []byte) {
	if s, isString := r.stringValue(v); isString {
		r.b = append(r.b, s...)
		return
	}
	r.json(v)
}

// stringValue is v decoded when v is a JSON string (valid until the next
// decoding).
func (r *rawText) stringValue(v []byte) ([]byte, bool) {
	i := skipJSONSpace(v, 0)
	if i >= len(v) || v[i] != '"' {
		return nil, false
	}
	s, ok := r.decodedString(v[i:skipJSONString(v, i)], false)
	return s, ok
}

// decodedString decodes the JSON string q (quotes included). Without
// escapes, and when it is valid UTF-8 (encoding/json replaces what is
// not), it is its own bytes; otherwise encoding/json decodes it, into a
// copy when keep is set (a member name outlives the scratch buffer).
func (r *rawText) decodedString(q []byte, keep bool) ([]byte, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		r.failed = true
		return nil, false
	}
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner, true
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		r.failed = true
		return nil, false
	}
	if keep {
		return []byte(s), true
	}
	r.str = append(r.str[:0], s...)
	return r.str, true
}

// members writes an object of the given members (sorted, unique) as JSON.
func (r *rawText) members(members []rawMember) { r.membersExcept(members, nil) }

// membersExcept writes an object of the members not named in except.
func (r *rawText) membersExcept(members []rawMember, except map[string]bool) {
	r.b = append(r.b, '{')
	first := true
	for _, m := range members {
		if except[string(m.key)] {
			continue
		}
		if !first {
			r.b = append(r.b, ',')
		}
		first = false
		r.b = appendJSONString(r.b, m.key)
		r.b = append(r.b, ':')
		r.json(m.value)
	}
	r.b = append(r.b, '}')
}

// json writes the JSON value v as encoding/json (HTML escaping off) writes
// its decoding into an any: see fullItemTextRaw.
func (r *rawText) json(v []byte) {
	i := skipJSONSpace(v, 0)
	if i >= len(v) {
		r.failed = true
		return
	}
	switch c := v[i]; {
	case c == '{':
		members, ok := r.object(v)
		if !ok {
			r.failed = true
			return
		}
		r.members(members)
	case c == '[':
		r.b = append(r.b, '[')
		j := skipJSONSpace(v, i+1)
		for first := true; j < len(v) && v[j] != ']'; first = false {
			if !first {
				r.b = append(r.b, ',')
			}
			end := skipJSONValue(v, j)
			r.json(v[j:end])
			j = skipJSONSpace(v, end)
			if j < len(v) && v[j] == ',' {
				j = skipJSONSpace(v, j+1)
			}
		}
		r.b = append(r.b, ']')
	case c == '"':
		s, ok := r.decodedString(v[i:skipJSONString(v, i)], false)
		if !ok {
			return
		}
		r.b = appendJSONString(r.b, s)
	case c == 't', c == 'f', c == 'n':
		r.b = append(r.b, bytes.TrimRight(v[i:], " \t\r\n")...)
	default:
		r.number(bytes.TrimRight(v[i:], " \t\r\n"))
	}
}

// number writes the JSON number lit as encoding/json writes the float64 it
// decodes to. An integer of up to 15 digits is that float64 exactly and is
// written the same way, as it stands.
func (r *rawText) number(lit []byte) {
	digits := len(lit)
	plain := true
	for j, c := range lit {
		if c == '-' && j == 0 {
			digits--
			continue
		}
		if c < '0' || c > '9' {
			plain = false
			break
		}
	}
	if plain && digits > 0 && digits <= 15 {
		r.b = append(r.b, lit...)
		return
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		r.failed = true // out of range: encoding/json cannot decode it either
		return
	}
	r.b = appendJSONFloat(r.b, f)
}

// appendJSONFloat is encoding/json's float64 encoding (floatEncoder).
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString is encoding/json's string encoding with HTML escaping
// off (appendString): quotes, backslashes and control characters escaped,
// U+2028 and U+2029 too, invalid UTF-8 as U+FFFD.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(s[i:])
		if c == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// The scanners below read JSON that encoding/json has already validated
// (the item was decoded from it): they find where a value ends without
// checking it again.

func skipJSONSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// skipJSONString is the index just past the string starting at v[i].
func skipJSONString(v []byte, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// skipJSONValue is the index just past the value starting at v[i].
func skipJSONValue(v []byte, i int) int {
	if i >= len(v) {
		return i
	}
	switch v[i] {
	case '"':
		return skipJSONString(v, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(v); j++ {
			switch v[j] {
			case '"':
				j = skipJSONString(v, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(v)
	}
	j := i
	for j < len(v) && v[j] != ',' && v[j] != '}' && v[j] != ']' && v[j] != ' ' && v[j] != '\t' && v[j] != '\n' && v[j] != '\r' {
		j++
	}
	return j
}
