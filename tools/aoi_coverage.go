package tools

import (
	"math"

	"github.com/paulmach/orb/planar"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// How much of the requested area each summarised item covers: the share of
// the search's bbox or intersects inside the item's footprint, in percent,
// so a model can tell a scene that fills the area from one that grazes it.
//
// It reuses estimate_data_size's clipping (sizing_coverage.go): planar in
// longitude/latitude, exact for a bbox (split at the antimeridian) and for
// convex polygons; a concave or holed intersects is measured against its
// bounding rectangle, and the search says so. The footprint package of the
// visual tools (equal-area, any polygon) answers the same question on the
// ellipsoid; when it is on main, percentCovered is the one function to
// switch to it.

// requestedArea is the area a search asked for, ready to measure items
// against; nil when the search has none.
type requestedArea struct {
	shape aoi
	size  float64 // planar area, square degrees
}

// newRequestedArea reads the search's bbox or intersects (nil without one,
// or for a geometry without area, such as a point).
func newRequestedArea(p stacclient.SearchParams) *requestedArea {
	var shape aoi
	switch {
	case p.BBox != nil:
		shape = aoiFromBBox(p.BBox)
	case p.Intersects != nil:
		a, ok := aoiFromGeometry(p.Intersects)
		if !ok {
			return nil
		}
		shape = a
	default:
		return nil
	}
	size := 0.0
	for _, b := range shape.bounds {
		size += planar.Area(b.ToPolygon())
	}
	for _, r := range shape.convex {
		size += math.Abs(planar.Area(r))
	}
	if size <= 0 {
		return nil
	}
	return &requestedArea{shape: shape, size: size}
}

// percentCovered is the share of the area inside the item's footprint
// (its geometry, else its bbox), in percent to one decimal; false when the
// item has no footprint to measure.
func (r *requestedArea) percentCovered(it *stacclient.Item) (float64, bool) {
	fp := footprint(it.Geometry, it.BBox)
	if r == nil || fp == nil {
		return 0, false
	}
	pct := 100 * insideArea(fp, r.shape) / r.size
	return math.Round(min(max(pct, 0), 100)*10) / 10, true
}

// exact reports whether percentCovered measures the requested shape itself
// (false: its bounding rectangle).
func (r *requestedArea) exact() bool { return r != nil && r.shape.exact }
