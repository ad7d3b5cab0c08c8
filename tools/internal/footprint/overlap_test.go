package footprint

import (
	"context"
	"encoding/json"
	"math"
	"testing"
)

// TestOverlapAgreesWithMeasure: for one footprint, Overlap's share of the
// area is Measure's coverage (the per-item figure search_items shows and
// check_coverage's report are one computation), measured on the ellipsoid,
// and the footprint's own share inside the area comes with it.
func TestOverlapAgreesWithMeasure(t *testing.T) {
	cases := map[string]struct {
		area, item             []float64
		areaPct, footprintFrac float64
	}{
		// Near the equator a quarter of the area is a quarter.
		"quarter": {area: []float64{0, 0, 2, 2}, item: []float64{1, 1, 3, 3}, areaPct: 25.0, footprintFrac: 0.25},
		// From the equator to 80°N the lower half of the latitudes holds
		// 65.1 % of the area on the ellipsoid (65.3 % on a sphere), not the
		// half that planar degrees would say.
		"equal area": {area: []float64{0, 0, 1, 80}, item: []float64{0, 0, 1, 40},
			areaPct: 100 * CellAreaKm2(0, 0, 1, 40) / CellAreaKm2(0, 0, 1, 80), footprintFrac: 1},
		// An area across the antimeridian (170°E to 176°W, 14°) and a
		// footprint from 178°E to 178°W (4°): 2/7 of the area.
		"antimeridian": {area: []float64{170, 0, -176, 1}, item: []float64{178, 0, -178, 1}, areaPct: 28.6, footprintFrac: 1},
		"outside":      {area: []float64{0, 0, 1, 1}, item: []float64{5, 5, 6, 6}, areaPct: 0, footprintFrac: 0},
	}
	for name, c := range cases {
		area, err := NewArea(mustBBox(t, c.area...))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		item := mustBBox(t, c.item...)
		o, err := area.Overlap(item)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(o.AreaPercent-c.areaPct) > 0.05 || (name == "equal area" && math.Abs(o.AreaPercent-65.1) > 0.05) || math.Abs(o.FootprintFraction-c.footprintFrac) > 0.005 {
			t.Errorf("%s: area %.3f%%, footprint fraction %.4f; want %.1f%%, %.3f", name, o.AreaPercent, o.FootprintFraction, c.areaPct, c.footprintFrac)
		}
		r, err := Measure(context.Background(), mustBBox(t, c.area...), []Item{{ID: name, Shape: item}}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(r.CoveredPercent-o.AreaPercent) > 1e-9 || math.Abs(r.AreaKm2-area.km2) > 1e-9 {
			t.Errorf("%s: Measure %.6f%% of %.3f km², Overlap %.6f%% of %.3f km²", name, r.CoveredPercent, r.AreaKm2, o.AreaPercent, area.km2)
		}
	}
}

// TestOverlapOfAConcaveArea: a concave area is measured as drawn, not by
// its bounding rectangle.
func TestOverlapOfAConcaveArea(t *testing.T) {
	l, err := ParseArea(json.RawMessage(`{"type":"Polygon","coordinates":[[[0,0],[2,0],[2,1],[1,1],[1,2],[0,2],[0,0]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	area, err := NewArea(l)
	if err != nil {
		t.Fatal(err)
	}
	// The square [1,2]² lies in the L's notch: it meets the L along edges only.
	o, err := area.Overlap(mustBBox(t, 1, 1, 2, 2))
	if err != nil || o.AreaPercent > 1e-9 || o.FootprintFraction > 1e-9 {
		t.Errorf("square in the notch: %+v, %v; want nothing inside", o, err)
	}
	o, err = area.Overlap(mustBBox(t, 0, 0, 2, 2))
	if err != nil || math.Abs(o.AreaPercent-100) > 1e-6 || math.Abs(o.FootprintFraction-0.75) > 0.001 {
		t.Errorf("bounding square: %+v, %v; want 100%% of the L, 3/4 of the square", o, err)
	}
}

func TestNewAreaRefusesWhatCannotBeMeasured(t *testing.T) {
	flat := mustBBox(t, 0, 0, 1, 1)
	for i := range flat.Polygons[0][0] {
		flat.Polygons[0][0][i][1] = 0
	}
	if _, err := NewArea(flat); err == nil {
		t.Error("a ring with no area was accepted as an area")
	}
	if _, err := NewArea(Shape{}); err == nil {
		t.Error("an empty shape was accepted as an area")
	}
}

// BenchmarkOverlap is the per-item cost search_items pays for each
// summary's aoi_coverage_pct (and estimate_data_size per item): one
// footprint of 40 vertices against a bbox.
//
//	go test -run '^$' -bench Overlap -benchtime 200x ./tools/internal/footprint/
func BenchmarkOverlap(b *testing.B) {
	area, err := NewArea(mustBBox(b, 10, 45, 11, 46))
	if err != nil {
		b.Fatal(err)
	}
	ring := make([][2]float64, 0, 41)
	for i := range 40 {
		a := 2 * math.Pi * float64(i) / 40
		ring = append(ring, [2]float64{10.8 + 0.5*math.Cos(a), 45.8 + 0.5*math.Sin(a)})
	}
	ring = append(ring, ring[0])
	raw, _ := json.Marshal(map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}})
	shape, err := Parse(raw, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := area.Overlap(shape); err != nil {
			b.Fatal(err)
		}
	}
}
