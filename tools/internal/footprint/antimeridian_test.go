package footprint

import (
	"context"
	"encoding/json"
	"math"
	"testing"
)

// Shapes that reach the antimeridian
// from both sides, written as RFC 7946 §3.1.9 says (cut at ±180).
func TestFootprintsSpanning360(t *testing.T) {
	const (
		global = `{"type":"Polygon","coordinates":[[[-180,-90],[180,-90],[180,90],[-180,90],[-180,-90]]]}`
		band   = `{"type":"Polygon","coordinates":[[[-180,-10],[180,-10],[180,10],[-180,10],[-180,-10]]]}`
		cap    = `{"type":"Polygon","coordinates":[[[-180,60],[180,60],[180,90],[-180,90],[-180,60]]]}`
	)
	parse := func(s string) Shape {
		t.Helper()
		sh, err := Parse(json.RawMessage(s), nil)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return sh
	}
	for _, c := range []struct {
		name, item string
		area       Shape
	}{
		{"global item, area near Greenwich", global, mustBBox(t, 10, 40, 11, 41)},
		{"global item, area across the antimeridian", global, mustBBox(t, 170, -10, -170, 10)},
		{"global item, area at the pole", global, mustBBox(t, -180, 80, 180, 90)},
		{"band item, area on the equator", band, mustBBox(t, -5, -5, 5, 5)},
		{"band item, area across the antimeridian", band, mustBBox(t, 175, -5, -175, 5)},
		{"cap item, area near the pole", cap, mustBBox(t, 100, 70, 120, 80)},
	} {
		r, err := Measure(context.Background(), c.area, []Item{{ID: "x", Shape: parse(c.item)}}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(r.CoveredPercent-100) > 1e-6 || len(r.Outside) != 0 {
			t.Errorf("%s: %.6f%% covered, outside %v; want 100%%", c.name, r.CoveredPercent, r.Outside)
		}
	}

	// As areas of interest: valid, and as large as the same bbox (closed form).
	for _, c := range []struct {
		name, area string
		bbox       [4]float64
	}{
		{"global", global, [4]float64{-180, -90, 180, 90}},
		{"band", band, [4]float64{-180, -10, 180, 10}},
		{"polar cap", cap, [4]float64{-180, 60, 180, 90}},
	} {
		s, err := ParseArea(json.RawMessage(c.area))
		if err == nil {
			err = s.Valid()
		}
		if err != nil {
			t.Fatalf("%s area refused: %v", c.name, err)
		}
		a, err := NewArea(s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := CellAreaKm2(c.bbox[0], c.bbox[1], c.bbox[2], c.bbox[3])
		if math.Abs(a.km2-want)/want > 1e-6 {
			t.Errorf("%s area: %.3f km², want %.3f", c.name, a.km2, want)
		}
		// The same area given as a bbox measures an item the same.
		item := []Item{{ID: "i", Shape: mustBBox(t, 100, 0, 130, 89)}}
		r1, err1 := Measure(context.Background(), s, item, Options{})
		r2, err2 := Measure(context.Background(), mustBBox(t, c.bbox[:]...), item, Options{})
		if err1 != nil || err2 != nil || math.Abs(r1.CoveredPercent-r2.CoveredPercent) > 1e-4 {
			t.Errorf("%s: polygon %v %v, bbox %v %v", c.name, r1, err1, r2, err2)
		}
	}
}

// An area written across the antimeridian is cut into one piece on each
// side before a catalog is searched with it (RFC 7946 §3.1.9).
func TestSplitAtAntimeridian(t *testing.T) {
	s, err := ParseArea(json.RawMessage(`{"type":"Polygon","coordinates":[[[170,0],[-170,0],[-170,10],[170,10],[170,0]]]}`))
	if err != nil {
		t.Fatal(err)
	}
	mp, changed, err := s.SplitAtAntimeridian()
	if err != nil || !changed || len(mp) != 2 {
		t.Fatalf("split = %v, changed %v, %v; want two pieces", mp, changed, err)
	}
	east, west := mp[0].Bound(), mp[1].Bound()
	if east.Min[0] > west.Min[0] {
		east, west = west, east
	}
	if east.Min[0] != -180 || east.Max[0] != -170 || west.Min[0] != 170 || west.Max[0] != 180 {
		t.Errorf("pieces %v and %v, want [-180,-170] and [170,180]", east, west)
	}
	// Already within [-180, 180]: unchanged (a global footprint too).
	for _, g := range []string{
		`{"type":"Polygon","coordinates":[[[10,0],[20,0],[20,10],[10,10],[10,0]]]}`,
		`{"type":"Polygon","coordinates":[[[-180,-90],[180,-90],[180,90],[-180,90],[-180,-90]]]}`,
	} {
		s, err := ParseArea(json.RawMessage(g))
		if err != nil {
			t.Fatal(err)
		}
		if _, changed, err := s.SplitAtAntimeridian(); changed || err != nil {
			t.Errorf("%s: changed %v, %v", g, changed, err)
		}
	}
}
