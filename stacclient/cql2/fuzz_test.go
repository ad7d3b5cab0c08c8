package cql2

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseText: no text makes the parser panic or run away, and whatever
// parses is written back (ToText) as text that parses to the same
// expression, and compiles or is refused with an error.
func FuzzParseText(f *testing.F) {
	paths, _ := filepath.Glob("testdata/ogc/examples/text/*.txt")
	for _, p := range paths {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(string(raw))
		}
	}
	for _, s := range []string{"", "(", "NOT", "a LIKE 'x\\'", "a = -", "POINT(1 2", strings.Repeat("(", 10000) + "a" + strings.Repeat(")", 10000),
		strings.Repeat("NOT ", 10000) + "TRUE", strings.Repeat("-", 10000) + "1", "2^" + strings.Repeat("2^", 10000) + "2", "'it''s' = \"p\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		expr, err := ParseText(text)
		if err != nil {
			return
		}
		back, err := ToText(expr)
		if err != nil && (strings.Contains(err.Error(), "ends in a backslash") || strings.Contains(err.Error(), "BNF arrayOperand") ||
			strings.Contains(err.Error(), "nested more than")) {
			return // what CQL2 text cannot hold, refused by name
		}
		if err != nil {
			t.Fatalf("%q parsed to %s, which ToText refuses: %v", text, compact(expr), err)
		}
		again, err := ParseText(back)
		if err != nil && strings.Contains(err.Error(), "nested more than") {
			return // the parenthesized form nests deeper than the original
		}
		if err != nil || !sameJSON(again, expr) {
			t.Fatalf("%q → %s → %q → %s (%v)", text, compact(expr), back, compact(again), err)
		}
		_, _ = Compile(expr)
	})
}

// FuzzCompileJSON: no CQL2-JSON document makes Compile or evaluation
// panic, against an item with a geometry, numbers, strings, dates and an
// array.
func FuzzCompileJSON(f *testing.F) {
	paths, _ := filepath.Glob("testdata/ogc/examples/json/*.json")
	for _, p := range paths {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}]}`))
	f.Add([]byte(`{"op":"s_overlaps","args":[{"property":"geometry"},{"bbox":[170,-10,-170,10]}]}`))
	rec := props{
		"geometry": map[string]any{"type": "Polygon", "coordinates": []any{[]any{[]any{0.0, 0.0}, []any{2.0, 2.0}, []any{2.0, 0.0}, []any{0.0, 2.0}, []any{0.0, 0.0}}}},
		"value":    10, "name": "Bern", "date": "2022-04-16", "ts": "2022-04-16T10:00:00Z", "values": []any{"a", 1.0, true},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		expr, err := ParseJSON(data)
		if err != nil {
			return
		}
		filter, err := Compile(expr)
		if err != nil {
			return
		}
		filter.Eval(rec)
		if text, err := ToText(expr); err == nil {
			if _, err := ParseText(text); err != nil && !strings.Contains(err.Error(), "nested more than") {
				t.Fatalf("%s compiles, but its text %q does not parse: %v", data, text, err)
			}
		}
	})
}
