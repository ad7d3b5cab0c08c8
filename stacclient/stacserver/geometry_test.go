package stacserver

import (
	"testing"

	"github.com/paulmach/orb"
)

func TestShapeIntersects(t *testing.T) {
	square := orb.Polygon{{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}}}
	withHole := orb.Polygon{
		{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}},
		{{3, 3}, {7, 3}, {7, 7}, {3, 7}, {3, 3}},
	}
	cases := []struct {
		name string
		a, b orb.Geometry
		want bool
	}{
		{"point inside polygon", orb.Point{5, 5}, square, true},
		{"point on polygon edge", orb.Point{10, 5}, square, true},
		{"point outside polygon", orb.Point{11, 5}, square, false},
		{"point in a hole", orb.Point{5, 5}, withHole, false},
		{"polygon inside a hole", orb.Polygon{{{4, 4}, {6, 4}, {6, 6}, {4, 6}, {4, 4}}}, withHole, false},
		{"polygon straddling a hole's edge", orb.Polygon{{{2, 4}, {4, 4}, {4, 6}, {2, 6}, {2, 4}}}, withHole, true},
		{"polygon containing another", orb.Polygon{{{-1, -1}, {11, -1}, {11, 11}, {-1, 11}, {-1, -1}}}, square, true},
		{"polygons crossing with no vertex inside", orb.Polygon{{{4, -5}, {6, -5}, {6, 15}, {4, 15}, {4, -5}}}, square, true},
		{"polygons touching at a corner", orb.Polygon{{{10, 10}, {12, 10}, {12, 12}, {10, 12}, {10, 10}}}, square, true},
		{"disjoint polygons", orb.Polygon{{{20, 20}, {22, 20}, {22, 22}, {20, 22}, {20, 20}}}, square, false},
		{"line crossing polygon", orb.LineString{{-5, 5}, {15, 5}}, square, true},
		{"line inside polygon", orb.LineString{{2, 2}, {3, 3}}, square, true},
		{"line outside polygon, bounds overlap", orb.LineString{{-1, 5}, {5, 11.5}}, orb.Polygon{{{0, 0}, {10, 0}, {10, 10}, {0, 0}}}, false},
		{"crossing lines", orb.LineString{{0, 0}, {2, 2}}, orb.LineString{{0, 2}, {2, 0}}, true},
		{"parallel lines", orb.LineString{{0, 0}, {2, 0}}, orb.LineString{{0, 1}, {2, 1}}, false},
		{"collinear overlapping lines", orb.LineString{{0, 0}, {2, 0}}, orb.LineString{{1, 0}, {3, 0}}, true},
		{"collinear disjoint lines", orb.LineString{{0, 0}, {1, 0}}, orb.LineString{{2, 0}, {3, 0}}, false},
		{"point on line", orb.Point{1, 1}, orb.LineString{{0, 0}, {2, 2}}, true},
		{"equal points", orb.Point{1, 1}, orb.Point{1, 1}, true},
		{"multipoint one inside", orb.MultiPoint{{20, 20}, {5, 5}}, square, true},
		{"multipolygon one part", orb.MultiPolygon{{{{20, 20}, {22, 20}, {22, 22}, {20, 20}}}, {{{9, 9}, {12, 9}, {12, 12}, {9, 9}}}}, square, true},
		{"collection", orb.Collection{orb.Point{50, 50}, orb.LineString{{-5, 5}, {15, 5}}}, square, true},
		{"bound", orb.Bound{Min: orb.Point{9, 9}, Max: orb.Point{20, 20}}, square, true},
	}
	for _, c := range cases {
		a, b := newShape(c.a), newShape(c.b)
		if got := a.intersects(b); got != c.want {
			t.Errorf("%s: intersects = %v, want %v", c.name, got, c.want)
		}
		if got := b.intersects(a); got != c.want {
			t.Errorf("%s (swapped): intersects = %v, want %v", c.name, got, c.want)
		}
	}
	var none *shape
	if none.intersects(newShape(square)) {
		t.Errorf("a missing geometry intersects nothing")
	}
}

func TestAntimeridianBBoxSplits(t *testing.T) {
	shapes := shapesFromBBox([]float64{170, -10, -170, 10})
	if len(shapes) != 2 {
		t.Fatalf("want two halves, got %d", len(shapes))
	}
	hit := func(p orb.Point) bool {
		for _, s := range shapes {
			if s.intersects(newShape(p)) {
				return true
			}
		}
		return false
	}
	for p, want := range map[orb.Point]bool{{175, 0}: true, {-175, 0}: true, {180, 0}: true, {0, 0}: false, {175, 20}: false} {
		if hit(p) != want {
			t.Errorf("point %v: hit %v, want %v", p, !want, want)
		}
	}
	if len(shapesFromBBox([]float64{-10, -10, 0, 10, 10, 100})) != 1 {
		t.Errorf("a 3D bbox that does not cross should stay whole")
	}
}
