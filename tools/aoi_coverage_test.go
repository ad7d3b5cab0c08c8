package tools

import (
	"strings"
	"testing"
)

// TestSummariesSayHowMuchOfTheAreaEachItemCovers: with a bbox or an
// intersects, each summary carries the share of the requested area inside
// the item's footprint, in the text too; a concave area is measured by its
// bounding rectangle and the note says so; without an area there is none.
func TestSummariesSayHowMuchOfTheAreaEachItemCovers(t *testing.T) {
	square := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 2}, [2]float64{0, 2})
	url := sizingCatalog(t,
		sizingItem("square", square, []float64{0, 0, 2, 2}, map[string]any{}),
		sizingItem("offset", polygonJSON([2]float64{1, 1}, [2]float64{3, 1}, [2]float64{3, 3}, [2]float64{1, 3}), nil, map[string]any{}),
		sizingItem("elsewhere", polygonJSON([2]float64{10, 10}, [2]float64{11, 10}, [2]float64{11, 11}), []float64{10, 10, 11, 11}, map[string]any{}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	coverage := func(args map[string]any) (map[string]float64, SearchItemsOut, string) {
		t.Helper()
		res := callOK(t, cs, "search_items", args)
		out := structured[SearchItemsOut](t, res)
		got := map[string]float64{}
		for _, s := range out.Items {
			if s.AOICoverage != nil {
				got[s.ID] = *s.AOICoverage
			}
		}
		return got, out, resultText(res)
	}

	// bbox [1,1,3,3]: area 4; the square covers [1,2]×[1,2] (25%), the
	// offset square all of it.
	// One item per call: the cursor's page is measured against the same area.
	got, out, text := coverage(map[string]any{"collections": "sizing", "bbox": []float64{1, 1, 3, 3}, "max_items": 1})
	if out.Cursor == "" {
		t.Fatalf("no cursor after the first of two items: %+v", out)
	}
	more, _, moreText := coverage(map[string]any{"cursor": out.Cursor})
	for id, pct := range more {
		got[id] = pct
	}
	if len(got) != 2 || got["square"] != 25 || got["offset"] != 100 {
		t.Errorf("bbox over two pages: coverage %v, want square 25, offset 100", got)
	}
	if both := text + moreText; !strings.Contains(both, "covers 25% of the requested area") || !strings.Contains(both, "covers 100% of the requested area") {
		t.Errorf("the text lacks the shares:\n%s", both)
	}

	// A triangle with corners (0,0) (4,0) (0,4): area 8; the square lies
	// inside it (4, 50%); the offset square covers the part of [1,3]²
	// under x+y=4 (2, 25%); the one elsewhere does not match.
	triangle := `{"type":"Polygon","coordinates":[[[0,0],[4,0],[0,4],[0,0]]]}`
	got, out, _ = coverage(map[string]any{"collections": "sizing", "intersects": triangle})
	if len(got) != 2 || got["square"] != 50 || got["offset"] != 25 {
		t.Errorf("triangle: coverage %v, want square 50, offset 25", got)
	}
	if notes := strings.Join(out.Notes, " "); !strings.Contains(notes, "aoi_coverage_pct") || strings.Contains(notes, "approximate") {
		t.Errorf("triangle: notes %q, want the exact explanation", out.Notes)
	}

	// An L shape is concave: its bounding rectangle [0,2]² is measured.
	lShape := `{"type":"Polygon","coordinates":[[[0,0],[2,0],[2,1],[1,1],[1,2],[0,2],[0,0]]]}`
	got, out, _ = coverage(map[string]any{"collections": "sizing", "intersects": lShape})
	if got["square"] != 100 || !strings.Contains(strings.Join(out.Notes, " "), "approximate") {
		t.Errorf("L shape: coverage %v notes %q, want square 100 over the bounding rectangle, noted as approximate", got, out.Notes)
	}

	got, out, _ = coverage(map[string]any{"collections": "sizing"})
	if len(got) != 0 || strings.Contains(strings.Join(out.Notes, " "), "aoi_coverage_pct") {
		t.Errorf("no area: coverage %v notes %q, want none", got, out.Notes)
	}
}
