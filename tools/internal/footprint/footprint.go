// Package footprint reads item footprints and areas of interest in
// longitude/latitude, places them in one longitude frame (so footprints on
// both sides of the antimeridian sit next to each other), and measures how
// much of an area of interest they cover (coverage.go) on an equal-area
// basis (area.go).
//
// Geometry is held in github.com/paulmach/orb; the set operations (union,
// intersection, difference) are github.com/peterstace/simplefeatures'.
package footprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// Shape is an area on the ground in degrees. Its longitudes are continuous:
// a polygon drawn across the antimeridian has longitudes past ±180 rather
// than a jump of 360° between neighbouring vertices, so it can be measured
// and drawn as the one piece it is.
type Shape struct {
	Polygons orb.MultiPolygon
	// FromBBox is true when there was no polygon geometry and the shape is
	// the bbox (a rectangle, two when the bbox crosses the antimeridian).
	FromBBox bool
}

// Errors that make a shape unusable; wrapped with the details.
var (
	// ErrNoArea is a geometry without area (Point, LineString…) and no bbox.
	ErrNoArea = errors.New("no polygon geometry and no bbox")
	// ErrEncirclesPole is a ring whose longitudes wind all the way round
	// without reaching the pole: it encloses a pole, and is not a polygon in
	// longitude/latitude.
	ErrEncirclesPole = errors.New("a ring encircles a pole (its longitudes wind through 360° without reaching ±90° latitude)")
	// ErrOutOfRange is a latitude beyond ±90° or a longitude beyond ±540°.
	ErrOutOfRange = errors.New("coordinates out of range")
)

// Parse reads an item's footprint: its GeoJSON geometry when that is a
// Polygon or MultiPolygon, else its bbox.
func Parse(geometry json.RawMessage, bbox []float64) (Shape, error) {
	if len(geometry) > 0 && string(geometry) != "null" {
		g, err := geojson.UnmarshalGeometry(geometry)
		if err == nil && g.Geometry() != nil {
			switch g.Geometry().(type) {
			case orb.Polygon, orb.MultiPolygon:
				return FromGeometry(g.Geometry())
			}
		}
	}
	if s, err := FromBBox(bbox); err == nil {
		return s, nil
	}
	return Shape{}, ErrNoArea
}

// ParseArea reads an area of interest given as GeoJSON: a geometry or a
// Feature whose geometry is a Polygon or MultiPolygon.
func ParseArea(raw json.RawMessage) (Shape, error) {
	g, err := geojson.UnmarshalGeometry(raw)
	if err != nil || g.Geometry() == nil {
		f, ferr := geojson.UnmarshalFeature(raw)
		if ferr != nil || f.Geometry == nil {
			return Shape{}, fmt.Errorf("not a GeoJSON geometry or Feature: %w", err)
		}
		return FromGeometry(f.Geometry)
	}
	return FromGeometry(g.Geometry())
}

// FromGeometry makes a shape of a Polygon or MultiPolygon.
func FromGeometry(g orb.Geometry) (Shape, error) {
	var polys orb.MultiPolygon
	switch x := g.(type) {
	case orb.Polygon:
		polys = orb.MultiPolygon{x}
	case orb.MultiPolygon:
		polys = x
	default:
		return Shape{}, fmt.Errorf("%w: the geometry is a %s", ErrNoArea, g.GeoJSONType())
	}
	out := make(orb.MultiPolygon, 0, len(polys))
	for _, p := range polys {
		if len(p) == 0 || len(p[0]) < 4 {
			continue // degenerate: no area
		}
		q := make(orb.Polygon, 0, len(p))
		for i, ring := range p {
			r, err := unwrapRing(ring)
			if err != nil {
				return Shape{}, err
			}
			if i > 0 {
				// A hole sits with its exterior, whatever frame it was written in.
				r = shiftRing(r, 360*math.Round((q[0].Bound().Center()[0]-r.Bound().Center()[0])/360))
			}
			q = append(q, r)
		}
		out = append(out, q)
	}
	if len(out) == 0 {
		return Shape{}, fmt.Errorf("%w: every polygon is degenerate", ErrNoArea)
	}
	return Shape{Polygons: out}, nil
}

// FromBBox makes a shape of a STAC bbox (4 numbers, or 6 with heights); a
// bbox whose west is greater than its east crosses the antimeridian.
func FromBBox(b []float64) (Shape, error) {
	var w, s, e, n float64
	switch len(b) {
	case 4:
		w, s, e, n = b[0], b[1], b[2], b[3]
	case 6:
		w, s, e, n = b[0], b[1], b[3], b[4]
	default:
		return Shape{}, ErrNoArea
	}
	if s > n || s < -90 || n > 90 || math.Abs(w) > 180 || math.Abs(e) > 180 {
		return Shape{}, fmt.Errorf("%w: bbox [%g, %g, %g, %g]", ErrOutOfRange, w, s, e, n)
	}
	if w > e {
		e += 360 // continuous across the antimeridian
	}
	if w == e || s == n {
		return Shape{}, fmt.Errorf("%w: the bbox has no area", ErrNoArea)
	}
	return Shape{Polygons: orb.MultiPolygon{orb.Bound{Min: orb.Point{w, s}, Max: orb.Point{e, n}}.ToPolygon()}, FromBBox: true}, nil
}

// unwrapRing makes a ring's longitudes continuous: each vertex is moved by
// whole turns to within 180° of the one before, so a footprint drawn across
// the antimeridian becomes one piece. A ring that then does not close (its
// last vertex a whole turn from its first) winds round a pole. Such a ring
// is kept as written when it reaches the pole (a vertex at latitude ±90: a
// polar cap cut along the pole line, the way longitude/latitude can hold
// it); otherwise it cannot be a polygon in longitude/latitude and is
// refused with ErrEncirclesPole.
func unwrapRing(r orb.Ring) (orb.Ring, error) {
	reachesPole := false
	for _, p := range r {
		if math.IsNaN(p[0]) || math.IsNaN(p[1]) || math.Abs(p[1]) > 90 || math.Abs(p[0]) > 540 {
			return nil, fmt.Errorf("%w: vertex [%g, %g]", ErrOutOfRange, p[0], p[1])
		}
		reachesPole = reachesPole || math.Abs(p[1]) == 90
	}
	if cutForm(r) {
		out := append(orb.Ring{}, r...)
		if out[0] != out[len(out)-1] {
			out = append(out, out[0])
		}
		return out, nil
	}
	out := orb.Ring(Continuous(orb.LineString(r)))
	if Winds(orb.LineString(out)) {
		if !reachesPole {
			return nil, ErrEncirclesPole
		}
		out = append(out[:0], r...)
	}
	if out[0] != out[len(out)-1] {
		out = append(out, out[0]) // GeoJSON rings close; tolerate ones that do not
	}
	return out, nil
}

// Continuous returns l with each vertex moved by whole turns of longitude
// to within 180° of the one before: a line drawn across the antimeridian
// becomes one piece with longitudes past ±180.
func Continuous(l orb.LineString) orb.LineString {
	out := make(orb.LineString, len(l))
	for i, p := range l {
		if i > 0 {
			p[0] -= 360 * math.Round((p[0]-out[i-1][0])/360)
		}
		out[i] = p
	}
	return out
}

// Winds reports whether a continuous closed line ends a whole turn of
// longitude from where it started: it goes round a pole.
func Winds(l orb.LineString) bool {
	return len(l) > 1 && math.Abs(l[len(l)-1][0]-l[0][0]) > 180
}

func shiftRing(r orb.Ring, dx float64) orb.Ring {
	if dx == 0 {
		return r
	}
	out := make(orb.Ring, len(r))
	for i, p := range r {
		out[i] = orb.Point{p[0] + dx, p[1]}
	}
	return out
}

// Valid reports why the shape is not a valid area: a ring that crosses
// itself, a hole outside its polygon (the OGC simple-features rules, as
// simplefeatures checks them).
func (s Shape) Valid() error {
	for i, p := range s.Polygons {
		if err := sfPolygon(p).Validate(); err != nil {
			if len(s.Polygons) > 1 {
				return fmt.Errorf("polygon %d is not valid: %w", i+1, err)
			}
			return fmt.Errorf("not a valid polygon: %w", err)
		}
	}
	return nil
}

// Bound is the shape's extent (longitudes may pass ±180).
func (s Shape) Bound() orb.Bound { return s.Polygons.Bound() }

// Frame is a window of longitudes 360° wide centred on Center: placing
// shapes in one frame puts the pieces of a region that straddles the
// antimeridian next to each other.
type Frame struct{ Center float64 }

// Place moves each polygon of s by whole turns so that its centre lies in
// the frame.
func (f Frame) Place(s Shape) Shape {
	out := Shape{Polygons: make(orb.MultiPolygon, len(s.Polygons)), FromBBox: s.FromBBox}
	for i, p := range s.Polygons {
		dx := 360 * math.Round((f.Center-p.Bound().Center()[0])/360)
		q := make(orb.Polygon, len(p))
		for j, r := range p {
			q[j] = shiftRing(r, dx)
		}
		out.Polygons[i] = q
	}
	return out
}

// FrameAround is the frame centred on an area of interest.
func FrameAround(area Shape) Frame { return Frame{Center: area.Bound().Center()[0]} }

// FrameFor picks, for shapes with no area of interest, the frame in which
// they span the fewest degrees of longitude: centred on Greenwich unless
// they cluster around the antimeridian.
func FrameFor(shapes []Shape) Frame {
	best, bestWidth := Frame{}, math.Inf(1)
	for _, c := range []float64{0, 180} {
		f := Frame{Center: c}
		b := orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
		for _, s := range shapes {
			b = b.Union(f.Place(s).Bound())
		}
		if w := b.Max[0] - b.Min[0]; w < bestWidth-1e-9 {
			best, bestWidth = f, w
		}
	}
	if len(shapes) > 0 {
		// Centre on the shapes themselves, so that none lands on the edge.
		var b orb.Bound
		for i, s := range shapes {
			if i == 0 {
				b = best.Place(s).Bound()
			} else {
				b = b.Union(best.Place(s).Bound())
			}
		}
		best.Center = b.Center()[0]
	}
	return best
}

// NormalizeLon maps a longitude in a frame back to [-180, 180].
func NormalizeLon(lon float64) float64 {
	lon = math.Mod(lon+180, 360)
	if lon < 0 {
		lon += 360
	}
	return lon - 180
}

// BBox writes a bound in a frame as a STAC bbox: longitudes in [-180, 180],
// west greater than east when it crosses the antimeridian, the whole
// longitude range when it is 360° wide or more.
func BBox(b orb.Bound) []float64 {
	if b.Max[0]-b.Min[0] >= 360 {
		return []float64{-180, b.Min[1], 180, b.Max[1]}
	}
	w, e := NormalizeLon(b.Min[0]), NormalizeLon(b.Max[0])
	if e == -180 && b.Max[0] > b.Min[0] {
		e = 180
	}
	return []float64{w, b.Min[1], e, b.Max[1]}
}
