package tools

import (
	"encoding/json"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/clip"
	"github.com/paulmach/orb/geojson"
	"github.com/paulmach/orb/planar"
)

// Coverage: the fraction of an item's footprint inside the requested area,
// used to scale the bytes of raster assets (a reader of a cloud-optimised
// raster fetches roughly the tiles it needs).
//
// How it is computed, planar in lon/lat degrees (a ratio of areas, so the
// distortion largely cancels for item-sized footprints):
//   - the footprint is the item's geometry (Polygon or MultiPolygon), else
//     its bbox;
//   - for a bbox, the footprint is clipped to the rectangle(s) with orb/clip
//     (a bbox crossing the antimeridian is split in two): exact;
//   - for an intersects Polygon or MultiPolygon whose parts are convex
//     without holes, each footprint ring is clipped against each part with a
//     Sutherland–Hodgman step (clipRingConvex): exact;
//   - for any other intersects geometry (concave, with holes, points, lines)
//     the geometry's bounding rectangle is used, so the fraction is an upper
//     bound, and the output says so.
// The fraction is area(footprint ∩ area) / area(footprint), in [0, 1].

// aoi is the requested area: convex polygons, or rectangles.
type aoi struct {
	bounds []orb.Bound // used when convex is empty
	convex []orb.Ring  // counter-clockwise convex rings, when the area is made of them
	exact  bool        // false when the rectangles only bound the requested shape
}

// aoiFromBBox is the area of a bbox (split at the antimeridian).
func aoiFromBBox(b []float64) aoi { return aoi{bounds: bboxBounds(b), exact: true} }

// aoiFromGeometry reads an intersects geometry: exact when it is made of
// convex polygons, else its bounding rectangle.
func aoiFromGeometry(raw json.RawMessage) (aoi, bool) {
	g, err := geojson.UnmarshalGeometry(raw)
	if err != nil || g.Geometry() == nil {
		return aoi{}, false
	}
	geom := g.Geometry()
	if rings, ok := convexParts(geom); ok {
		return aoi{convex: rings, exact: true}, true
	}
	return aoi{bounds: []orb.Bound{geom.Bound()}, exact: false}, true
}

// convexParts returns the rings of a Polygon or MultiPolygon whose every
// part is a convex ring without holes, oriented counter-clockwise.
func convexParts(g orb.Geometry) ([]orb.Ring, bool) {
	var polys []orb.Polygon
	switch x := g.(type) {
	case orb.Polygon:
		polys = []orb.Polygon{x}
	case orb.MultiPolygon:
		polys = x
	default:
		return nil, false
	}
	var rings []orb.Ring
	for _, p := range polys {
		if len(p) != 1 || !isConvex(p[0]) {
			return nil, false
		}
		r := p[0].Clone()
		if r.Orientation() == orb.CW {
			r.Reverse()
		}
		rings = append(rings, r)
	}
	return rings, len(rings) > 0
}

// isConvex reports whether a closed ring turns the same way at every vertex.
func isConvex(r orb.Ring) bool {
	pts := openRing(r)
	if len(pts) < 3 {
		return false
	}
	sign := 0
	for i := range pts {
		c := cross(pts[i], pts[(i+1)%len(pts)], pts[(i+2)%len(pts)])
		switch {
		case c > 0 && sign < 0, c < 0 && sign > 0:
			return false
		case c > 0:
			sign = 1
		case c < 0:
			sign = -1
		}
	}
	return sign != 0
}

// openRing drops the closing point of a ring.
func openRing(r orb.Ring) []orb.Point {
	if len(r) > 1 && r[0] == r[len(r)-1] {
		return r[:len(r)-1]
	}
	return r
}

// cross is the z of (b-a)×(c-b): positive when a→b→c turns left.
func cross(a, b, c orb.Point) float64 {
	return (b[0]-a[0])*(c[1]-b[1]) - (b[1]-a[1])*(c[0]-b[0])
}

// clipRingConvex clips subject to a counter-clockwise convex ring with one
// Sutherland–Hodgman pass per clip edge. The subject may be concave; the
// result is a ring whose area is the intersection's.
func clipRingConvex(subject, convex orb.Ring) orb.Ring {
	out := openRing(subject)
	edges := openRing(convex)
	for i := range edges {
		a, b := edges[i], edges[(i+1)%len(edges)]
		inside := func(p orb.Point) bool { return (b[0]-a[0])*(p[1]-a[1])-(b[1]-a[1])*(p[0]-a[0]) >= 0 }
		in := out
		out = nil
		for j := range in {
			cur, prev := in[j], in[(j+len(in)-1)%len(in)]
			if inside(cur) {
				if !inside(prev) {
					out = append(out, lineIntersection(prev, cur, a, b))
				}
				out = append(out, cur)
			} else if inside(prev) {
				out = append(out, lineIntersection(prev, cur, a, b))
			}
		}
		if len(out) == 0 {
			return nil
		}
	}
	return append(orb.Ring(out), out[0])
}

// lineIntersection is where segment p→q meets the line through a and b
// (only called when p and q are on opposite sides, so it exists).
func lineIntersection(p, q, a, b orb.Point) orb.Point {
	dx, dy := b[0]-a[0], b[1]-a[1]
	dp := dx*(p[1]-a[1]) - dy*(p[0]-a[0])
	dq := dx*(q[1]-a[1]) - dy*(q[0]-a[0])
	t := dp / (dp - dq)
	return orb.Point{p[0] + t*(q[0]-p[0]), p[1] + t*(q[1]-p[1])}
}

// footprintGeometry reads an item's geometry (polygons only), else its bbox.
func footprintGeometry(geometry json.RawMessage, bbox []float64) orb.Geometry {
	if len(geometry) > 0 {
		if g, err := geojson.UnmarshalGeometry(geometry); err == nil {
			switch geom := g.Geometry().(type) {
			case orb.Polygon, orb.MultiPolygon:
				return geom
			}
		}
	}
	if bounds := bboxBounds(bbox); len(bounds) > 0 {
		mp := orb.MultiPolygon{}
		for _, b := range bounds {
			mp = append(mp, b.ToPolygon())
		}
		return mp
	}
	return nil
}

// polygonsOf lists the polygons of a footprint.
func polygonsOf(g orb.Geometry) []orb.Polygon {
	switch x := g.(type) {
	case orb.Polygon:
		return []orb.Polygon{x}
	case orb.MultiPolygon:
		return x
	}
	return nil
}

// insideArea is the area of fp inside the area of interest.
func insideArea(fp orb.Geometry, area aoi) float64 {
	total := 0.0
	if len(area.convex) == 0 {
		for _, b := range area.bounds {
			total += planar.Area(clip.Geometry(b, orb.Clone(fp)))
		}
		return total
	}
	for _, part := range area.convex {
		for _, p := range polygonsOf(fp) {
			clipped := orb.Polygon{}
			for i, ring := range p {
				r := clipRingConvex(ring, part)
				if i == 0 && r == nil {
					break // outer ring outside this part: holes do not matter
				}
				if r != nil {
					clipped = append(clipped, r)
				}
			}
			if len(clipped) > 0 {
				total += planar.Area(clipped)
			}
		}
	}
	return total
}

// coverageFraction is area(footprint ∩ area) / area(footprint), in [0, 1].
// ok is false when the footprint has no area to measure.
func coverageFraction(fp orb.Geometry, area aoi) (float64, bool) {
	if fp == nil {
		return 0, false
	}
	total := planar.Area(fp)
	if total <= 0 {
		return 0, false
	}
	f := insideArea(fp, area) / total
	return min(max(f, 0), 1), true
}
