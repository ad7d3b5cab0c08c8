package tools

import (
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// The demo holds Sentinel-2 scenes of Ceará (north-eastern Brazil): a
// search by the state's name finds them, by its outline.
func TestSearchItemsByPlaceName(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "search_items", map[string]any{"collections": []string{"sentinel-2-l2a"}, "bbox": "Ceará", "max_items": 20})
	out := structured[SearchItemsOut](t, res)
	if out.Place == nil || out.Place.Name != "Ceará" || out.Place.Kind != "region" || out.Place.Country != "Brazil" {
		t.Fatalf("place = %+v", out.Place)
	}
	if out.Returned != 5 {
		t.Errorf("found %d items of Ceará, want the demo's 5: %+v", out.Returned, out.Items)
	}
	for _, it := range out.Items {
		if !strings.Contains(it.ID, "24M") {
			t.Errorf("item %s is not of Ceará's MGRS tiles (24M…)", it.ID)
		}
	}
	text := resultText(res)
	if !strings.HasPrefix(text, `Place (bbox "Ceará"): Ceará (region, Brazil; Natural Earth 1:10m admin-1 outline`) {
		t.Errorf("text starts %q", text[:min(len(text), 200)])
	}
	if s, _ := out.Search["intersects"].(string); !strings.Contains(s, "Ceará") {
		t.Errorf("the search echoes intersects as %v, want the place named", out.Search["intersects"])
	}
	if len(text) > 20000 {
		t.Errorf("text is %d bytes: the outline is written out", len(text))
	}
	t.Log(text[:min(len(text), 2000)])
}

// check_coverage measures against a country's outline, not its bbox: the
// Netherlands' land is under half of its bbox's area.
func TestCheckCoverageMeasuresThePlaceOutline(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "check_coverage", map[string]any{"collections": []string{"sentinel-2-l2a"}, "aoi": "Netherlands", "datetime": "2025-07"})
	out := structured[CheckCoverageOut](t, res)
	if out.Place == nil || out.Place.Name != "Netherlands" {
		t.Fatalf("place = %+v", out.Place)
	}
	t.Logf("%s", resultText(res))
	m, err := places.Resolve("Netherlands")
	if err != nil {
		t.Fatal(err)
	}
	_ = m
	if out.AOIAreaKm2 < 30000 || out.AOIAreaKm2 > 45000 {
		t.Errorf("aoi_area_km2 = %.0f, want the Netherlands' outline (about 35,000 km² of land), not its bbox (about 80,000)", out.AOIAreaKm2)
	}
}
