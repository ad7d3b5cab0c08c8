package tools

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// TestSummariesSayHowMuchOfTheAreaEachItemCovers: with a bbox or an
// intersects, each summary carries the share of the requested area inside
// the item's footprint, in the text too, measured as check_coverage does
// (footprint.Area: concave areas as drawn); without an area there is none.
func TestSummariesSayHowMuchOfTheAreaEachItemCovers(t *testing.T) {
	t.Parallel()
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

	// An L shape is concave and measured as drawn: the square holds all of
	// it; the offset square meets it only at a corner.
	lShape := `{"type":"Polygon","coordinates":[[[0,0],[2,0],[2,1],[1,1],[1,2],[0,2],[0,0]]]}`
	got, out, _ = coverage(map[string]any{"collections": "sizing", "intersects": lShape})
	if got["square"] != 100 || got["offset"] != 0 || strings.Contains(strings.Join(out.Notes, " "), "approximate") {
		t.Errorf("L shape: coverage %v notes %q, want square 100 and offset 0, exact", got, out.Notes)
	}

	// A point has no area: no share, and a note says why.
	got, out, _ = coverage(map[string]any{"collections": "sizing", "intersects": `{"type":"Point","coordinates":[1,1]}`})
	if len(got) != 0 || !strings.Contains(strings.Join(out.Notes, " "), "no aoi_coverage_pct: the requested area cannot be measured") {
		t.Errorf("point: coverage %v notes %q, want none and the reason", got, out.Notes)
	}

	got, out, _ = coverage(map[string]any{"collections": "sizing"})
	if len(got) != 0 || strings.Contains(strings.Join(out.Notes, " "), "aoi_coverage_pct") {
		t.Errorf("no area: coverage %v notes %q, want none", got, out.Notes)
	}
}

// TestOneCoverageForSearchAndCheckCoverage: search_items' aoi_coverage_pct
// and check_coverage measure an item against an area the same way
// (footprint.Area): on the ellipsoid, not in planar degrees, and with a
// footprint written across the antimeridian joined into one piece.
func TestOneCoverageForSearchAndCheckCoverage(t *testing.T) {
	t.Parallel()
	// An area from 170°E to 176°W (14°) and 60°N to 80°N; the item, written
	// with a jump from 178 to -178, spans 178°E to 178°W (4°) and 60°N to
	// 70°N. Planar degrees would give 4/14 × 1/2 = 14.3 %; the lower half
	// of those latitudes holds more ground, so on the ellipsoid it is 17.7 %.
	item := json.RawMessage(`{"type":"Polygon","coordinates":[[[178,60],[-178,60],[-178,70],[178,70],[178,60]]]}`)
	url := sizingCatalog(t, sizingItem("arctic", item, []float64{178, 60, -178, 70}, map[string]any{}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	bbox := []float64{170, 60, -176, 80}
	want := 100 * 4.0 / 14 * footprint.CellAreaKm2(0, 60, 1, 70) / footprint.CellAreaKm2(0, 60, 1, 80)

	search := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "sizing", "bbox": bbox}))
	if len(search.Items) != 1 || search.Items[0].AOICoverage == nil {
		t.Fatalf("search_items: %+v, want the item with its coverage", search.Items)
	}
	check := structured[CheckCoverageOut](t, callOK(t, cs, "check_coverage", map[string]any{"collections": "sizing", "bbox": bbox}))
	got := *search.Items[0].AOICoverage
	if math.Abs(got-want) > 0.05 || got != round(check.CoveredPercent, 1) {
		t.Errorf("aoi_coverage_pct %.1f, check_coverage %.3f, want both %.2f (equal-area)", got, check.CoveredPercent, want)
	}
}
