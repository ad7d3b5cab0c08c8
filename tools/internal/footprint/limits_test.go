package footprint

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

// circle is a polygon of n vertices (plus the closing one) round (cx, cy).
func circle(cx, cy, r float64, n int) Shape {
	ring := make(orb.Ring, 0, n+1)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		ring = append(ring, orb.Point{cx + r*math.Cos(a), cy + r*math.Sin(a)})
	}
	ring = append(ring, ring[0])
	return Shape{Polygons: orb.MultiPolygon{{ring}}}
}

// Footprints of thousands of vertices each (100 × 4,000 took
// 353 s of CPU) are refused before any set operation, with the limit named.
func TestMeasureRefusesMoreVerticesThanTheLimit(t *testing.T) {
	area, err := FromBBox([]float64{0, 0, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	var items []Item
	for i := range 13 {
		items = append(items, Item{ID: string(rune('a' + i)), Shape: circle(1, 1, 0.5, 3999)})
	}
	_, err = Measure(context.Background(), area, items, Options{})
	var vl *VertexLimitError
	if !errors.As(err, &vl) || vl.Limit != MaxVertices || vl.Vertices != 5+13*4000 {
		t.Fatalf("err = %v, want a VertexLimitError for %d vertices", err, 5+13*4000)
	}
	for _, want := range []string{"13 footprint(s)", "52005 vertices", "50000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	// Just under the limit is measured.
	if _, err := Measure(context.Background(), area, items[:1], Options{}); err != nil {
		t.Fatalf("one footprint of 4000 vertices: %v", err)
	}
}

func TestAreaAndOverlapRefuseMoreVerticesThanTheLimit(t *testing.T) {
	huge := circle(1, 1, 0.5, MaxVertices)
	var vl *VertexLimitError
	if _, err := NewArea(huge); !errors.As(err, &vl) {
		t.Fatalf("NewArea: err = %v, want a VertexLimitError", err)
	}
	area, err := NewArea(circle(1, 1, 1, 64))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := area.Overlap(huge); !errors.As(err, &vl) {
		t.Fatalf("Overlap: err = %v, want a VertexLimitError", err)
	}
}

// A call that ended is not measured: the work stops with its context's
// error instead of running on after the deadline.
func TestMeasureStopsWhenTheContextEnded(t *testing.T) {
	area, _ := FromBBox([]float64{0, 0, 2, 2})
	items := []Item{{ID: "a", Shape: circle(1, 1, 0.5, 400)}, {ID: "b", Shape: circle(1.2, 1, 0.5, 400)}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := Measure(ctx, area, items, Options{}); !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("Measure after cancel = %v, %v; want no report and context.Canceled", r, err)
	}
}
