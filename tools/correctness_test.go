package tools

import (
	"strings"
	"testing"
)

// A west > east bbox that would span more than 180° is still searched as
// given (a real antimeridian box must keep working) but the result warns
// that the corners are most likely swapped (issue 10: it was silently read
// as a 340°-wide box).
func TestSwappedBBoxCornersAreWarnedAbout(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	swapped := []float64{10, 0, -10, 5}
	for _, call := range []struct {
		tool  string
		args  map[string]any
		lines func(res map[string]any) []any
	}{
		{"search_items", map[string]any{"bbox": swapped, "max_items": 1}, func(m map[string]any) []any { l, _ := m["warnings"].([]any); return l }},
		{"estimate_data_size", map[string]any{"bbox": swapped, "max_items": 1}, func(m map[string]any) []any { l, _ := m["warnings"].([]any); return l }},
		{"search_collections", map[string]any{"bbox": swapped}, func(m map[string]any) []any { l, _ := m["notes"].([]any); return l }},
	} {
		res := callOK(t, cs, call.tool, call.args)
		if !strings.Contains(resultText(res), "swap west and east: [-10,0,10,5]") {
			t.Errorf("%s text does not warn about the swapped corners:\n%s", call.tool, resultText(res))
		}
		found := false
		for _, w := range call.lines(structured[map[string]any](t, res)) {
			found = found || strings.Contains(w.(string), "340° of longitude")
		}
		if !found {
			t.Errorf("%s structured output has no swapped-bbox warning", call.tool)
		}
	}
	// A narrow box across the antimeridian is what west > east is for.
	res := callOK(t, cs, "search_items", map[string]any{"bbox": []float64{170, -20, -170, 20}, "max_items": 1})
	if strings.Contains(resultText(res), "swap west and east") {
		t.Errorf("a 20° antimeridian box was warned about:\n%s", resultText(res))
	}
}
