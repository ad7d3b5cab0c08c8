package stacclient

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBBoxForms(t *testing.T) {
	tests := []goodInput[[]float64]{
		{"null", nil, nil},
		{"empty string", "  ", nil},
		{"empty list", []any{}, nil},
		{"decoded JSON list", []any{-10.5, 40.0, 5.0, 50.25}, []float64{-10.5, 40, 5, 50.25}},
		{"Go float list", []float64{-10, 40, 5, 50}, []float64{-10, 40, 5, 50}},
		{"Go int list", []int{-10, 40, 5, 50}, []float64{-10, 40, 5, 50}},
		{"json.Number list", []any{json.Number("-10"), json.Number("40"), json.Number("5"), json.Number("50")}, []float64{-10, 40, 5, 50}},
		{"comma string", "-10,40,5,50", []float64{-10, 40, 5, 50}},
		{"comma string with spaces", " -10.5, 40 ,5, 50 ", []float64{-10.5, 40, 5, 50}},
		{"JSON string list", "[-10,40,5,50]", []float64{-10, 40, 5, 50}},
		{"raw JSON", json.RawMessage(`[-10,40,5,50]`), []float64{-10, 40, 5, 50}},
		{"list of numeric strings", []any{"-105.3", " 39.9", "-105.1", "40.1"}, []float64{-105.3, 39.9, -105.1, 40.1}},
		{"JSON string of numeric strings", `["-10","40","5","50"]`, []float64{-10, 40, 5, 50}},
		{"6 numbers", []any{-10.0, 40.0, 0.0, 5.0, 50.0, 1000.0}, []float64{-10, 40, 0, 5, 50, 1000}},
		{"antimeridian: west > east", "170,-10,-170,10", []float64{170, -10, -170, 10}},
		{"the whole world", "-180,-90,180,90", []float64{-180, -90, 180, 90}},
		{"south equals north", "0,10,1,10", []float64{0, 10, 1, 10}},
	}
	expectParsed(t, ParseBBox, tests)
}

func TestBBoxErrors(t *testing.T) {
	tests := []badInput{
		{"3 numbers", []any{1.0, 2.0, 3.0}, "(3 numbers)"},
		{"5 numbers in a string", "1,2,3,4,5", "(5 numbers)"},
		{"not a number", "a,2,3,4", `entry 0 "a" is not a number`},
		{"non-numeric string entry in a list", []any{"west", 2.0, 3.0, 4.0}, "entry 0"},
		{"non-finite string entry", []any{"1", "Inf", "3", "4"}, "entry 1"},
		{"NaN", "NaN,0,1,1", "not a number"},
		{"latitude out of range", "0,-91,1,1", "south -91 is outside -90..90"},
		{"longitude out of range", "0,0,181,1", "east 181 is outside -180..180"},
		{"south greater than north", "0,50,1,40", "south 50 is greater than north 40"},
		{"6 numbers, south > north", []any{0.0, 50.0, 0.0, 1.0, 40.0, 10.0}, "south 50 is greater than north 40"},
		{"6 numbers, minz > maxz", []any{0.0, 0.0, 10.0, 1.0, 1.0, 5.0}, "minz 10 is above maxz 5"},
		{"broken JSON", "[1,2,3", "does not decode"},
		{"JSON object", `{"w":1}`, "not a list"},
		{"a bare number", 5.0, "not a list"},
	}
	expectParamErrors(t, "bbox", ParseBBox, tests, "[west,south,east,north]")
}

func TestBBoxErrorMessageExact(t *testing.T) {
	_, err := ParseBBox([]any{1.0, 2.0, 3.0})
	want := `invalid bbox: got "[1,2,3]" (3 numbers); accepted: ` + bboxAccepted
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

func TestParamStringListForms(t *testing.T) {
	tests := []goodInput[[]string]{
		{"null", nil, nil},
		{"empty string", "", nil},
		{"empty list", []any{}, nil},
		{"comma string", "a, b ,c", []string{"a", "b", "c"}},
		{"trailing comma", "a,b,", []string{"a", "b"}},
		{"single", "sentinel-2-l2a", []string{"sentinel-2-l2a"}},
		{"decoded list", []any{"a", "b"}, []string{"a", "b"}},
		{"Go list", []string{"a", " b"}, []string{"a", "b"}},
		{"JSON string list", `["a","b"]`, []string{"a", "b"}},
		{"empty JSON list", `[]`, nil},
		{"raw JSON", json.RawMessage(`["x"]`), []string{"x"}},
	}
	expectParsed(t, func(v any) ([]string, error) { return ParseStringList("collections", v) }, tests)
	for _, bad := range []any{[]any{"a", 1.0}, []any{"a", ""}, `["a",`, 3.0, map[string]any{"a": 1.0}} {
		got, err := ParseStringList("ids", bad)
		if err == nil {
			t.Errorf("ParseStringList(%#v) = %q, want an error", bad, got)
			continue
		}
		assertParamError(t, err, "ids", "")
		if !strings.Contains(err.Error(), `"a,b"`) {
			t.Errorf("error does not show the comma form: %v", err)
		}
	}
}

func TestParamLimit(t *testing.T) {
	tests := []struct {
		in   any
		want int
	}{
		{nil, 0}, {"", 0}, {0.0, 0}, {10.0, 10}, {10, 10}, {"250", 250}, {" 7 ", 7},
		{json.Number("1000"), 1000}, {10000.0, 10000},
	}
	for _, tt := range tests {
		got, err := ParseLimit(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseLimit(%#v) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	bad := []struct {
		in     any
		reason string
	}{
		{10.5, "fractional"}, {-1.0, "negative"}, {10001.0, "larger than 10000"}, {"ten", "not a whole number"},
		{"1e3", "not a whole number"}, {true, "not a number"}, {[]any{1.0}, "not a number"},
	}
	for _, tt := range bad {
		got, err := ParseLimit(tt.in)
		if err == nil {
			t.Errorf("ParseLimit(%#v) = %d, want an error", tt.in, got)
			continue
		}
		assertParamError(t, err, "limit", tt.reason)
		if !strings.Contains(err.Error(), "1 to 10000") || !strings.Contains(err.Error(), "max_items") {
			t.Errorf("limit error does not explain the range and max_items: %v", err)
		}
	}
}

// West > east is a real antimeridian box when it is narrow, and most likely
// swapped corners when it would span more than 180° (such boxes
// were silently read as 359.8° wide).
func TestBBoxWarning(t *testing.T) {
	cases := []struct {
		bbox []float64
		want []string // "" parts: no warning
	}{
		{[]float64{10, 0, -10, 5}, []string{"west 10 is greater than east -10", "340° of longitude", "the 20° between -10 and 10", "[-10,0,10,5]"}},
		{[]float64{179.9, -1, 179.7, 1}, []string{"359.8° of longitude", "[179.7,-1,179.9,1]"}},
		{[]float64{10, 0, 0, -10, 5, 100}, []string{"[-10,0,0,10,5,100]"}},
		{[]float64{170, -10, -170, 10}, nil}, // 20° across the antimeridian
		{[]float64{-10, 0, 10, 5}, nil},
		{[]float64{90, 0, -90, 5}, nil}, // exactly 180°
		{[]float64{1, 2, 3}, nil},       // invalid boxes are ParseBBox's business
	}
	for _, c := range cases {
		got := BBoxWarning(c.bbox)
		if (got == "") != (c.want == nil) {
			t.Errorf("BBoxWarning(%v) = %q, want a warning: %v", c.bbox, got, c.want != nil)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("BBoxWarning(%v) = %q, lacks %q", c.bbox, got, w)
			}
		}
	}
}
