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
// How it is computed: the footprint (the item's geometry, else its bbox) is
// clipped to the area's bound(s) with orb/clip (a polygon-to-rectangle clip),
// and the clipped area is divided by the footprint's area, both planar in
// degrees. For a bbox this is exact in lon/lat space; a bbox crossing the
// antimeridian is split into two rectangles. For intersects, the geometry's
// bounding rectangle is used (orb has no polygon-polygon intersection), so
// the fraction is an upper bound; the output says so.

// aoi is the requested area as rectangles.
type aoi struct {
	bounds []orb.Bound
	exact  bool // false when the rectangles only bound the requested shape
}

// aoiFromBBox is the area of a bbox (split at the antimeridian).
func aoiFromBBox(b []float64) aoi { return aoi{bounds: bboxBounds(b), exact: true} }

// aoiFromGeometry bounds a GeoJSON geometry; exact when it is itself a
// lon/lat-aligned rectangle.
func aoiFromGeometry(raw json.RawMessage) (aoi, bool) {
	g, err := geojson.UnmarshalGeometry(raw)
	if err != nil || g.Geometry() == nil {
		return aoi{}, false
	}
	geom := g.Geometry()
	b := geom.Bound()
	exact := false
	if p, ok := geom.(orb.Polygon); ok && len(p) == 1 {
		exact = planar.Area(p) > 0 && almostEqual(planar.Area(p), planar.Area(b.ToPolygon()))
	}
	return aoi{bounds: []orb.Bound{b}, exact: exact}, true
}

// footprint reads an item's geometry (polygons only), else its bbox.
func footprint(geometry json.RawMessage, bbox []float64) orb.Geometry {
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
	inside := 0.0
	for _, b := range area.bounds {
		inside += planar.Area(clip.Geometry(b, orb.Clone(fp)))
	}
	f := inside / total
	if f > 1 {
		f = 1
	}
	if f < 0 {
		f = 0
	}
	return f, true
}

func almostEqual(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, a, b)
}
