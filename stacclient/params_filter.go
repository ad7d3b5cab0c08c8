package stacclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient/cql2"
)

const filterAccepted = `a CQL2 JSON object {"op": "<", "args": [{"property": "eo:cloud_cover"}, 10]} (or that object as a JSON string) with filter-lang cql2-json, or CQL2 text such as "eo:cloud_cover < 10" with filter-lang cql2-text; filter-lang may be omitted and is then inferred from the form`

const filterLangAccepted = `"cql2-json" or "cql2-text", only together with a filter (or omitted, to infer it from the filter's form)`

// ParseFilter accepts a CQL2 JSON object (or JSON string of one) or CQL2 text,
// and returns the filter with its language. The filter itself is passed
// through unparsed (a catalog may accept more than the standard, and
// answers for itself; ConvertFilterFor parses it when it must); an
// explicit lang that contradicts the form is an error. The returned filter
// is a compact JSON object for cql2-json and a JSON string for cql2-text.
func ParseFilter(v any, lang string) (json.RawMessage, string, error) {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if lang != "" && lang != FilterLangCQL2JSON && lang != FilterLangCQL2Text {
		return nil, "", &ParamError{Param: "filter-lang", Got: lang, Reason: "unknown filter language", Accepted: filterLangAccepted}
	}
	bad := paramErrorFor("filter", v, filterAccepted)
	var filter json.RawMessage
	form := ""
	switch x := v.(type) {
	case nil:
	case string:
		text := strings.TrimSpace(x)
		if text == "" {
			break
		}
		if strings.HasPrefix(text, "{") {
			var err error
			if filter, err = compactJSONObject([]byte(text)); err != nil {
				return nil, "", bad("starts like a CQL2 JSON object but " + err.Error())
			}
			form = FilterLangCQL2JSON
			break
		}
		encoded, err := marshalWithoutHTMLEscape(text)
		if err != nil {
			return nil, "", bad("cannot be encoded as a JSON string: " + err.Error())
		}
		filter, form = encoded, FilterLangCQL2Text
	case json.RawMessage:
		trimmed := bytes.TrimSpace(x)
		if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			break
		}
		if trimmed[0] == '"' { // CQL2 text held in a JSON string, as SearchParams.Filter stores it
			var text string
			if err := json.Unmarshal(trimmed, &text); err != nil {
				return nil, "", bad("not a valid JSON string: " + err.Error())
			}
			return ParseFilter(text, lang)
		}
		var err error
		if filter, err = compactJSONObject(trimmed); err != nil {
			return nil, "", bad(err.Error())
		}
		form = FilterLangCQL2JSON
	case map[string]any:
		if len(x) == 0 {
			break
		}
		encoded, err := marshalWithoutHTMLEscape(x)
		if err != nil {
			return nil, "", bad("cannot be encoded as JSON: " + err.Error())
		}
		if filter, err = compactJSONObject(encoded); err != nil {
			return nil, "", bad(err.Error())
		}
		form = FilterLangCQL2JSON
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseFilter(decoded, lang)
		}
		return nil, "", bad("a " + jsonTypeName(v) + " is neither a CQL2 JSON object nor CQL2 text")
	}
	if filter == nil {
		if lang != "" {
			return nil, "", &ParamError{Param: "filter-lang", Got: lang, Reason: "given without a filter", Accepted: filterLangAccepted}
		}
		return nil, "", nil
	}
	if lang != "" && lang != form {
		return nil, "", bad(fmt.Sprintf("filter-lang says %s but the filter is %s", lang, describeFilterForm(form)))
	}
	return filter, form, nil
}

// describeFilterForm names the form a filter was recognised as.
func describeFilterForm(form string) string {
	if form == FilterLangCQL2JSON {
		return "a JSON object (cql2-json)"
	}
	return "text (cql2-text)"
}

// compactJSONObject checks that data is one JSON object and returns it in
// canonical compact form (keys sorted, numbers exactly as written), so that
// the same filter always gives the same request bytes.
func compactJSONObject(data []byte) (json.RawMessage, error) {
	decoded, err := decodeLooseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	obj, ok := decoded.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is a JSON %s, not an object", jsonTypeName(decoded))
	}
	if len(obj) == 0 {
		return nil, fmt.Errorf("is an empty object")
	}
	canonical, err := marshalWithoutHTMLEscape(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot be re-encoded: %w", err)
	}
	return canonical, nil
}

// marshalWithoutHTMLEscape encodes v as compact JSON keeping <, > and &
// literal: CQL2 and query operators are full of them and servers log bodies.
func marshalWithoutHTMLEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// ConvertFilterFor returns p with its filter written in the other CQL2
// encoding when the catalog declares only that one: CQL2 text parsed into
// CQL2-JSON for a catalog that declares cql2-json but not cql2-text (many
// do, and would refuse or ignore the text), or CQL2-JSON written as text
// for the reverse (package cql2 does both, as pystac-client does with
// its cql2 library). note says what was done ("" when nothing was); err is
// a filter that could not be converted, with p returned unchanged (it is
// sent as given, and the caller warns).
func (p SearchParams) ConvertFilterFor(caps *Capabilities) (SearchParams, string, error) {
	if len(bytes.TrimSpace(p.Filter)) == 0 || caps == nil || !caps.Has(CapFilter) {
		return p, "", nil
	}
	lang := p.effectiveFilterLang()
	switch {
	case lang == FilterLangCQL2Text && !caps.Has(CapCQL2Text) && caps.Has(CapCQL2JSON):
		var text string
		if err := json.Unmarshal(p.Filter, &text); err != nil {
			return p, "", fmt.Errorf("the cql2-text filter is not a JSON string: %w", err)
		}
		expr, err := cql2.ParseText(text)
		if err != nil {
			return p, "", err
		}
		raw, err := marshalWithoutHTMLEscape(expr)
		if err != nil {
			return p, "", err
		}
		p.Filter, p.FilterLang = raw, FilterLangCQL2JSON
		return p, fmt.Sprintf("the filter was converted from cql2-text to cql2-json, the only filter language the catalog declares: %s", raw), nil
	case lang == FilterLangCQL2JSON && !caps.Has(CapCQL2JSON) && caps.Has(CapCQL2Text):
		expr, err := cql2.ParseJSON(p.Filter)
		if err != nil {
			return p, "", err
		}
		text, err := cql2.ToText(expr)
		if err != nil {
			return p, "", err
		}
		raw, err := marshalWithoutHTMLEscape(text)
		if err != nil {
			return p, "", err
		}
		p.Filter, p.FilterLang = raw, FilterLangCQL2Text
		return p, fmt.Sprintf("the filter was converted from cql2-json to cql2-text, the only filter language the catalog declares: %s", text), nil
	}
	return p, "", nil
}
