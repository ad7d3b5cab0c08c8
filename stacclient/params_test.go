package stacclient

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParamParseSearchLLMForms(t *testing.T) {
	// Everything as strings, the way LLM clients send arrays and objects.
	got, err := ParseSearch(RawSearch{
		Collections: `["sentinel-2-l2a"]`,
		IDs:         "S2A_1,S2B_2",
		BBox:        "[-10,40,5,50]",
		Datetime:    "2023-06",
		Query:       []any{"eo:cloud_cover<10"},
		Filter:      "platform = 'sentinel-2a'",
		SortBy:      "-properties.datetime",
		Fields:      `{"include":["id"]}`,
		Limit:       "25",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := SearchParams{
		Collections: []string{"sentinel-2-l2a"},
		IDs:         []string{"S2A_1", "S2B_2"},
		BBox:        []float64{-10, 40, 5, 50},
		Datetime:    "2023-06-01T00:00:00Z/2023-06-30T23:59:59.999999Z",
		Query:       map[string]any{"eo:cloud_cover": map[string]any{"lt": json.Number("10")}},
		Filter:      json.RawMessage(`"platform = 'sentinel-2a'"`),
		FilterLang:  FilterLangCQL2Text,
		SortBy:      []SortField{{Field: "properties.datetime", Direction: "desc"}},
		Fields:      &Fields{Include: []string{"id"}},
		Limit:       25,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSearch\n got  %+v\n want %+v", got, want)
	}
	wantBody := `{"collections":["sentinel-2-l2a"],"ids":["S2A_1","S2B_2"],"bbox":[-10,40,5,50],` +
		`"datetime":"2023-06-01T00:00:00Z/2023-06-30T23:59:59.999999Z","query":{"eo:cloud_cover":{"lt":10}},` +
		`"filter":"platform = 'sentinel-2a'","filter-lang":"cql2-text","sortby":[{"field":"properties.datetime","direction":"desc"}],` +
		`"fields":{"include":["id"]},"limit":25}`
	if body := string(got.PostBody()); body != wantBody {
		t.Errorf("PostBody\n got  %s\n want %s", body, wantBody)
	}
}

func TestParamParseSearchEmpty(t *testing.T) {
	got, err := ParseSearch(RawSearch{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, SearchParams{}) {
		t.Errorf("empty input gave %+v", got)
	}
	if string(got.PostBody()) != "{}" || got.QueryString() != "" {
		t.Errorf("empty params encode as %s and %q", got.PostBody(), got.QueryString())
	}
}

func TestParamBBoxWithIntersectsRejected(t *testing.T) {
	_, err := ParseSearch(RawSearch{BBox: "0,0,1,1", Intersects: `{"type":"Point","coordinates":[0,0]}`})
	if err == nil {
		t.Fatal("bbox with intersects was accepted")
	}
	assertParamError(t, err, "bbox", "bbox and intersects cannot be combined")
	if !strings.Contains(err.Error(), `got "bbox [0,0,1,1] with intersects {\"coordinates\":[0,0],\"type\":\"Point\"}"`) {
		t.Errorf("error does not show both values: %v", err)
	}
	if !strings.Contains(err.Error(), "either bbox or intersects") {
		t.Errorf("error does not say what to do: %v", err)
	}
}

func TestParamParseSearchReportsTheBadParameter(t *testing.T) {
	tests := []struct {
		param string
		raw   RawSearch
	}{
		{"collections", RawSearch{Collections: []any{1.0}}},
		{"ids", RawSearch{IDs: []any{true}}},
		{"bbox", RawSearch{BBox: "1,2,3"}},
		{"intersects", RawSearch{Intersects: "{}"}},
		{"datetime", RawSearch{Datetime: "2023-02-30"}},
		{"query", RawSearch{Query: "cloud"}},
		{"filter", RawSearch{Filter: "{bad", FilterLang: ""}},
		{"filter-lang", RawSearch{Filter: "id='x'", FilterLang: "sql"}},
		{"sortby", RawSearch{SortBy: []any{2.0}}},
		{"fields", RawSearch{Fields: 2.0}},
		{"limit", RawSearch{Limit: 20000}},
	}
	for _, tt := range tests {
		t.Run(tt.param, func(t *testing.T) {
			_, err := ParseSearch(tt.raw)
			if err == nil {
				t.Fatal("accepted")
			}
			assertParamError(t, err, tt.param, "")
		})
	}
}

func TestParamValidateAndNormalized(t *testing.T) {
	loose := SearchParams{
		Collections: []string{"a"},
		Datetime:    "2023",
		Filter:      json.RawMessage(`{"op":"=","args":[{"property":"id"},"x"]}`),
		SortBy:      []SortField{{Field: "id", Direction: "DESCENDING"}},
		Fields:      &Fields{},
		Query:       map[string]any{"gsd": map[string]any{"lt": 30}},
		Limit:       10,
	}
	if err := loose.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	got, err := loose.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	want := SearchParams{
		Collections: []string{"a"},
		Datetime:    "2023-01-01T00:00:00Z/2023-12-31T23:59:59.999999Z",
		Filter:      json.RawMessage(`{"args":[{"property":"id"},"x"],"op":"="}`),
		FilterLang:  FilterLangCQL2JSON,
		SortBy:      []SortField{{Field: "id", Direction: "desc"}},
		Query:       map[string]any{"gsd": map[string]any{"lt": json.Number("30")}},
		Limit:       10,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Normalized\n got  %+v\n want %+v", got, want)
	}

	bad := []struct {
		param  string
		params SearchParams
	}{
		{"bbox", SearchParams{BBox: []float64{0, 50, 1, 40}}},
		{"bbox", SearchParams{BBox: []float64{0, 0, 1, 1}, Intersects: json.RawMessage(`{"type":"Point","coordinates":[0,0]}`)}},
		{"intersects", SearchParams{Intersects: json.RawMessage(`{"type":"Point","coordinates":[0,100]}`)}},
		{"datetime", SearchParams{Datetime: "2024/2023"}},
		{"limit", SearchParams{Limit: -5}},
		{"filter", SearchParams{Filter: json.RawMessage(`"id = 'x'"`), FilterLang: FilterLangCQL2JSON}},
		{"sortby", SearchParams{SortBy: []SortField{{Field: "id", Direction: "sideways"}}}},
		{"query", SearchParams{Query: map[string]any{"gsd": 5}}},
		{"ids", SearchParams{IDs: []string{"a", ""}}},
	}
	for _, tt := range bad {
		err := tt.params.Validate()
		if err == nil {
			t.Errorf("Validate(%+v) accepted", tt.params)
			continue
		}
		assertParamError(t, err, tt.param, "")
	}
}

func TestParamErrorText(t *testing.T) {
	tests := []struct {
		err  *ParamError
		want string
	}{
		{&ParamError{Param: "bbox", Got: "[1,2,3]", Reason: "3 numbers", Accepted: "4 numbers"},
			`invalid bbox: got "[1,2,3]" (3 numbers); accepted: 4 numbers`},
		{&ParamError{Param: "limit", Got: "x"}, `invalid limit: got "x"`},
		{&ParamError{Param: "ids", Got: `say "hi"`, Accepted: "strings"}, `invalid ids: got "say \"hi\""; accepted: strings`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %s\nwant      %s", got, tt.want)
		}
	}
	long := strings.Repeat("x", 500)
	_, err := ParseBBox(long)
	var pe *ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("ParseBBox(long) error = %v", err)
	}
	if !strings.HasSuffix(pe.Got, "…(300 more characters)") || len(pe.Got) > 250 {
		t.Errorf("long input not trimmed with a note: %q", pe.Got)
	}
}

func TestParamRequestErrorText(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Kind: KindNotFound, Status: 404, Method: "GET", URL: "https://x/v1/collections/foo", Message: "Not Found"},
			"GET https://x/v1/collections/foo: 404 not_found: Not Found"},
		{&Error{Kind: KindTransport, Method: "POST", URL: "https://x/search", Err: cause},
			"POST https://x/search: transport: dial tcp 127.0.0.1:1: connect: connection refused"},
		{&Error{Kind: KindThrottled, Status: 429, Method: "GET", URL: "https://x/search", Message: "Rate limit exceeded", RetryAfter: 2e9},
			"GET https://x/search: 429 throttled: Rate limit exceeded (retry after 2s)"},
		{&Error{Kind: KindInvalidSTAC, Status: 200, Method: "GET", URL: "https://x/", Message: "not a Catalog", Err: errors.New("unexpected EOF")},
			"GET https://x/: 200 invalid_stac: not a Catalog (cause: unexpected EOF)"},
		{&Error{Kind: KindUnsupported, Message: "no item search"}, "unsupported: no item search"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %s\nwant      %s", got, tt.want)
		}
	}
	wrapped := &Error{Kind: KindTransport, Err: cause}
	if !errors.Is(wrapped, cause) {
		t.Error("Error does not unwrap to its cause")
	}
}

func TestParamFormsMatchTheErrors(t *testing.T) {
	bad := map[string]RawSearch{
		"collections": {Collections: 1.0}, "ids": {IDs: 1.0}, "bbox": {BBox: "1"}, "intersects": {Intersects: "[]"},
		"datetime": {Datetime: "x"}, "query": {Query: "x"}, "filter": {Filter: 1.0}, "filter-lang": {FilterLang: "x"},
		"sortby": {SortBy: 1.0}, "fields": {Fields: 1.0}, "limit": {Limit: "x"},
	}
	if len(bad) != len(searchParamForms) {
		t.Fatalf("searchParamForms has %d parameters, the test covers %d", len(searchParamForms), len(bad))
	}
	for param, raw := range bad {
		_, err := ParseSearch(raw)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != param {
			t.Errorf("%s: error %v does not name %s", param, err, param)
			continue
		}
		if pe.Accepted != searchParamForms[param] {
			t.Errorf("%s: error accepts %q, searchParamForms says %q", param, pe.Accepted, searchParamForms[param])
		}
	}
}

func TestParamGoSpellingsAccepted(t *testing.T) {
	got, err := ParseSearch(RawSearch{
		Collections: [2]string{"a", "b"},
		BBox:        [4]float64{-10, 40, 5, 50},
		Query:       map[string]map[string]int{"gsd": {"lt": 30}},
		Filter:      map[string]any{"op": "=", "args": []any{map[string]string{"property": "id"}, "x"}},
		SortBy:      []map[string]string{{"field": "id", "direction": "desc"}},
		Fields:      map[string][]string{"include": {"id"}},
		Limit:       uint16(20),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"collections":["a","b"],"bbox":[-10,40,5,50],` +
		`"query":{"gsd":{"lt":30}},"filter":{"args":[{"property":"id"},"x"],"op":"="},"filter-lang":"cql2-json",` +
		`"sortby":[{"field":"id","direction":"desc"}],"fields":{"include":["id"]},"limit":20}`
	if body := string(got.PostBody()); body != want {
		t.Errorf("PostBody\n got  %s\n want %s", body, want)
	}
	geometry, err := ParseIntersects(map[string]any{"type": "Point", "coordinates": [2]float64{1, 2}})
	if err != nil || string(geometry) != `{"coordinates":[1,2],"type":"Point"}` {
		t.Errorf("ParseIntersects with a Go array = %s, %v", geometry, err)
	}
	if _, err := ParseBBox(struct{ W float64 }{1}); err == nil {
		t.Error("a struct that is not a list was accepted as a bbox")
	}
}

// TestNormalizedOfZeroParamsIsZero: Normalized hands unset fields to the
// parsers as typed nils ([]string(nil), nil json.RawMessage, ...); each
// must read them as absent, exactly like a nil interface.
func TestNormalizedOfZeroParamsIsZero(t *testing.T) {
	got, err := SearchParams{}.Normalized()
	if err != nil {
		t.Fatalf("Normalized() of zero SearchParams: %v", err)
	}
	if !reflect.DeepEqual(got, SearchParams{}) {
		t.Errorf("Normalized() of zero SearchParams = %+v, want the zero value", got)
	}
}
