package geo

import (
	"fmt"
	"image"
	"math"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/clip"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// Densification: an AOI's edges are straight lines in longitude/latitude
// (GeoJSON's reading, RFC 7946 §3.1.1). Projected, most of them curve — a
// parallel 100 km long bends by about 200 m in UTM at 45° — so each edge is
// cut until every piece lies within densifyTol pixels of the projected
// curve at its midpoint, and no piece is longer than maxPieceLen pixels (so
// that an inflection, where the midpoint test alone can be fooled, is cut
// anyway).
const (
	densifyTol   = 1e-4
	maxPieceLen  = 64
	maxDensDepth = 20
)

// pixelPolygons returns the parts of an AOI (longitude/latitude, WGS 84)
// that can reach g, projected into g's pixel space (x = column, y = row,
// pixel (c, r) covering [c, c+1)×[r, r+1)) with densified edges. Each
// polygon is copied to every whole-turn longitude shift that meets the grid
// (an AOI across the antimeridian, a grid in 0…360) and clipped in
// longitude/latitude to a margin around the grid before it is projected, so
// the projection is only asked for points near the grid, where it is
// accurate; the clip edges lie outside the grid and so select no pixel.
func (g Grid) pixelPolygons(aoi orb.Geometry) ([]orb.Polygon, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	polys, err := lonLatPolygons(aoi)
	if err != nil {
		return nil, err
	}
	region, err := g.lonLatRegion()
	if err != nil {
		return nil, err
	}
	inv, _ := g.inverse()
	var out []orb.Polygon
	for _, p := range polys {
		pb := p.Bound()
		for k := math.Ceil((region.Min[0] - pb.Max[0]) / 360); k <= math.Floor((region.Max[0]-pb.Min[0])/360); k++ {
			shifted := p
			if k != 0 {
				shifted = shiftPolygon(p, 360*k)
			}
			clipped := clip.Polygon(region, shifted)
			if len(clipped) == 0 || len(clipped[0]) < 3 {
				continue
			}
			q := make(orb.Polygon, 0, len(clipped))
			for _, ring := range clipped {
				if len(ring) < 3 {
					continue
				}
				pr, err := g.densify(ring, inv)
				if err != nil {
					return nil, err
				}
				q = append(q, pr)
			}
			out = append(out, q)
		}
	}
	return out, nil
}

// lonLatPolygons reads an AOI geometry as polygons with continuous
// longitudes (a polygon written across ±180 with a jump of 360° becomes one
// piece), using the footprint package's reading of areas.
func lonLatPolygons(aoi orb.Geometry) (orb.MultiPolygon, error) {
	switch a := aoi.(type) {
	case orb.Bound:
		if a.Min[0] > a.Max[0] { // west > east: across the antimeridian
			a.Max[0] += 360
		}
		aoi = a.ToPolygon()
	case orb.Polygon, orb.MultiPolygon:
	case nil:
		return nil, fmt.Errorf("no area of interest")
	default:
		return nil, fmt.Errorf("the area of interest is a %s; it must be a Polygon, MultiPolygon or bbox", aoi.GeoJSONType())
	}
	s, err := footprint.FromGeometry(aoi)
	if err != nil {
		return nil, fmt.Errorf("area of interest: %w", err)
	}
	return s.Polygons, nil
}

// lonLatRegion is a longitude/latitude rectangle that holds the whole grid
// with a margin: the bound of its outline (walked round, sampled densely,
// inverse projected, longitudes made continuous) grown by a tenth of its
// size on each side, which also covers the outline's bulges between
// samples. A polar grid that holds a pole gets every longitude and reaches
// the pole.
func (g Grid) lonLatRegion() (orb.Bound, error) {
	const samples = 64
	w, h := float64(g.Width), float64(g.Height)
	outline := make(orb.LineString, 0, 4*samples+1)
	for side := range 4 {
		for i := range samples {
			f := float64(i) / samples
			px, py := [4]float64{f * w, w, (1 - f) * w, 0}[side], [4]float64{0, f * h, h, (1 - f) * h}[side]
			x, y := g.ToCRS(px, py)
			lon, lat, err := g.CRS.inverse(x, y)
			if err == nil && !g.CRS.roundTrips(x, y, lon, lat) {
				err = fmt.Errorf("%s has no longitude/latitude for pixel (%g, %g) at (%g, %g)", g.CRS, px, py, x, y)
			}
			if err != nil {
				return orb.Bound{}, fmt.Errorf("the grid reaches beyond its CRS: %w", err)
			}
			outline = append(outline, orb.Point{lon, lat})
		}
	}
	outline = footprint.Continuous(append(outline, outline[0]))
	b := outline.Bound()
	if g.CRS.kind == polarStereographic {
		inv, _ := g.inverse()
		for _, pole := range []float64{90, -90} {
			x, y, err := g.CRS.forward(0, pole)
			if err != nil {
				continue
			}
			if c, r := inv[0]+x*inv[1]+y*inv[2], inv[3]+x*inv[4]+y*inv[5]; c >= 0 && c <= w && r >= 0 && r <= h {
				b.Min[0], b.Max[0] = -180, 180
				if pole > 0 {
					b.Max[1] = 90
				} else {
					b.Min[1] = -90
				}
			}
		}
	}
	dx, dy := (b.Max[0]-b.Min[0])/10, (b.Max[1]-b.Min[1])/10
	b.Min[0], b.Max[0] = b.Min[0]-dx-1e-9, b.Max[0]+dx+1e-9
	b.Min[1], b.Max[1] = math.Max(-90, b.Min[1]-dy-1e-9), math.Min(90, b.Max[1]+dy+1e-9)
	switch g.CRS.kind {
	case webMercator:
		b.Min[1], b.Max[1] = math.Max(-maxMercLat, b.Min[1]), math.Min(maxMercLat, b.Max[1])
	case transverseMercator:
		// Keep clear of the projection's singularity 90° from the meridian.
		lon0 := g.CRS.tm.lon0
		b.Min[0], b.Max[0] = math.Max(lon0-85, b.Min[0]), math.Min(lon0+85, b.Max[0])
	case polarStereographic:
		// Keep clear of the opposite pole, which goes to infinity.
		if g.CRS.ps.south {
			b.Max[1] = math.Min(b.Max[1], 80)
		} else {
			b.Min[1] = math.Max(b.Min[1], -80)
		}
	}
	return b, nil
}

func shiftPolygon(p orb.Polygon, dx float64) orb.Polygon {
	out := make(orb.Polygon, len(p))
	for i, r := range p {
		s := make(orb.Ring, len(r))
		for j, pt := range r {
			s[j] = orb.Point{pt[0] + dx, pt[1]}
		}
		out[i] = s
	}
	return out
}

// densify projects a longitude/latitude ring into pixel space, cutting
// each edge as the Densification comment says.
func (g Grid) densify(ring orb.Ring, inv [6]float64) (orb.Ring, error) {
	toPix := func(p orb.Point) (orb.Point, error) {
		x, y, err := g.CRS.forward(p[0], p[1])
		if err != nil {
			return orb.Point{}, err
		}
		return orb.Point{inv[0] + x*inv[1] + y*inv[2], inv[3] + x*inv[4] + y*inv[5]}, nil
	}
	out := make(orb.Ring, 0, len(ring))
	var cut func(a, b, pa, pb orb.Point, depth int) error
	cut = func(a, b, pa, pb orb.Point, depth int) error {
		if depth < maxDensDepth {
			m := orb.Point{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2}
			pm, err := toPix(m)
			if err != nil {
				return err
			}
			chord := orb.Point{(pa[0] + pb[0]) / 2, (pa[1] + pb[1]) / 2}
			if math.Hypot(pm[0]-chord[0], pm[1]-chord[1]) > densifyTol || math.Hypot(pb[0]-pa[0], pb[1]-pa[1]) > maxPieceLen {
				if err := cut(a, m, pa, pm, depth+1); err != nil {
					return err
				}
				return cut(m, b, pm, pb, depth+1)
			}
		}
		out = append(out, pb)
		return nil
	}
	prev, err := toPix(ring[0])
	if err != nil {
		return nil, err
	}
	out = append(out, prev)
	for i := 1; i < len(ring); i++ {
		cur, err := toPix(ring[i])
		if err != nil {
			return nil, err
		}
		if err := cut(ring[i-1], ring[i], prev, cur, 0); err != nil {
			return nil, err
		}
		prev = cur
	}
	return out, nil
}

// Outline is the AOI in g's pixel space as Window and Mask see it: the
// parts near the grid (clipped in longitude/latitude to a margin around it,
// so clip edges lie outside the grid), edges densified to follow the
// projected curves, across the antimeridian placed where the grid is. x is
// the column and y the row, (0, 0) the grid's top-left corner; subtract a
// window's Min to draw in it. Empty when the AOI misses the grid's region.
func (g Grid) Outline(aoi orb.Geometry) (orb.MultiPolygon, error) {
	polys, err := g.pixelPolygons(aoi)
	return orb.MultiPolygon(polys), err
}

// Window is the rectangle of pixels of g, clipped to the grid, that the AOI
// (longitude/latitude on WGS 84: Polygon, MultiPolygon or orb.Bound) touches
// once projected with densified edges; it holds every pixel Mask can
// select. ok is false, with an empty rectangle, when the AOI misses the
// grid.
func (g Grid) Window(aoi orb.Geometry) (image.Rectangle, bool, error) {
	polys, err := g.pixelPolygons(aoi)
	if err != nil {
		return image.Rectangle{}, false, err
	}
	if len(polys) == 0 {
		return image.Rectangle{}, false, nil
	}
	b := orb.MultiPolygon(polys).Bound()
	r := image.Rect(
		int(math.Max(-1, math.Floor(b.Min[0]))), int(math.Max(-1, math.Floor(b.Min[1]))),
		int(math.Min(float64(g.Width+1), math.Ceil(b.Max[0]))), int(math.Min(float64(g.Height+1), math.Ceil(b.Max[1]))),
	).Intersect(g.Bounds())
	if r.Empty() {
		return image.Rectangle{}, false, nil
	}
	return r, true, nil
}
