package stacserver

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
	"github.com/paulmach/orb/planar"
)

// shape is a geometry broken into the parts a planar intersection test
// needs: isolated points, line segments (including polygon edges) and
// polygons (for point-in-polygon). Two shapes intersect when a segment of
// one crosses a segment of the other, or a vertex of one lies in or on the
// other; a shape wholly inside a polygon is caught by its vertices.
type shape struct {
	bound    orb.Bound
	points   []orb.Point // every vertex (polygon outer rings included)
	segments [][2]orb.Point
	polygons []orb.Polygon
}

// parseGeoJSONGeometry decodes a GeoJSON geometry object. A Feature is not
// accepted here: the STAC API intersects parameter is a bare geometry.
func parseGeoJSONGeometry(raw []byte) (orb.Geometry, error) {
	g, err := geojson.UnmarshalGeometry(raw)
	if err != nil {
		return nil, err
	}
	if g.Coordinates == nil && len(g.Geometries) == 0 {
		return nil, fmt.Errorf("geometry has no coordinates")
	}
	return g.Geometry(), nil
}

// newShape flattens geometry g. A nil geometry gives nil.
func newShape(g orb.Geometry) *shape {
	if g == nil {
		return nil
	}
	s := &shape{bound: g.Bound()}
	s.add(g)
	return s
}

// shapesFromBBox turns a STAC bbox (4 or 6 numbers) into one shape, or two
// when west > east (the box crosses the antimeridian and is split at ±180).
func shapesFromBBox(b []float64) []*shape {
	w, s, e, n := b[0], b[1], b[2], b[3]
	if len(b) == 6 {
		w, s, e, n = b[0], b[1], b[3], b[4]
	}
	box := func(w, e float64) *shape {
		return newShape(orb.Bound{Min: orb.Point{w, s}, Max: orb.Point{e, n}}.ToPolygon())
	}
	if w > e {
		return []*shape{box(w, 180), box(-180, e)}
	}
	return []*shape{box(w, e)}
}

func (s *shape) add(g orb.Geometry) {
	switch g := g.(type) {
	case orb.Point:
		s.points = append(s.points, g)
	case orb.MultiPoint:
		s.points = append(s.points, g...)
	case orb.LineString:
		s.addLine(g)
	case orb.MultiLineString:
		for _, l := range g {
			s.addLine(l)
		}
	case orb.Ring:
		s.addPolygon(orb.Polygon{g})
	case orb.Polygon:
		s.addPolygon(g)
	case orb.MultiPolygon:
		for _, p := range g {
			s.addPolygon(p)
		}
	case orb.Bound:
		s.addPolygon(g.ToPolygon())
	case orb.Collection:
		for _, c := range g {
			s.add(c)
		}
	}
}

func (s *shape) addLine(l orb.LineString) {
	s.points = append(s.points, l...)
	for i := 1; i < len(l); i++ {
		s.segments = append(s.segments, [2]orb.Point{l[i-1], l[i]})
	}
}

func (s *shape) addPolygon(p orb.Polygon) {
	if len(p) == 0 {
		return
	}
	s.polygons = append(s.polygons, p)
	s.points = append(s.points, p[0]...)
	for _, ring := range p {
		for i := 1; i < len(ring); i++ {
			s.segments = append(s.segments, [2]orb.Point{ring[i-1], ring[i]})
		}
	}
}

// intersects reports whether a and b share at least one point (boundaries
// count, as in OGC "intersects").
func (a *shape) intersects(b *shape) bool {
	if a == nil || b == nil || !a.bound.Intersects(b.bound) {
		return false
	}
	return a.vertexTouches(b) || b.vertexTouches(a) || a.segmentsCross(b)
}

// vertexTouches reports whether a vertex of a lies in a polygon of b, on a
// segment of b, or on a point of b.
func (a *shape) vertexTouches(b *shape) bool {
	for _, p := range a.points {
		if !b.bound.Contains(p) {
			continue
		}
		for _, poly := range b.polygons {
			if planar.PolygonContains(poly, p) {
				return true
			}
		}
		for _, seg := range b.segments {
			if onSegment(seg[0], seg[1], p) {
				return true
			}
		}
		for _, q := range b.points {
			if p == q {
				return true
			}
		}
	}
	return false
}

func (a *shape) segmentsCross(b *shape) bool {
	for _, sa := range a.segments {
		for _, sb := range b.segments {
			if segmentsIntersect(sa[0], sa[1], sb[0], sb[1]) {
				return true
			}
		}
	}
	return false
}

// orientation is the sign of the cross product (q-p)×(r-p), with a small
// tolerance so that collinear points in decimal degrees compare as such.
func orientation(p, q, r orb.Point) int {
	v := (q[0]-p[0])*(r[1]-p[1]) - (q[1]-p[1])*(r[0]-p[0])
	switch {
	case math.Abs(v) < 1e-12:
		return 0
	case v > 0:
		return 1
	default:
		return -1
	}
}

// onSegment reports whether p lies on the closed segment ab.
func onSegment(a, b, p orb.Point) bool {
	return orientation(a, b, p) == 0 &&
		math.Min(a[0], b[0]) <= p[0] && p[0] <= math.Max(a[0], b[0]) &&
		math.Min(a[1], b[1]) <= p[1] && p[1] <= math.Max(a[1], b[1])
}

// segmentsIntersect is the classic orientation test, touching included.
func segmentsIntersect(p1, p2, q1, q2 orb.Point) bool {
	o1, o2 := orientation(p1, p2, q1), orientation(p1, p2, q2)
	o3, o4 := orientation(q1, q2, p1), orientation(q1, q2, p2)
	if o1 != o2 && o3 != o4 {
		return true
	}
	return (o1 == 0 && onSegment(p1, p2, q1)) || (o2 == 0 && onSegment(p1, p2, q2)) ||
		(o3 == 0 && onSegment(q1, q2, p1)) || (o4 == 0 && onSegment(q1, q2, p2))
}

// geometryFromJSONValue re-encodes a decoded JSON value and parses it as a
// GeoJSON geometry.
func geometryFromJSONValue(v any) (orb.Geometry, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parseGeoJSONGeometry(raw)
}

// heightsMeet reports whether an item's heights meet [lo, hi]: its bbox's
// when it has six numbers, else the third coordinates of its geometry. An
// item that states no height is kept: its footprint says nothing about
// height, so a 3D bbox cannot rule it out.
func heightsMeet(doc map[string]any, lo, hi float64) bool {
	if b, ok := doc["bbox"].([]any); ok && len(b) == 6 {
		zmin, ok1 := jsonFloat(b[2])
		zmax, ok2 := jsonFloat(b[5])
		if ok1 && ok2 {
			return zmin <= hi && zmax >= lo
		}
	}
	geom, _ := doc["geometry"].(map[string]any)
	zmin, zmax, found := math.Inf(1), math.Inf(-1), false
	var walk func(v any)
	walk = func(v any) {
		list, ok := v.([]any)
		if !ok {
			return
		}
		if len(list) >= 3 {
			if _, isNum := jsonFloat(list[0]); isNum {
				if z, ok := jsonFloat(list[2]); ok {
					zmin, zmax, found = math.Min(zmin, z), math.Max(zmax, z), true
				}
				return
			}
		}
		for _, e := range list {
			walk(e)
		}
	}
	walk(geom["coordinates"])
	if geoms, ok := geom["geometries"].([]any); ok {
		for _, g := range geoms {
			if m, ok := g.(map[string]any); ok {
				walk(m["coordinates"])
			}
		}
	}
	return !found || (zmin <= hi && zmax >= lo)
}

func jsonFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}
