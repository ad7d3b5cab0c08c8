package footprint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// demoItems reads the demo catalog's items of one collection (real
// recorded footprints), optionally only those whose id has prefix.
func demoItems(t testing.TB, collection, prefix string) []Item {
	t.Helper()
	paths, err := fs.Glob(demo.FS, path.Join(collection, "items", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no demo items for %s: %v", collection, err)
	}
	var items []Item
	for _, p := range paths {
		raw, err := fs.ReadFile(demo.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		var it stacclient.Item
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !strings.HasPrefix(it.ID, prefix) {
			continue
		}
		shape, err := Parse(it.Geometry, it.BBox)
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		item := Item{ID: it.ID, Shape: shape}
		if ts, ok := it.Datetime(); ok {
			item.Time = ts
		}
		if cc, ok := it.PropertyFloat("eo:cloud_cover"); ok {
			item.CloudCover = &cc
		}
		items = append(items, item)
	}
	return items
}

// rasterCoverage is the independent check of Measure: it samples the area
// of interest's bounding box on an n×n grid of cell centres, keeps those
// inside the area, and counts those inside any footprint (tried at ±360°),
// weighting every cell by the cosine of its latitude (its area on a sphere).
// It shares no code with Measure: point-in-polygon tests from orb/planar
// instead of simplefeatures overlays, a sphere instead of the ellipsoid.
func rasterCoverage(area Shape, items []Item, n int) float64 {
	type placed struct {
		polys orb.MultiPolygon
		bound orb.Bound
	}
	// Every shape at its own longitudes and one turn either way.
	place := func(shapes ...Shape) []placed {
		var out []placed
		for _, s := range shapes {
			for _, dx := range []float64{-360, 0, 360} {
				var mp orb.MultiPolygon
				for _, p := range s.Polygons {
					mp = append(mp, shiftPolygon(p, dx))
				}
				out = append(out, placed{mp, mp.Bound()})
			}
		}
		return out
	}
	inAny := func(p orb.Point, shapes []placed) bool {
		for _, s := range shapes {
			if s.bound.Contains(p) && planar.MultiPolygonContains(s.polys, p) {
				return true
			}
		}
		return false
	}
	areaPlaced := place(area)
	var itemShapes []Shape
	for _, it := range items {
		itemShapes = append(itemShapes, it.Shape)
	}
	itemsPlaced := place(itemShapes...)
	b := area.Bound()
	var total, covered float64
	for row := 0; row < n; row++ {
		lat := b.Min[1] + (float64(row)+0.5)*(b.Max[1]-b.Min[1])/float64(n)
		w := math.Cos(lat * math.Pi / 180)
		for col := 0; col < n; col++ {
			p := orb.Point{b.Min[0] + (float64(col)+0.5)*(b.Max[0]-b.Min[0])/float64(n), lat}
			if !inAny(p, areaPlaced) {
				continue
			}
			total += w
			if inAny(p, itemsPlaced) {
				covered += w
			}
		}
	}
	return 100 * covered / total
}

func mustBBox(t testing.TB, b ...float64) Shape {
	t.Helper()
	s, err := FromBBox(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCoverageOfRealFootprintsMatchesRasterisedArea measures real recorded
// footprints from the demo catalog and checks every percentage against the
// rasterised computation within 0.5 percentage points.
func TestCoverageOfRealFootprintsMatchesRasterisedArea(t *testing.T) {
	cases := []struct {
		name       string
		collection string
		prefix     string
		area       []float64
		wantMin    float64 // coverage expected at least (sanity, beyond the cross-check)
		wantMax    float64
	}{
		{"NAIP Vermont, inside the quarter quads", "naip", "m_4", []float64{-73.25, 43.95, -73.06, 44.05}, 99.99, 100},
		{"NAIP Vermont, wider than the data", "naip", "m_4", []float64{-73.3, 43.9, -73.0, 44.1}, 40, 60},
		{"Sentinel-2 L2A, Ceará", "sentinel-2-l2a", "S2B_24M", []float64{-40.5, -5.3, -37.5, -3.5}, 20, 40},
		{"Sentinel-2 L1C, Black Sea coast (SAGE)", "sentinel-2-l1c", "S2C", []float64{29.0, 44.0, 32.0, 48.0}, 30, 70},
		{"Sentinel-2 Bering Sea MultiPolygons", "sentinel2_l1c", "", []float64{168.0, 57.8, 174.0, 59.3}, 50, 95},
		{"Copernicus DEM tiles at the South Pole", "cop-dem-glo-30", "", []float64{-180, -90, -170, -89}, 99.9, 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items := demoItems(t, c.collection, c.prefix)
			area := mustBBox(t, c.area...)
			r, err := Measure(context.Background(), area, items, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := rasterCoverage(area, items, 500)
			if math.Abs(r.CoveredPercent-want) > 0.5 {
				t.Errorf("covered %.3f%%, rasterised %.3f%%: more than 0.5 points apart", r.CoveredPercent, want)
			}
			if r.CoveredPercent < c.wantMin || r.CoveredPercent > c.wantMax {
				t.Errorf("covered %.3f%%, want %.1f..%.1f", r.CoveredPercent, c.wantMin, c.wantMax)
			}
			if got := CellAreaKm2(c.area[0], c.area[1], c.area[2], c.area[3]); math.Abs(r.AreaKm2-got) > 1e-6*got {
				t.Errorf("area of the bbox = %.3f km², closed form %.3f km²", r.AreaKm2, got)
			}
			// Every window's union is one subset of the items: never more than all of them.
			for _, w := range r.Windows {
				sub := itemsIn(items, w)
				if got := rasterCoverage(area, sub, 200); math.Abs(w.CoveredPercent-got) > 1.0 {
					t.Errorf("window %s: %.3f%%, rasterised %.3f%%", w.Start.Format(time.DateOnly), w.CoveredPercent, got)
				}
				if w.CoveredPercent > r.CoveredPercent+1e-9 {
					t.Errorf("window %s covers %.3f%%, more than all items together (%.3f%%)", w.Start.Format(time.DateOnly), w.CoveredPercent, r.CoveredPercent)
				}
			}
			// The greedy selection alone covers what it claims.
			picked := map[string]bool{}
			for _, p := range r.Greedy {
				picked[p.ID] = true
			}
			var sel []Item
			for _, it := range items {
				if picked[it.ID] {
					sel = append(sel, it)
				}
			}
			if got := rasterCoverage(area, sel, 200); math.Abs(r.GreedyPercent-got) > 1.0 {
				t.Errorf("greedy set claims %.3f%%, rasterised %.3f%%", r.GreedyPercent, got)
			}
			if r.GreedyPercent+1e-3 < min(95, r.CoveredPercent) {
				t.Errorf("greedy stopped at %.3f%%, below min(target 95, all %.3f)", r.GreedyPercent, r.CoveredPercent)
			}
			t.Logf("%.3f%% covered (raster %.3f%%), %d windows, greedy %d of %d items → %.2f%%, uncovered bbox %v",
				r.CoveredPercent, want, len(r.Windows), len(r.Greedy), len(items), r.GreedyPercent, r.UncoveredBBox)
		})
	}
}

func itemsIn(items []Item, w Window) []Item {
	var out []Item
	for _, it := range items {
		day := it.Time.UTC().Truncate(24 * time.Hour)
		if !it.Time.IsZero() && !day.Before(w.Start) && !day.After(w.End) {
			out = append(out, it)
		}
	}
	return out
}

func TestEllipsoidAreas(t *testing.T) {
	// WGS 84's surface area is 510 065 621.7 km²; a 1°×1° cell at the
	// equator is 12 308.8 km², one at 60°N about 6 198 km².
	if got := CellAreaKm2(-180, -90, 180, 90); math.Abs(got-510065621.7) > 1 {
		t.Errorf("whole ellipsoid = %.1f km², want 510065621.7", got)
	}
	if got := CellAreaKm2(0, 0, 1, 1); math.Abs(got-12308.8) > 0.5 {
		t.Errorf("1° cell at the equator = %.1f km², want 12308.8", got)
	}
	s := mustBBox(t, 10, 60, 11, 61)
	g, _, err := toGeom(s.Polygons)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := AreaKm2(g), CellAreaKm2(10, 60, 11, 61); math.Abs(got-want) > 1e-6*want || want < 6000 || want > 6300 {
		t.Errorf("1° cell at 60°N: AreaKm2 %.3f, closed form %.3f", got, want)
	}
}

func TestAntimeridianFootprintsInEveryForm(t *testing.T) {
	// The same 2°×1° footprint from 179°E to 179°W, written three ways:
	// continuous past 180, split at the antimeridian (RFC 7946), and as a
	// ring that jumps from 179 to -179.
	forms := map[string]string{
		"continuous": `{"type":"Polygon","coordinates":[[[179,0],[181,0],[181,1],[179,1],[179,0]]]}`,
		"split":      `{"type":"MultiPolygon","coordinates":[[[[179,0],[180,0],[180,1],[179,1],[179,0]]],[[[-180,0],[-179,0],[-179,1],[-180,1],[-180,0]]]]}`,
		"jumping":    `{"type":"Polygon","coordinates":[[[179,0],[-179,0],[-179,1],[179,1],[179,0]]]}`,
	}
	areas := map[string][]float64{
		"across the antimeridian": {178.5, 0, -178.5, 1},
		"east of it":              {-180, 0, -178, 1},
		"west of it":              {178, 0, 180, 1},
	}
	want := map[string]float64{"across the antimeridian": 200.0 / 3, "east of it": 50, "west of it": 50}
	for form, geometry := range forms {
		shape, err := Parse(json.RawMessage(geometry), nil)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		for name, bbox := range areas {
			r, err := Measure(context.Background(), mustBBox(t, bbox...), []Item{{ID: form, Shape: shape}}, Options{})
			if err != nil {
				t.Fatalf("%s / %s: %v", form, name, err)
			}
			if math.Abs(r.CoveredPercent-want[name]) > 0.01 {
				t.Errorf("%s footprint, area %s: %.3f%%, want %.3f%%", form, name, r.CoveredPercent, want[name])
			}
		}
	}
	// The uncovered part of an area across the antimeridian is reported as
	// a bbox across it (west > east).
	shape, _ := Parse(json.RawMessage(forms["split"]), nil)
	r, err := Measure(context.Background(), mustBBox(t, 178, 0, -170, 1), []Item{{ID: "x", Shape: shape}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b := r.UncoveredBBox; len(b) != 4 || b[0] != 178 || b[2] != -170 {
		t.Errorf("uncovered bbox = %v, want [178 0 -170 1]", b)
	}
}

func TestPolarFootprints(t *testing.T) {
	// A polar cap written the way lon/lat can hold it (cut along the pole
	// line) is measured; a ring that circles the pole without reaching it
	// is refused with a clear error.
	capRing := `{"type":"Polygon","coordinates":[[[-180,80],[-90,80],[0,80],[90,80],[180,80],[180,90],[-180,90],[-180,80]]]}`
	s, err := Parse(json.RawMessage(capRing), nil)
	if err != nil {
		t.Fatalf("polar cap cut at the pole: %v", err)
	}
	r, err := Measure(context.Background(), mustBBox(t, 10, 85, 20, 90), []Item{{ID: "cap", Shape: s}}, Options{})
	if err != nil || math.Abs(r.CoveredPercent-100) > 1e-6 {
		t.Fatalf("polar cap over an area near the pole: %v, %v", r, err)
	}
	circling := `{"type":"Polygon","coordinates":[[[-180,80],[-90,80],[0,80],[90,80],[180,80]]]}`
	if _, err := Parse(json.RawMessage(circling), nil); !errors.Is(err, ErrEncirclesPole) {
		t.Errorf("ring circling the pole: err = %v, want ErrEncirclesPole", err)
	}
}

func TestGreedyPicksFewestAndCloudWeighting(t *testing.T) {
	// Area 0..4 × 0..1 (near the equator). "big" covers 0..3, "left" 0..2,
	// "right" 2..4: greedy must take big then right (2 items, 100 %), never
	// left. Clouds: big 50 %, right 0 %, left 10 %.
	cc := func(f float64) *float64 { return &f }
	box := func(id string, w, e float64, cloud *float64) Item {
		return Item{ID: id, Shape: mustBBox(t, w, 0, e, 1), CloudCover: cloud, Time: time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC)}
	}
	items := []Item{box("left", 0, 2, cc(10)), box("big", 0, 3, cc(50)), box("right", 2, 4, cc(0))}
	r, err := Measure(context.Background(), mustBBox(t, 0, 0, 4, 1), items, Options{TargetPercent: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range r.Greedy {
		ids = append(ids, p.ID)
	}
	if fmt.Sprint(ids) != "[big right]" || math.Abs(r.GreedyPercent-100) > 1e-6 {
		t.Errorf("greedy = %v reaching %.3f%%, want [big right] reaching 100%%", ids, r.GreedyPercent)
	}
	// Cloud-weighted: right (clear) covers 2..4 → 50 % × 1.0; left (10 %)
	// adds 0..2 → 50 % × 0.9; big adds nothing new. 50 + 45 = 95 %.
	if r.CloudWeightedPercent == nil || math.Abs(*r.CloudWeightedPercent-95) > 0.01 || r.CloudItems != 3 {
		t.Errorf("cloud-weighted = %v over %d items, want 95 %% over 3", r.CloudWeightedPercent, r.CloudItems)
	}
	if len(r.Windows) != 1 || r.Windows[0].Items != 3 || math.Abs(r.Windows[0].CoveredPercent-100) > 1e-6 {
		t.Errorf("windows = %+v, want one day with 3 items at 100 %%", r.Windows)
	}
	if r.UncoveredBBox != nil {
		t.Errorf("uncovered bbox = %v, want none", r.UncoveredBBox)
	}
}

func TestWindowsGroupByDays(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 6, d, 12, 0, 0, 0, time.UTC) }
	items := []Item{
		{ID: "a", Shape: mustBBox(t, 0, 0, 1, 1), Time: day(1)},
		{ID: "b", Shape: mustBBox(t, 1, 0, 2, 1), Time: day(3)},
		{ID: "c", Shape: mustBBox(t, 0, 0, 2, 1), Time: day(9)},
		{ID: "undated", Shape: mustBBox(t, 0, 0, 2, 1)},
	}
	r, err := Measure(context.Background(), mustBBox(t, 0, 0, 2, 1), items, Options{WindowDays: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Windows) != 2 {
		t.Fatalf("windows = %+v, want 2 (June 1–7, June 8–14)", r.Windows)
	}
	w0, w1 := r.Windows[0], r.Windows[1]
	if w0.Start != day(1).Truncate(24*time.Hour) || w0.End != day(7).Truncate(24*time.Hour) || w0.Items != 2 || math.Abs(w0.CoveredPercent-100) > 0.01 {
		t.Errorf("first window = %+v", w0)
	}
	if w1.Items != 1 || w1.Start != day(8).Truncate(24*time.Hour) {
		t.Errorf("second window = %+v", w1)
	}
}

func TestItemsOutsideAndInvalidFootprints(t *testing.T) {
	bowtie := `{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}`
	s, err := Parse(json.RawMessage(bowtie), nil)
	if err != nil {
		t.Fatal(err)
	}
	items := []Item{{ID: "bowtie", Shape: s}, {ID: "far", Shape: mustBBox(t, 50, 50, 51, 51)}}
	r, err := Measure(context.Background(), mustBBox(t, 0, 0, 2, 1), items, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(r.BBoxFallback) != "[bowtie]" || fmt.Sprint(r.Outside) != "[far]" || r.Touching != 1 {
		t.Errorf("fallback %v, outside %v, touching %d", r.BBoxFallback, r.Outside, r.Touching)
	}
	if math.Abs(r.CoveredPercent-50) > 0.01 {
		t.Errorf("covered %.3f%%, want 50 (the bow tie's bounding box)", r.CoveredPercent)
	}
	if _, err := Parse(json.RawMessage(`{"type":"Point","coordinates":[0,0]}`), nil); !errors.Is(err, ErrNoArea) {
		t.Errorf("point without bbox: %v, want ErrNoArea", err)
	}
	if s, err := Parse(json.RawMessage(`{"type":"Point","coordinates":[0,0]}`), []float64{0, 0, 1, 1}); err != nil || !s.FromBBox {
		t.Errorf("point with bbox: %+v, %v; want the bbox", s, err)
	}
}

func TestMeasureRefusesAnInvalidAreaAndStopsWithItsContext(t *testing.T) {
	bowtie, err := Parse(json.RawMessage(`{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(context.Background(), bowtie, nil, Options{}); err == nil || !strings.Contains(err.Error(), "not a valid polygon") {
		t.Errorf("self-intersecting area: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, mustBBox(t, -60, -10, -44, -2), syntheticFootprints(50, 1), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

// BenchmarkMeasure1000Footprints is the coverage benchmark: 1000
// Sentinel-2-sized footprints (1°, slightly rotated, over a 20×10° area, on
// 25 days, with cloud cover) measured against a 16×8° area of interest.
func BenchmarkMeasure1000Footprints(b *testing.B) {
	items := syntheticFootprints(1000, 42)
	area := mustBBox(b, -60, -10, -44, -2)
	var r *Report
	for b.Loop() {
		var err error
		if r, err = Measure(context.Background(), area, items, Options{WindowDays: 5}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(items)), "footprints")
	b.ReportMetric(r.CoveredPercent, "covered-%")
	b.ReportMetric(float64(len(r.Greedy)), "greedy-items")
}

// syntheticFootprints makes n tile-like footprints: rotated 1° squares on
// a jittered grid, with dates and cloud cover.
func syntheticFootprints(n int, seed uint64) []Item {
	r := rand.New(rand.NewPCG(seed, seed))
	items := make([]Item, n)
	for i := range items {
		cx, cy := -62+20*r.Float64(), -12+10*r.Float64()
		a := 0.2 * (r.Float64() - 0.5)
		ring := orb.Ring{}
		for _, c := range [][2]float64{{-0.5, -0.5}, {0.5, -0.5}, {0.5, 0.5}, {-0.5, 0.5}, {-0.5, -0.5}} {
			ring = append(ring, orb.Point{cx + c[0]*math.Cos(a) - c[1]*math.Sin(a), cy + c[0]*math.Sin(a) + c[1]*math.Cos(a)})
		}
		cc := 100 * r.Float64()
		items[i] = Item{ID: fmt.Sprintf("tile-%04d", i), Shape: Shape{Polygons: orb.MultiPolygon{{ring}}},
			Time: time.Date(2024, 6, 1+r.IntN(25), 13, 0, 0, 0, time.UTC), CloudCover: &cc}
	}
	return items
}

// TestGreedyPrefersClearScenesOfAboutTheSameGain: Groningen on
// landsat-8-c2-l2: two scenes cover the whole area, one 72.3 %
// cloudy with the smaller id, one 0.99 % cloudy. The smallest set takes the
// clear one, also when it covers a little less (within TiePercent of the
// area); the cloud-weighted figure names the items behind it.
func TestGreedyPrefersClearScenesOfAboutTheSameGain(t *testing.T) {
	cc := func(f float64) *float64 { return &f }
	box := func(id string, w, e float64, cloud *float64) Item {
		return Item{ID: id, Shape: mustBBox(t, w, 0, e, 1), CloudCover: cloud, Time: time.Date(2024, 6, 1, 10, 0, 0, 0, time.UTC)}
	}
	for _, c := range []struct {
		name  string
		clear Item
	}{
		{"same footprint", box("LC08_198023_clear", 0, 4, cc(0.99))},
		{"a little less", box("LC08_198023_clear", 0.02, 4, cc(0.99))}, // 99.5 %
	} {
		items := []Item{box("LC08_197023_cloudy", 0, 4, cc(72.3)), c.clear, box("LC08_199023_half", 2, 4, cc(20))}
		r, err := Measure(context.Background(), mustBBox(t, 0, 0, 4, 1), items, Options{TargetPercent: 95})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Greedy) != 1 || r.Greedy[0].ID != "LC08_198023_clear" {
			t.Errorf("%s: greedy = %+v, want the 0.99 %% cloudy scene alone", c.name, r.Greedy)
		}
		if len(r.CloudSources) == 0 || r.CloudSources[0].ID != "LC08_198023_clear" || r.CloudSources[0].Percent < 99 {
			t.Errorf("%s: cloud-weighted sources = %+v, want LC08_198023_clear over 99 %% or more first", c.name, r.CloudSources)
		}
		for _, s := range r.CloudSources {
			if s.ID == "LC08_199023_half" {
				t.Errorf("%s: %s is behind no point of the figure (a clearer scene covers it): %+v", c.name, s.ID, r.CloudSources)
			}
		}
	}
}
