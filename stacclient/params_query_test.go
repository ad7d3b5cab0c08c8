package stacclient

import (
	"encoding/json"
	"testing"
)

// queryJSON renders a parsed query the way it goes on the wire.
func queryJSON(t *testing.T, q map[string]any) string {
	t.Helper()
	if q == nil {
		return "null"
	}
	b, err := marshalWithoutHTMLEscape(q)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestQueryForms(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, `null`},
		{"empty string", "", `null`},
		{"empty object", map[string]any{}, `null`},
		{"numeric value becomes a number", "eo:cloud_cover<10", `{"eo:cloud_cover":{"lt":10}}`},
		{"every operator", []any{"a>=1", "b<=2", "c=3", "d<>4", "e>5", "f<6"},
			`{"a":{"gte":1},"b":{"lte":2},"c":{"eq":3},"d":{"neq":4},"e":{"gt":5},"f":{"lt":6}}`},
		{"two bounds on one property merge", []string{"eo:cloud_cover>=5", "eo:cloud_cover<20.5"}, `{"eo:cloud_cover":{"gte":5,"lt":20.5}}`},
		{"string value stays a string", "platform=sentinel-2a", `{"platform":{"eq":"sentinel-2a"}}`},
		{"quoted value is unquoted", `platform="sentinel-2a"`, `{"platform":{"eq":"sentinel-2a"}}`},
		{"numeric-looking but not JSON stays a string", "grid:code=007", `{"grid:code":{"eq":"007"}}`},
		{"exponent is a number", "gsd<1e2", `{"gsd":{"lt":1e2}}`},
		{"spaces around the operator", " eo:cloud_cover < 10 ", `{"eo:cloud_cover":{"lt":10}}`},
		{"object", map[string]any{"eo:cloud_cover": map[string]any{"lt": 10.0}}, `{"eo:cloud_cover":{"lt":10}}`},
		{"object with Go ints", map[string]any{"view:off_nadir": map[string]any{"lte": 5}}, `{"view:off_nadir":{"lte":5}}`},
		{"JSON string object", `{"eo:cloud_cover":{"lt":10},"platform":{"in":["sentinel-2a","sentinel-2b"]}}`,
			`{"eo:cloud_cover":{"lt":10},"platform":{"in":["sentinel-2a","sentinel-2b"]}}`},
		{"JSON string list", `["eo:cloud_cover<10"]`, `{"eo:cloud_cover":{"lt":10}}`},
		{"raw JSON", json.RawMessage(`{"id":{"startsWith":"S2"}}`), `{"id":{"startsWith":"S2"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQuery(tt.in)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if s := queryJSON(t, got); s != tt.want {
				t.Errorf("got %s, want %s", s, tt.want)
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	tests := []badInput{
		{"no operator", "eo:cloud_cover", "has no operator"},
		{"no property", "<10", "no property"},
		{"no value", "eo:cloud_cover<", "no value"},
		{"reversed operator", "eo:cloud_cover=>10", `second operator in its value ">10"`},
		{"two expressions in one string", "eo:cloud_cover<10,gsd<30", "one \"prop<op>value\" per list entry"},
		{"same operator twice", []any{"a<1", "a<2"}, "a has operator lt twice"},
		{"unknown object operator", map[string]any{"a": map[string]any{"less": 1.0}}, `unknown operator "less"`},
		{"property not an object", map[string]any{"a": 1.0}, "a maps to a number"},
		{"property without operators", map[string]any{"a": map[string]any{}}, "a has no operators"},
		{"list entry not a string", []any{1.0}, "entry 0 is a number"},
		{"broken JSON", `{"a":`, "does not decode"},
		{"a number", 3.0, "not a query object"},
	}
	expectParamErrors(t, "query", ParseQuery, tests, `"eo:cloud_cover<10"`)
}

func TestFilterForms(t *testing.T) {
	cql2JSON := `{"args":[{"property":"eo:cloud_cover"},10],"op":"<"}`
	tests := []struct {
		name     string
		in       any
		lang     string
		want     string
		wantLang string
	}{
		{"null", nil, "", "", ""},
		{"object", map[string]any{"op": "<", "args": []any{map[string]any{"property": "eo:cloud_cover"}, 10.0}}, "", cql2JSON, FilterLangCQL2JSON},
		{"JSON string of an object", `{"op": "<", "args": [{"property": "eo:cloud_cover"}, 10]}`, "", cql2JSON, FilterLangCQL2JSON},
		{"JSON string with explicit lang", `{"op":"<","args":[{"property":"eo:cloud_cover"},10]}`, "cql2-json", cql2JSON, FilterLangCQL2JSON},
		{"text", "eo:cloud_cover < 10", "", `"eo:cloud_cover < 10"`, FilterLangCQL2Text},
		{"text with explicit lang, any case", " eo:cloud_cover < 10 ", "CQL2-TEXT", `"eo:cloud_cover < 10"`, FilterLangCQL2Text},
		{"raw JSON object", json.RawMessage(`{"op":"<","args":[{"property":"eo:cloud_cover"},10]}`), "", cql2JSON, FilterLangCQL2JSON},
		{"raw JSON string holds text", json.RawMessage(`"id = 'x'"`), "", `"id = 'x'"`, FilterLangCQL2Text},
		{"numbers kept exactly", `{"op":"=","args":[{"property":"n"},1.50]}`, "", `{"args":[{"property":"n"},1.50],"op":"="}`, FilterLangCQL2JSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lang, err := ParseFilter(tt.in, tt.lang)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if string(got) != tt.want || lang != tt.wantLang {
				t.Errorf("got %s %q, want %s %q", got, lang, tt.want, tt.wantLang)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		name, param string
		in          any
		lang        string
		reason      string
	}{
		{"text with cql2-json lang", "filter", "eo:cloud_cover < 10", "cql2-json", "filter-lang says cql2-json but the filter is text (cql2-text)"},
		{"object with cql2-text lang", "filter", map[string]any{"op": "=", "args": []any{1.0, 1.0}}, "cql2-text", "filter-lang says cql2-text but the filter is a JSON object"},
		{"unknown lang", "filter-lang", "id = 'x'", "cql-json", "unknown filter language"},
		{"lang without filter", "filter-lang", nil, "cql2-text", "given without a filter"},
		{"broken JSON object", "filter", `{"op":`, "", "is not valid JSON"},
		{"empty object", "filter", `{}`, "", "empty object"},
		{"a number", "filter", 3.0, "", "neither a CQL2 JSON object nor CQL2 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lang, err := ParseFilter(tt.in, tt.lang)
			if err == nil {
				t.Fatalf("got %s %q, want an error", got, lang)
			}
			assertParamError(t, err, tt.param, tt.reason)
		})
	}
}
