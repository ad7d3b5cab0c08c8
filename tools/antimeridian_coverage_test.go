package tools

import (
	"strings"
	"testing"
)

// Through the tools: a global item
// and a band round the globe cover 100 % (they were 0 % and "outside");
// a polar cap written as a polygon is an area; an area written across the
// antimeridian is searched cut at ±180 and finds the items on both sides.
func TestCoverageAcross360(t *testing.T) {
	t.Parallel()
	global := polygonJSON([2]float64{-180, -90}, [2]float64{180, -90}, [2]float64{180, 90}, [2]float64{-180, 90})
	band := polygonJSON([2]float64{-180, -60}, [2]float64{180, -60}, [2]float64{180, 60}, [2]float64{-180, 60})
	url := sizingCatalog(t,
		sizingItem("global", global, []float64{-180, -90, 180, 90}, map[string]any{}),
		sizingItem("band", band, []float64{-180, -60, 180, 60}, map[string]any{}),
		sizingItem("east", polygonJSON([2]float64{170, 0}, [2]float64{180, 0}, [2]float64{180, 10}, [2]float64{170, 10}), []float64{170, 0, 180, 10}, map[string]any{}),
		sizingItem("west", polygonJSON([2]float64{-180, 0}, [2]float64{-170, 0}, [2]float64{-170, 10}, [2]float64{-180, 10}), []float64{-180, 0, -170, 10}, map[string]any{}),
		sizingItem("greenwich", polygonJSON([2]float64{0, 2}, [2]float64{1, 2}, [2]float64{1, 8}, [2]float64{0, 8}), []float64{0, 2, 1, 8}, map[string]any{}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})

	// Global and band items over an area near Greenwich.
	for _, id := range []string{"global", "band"} {
		out := structured[CheckCoverageOut](t, callOK(t, cs, "check_coverage", map[string]any{"collections": "sizing", "ids": id, "aoi": []float64{10, 40, 11, 41}}))
		if out.CoveredPercent != 100 || len(out.Outside) != 0 {
			t.Errorf("%s item: covered %v%%, outside %v; want 100%%", id, out.CoveredPercent, out.Outside)
		}
	}
	res := callOK(t, cs, "search_items", map[string]any{"collections": "sizing", "ids": "global", "bbox": []float64{10, 40, 11, 41}})
	if s := structured[SearchItemsOut](t, res).Items; len(s) != 1 || s[0].AOICoverage == nil || *s[0].AOICoverage != 100 {
		t.Errorf("search_items aoi_coverage_pct of the global item: %+v", s)
	}

	// A polar cap as a polygon is an area (it was "ring not simple").
	capArea := map[string]any{"type": "Polygon", "coordinates": [][][2]float64{{{-180, 70}, {180, 70}, {180, 90}, {-180, 90}, {-180, 70}}}}
	out := structured[CheckCoverageOut](t, callOK(t, cs, "check_coverage", map[string]any{"collections": "sizing", "ids": "global", "aoi": capArea}))
	if out.CoveredPercent != 100 {
		t.Errorf("polar cap area: covered %v%%", out.CoveredPercent)
	}

	// An area across the antimeridian, written with a jump from 175 to -175.
	across := map[string]any{"type": "Polygon", "coordinates": [][][2]float64{{{175, 2}, {-175, 2}, {-175, 8}, {175, 8}, {175, 2}}}}
	// Read literally, that polygon is the long way round, over Greenwich.
	res = callOK(t, cs, "check_coverage", map[string]any{"collections": "sizing", "ids": "east,west,greenwich", "aoi": across})
	out = structured[CheckCoverageOut](t, res)
	if out.CoveredPercent != 100 || out.Items != 2 {
		t.Errorf("area across the antimeridian: covered %v%% by %d items, want 100%% by east and west", out.CoveredPercent, out.Items)
	}
	if !strings.Contains(strings.Join(out.Notes, " "), "antimeridian") {
		t.Errorf("notes do not say the area was cut: %q", out.Notes)
	}
	// search_items too: both items found, each covering half of the area.
	res = callOK(t, cs, "search_items", map[string]any{"collections": "sizing", "ids": "east,west,greenwich", "intersects": across})
	sout := structured[SearchItemsOut](t, res)
	if len(sout.Items) != 2 || !strings.Contains(strings.Join(sout.Notes, " "), "antimeridian") {
		t.Errorf("search_items across the antimeridian: %d items, notes %q", len(sout.Items), sout.Notes)
	}
	for _, s := range sout.Items {
		if s.AOICoverage == nil || *s.AOICoverage != 50 {
			t.Errorf("%s: aoi_coverage_pct %v, want 50", s.ID, s.AOICoverage)
		}
	}
}

// A search_items cursor over an area cut at the antimeridian continues,
// given alone or with the arguments again.
func TestCursorAfterAntimeridianSplit(t *testing.T) {
	t.Parallel()
	url := sizingCatalog(t,
		sizingItem("east", polygonJSON([2]float64{170, 0}, [2]float64{180, 0}, [2]float64{180, 10}, [2]float64{170, 10}), []float64{170, 0, 180, 10}, map[string]any{}),
		sizingItem("west", polygonJSON([2]float64{-180, 0}, [2]float64{-170, 0}, [2]float64{-170, 10}, [2]float64{-180, 10}), []float64{-180, 0, -170, 10}, map[string]any{}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	across := map[string]any{"type": "Polygon", "coordinates": [][][2]float64{{{175, 2}, {-175, 2}, {-175, 8}, {175, 8}, {175, 2}}}}
	args := map[string]any{"collections": "sizing", "intersects": across, "max_items": 1}
	first := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
	if first.Cursor == "" || len(first.Items) != 1 {
		t.Fatalf("first page: %+v", first)
	}
	for name, next := range map[string]map[string]any{
		"cursor alone":        {"cursor": first.Cursor},
		"cursor and the args": {"cursor": first.Cursor, "collections": "sizing", "intersects": across, "max_items": 1},
	} {
		out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", next))
		if len(out.Items) != 1 || out.Items[0].ID == first.Items[0].ID {
			t.Errorf("%s: %+v", name, out.Items)
		}
	}
}
