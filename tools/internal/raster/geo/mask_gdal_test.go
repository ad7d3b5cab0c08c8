package geo

import (
	"image"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
)

// maskGrids are the grids the masks are compared on: UTM north and south,
// NAD83 UTM, geographic, Web Mercator, a coarse UTM grid where the AOI's
// edges curve by about a pixel once projected, a UTM zone 60 grid that
// reaches past the antimeridian, polar stereographic north and round the
// south pole, and the US, Australian and European equal-area grids.
var maskGrids = []struct {
	name          string
	code          int
	ulx, uly, res float64
	w, h          int
	shapes        []aoiShape // nil: aoiShapes
}{
	{"utm33n_10m", 32633, 400000, 5000000, 10, 600, 500, nil},
	{"utm56s_20m", 32756, 300000, 6300000, 20, 400, 300, nil},
	{"nad83_utm10n_1m", 26910, 530000, 5040000, 1, 300, 240, nil},
	{"wgs84_1024th_deg", 4326, 10, 50, 1.0 / 1024, 512, 384, nil},
	{"webmercator_30m", 3857, 1500000, 7000000, 30, 400, 300, nil},
	{"utm31n_500m", 32631, 300000, 5300000, 500, 400, 400, nil},
	{"utm60n_antimeridian_250m", 32660, 650000, 6700000, 250, 400, 200, nil},
	{"nsidc_north_3413_500m", 3413, -200000, -2000000, 500, 400, 300, nil},
	{"conus_albers_5070_30m", 5070, -1500000, 2000000, 30, 400, 300, nil},
	{"australian_albers_3577_25m", 3577, 1500000, -3900000, 25, 400, 300, nil},
	{"laea_europe_3035_100m", 3035, 4000000, 3000000, 100, 300, 300, nil},
	{"antarctic_3031_round_the_pole_1km", 3031, -200000, 200000, 1000, 400, 400, poleShapes},
}

// poleShapes are AOIs in longitude/latitude for a grid round the south
// pole: a polar cap (written along ±180 as RFC 7946 asks), the cap with a
// hole, a box across the antimeridian, and one beside the pole.
var poleShapes = []aoiShape{
	{name: "cap", lonLat: true, polys: [][][][2]float64{{{{-180, -88.9}, {180, -88.9}, {180, -90}, {-180, -90}}}}},
	{name: "cap_with_hole", lonLat: true, polys: [][][][2]float64{{
		{{-180, -88.5}, {180, -88.5}, {180, -90}, {-180, -90}},
		{{-40.3, -89.2}, {40.7, -89.2}, {40.1, -88.8}, {-40.9, -88.8}},
	}}},
	{name: "across_antimeridian", lonLat: true, polys: [][][][2]float64{{{{170.3, -89.3}, {-170.1, -89.3}, {-170.7, -88.6}, {170.9, -88.6}}}}},
	{name: "beside_the_pole", lonLat: true, polys: [][][][2]float64{{{{10.3, -89.5}, {60.7, -89.5}, {60.1, -88.5}, {35.3, -89.1}, {10.9, -88.5}}}}},
}

// aoiShape is an AOI in fractions of the grid's longitude/latitude extent
// (u across from west, v up from south), with odd fractions so that no
// vertex lands exactly on a pixel centre of the geographic grid.
type aoiShape struct {
	name   string
	polys  [][][][2]float64 // polygons, rings, (u, v)
	bound  bool             // polys[0][0] holds min and max of an orb.Bound
	lonLat bool             // polys are in longitude/latitude, not fractions
	tiny   float64          // > 0: a triangle this many pixels wide at a pixel centre
	off    [2]float64       // tiny: offset from that centre, in pixels
}

var aoiShapes = []aoiShape{
	{name: "convex", polys: [][][][2]float64{{{{0.2113, 0.1307}, {0.8311, 0.2719}, {0.7723, 0.8617}, {0.3109, 0.7131}, {0.1237, 0.4421}}}}},
	{name: "concave", polys: [][][][2]float64{{{{0.1031, 0.1013}, {0.9027, 0.1217}, {0.8813, 0.3511}, {0.3533, 0.3307}, {0.3719, 0.6701}, {0.8629, 0.6307}, {0.9113, 0.9209}, {0.1219, 0.9013}}}}},
	{name: "hole", polys: [][][][2]float64{{
		{{0.1007, 0.1103}, {0.9011, 0.0997}, {0.8903, 0.9019}, {0.1109, 0.8893}},
		{{0.3037, 0.3119}, {0.3341, 0.6413}, {0.6617, 0.7021}, {0.6229, 0.2903}},
	}}},
	{name: "multipolygon", polys: [][][][2]float64{
		{{{0.0513, 0.0617}, {0.4419, 0.1023}, {0.2311, 0.5137}}},
		{{{0.5521, 0.4813}, {0.9417, 0.5309}, {0.8903, 0.9611}, {0.6011, 0.8707}}},
	}},
	{name: "partly_outside", polys: [][][][2]float64{{{{-0.3113, -0.2027}, {0.5531, -0.1019}, {0.6017, 0.5213}, {-0.2011, 0.7129}}}}},
	{name: "bbox", bound: true, polys: [][][][2]float64{{{{0.2033, 0.3017}, {0.7019, 0.8041}}}}},
	{name: "tiny_on_centre", tiny: 0.4},
	{name: "tiny_between_centres", tiny: 0.3, off: [2]float64{0.45, 0.45}},
}

// lonLatExtent is the bound of a grid's corners in longitude/latitude
// (continuous across the antimeridian).
func lonLatExtent(t *testing.T, g Grid) orb.Bound {
	t.Helper()
	var b orb.Bound
	for i, px := range [][2]float64{{0, 0}, {float64(g.Width), 0}, {0, float64(g.Height)}, {float64(g.Width), float64(g.Height)}} {
		lon, lat, err := g.CRS.inverse(g.ToCRS(px[0], px[1]))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			b = orb.Bound{Min: orb.Point{lon, lat}, Max: orb.Point{lon, lat}}
		}
		b = b.Extend(orb.Point{lon, lat})
	}
	return b
}

// build makes the AOI for grid g.
func (s aoiShape) build(t *testing.T, g Grid) orb.Geometry {
	t.Helper()
	ext := lonLatExtent(t, g)
	at := func(u, v float64) orb.Point {
		if s.lonLat {
			return orb.Point{u, v}
		}
		return orb.Point{ext.Min[0] + u*(ext.Max[0]-ext.Min[0]), ext.Min[1] + v*(ext.Max[1]-ext.Min[1])}
	}
	if s.tiny > 0 {
		cx, cy := float64(g.Width/2)+0.5+s.off[0], float64(g.Height/2)+0.5+s.off[1]
		lon, lat, err := g.CRS.inverse(g.ToCRS(cx, cy))
		if err != nil {
			t.Fatal(err)
		}
		lon1, lat1, _ := g.CRS.inverse(g.ToCRS(cx+s.tiny, cy+s.tiny))
		dx, dy := math.Abs(lon1-lon), math.Abs(lat1-lat)
		return orb.Polygon{{{lon - dx/2, lat - dy/3}, {lon + dx/2, lat - dy/3}, {lon, lat + 2*dy/3}, {lon - dx/2, lat - dy/3}}}
	}
	if s.bound {
		p := s.polys[0][0]
		return orb.Bound{Min: at(p[0][0], p[0][1]), Max: at(p[1][0], p[1][1])}
	}
	var mp orb.MultiPolygon
	for _, poly := range s.polys {
		var op orb.Polygon
		for _, ring := range poly {
			var r orb.Ring
			for _, uv := range ring {
				r = append(r, at(uv[0], uv[1]))
			}
			op = append(op, append(r, r[0]))
		}
		mp = append(mp, op)
	}
	if len(mp) == 1 {
		return mp[0]
	}
	return mp
}

// densifiedGeoJSON writes the AOI for GDAL with its edges cut every 0.001°
// at most: gdal_rasterize projects vertices only, and edges are straight in
// longitude/latitude. (At that step a projected edge strays from the curve
// by under 1e-4 of a 10 m pixel.)
func densifiedGeoJSON(t *testing.T, aoi orb.Geometry) []byte {
	t.Helper()
	// GDAL reads a polygon literally: one written across ±180 with a jump
	// of 360° goes the long way round. Give it the continuous form (as
	// footprint reads AOIs), which PROJ takes past ±180.
	mp, err := lonLatPolygons(aoi)
	if err != nil {
		t.Fatal(err)
	}
	out := make(orb.MultiPolygon, len(mp))
	for i, p := range mp {
		for _, r := range p {
			var d orb.Ring
			for j := 0; j+1 < len(r); j++ {
				a, b := r[j], r[j+1]
				// (At most 5000 pieces: a whole parallel near a pole.)
				n := min(5000, int(math.Ceil(math.Max(math.Abs(b[0]-a[0]), math.Abs(b[1]-a[1]))/0.001)))
				for k := range max(n, 1) {
					f := float64(k) / float64(max(n, 1))
					d = append(d, orb.Point{a[0] + f*(b[0]-a[0]), a[1] + f*(b[1]-a[1])})
				}
			}
			d = append(d, d[0])
			out[i] = append(out[i], d)
		}
	}
	fc := geojson.NewFeatureCollection()
	fc.Append(geojson.NewFeature(out))
	b, err := fc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edgeDistance is the distance in pixels from a point in pixel space to the
// nearest edge of the AOI as Mask sees it.
func edgeDistance(polys []orb.Polygon, x, y float64) float64 {
	best := math.Inf(1)
	for _, p := range polys {
		for _, r := range p {
			for i := 0; i+1 < len(r); i++ {
				a, b := r[i], r[i+1]
				dx, dy := b[0]-a[0], b[1]-a[1]
				f := 0.0
				if l := dx*dx + dy*dy; l > 0 {
					f = math.Max(0, math.Min(1, ((x-a[0])*dx+(y-a[1])*dy)/l))
				}
				best = math.Min(best, math.Hypot(a[0]+f*dx-x, a[1]+f*dy-y))
			}
		}
	}
	return best
}

// TestMaskAgreesWithGDALRasterize burns each AOI into each grid with
// gdal_rasterize and compares the pixels with Mask; it also checks that
// Window holds every pixel either selects, and that gdalwarp -cutline keeps
// the pixels gdal_rasterize burns.
func TestMaskAgreesWithGDALRasterize(t *testing.T) {
	gdaltest.Need(t, "gdal_create", "gdal_rasterize", "gdalinfo")
	var mu sync.Mutex
	var cases, pixels, inside, mismatches, ties, cutCases, cutDiffs int
	t.Run("cases", func(t *testing.T) { // returns when the parallel cases have
		compareMasks(t, &mu, &cases, &pixels, &inside, &mismatches, &ties, &cutCases, &cutDiffs)
	})
	t.Logf("mask vs gdal_rasterize: %d cases, %d pixels compared, %d inside, %d mismatches, %d boundary ties; "+
		"gdalwarp -cutline (%d cases) differs from gdal_rasterize in %d pixels", cases, pixels, inside, mismatches, ties, cutCases, cutDiffs)
}

func compareMasks(t *testing.T, mu *sync.Mutex, cases, pixels, inside, mismatches, ties, cutCases, cutDiffs *int) {
	for _, gs := range maskGrids {
		gf := makeGridFile(t, gs.code, gs.ulx, gs.uly, gs.res, gs.w, gs.h)
		g := gf.grid
		shapes := gs.shapes
		if shapes == nil {
			shapes = aoiShapes
		}
		for _, s := range shapes {
			t.Run(gs.name+"/"+s.name, func(t *testing.T) {
				t.Parallel() // GDAL's run time is mostly start-up, not CPU
				aoi := s.build(t, g)
				js := densifiedGeoJSON(t, aoi)
				ref := gf.rasterize(t, s.name, js)
				cut, cutErr := gf.cutline(t, s.name, js)
				if cutErr != nil {
					// A polar cap drawn along ±180 is two coincident edges
					// once projected, which gdalwarp refuses as invalid
					// (gdal_rasterize burns it).
					t.Logf("gdalwarp -cutline refuses the AOI, not compared: %v", cutErr)
				}
				all := g.Bounds()
				mask, err := g.Mask(aoi, all)
				if err != nil {
					t.Fatal(err)
				}
				win, ok, err := g.Window(aoi)
				if err != nil {
					t.Fatal(err)
				}
				polys, err := g.pixelPolygons(aoi)
				if err != nil {
					t.Fatal(err)
				}
				in, bad, tie, cutDiff := 0, 0, 0, 0
				for i, m := range mask {
					col, row := i%g.Width, i/g.Width
					gd := ref[i] == 1
					if cd := cut != nil && cut[i] == 1; cut != nil && cd != gd {
						cutDiff++
						if d := edgeDistance(polys, float64(col)+0.5, float64(row)+0.5); d >= 1e-3 {
							t.Errorf("pixel (%d, %d): gdalwarp -cutline keeps it: %v, gdal_rasterize burns it: %v; its centre is %.3g px from the edge", col, row, cd, gd, d)
						} else {
							t.Logf("pixel (%d, %d): gdalwarp -cutline keeps it: %v, gdal_rasterize burns it: %v; its centre is %.2g px from the edge (a tie)", col, row, cd, gd, d)
						}
					}
					if m || gd {
						in++
						if !ok || !(image.Point{col, row}).In(win) {
							t.Errorf("pixel (%d, %d) selected (ours %v, GDAL %v) is outside Window %v (ok %v)", col, row, m, gd, win, ok)
						}
					}
					if m == gd {
						continue
					}
					d := edgeDistance(polys, float64(col)+0.5, float64(row)+0.5)
					if d < 1e-3 {
						tie++
						t.Logf("pixel (%d, %d): ours %v, GDAL %v; its centre is %.2g px from the edge (a tie)", col, row, m, gd, d)
						continue
					}
					bad++
					if bad <= 10 {
						t.Errorf("pixel (%d, %d): ours %v, GDAL %v; its centre is %.3g px from the edge", col, row, m, gd, d)
					}
				}
				if in == 0 && s.tiny == 0 {
					t.Errorf("no pixel selected: the case tests nothing")
				}
				t.Logf("%d×%d pixels, %d selected, %d mismatches, %d ties, %d -cutline differences; window %v", g.Width, g.Height, in, bad, tie, cutDiff, win)
				mu.Lock()
				defer mu.Unlock()
				*cases++
				*cutDiffs += cutDiff
				if cut != nil {
					*cutCases++
				}
				*pixels += len(mask)
				*inside += in
				*mismatches += bad
				*ties += tie
			})
		}
	}
}

// TestMaskTiesAgreeWithGDAL: polygons whose vertices and edges lie exactly
// on pixel centres and centre lines (a rectangle, triangles, a diamond, a
// notch, holes), each wound both ways, select the same pixels as
// gdal_rasterize.
func TestMaskTiesAgreeWithGDAL(t *testing.T) {
	gdaltest.Need(t, "gdal_create", "gdal_rasterize", "gdalinfo")
	gf := makeGridFile(t, 4326, 0, 10, 1, 8, 8)
	g := gf.grid
	// ring takes pixel (x, y) pairs; the grid puts lon = x, lat = 10 - y.
	ring := func(xy ...float64) orb.Ring {
		var r orb.Ring
		for i := 0; i < len(xy); i += 2 {
			r = append(r, orb.Point{xy[i], 10 - xy[i+1]})
		}
		return append(r, r[0])
	}
	reverse := func(r orb.Ring) orb.Ring {
		out := slices.Clone(r)
		slices.Reverse(out)
		return out
	}
	frame := ring(0.2, 0.2, 7.7, 0.2, 7.7, 6.7, 0.2, 6.7)
	for _, tc := range []struct {
		name  string
		rings []orb.Ring
	}{
		{"rectangle", []orb.Ring{ring(1.5, 1.5, 3.5, 1.5, 3.5, 3.5, 1.5, 3.5)}},
		{"rectangle_between_columns", []orb.Ring{ring(1.2, 1.5, 3.7, 1.5, 3.7, 3.5, 1.2, 3.5)}},
		{"columns_on_centres", []orb.Ring{ring(1.5, 1.2, 3.5, 1.2, 3.5, 4.7, 1.5, 4.7)}},
		{"triangle_up", []orb.Ring{ring(1.2, 4.5, 5.7, 4.5, 3.3, 1.2)}},
		{"triangle_down", []orb.Ring{ring(1.2, 1.5, 5.7, 1.5, 3.3, 4.8)}},
		{"diamond", []orb.Ring{ring(3.5, 0.5, 5.5, 2.5, 3.5, 4.5, 1.5, 2.5)}},
		{"notch", []orb.Ring{ring(1.2, 1.2, 6.7, 1.2, 6.7, 5.7, 4.5, 5.7, 4.5, 3.5, 3.5, 3.5, 3.5, 5.7, 1.2, 5.7)}},
		{"hole_on_centres", []orb.Ring{frame, ring(2.5, 1.5, 5.5, 1.5, 5.5, 4.5, 2.5, 4.5)}},
		{"hole_between_columns", []orb.Ring{frame, ring(2.2, 1.5, 5.7, 1.5, 5.7, 4.5, 2.2, 4.5)}},
	} {
		for _, wind := range []string{"as_written", "reversed"} {
			t.Run(tc.name+"/"+wind, func(t *testing.T) {
				var p orb.Polygon
				for i, r := range tc.rings {
					if (wind == "reversed") != (i > 0) {
						r = reverse(r)
					}
					p = append(p, r)
				}
				fc := geojson.NewFeatureCollection()
				fc.Append(geojson.NewFeature(p))
				js, err := fc.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				ref := gf.rasterize(t, "ties", js)
				m, err := g.Mask(p, g.Bounds())
				if err != nil {
					t.Fatal(err)
				}
				for i := range m {
					if m[i] != (ref[i] == 1) {
						t.Errorf("pixel (%d, %d): ours %v, GDAL %v", i%g.Width, i/g.Width, m[i], ref[i] == 1)
					}
				}
			})
		}
	}
}
