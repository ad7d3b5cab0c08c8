package stacclient

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// postBodyMembers is the wire shape of a POST /search body. The member order
// is the struct order, so bodies are byte-for-byte stable; a filter always
// carries its filter-lang.
type postBodyMembers struct {
	Collections []string        `json:"collections,omitempty"`
	IDs         []string        `json:"ids,omitempty"`
	BBox        []float64       `json:"bbox,omitempty"`
	Intersects  json.RawMessage `json:"intersects,omitempty"`
	Datetime    string          `json:"datetime,omitempty"`
	Query       map[string]any  `json:"query,omitempty"`
	Filter      json.RawMessage `json:"filter,omitempty"`
	FilterLang  string          `json:"filter-lang,omitempty"`
	SortBy      []SortField     `json:"sortby,omitempty"`
	Fields      *Fields         `json:"fields,omitempty"`
	Limit       int             `json:"limit,omitempty"`
}

// PostBody is the JSON body of a POST /search for these parameters: only
// non-empty members, in a stable order, "<" and ">" kept literal. Valid
// parameters are sent in their Normalized form (so a Go-built Datetime
// "2023" goes out as the whole year in UTC); invalid ones are encoded as
// they are, since Validate is the place that reports them. It is nil only
// when the parameters cannot be written as JSON at all (NaN or infinite
// numbers, which Validate rejects).
func (p SearchParams) PostBody() json.RawMessage {
	p = p.normalizedOrAsIs()
	body := postBodyMembers{
		Collections: nonEmptyStrings(p.Collections),
		IDs:         nonEmptyStrings(p.IDs),
		BBox:        p.BBox,
		Intersects:  compactOrNil(p.Intersects),
		Datetime:    p.Datetime,
		Query:       p.Query,
		SortBy:      p.SortBy,
		Limit:       p.Limit,
	}
	if len(p.Query) == 0 {
		body.Query = nil
	}
	if len(p.SortBy) == 0 {
		body.SortBy = nil
	}
	if p.Fields != nil && (len(p.Fields.Include) > 0 || len(p.Fields.Exclude) > 0) {
		body.Fields = p.Fields
	}
	if filter := compactOrNil(p.Filter); filter != nil {
		body.Filter = filter
		body.FilterLang = p.effectiveFilterLang()
	}
	encoded, err := marshalWithoutHTMLEscape(body)
	if err != nil {
		return nil
	}
	return encoded
}

// QueryString is the GET /search query string for these parameters, without
// the leading "?": collections=a,b; bbox=w,s,e,n; intersects and query as
// compact JSON; sortby=%2Bid,-datetime; fields=a,-b; filter-lang sent with
// every filter (cql2-text for text, cql2-json when a JSON filter goes over
// GET). "+" is always percent-encoded: stac-server answered a raw "+" with
// 500 (stac-utils/stac-server#332). Members come in a fixed order. As with
// PostBody, valid parameters are sent in their Normalized form.
func (p SearchParams) QueryString() string {
	p = p.normalizedOrAsIs()
	var pairs []string
	add := func(key, escapedValue string) {
		pairs = append(pairs, key+"="+escapedValue)
	}
	if list := nonEmptyStrings(p.Collections); list != nil {
		add("collections", escapeQueryList(list))
	}
	if list := nonEmptyStrings(p.IDs); list != nil {
		add("ids", escapeQueryList(list))
	}
	if len(p.BBox) > 0 {
		add("bbox", escapeQueryList(formatCoordinates(p.BBox)))
	}
	if geometry := compactOrNil(p.Intersects); geometry != nil {
		add("intersects", escapeQueryValue(string(geometry)))
	}
	if p.Datetime != "" {
		add("datetime", escapeQueryValue(p.Datetime))
	}
	if len(p.Query) > 0 {
		if encoded, err := marshalWithoutHTMLEscape(p.Query); err == nil {
			add("query", escapeQueryValue(string(encoded)))
		}
	}
	if filter := compactOrNil(p.Filter); filter != nil {
		lang := p.effectiveFilterLang()
		text := string(filter)
		if lang == FilterLangCQL2Text {
			var unquoted string
			if json.Unmarshal(filter, &unquoted) == nil {
				text = unquoted
			}
		}
		add("filter", escapeQueryValue(text))
		add("filter-lang", lang)
	}
	if len(p.SortBy) > 0 {
		terms := make([]string, len(p.SortBy))
		for i, f := range p.SortBy {
			sign := "+"
			if strings.EqualFold(f.Direction, "desc") || strings.EqualFold(f.Direction, "descending") {
				sign = "-"
			}
			terms[i] = sign + f.Field
		}
		add("sortby", escapeQueryList(terms))
	}
	if p.Fields != nil && (len(p.Fields.Include) > 0 || len(p.Fields.Exclude) > 0) {
		terms := make([]string, 0, len(p.Fields.Include)+len(p.Fields.Exclude))
		terms = append(terms, p.Fields.Include...)
		for _, name := range p.Fields.Exclude {
			terms = append(terms, "-"+name)
		}
		add("fields", escapeQueryList(terms))
	}
	if p.Limit > 0 {
		add("limit", strconv.Itoa(p.Limit))
	}
	return strings.Join(pairs, "&")
}

// normalizedOrAsIs is the Normalized form of valid parameters and the
// parameters unchanged otherwise.
func (p SearchParams) normalizedOrAsIs() SearchParams {
	if normalized, err := p.Normalized(); err == nil {
		return normalized
	}
	return p
}

// effectiveFilterLang is FilterLang, or the language the filter's form
// implies when FilterLang is empty (a JSON string holds CQL2 text).
func (p SearchParams) effectiveFilterLang() string {
	if p.FilterLang != "" {
		return p.FilterLang
	}
	if trimmed := bytes.TrimSpace(p.Filter); len(trimmed) > 0 && trimmed[0] == '"' {
		return FilterLangCQL2Text
	}
	return FilterLangCQL2JSON
}

// compactOrNil compacts raw JSON; empty or null input gives nil, and input
// that is not JSON is returned trimmed (Validate reports it).
func compactOrNil(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return trimmed
	}
	return buf.Bytes()
}

// nonEmptyStrings returns nil for an empty list so that it is omitted.
func nonEmptyStrings(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	return list
}

// escapeQueryList escapes each element and joins them with a literal comma,
// so that a comma inside an element stays distinguishable (%2C).
func escapeQueryList(list []string) string {
	escaped := make([]string, len(list))
	for i, s := range list {
		escaped[i] = escapeQueryValue(s)
	}
	return strings.Join(escaped, ",")
}

// escapeQueryValue percent-encodes everything but RFC 3986 unreserved
// characters and ':' and '/', which are legal in a query and keep datetimes
// readable. Space becomes %20 and '+' becomes %2B, never a bare '+'.
func escapeQueryValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == ':', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0x0f])
		}
	}
	return b.String()
}
