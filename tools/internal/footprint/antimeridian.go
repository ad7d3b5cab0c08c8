package footprint

import (
	"fmt"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
	"github.com/peterstace/simplefeatures/geom"
)

// cutForm reports whether a ring is written the way RFC 7946 §3.1.9
// prescribes for a shape that reaches the antimeridian from both sides: a
// global footprint [-180,-90]…[180,90], a band round the globe, a polar
// cap, whose rings run along a whole parallel from -180 to 180. Such a
// ring has an edge from exactly -180 to exactly 180 (the two ends are one
// meridian, so unwrapping turns the edge into nothing and the shape into
// a sliver of no area: a global item would measure 0 %). It is read
// as written when, so read, it encloses an area; a ring that only circles
// a pole along one parallel encloses none and is left to unwrapRing.
func cutForm(r orb.Ring) bool {
	fullParallel := false
	for i, p := range r {
		if p[0] < -180 || p[0] > 180 {
			return false // written past ±180: the continuous form
		}
		if i > 0 && (p[0] == 180 && r[i-1][0] == -180 || p[0] == -180 && r[i-1][0] == 180) {
			fullParallel = true
		}
	}
	if !fullParallel {
		return false
	}
	closed := r
	if closed[0] != closed[len(closed)-1] {
		closed = append(append(orb.Ring{}, r...), r[0])
	}
	return planar.Area(closed) != 0
}

// world is the longitude/latitude range a GeoJSON coordinate lies in.
var world = sfPolygon(orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}}.ToPolygon()).AsGeometry()

// SplitAtAntimeridian writes the shape as GeoJSON needs it (RFC 7946
// §3.1.9): longitudes within [-180, 180], a polygon that crosses the
// antimeridian cut into one piece on each side. A catalog reads a polygon
// literally, so the continuous form (longitudes past ±180) or one written
// across ±180 with a jump of 360° would be searched the long way round.
// changed is false when every polygon already lies within [-180, 180].
func (s Shape) SplitAtAntimeridian() (mp orb.MultiPolygon, changed bool, err error) {
	b := s.Bound()
	if b.Min[0] >= -180 && b.Max[0] <= 180 {
		return s.Polygons, false, nil
	}
	for _, p := range s.Polygons {
		for _, dx := range []float64{-360, 0, 360} {
			q := shiftPolygon(p, dx)
			if qb := q.Bound(); qb.Max[0] <= -180 || qb.Min[0] >= 180 {
				continue
			}
			g, _, err := toGeom(orb.MultiPolygon{q})
			if err != nil {
				return nil, false, err
			}
			in, err := geom.Intersection(g, world)
			if err != nil {
				return nil, false, fmt.Errorf("cutting at the antimeridian: %w", err)
			}
			for _, part := range in.Dump() {
				if poly, ok := part.AsPolygon(); ok && !poly.IsEmpty() {
					mp = append(mp, orbPolygon(poly))
				}
			}
		}
	}
	return mp, true, nil
}

func orbPolygon(p geom.Polygon) orb.Polygon {
	rings := p.DumpRings()
	out := make(orb.Polygon, len(rings))
	for i, r := range rings {
		seq := r.Coordinates()
		ring := make(orb.Ring, seq.Length())
		for j := range ring {
			xy := seq.GetXY(j)
			ring[j] = orb.Point{xy.X, xy.Y}
		}
		out[i] = ring
	}
	return out
}
