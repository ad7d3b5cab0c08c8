package tools

import (
	"strings"
	"testing"
)

// Nothing a search names is ignored in silence.
func TestSearchSaysWhatTheCatalogIgnored(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	cases := []struct {
		name    string
		args    map[string]any
		want    []string
		notWant []string
	}{
		{"one unknown collection in a list", map[string]any{"collections": []string{"sentinel-2-l2a", "sentinel-2-l3a"}, "max_items": 2},
			[]string{"Warning: collection 'sentinel-2-l3a' does not exist in this catalog: did you mean sentinel-2-l2a", "the items returned come from the other collections"}, nil},
		{"query on a field that is not queryable", map[string]any{"collections": []string{"sentinel-2-l2a"}, "query": map[string]any{"cloud_cover": map[string]any{"lt": 20}}},
			[]string{`query names "cloud_cover", which is not among the queryables of collection 'sentinel-2-l2a' (did you mean eo:cloud_cover?)`, "not the threshold", "Queryables: "},
			[]string{"relax query/filter"}},
		{"sortby an unknown field", map[string]any{"collections": []string{"sentinel-2-l2a"}, "sortby": "-properties.cloudcover", "max_items": 2},
			[]string{`sortby names "properties.cloudcover", which none of the returned items has and which is not among the queryables of collection 'sentinel-2-l2a' (did you mean eo:cloud_cover?)`, "its own order"}, nil},
		// Names that are right get no warning.
		{"known names", map[string]any{"collections": []string{"sentinel-2-l2a", "naip"}, "sortby": "-properties.eo:cloud_cover",
			"query": map[string]any{"eo:cloud_cover": map[string]any{"lt": 100}}, "max_items": 2}, nil, []string{"Warning: "}},
		{"a real threshold still gets the advice to relax it", map[string]any{"collections": []string{"sentinel-2-l2a"}, "query": map[string]any{"eo:cloud_cover": map[string]any{"lt": 0}}},
			[]string{"relax query/filter"}, []string{"Warning: "}},
	}
	for _, c := range cases {
		text := resultText(callOK(t, cs, "search_items", c.args))
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: text lacks %q:\n%s", c.name, w, text)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(text, w) {
				t.Errorf("%s: text has %q:\n%s", c.name, w, text)
			}
		}
	}
}

// A warning about the search (here west > east, read
// as crossing the antimeridian) comes before the item list, not after it.
func TestSearchWarningsComeBeforeTheItems(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	text := resultText(callOK(t, cs, "search_items", map[string]any{"bbox": []float64{10, 40, 5, 45}, "max_items": 2}))
	warning, item := strings.Index(text, "Warning: bbox west 10 is greater than east 5"), strings.Index(text, "\n- ")
	if warning < 0 || item < 0 || warning > item {
		t.Errorf("the bbox warning (at %d) is not before the first item (at %d):\n%s", warning, item, text)
	}
}

// The same checks in the other tools that search and read the items: they
// ignored an unknown collection in a list, a non-queryable query field and
// an unknown sortby field in silence ("each" of them).
func TestAreaToolsSayWhatTheCatalogIgnored(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	aoi := []float64{-40.5, -5.3, -37.5, -3.5}
	cases := []struct {
		name    string
		args    map[string]any
		want    string
		notWant string
	}{
		{"one unknown collection in a list", map[string]any{"collections": []string{"sentinel-2-l2a", "sentinel-2-l3a"}},
			"collection 'sentinel-2-l3a' does not exist in this catalog: did you mean sentinel-2-l2a", ""},
		{"query on a field that is not queryable", map[string]any{"collections": []string{"sentinel-2-l2a"}, "query": map[string]any{"cloud_cover": map[string]any{"lt": 20}}},
			`query names "cloud_cover", which is not among the queryables of collection 'sentinel-2-l2a' (did you mean eo:cloud_cover?)`, "relax query/filter"},
		{"sortby an unknown field", map[string]any{"collections": []string{"sentinel-2-l2a"}, "sortby": "-properties.cloudcover"},
			`sortby names "properties.cloudcover", which none of the returned items has`, ""},
	}
	for _, tool := range []string{"map_items", "check_coverage", "estimate_data_size"} {
		for _, c := range cases {
			c.args["aoi"] = aoi
			text := resultText(callOK(t, cs, tool, c.args))
			if !strings.Contains(text, c.want) {
				t.Errorf("%s, %s: text lacks %q:\n%s", tool, c.name, c.want, text)
			}
			if c.notWant != "" && strings.Contains(text, c.notWant) {
				t.Errorf("%s, %s: text has %q:\n%s", tool, c.name, c.notWant, text)
			}
		}
	}
}
