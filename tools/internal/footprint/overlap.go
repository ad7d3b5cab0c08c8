package footprint

import (
	"errors"
	"fmt"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"
)

// Area is an area of interest ready to measure footprints against, once
// for many footprints: check_coverage's report (Measure), each search_items
// summary's share of the requested area, and the fraction of an item that
// estimate_data_size counts all go through it, so every tool gives the same
// answer for the same footprint and area.
type Area struct {
	geom  geom.Geometry
	bound orb.Bound
	km2   float64
}

// ErrZeroArea is an area of interest that measures nothing.
var ErrZeroArea = errors.New("it measures no area")

// NewArea prepares a valid shape (Shape.Valid) with a positive area.
func NewArea(s Shape) (*Area, error) {
	if err := s.Valid(); err != nil {
		return nil, err
	}
	if err := checkVertices("the area", s); err != nil {
		return nil, err
	}
	g, _, err := toGeom(s.Polygons)
	if err != nil {
		return nil, err
	}
	a := &Area{geom: g, bound: s.Bound(), km2: AreaKm2(g)}
	if a.km2 <= 0 {
		return nil, ErrZeroArea
	}
	return a, nil
}

// Km2 is the area's size on the ellipsoid.
func (a *Area) Km2() float64 { return a.km2 }

// Overlap is how a footprint meets an area.
type Overlap struct {
	Km2 float64 // of the footprint inside the area
	// AreaPercent is the share of the area inside the footprint (0–100).
	AreaPercent float64
	// FootprintFraction is the share of the footprint inside the area
	// (0–1; 0 for a footprint without area).
	FootprintFraction float64
	// BBoxFallback is true when the footprint was not a valid polygon and
	// its bounding box was measured instead.
	BBoxFallback bool
}

// Overlap measures s against the area. s may be written on either side of
// the antimeridian: it is tried at its own longitudes and one turn either
// way.
func (a *Area) Overlap(s Shape) (Overlap, error) {
	if err := checkVertices("the footprint", s); err != nil {
		return Overlap{}, err
	}
	in, fallback, err := a.clip(s)
	if err != nil {
		return Overlap{}, err
	}
	o := Overlap{Km2: AreaKm2(in), BBoxFallback: fallback}
	o.AreaPercent = min(100, 100*o.Km2/a.km2)
	if o.Km2 > 0 {
		whole, _, err := toGeom(s.Polygons)
		if err != nil {
			return Overlap{}, err
		}
		if km2 := AreaKm2(whole); km2 > 0 {
			o.FootprintFraction = min(1, o.Km2/km2)
		}
	}
	return o, nil
}

// clip is the part of s inside the area.
func (a *Area) clip(s Shape) (geom.Geometry, bool, error) {
	var parts []geom.Geometry
	fallback := false
	for _, p := range s.Polygons {
		for _, dx := range []float64{-360, 0, 360} {
			q := shiftPolygon(p, dx)
			if !q.Bound().Intersects(a.bound) {
				continue
			}
			g, fb, err := toGeom(orb.MultiPolygon{q})
			if err != nil {
				return geom.Geometry{}, false, err
			}
			fallback = fallback || fb
			in, err := geom.Intersection(g, a.geom)
			if err != nil {
				return geom.Geometry{}, false, fmt.Errorf("intersecting with the area: %w", err)
			}
			if !in.IsEmpty() {
				parts = append(parts, in)
			}
		}
	}
	switch len(parts) {
	case 0:
		return geom.Geometry{}, fallback, nil
	case 1:
		return parts[0], fallback, nil
	}
	u, err := geom.UnionMany(parts)
	if err != nil {
		return geom.Geometry{}, false, fmt.Errorf("joining the footprint's parts: %w", err)
	}
	return u, fallback, nil
}
