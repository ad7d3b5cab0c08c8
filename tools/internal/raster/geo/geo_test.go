package geo

import (
	"errors"
	"image"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

func mustCRS(t *testing.T, code int) CRS {
	t.Helper()
	c, err := FromEPSG(code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFromEPSG(t *testing.T) {
	for _, code := range []int{4326, 4269, 4258, 3857, 32601, 32660, 32701, 32760, 26901, 26923, 25828, 25838, 3031, 3413, 3976, 3995, 32661, 32761, 5070, 3577, 3035} {
		c := mustCRS(t, code)
		if c.EPSG != code || c.Name == "" {
			t.Errorf("FromEPSG(%d) = %+v", code, c)
		}
	}
	if got := mustCRS(t, 32733).Name; got != "WGS 84 / UTM zone 33S" {
		t.Errorf("name %q", got)
	}
	for _, code := range []int{0, 4327, 32600, 32662, 32700, 32762, 26900, 26924, 2154, 3034} {
		_, err := FromEPSG(code)
		if !errors.Is(err, ErrUnsupportedCRS) || !strings.Contains(err.Error(), "32601–32660") {
			t.Errorf("FromEPSG(%d): %v; want ErrUnsupportedCRS naming the supported codes", code, err)
		}
	}
	var zero CRS
	if _, _, err := zero.FromLonLat(0, 0); err == nil {
		t.Error("the zero CRS transformed a point")
	}
}

// TestRoundTrip: inverse(forward(p)) = p to a nanometre-scale angle across
// the zone and beyond.
func TestRoundTrip(t *testing.T) {
	for _, code := range []int{32633, 32756, 3857, 26910, 5070, 3577, 3035} {
		c := mustCRS(t, code)
		lon0 := map[kind]float64{transverseMercator: c.tm.lon0, albersEqualArea: c.aea.lon0, lambertAzimuthal: c.la.lon0}[c.kind]
		for lat := -84.0; lat <= 84; lat += 7 {
			for dl := -9.0; dl <= 9; dl += 1.5 {
				x, y, err := c.FromLonLat(lon0+dl, lat)
				if err != nil {
					t.Fatal(err)
				}
				lon, lat2, err := c.ToLonLat(x, y)
				if err != nil {
					t.Fatal(err)
				}
				if d := groundDistance(lon, lat2, lon0+dl, lat); d > 1e-6 {
					t.Errorf("%s (%g, %g): round trip off by %g m", c, lon0+dl, lat, d)
				}
			}
		}
	}
}

func TestTransformErrors(t *testing.T) {
	utm := mustCRS(t, 32633)
	if _, _, err := utm.FromLonLat(15+95, 10); err == nil {
		t.Error("UTM 33N projected a point 95° from its meridian")
	}
	if _, _, err := utm.FromLonLat(15, 91); err == nil {
		t.Error("latitude 91 projected")
	}
	if _, _, err := mustCRS(t, 3857).FromLonLat(0, 90); err == nil {
		t.Error("Web Mercator projected the pole")
	}
	if _, _, err := utm.ToLonLat(math.NaN(), 0); err == nil {
		t.Error("NaN inverse-projected")
	}
	// Web Mercator wraps longitudes as PROJ does.
	x, _, _ := mustCRS(t, 3857).FromLonLat(190, 0)
	x2, _, _ := mustCRS(t, 3857).FromLonLat(-170, 0)
	if x != x2 {
		t.Errorf("Web Mercator x of 190° = %g, of -170° = %g", x, x2)
	}
}

func TestLevel(t *testing.T) {
	g := Grid{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{400000, 10, 0, 5000000, 0, -10}, Width: 10980, Height: 10980}
	l := g.Level(2745, 2745)
	if l.GeoTransform != [6]float64{400000, 40, 0, 5000000, 0, -40} || l.Width != 2745 {
		t.Errorf("Level: %+v", l)
	}
	// GDAL rounds overview sizes up: 10980/3 → 3660; 1001/2 → 501.
	g.Width, g.Height = 1001, 999
	l = g.Level(501, 500)
	if math.Abs(l.GeoTransform[1]-10*1001.0/501) > 1e-12 || math.Abs(l.GeoTransform[5]+10*999.0/500) > 1e-12 {
		t.Errorf("Level: %v", l.GeoTransform)
	}
}

func TestPixelSize(t *testing.T) {
	utm := Grid{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{490000, 10, 0, 5000000, 0, -10}, Width: 2000, Height: 2000}
	x, y := utm.PixelSize()
	// Near the central meridian a UTM metre is 1/0.9996 ground metres.
	if math.Abs(x-10/0.9996) > 0.005 || math.Abs(y-10/0.9996) > 0.005 {
		t.Errorf("UTM pixel %g × %g m", x, y)
	}
	geog := Grid{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{9.5, 0.001, 0, 60.5, 0, -0.001}, Width: 1000, Height: 1000}
	x, y = geog.PixelSize()
	// At 60° a degree of longitude is about 55.8 km, of latitude 111.4 km.
	if math.Abs(x-55.8) > 0.1 || math.Abs(y-111.4) > 0.1 {
		t.Errorf("geographic pixel %g × %g m", x, y)
	}
	merc := Grid{CRS: mustCRS(t, 3857), GeoTransform: [6]float64{-50, 100, 0, 50, 0, -100}, Width: 1, Height: 1}
	if x, y = merc.PixelSize(); math.Abs(x-100) > 0.5 || math.Abs(y-99.3) > 0.5 {
		t.Errorf("Web Mercator pixel at the equator %g × %g m", x, y)
	}
}

// TestAntimeridian: an AOI written across ±180 with a jump of 360°, the
// same AOI written with continuous longitudes, and the two halves of it
// as a MultiPolygon select the same pixels, on a UTM zone 60 grid that
// reaches past 180° and on a geographic grid that ends at 180°.
func TestAntimeridian(t *testing.T) {
	jump := orb.Polygon{{{179.2, 60.1}, {-179.3, 60.2}, {-179.4, 60.9}, {179.5, 60.8}, {179.2, 60.1}}}
	continuous := orb.Polygon{{{179.2, 60.1}, {180.7, 60.2}, {180.6, 60.9}, {179.5, 60.8}, {179.2, 60.1}}}
	shifted := orb.Polygon{{{-180.8, 60.1}, {-179.3, 60.2}, {-179.4, 60.9}, {-180.5, 60.8}, {-180.8, 60.1}}}
	// RFC 7946's form: cut at the antimeridian into two polygons.
	west, east := orb.Bound{Min: orb.Point{179, 60}, Max: orb.Point{180, 61}}, orb.Bound{Min: orb.Point{-180, 60}, Max: orb.Point{-179, 61}}
	split := orb.MultiPolygon{west.ToPolygon(), east.ToPolygon()}
	whole := orb.Bound{Min: orb.Point{179, 60}, Max: orb.Point{181, 61}}
	for _, g := range []Grid{
		{CRS: mustCRS(t, 32660), GeoTransform: [6]float64{650000, 250, 0, 6800000, 0, -250}, Width: 400, Height: 400},
		{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{179, 0.01, 0, 61, 0, -0.01}, Width: 100, Height: 100},
		{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{-180, 0.01, 0, 61, 0, -0.01}, Width: 100, Height: 100},
		// Longitudes past 180, the seam through a column of pixel centres.
		{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{179.005, 0.01, 0, 61.005, 0, -0.01}, Width: 200, Height: 100},
	} {
		want, err := g.Mask(continuous, g.Bounds())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range want {
			if m {
				n++
			}
		}
		if n == 0 {
			t.Fatalf("%s: the AOI selects nothing", g.CRS)
		}
		for _, aoi := range []orb.Geometry{jump, shifted} {
			got, err := g.Mask(aoi, g.Bounds())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %v selects other pixels than its continuous form", g.CRS, aoi)
			}
		}
		// The split form selects what the whole does: the pixels on the
		// seam once, none lost between the halves.
		wantWhole, err := g.Mask(whole, g.Bounds())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := g.Mask(split, g.Bounds()); err != nil || !slices.Equal(got, wantWhole) || !slices.Contains(got, true) {
			t.Errorf("%s: the AOI cut at ±180 selects other pixels than the whole (%v)", g.CRS, err)
		}
		w1, ok1, _ := g.Window(continuous)
		w2, ok2, _ := g.Window(jump)
		if w1 != w2 || !ok1 || !ok2 {
			t.Errorf("%s: windows %v %v, %v %v", g.CRS, w1, ok1, w2, ok2)
		}
	}
	// A bbox across the antimeridian (west > east).
	g := Grid{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{-180, 0.01, 0, 61, 0, -0.01}, Width: 100, Height: 100}
	w, ok, err := g.Window(orb.Bound{Min: orb.Point{179.5, 60.5}, Max: orb.Point{-179.75, 60.8}})
	if err != nil || !ok || w != image.Rect(0, 20, 25, 50) {
		t.Errorf("bbox across ±180: window %v %v %v; want (0,20)-(25,50)", w, ok, err)
	}
}

// TestWindowMisses: an AOI elsewhere on the globe, including one on the
// far side from a UTM zone (where transverse Mercator does not reach), is
// no overlap rather than an error or a wrong window.
func TestWindowMisses(t *testing.T) {
	g := Grid{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{400000, 10, 0, 5000000, 0, -10}, Width: 600, Height: 500}
	for _, aoi := range []orb.Geometry{
		orb.Bound{Min: orb.Point{-100, 40}, Max: orb.Point{-99, 41}},
		orb.Bound{Min: orb.Point{100, 40}, Max: orb.Point{110, 50}},
		orb.Bound{Min: orb.Point{14, -46}, Max: orb.Point{15, -45}},
		orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{-170, -80}},
	} {
		w, ok, err := g.Window(aoi)
		if err != nil || ok || !w.Empty() {
			t.Errorf("Window(%v) = %v, %v, %v; want empty, false, nil", aoi, w, ok, err)
		}
		m, err := g.Mask(aoi, g.Bounds())
		if err != nil || slices.Contains(m, true) {
			t.Errorf("Mask(%v): %v, any %v", aoi, err, slices.Contains(m, true))
		}
	}
	// The whole world covers the whole grid.
	w, ok, err := g.Window(orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}})
	if err != nil || !ok || w != g.Bounds() {
		t.Errorf("world: %v %v %v", w, ok, err)
	}
	m, _ := g.Mask(orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}}, image.Rect(10, 10, 20, 20))
	if slices.Contains(m, false) || len(m) != 100 {
		t.Errorf("world mask has %d pixels, some out", len(m))
	}
}

func TestAOIErrors(t *testing.T) {
	g := Grid{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{0, 1, 0, 10, 0, -1}, Width: 10, Height: 10}
	for _, aoi := range []orb.Geometry{nil, orb.Point{1, 1}, orb.LineString{{1, 1}, {2, 2}}, orb.Polygon{{{0, 0}, {1, 1}, {0, 0}}},
		orb.Polygon{{{0, 0}, {1, 95}, {2, 0}, {0, 0}}}} {
		if _, _, err := g.Window(aoi); err == nil {
			t.Errorf("Window(%v): no error", aoi)
		}
		if _, err := g.Mask(aoi, g.Bounds()); err == nil {
			t.Errorf("Mask(%v): no error", aoi)
		}
	}
	for _, bad := range []Grid{
		{GeoTransform: [6]float64{0, 1, 0, 10, 0, -1}, Width: 10, Height: 10},
		{CRS: g.CRS, GeoTransform: [6]float64{0, 1, 0, 10, 0, -1}},
		{CRS: g.CRS, GeoTransform: [6]float64{0, 0, 0, 10, 0, 0}, Width: 10, Height: 10},
	} {
		if _, _, err := bad.Window(orb.Bound{Max: orb.Point{1, 1}}); err == nil {
			t.Errorf("grid %+v: no error", bad)
		}
	}
}

// TestMaskRules: the pixel-centre rule on exact ties (GDAL's), holes,
// overlapping polygons united, and a window at an offset.
func TestMaskRules(t *testing.T) {
	g := Grid{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{0, 1, 0, 10, 0, -1}, Width: 10, Height: 10}
	show := func(m []bool, w int) string {
		var b strings.Builder
		for i, v := range m {
			if i > 0 && i%w == 0 {
				b.WriteByte('/')
			}
			if v {
				b.WriteByte('#')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		name string
		aoi  orb.Geometry
		win  image.Rectangle
		want string
	}{
		// Edges through pixel centres: a centre on the west edge is out,
		// on the east edge in (a < centre <= b), and on the north and
		// south edges in (GDAL's rule; TestMaskTiesAgreeWithGDAL).
		{"ties", orb.Bound{Min: orb.Point{1.5, 6.5}, Max: orb.Point{3.5, 8.5}}, image.Rect(0, 0, 5, 5), "...../..##./..##./..##./....."},
		{"inside", orb.Bound{Min: orb.Point{1.2, 6.2}, Max: orb.Point{3.8, 8.8}}, image.Rect(0, 0, 5, 5), "...../.###./.###./.###./....."},
		{"hole", orb.Polygon{
			{{0.1, 0.1}, {4.9, 0.1}, {4.9, 4.9}, {0.1, 4.9}, {0.1, 0.1}},
			{{1.9, 1.9}, {3.1, 1.9}, {3.1, 3.1}, {1.9, 3.1}, {1.9, 1.9}},
		}, image.Rect(0, 5, 5, 10), "#####/#####/##.##/#####/#####"},
		{"overlapping polygons unite", orb.MultiPolygon{
			orb.Bound{Min: orb.Point{0.1, 9.1}, Max: orb.Point{2.9, 9.9}}.ToPolygon(),
			orb.Bound{Min: orb.Point{1.1, 9.1}, Max: orb.Point{3.9, 9.9}}.ToPolygon(),
		}, image.Rect(0, 0, 5, 1), "####."},
		{"window offset", orb.Bound{Min: orb.Point{6.2, 1.2}, Max: orb.Point{7.8, 2.8}}, image.Rect(5, 6, 9, 9), "..../.##./.##."},
	} {
		m, err := g.Mask(tc.aoi, tc.win)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(m, tc.win.Dx()); got != tc.want {
			t.Errorf("%s: mask %s, want %s", tc.name, got, tc.want)
		}
	}
	if m, err := g.Mask(orb.Bound{Max: orb.Point{1, 1}}, image.Rectangle{}); err != nil || m != nil {
		t.Errorf("empty window: %v %v", m, err)
	}
	if _, err := g.Mask(orb.Bound{Max: orb.Point{1, 1}}, image.Rect(0, 0, 1<<15, 1<<15)); err == nil {
		t.Error("a 2^30-pixel mask was built")
	}
}

// TestPixelPlacement: PixelToLonLat and LonLatToPixel invert each other,
// and Outline is the AOI in pixel space.
func TestPixelPlacement(t *testing.T) {
	g := Grid{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{400000, 10, 0, 5000000, 0, -10}, Width: 600, Height: 500}
	lon, lat, err := g.PixelToLonLat(123.5, 456.25)
	if err != nil {
		t.Fatal(err)
	}
	c, r, err := g.LonLatToPixel(lon, lat)
	if err != nil || math.Abs(c-123.5) > 1e-6 || math.Abs(r-456.25) > 1e-6 {
		t.Errorf("round trip (123.5, 456.25) → (%g, %g) → (%g, %g), %v", lon, lat, c, r, err)
	}
	l0, t0, _ := g.PixelToLonLat(100, 100)
	l1, t1, _ := g.PixelToLonLat(200, 300)
	out, err := g.Outline(orb.Bound{Min: orb.Point{l0, t1}, Max: orb.Point{l1, t0}})
	if err != nil || len(out) != 1 {
		t.Fatalf("Outline: %v, %v", out, err)
	}
	b := out.Bound()
	// The lon/lat rectangle through two corners spans them in pixel space
	// give or take the grid's convergence (3 px here).
	if math.Abs(b.Min[0]-100) > 5 || math.Abs(b.Max[0]-200) > 5 || math.Abs(b.Min[1]-100) > 5 || math.Abs(b.Max[1]-300) > 5 {
		t.Errorf("Outline bound %v", b)
	}
	if len(out[0][0]) < 5 {
		t.Errorf("Outline ring has %d points", len(out[0][0]))
	}
	// A grid reaching past where its CRS is defined is refused, not placed.
	far := Grid{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{500000, 1e7, 0, 5000000, 0, -10}, Width: 10, Height: 10}
	if _, _, err := far.Window(orb.Bound{Min: orb.Point{14, 45}, Max: orb.Point{16, 46}}); err == nil {
		t.Error("a grid 10⁸ m wide placed an AOI")
	}
}

// TestPolar: polar stereographic round trips, and a grid round the south
// pole places a polar cap (written along ±180) round the pole and a box
// across the antimeridian on the far side of it.
func TestPolar(t *testing.T) {
	for _, code := range []int{3031, 3413, 3976, 3995, 32661, 32761} {
		c := mustCRS(t, code)
		for lat := 30.0; lat <= 90; lat += 7.5 {
			if c.ps.south {
				lat = -lat
			}
			for lon := -180.0; lon < 180; lon += 33 {
				x, y, err := c.FromLonLat(lon, lat)
				if err != nil {
					t.Fatal(err)
				}
				lon2, lat2, err := c.ToLonLat(x, y)
				if err != nil || groundDistance(lon, lat, lon2, lat2) > 1e-6 {
					t.Errorf("%s (%g, %g): back at (%g, %g), %v", c, lon, lat, lon2, lat2, err)
				}
			}
			lat = math.Abs(lat)
		}
	}
	if _, _, err := mustCRS(t, 3031).FromLonLat(0, 90); err == nil {
		t.Error("the Antarctic projection placed the north pole")
	}
	g := Grid{CRS: mustCRS(t, 3031), GeoTransform: [6]float64{-200000, 1000, 0, 200000, 0, -1000}, Width: 400, Height: 400}
	polarCap := orb.Polygon{{{-180, -88.9}, {180, -88.9}, {180, -90}, {-180, -90}, {-180, -88.9}}}
	w, ok, err := g.Window(polarCap)
	// 1.1° from the pole is about 122 km: pixels 78…322 round the centre.
	if err != nil || !ok || w.Min.X < 75 || w.Min.X > 80 || w.Max.X < 320 || w.Max.X > 325 || w.Min.Y != w.Min.X || w.Max.Y != w.Max.X {
		t.Errorf("cap window %v %v %v", w, ok, err)
	}
	m, err := g.Mask(polarCap, image.Rect(199, 199, 201, 201))
	if err != nil || slices.Contains(m, false) {
		t.Errorf("the pixels at the pole are not in the cap: %v %v", m, err)
	}
	box := orb.Polygon{{{170.3, -89.3}, {-170.1, -89.3}, {-170.7, -88.6}, {170.9, -88.6}, {170.3, -89.3}}}
	w, ok, err = g.Window(box)
	// Longitude 180 points down the grid from the pole (y = -ρ at 180°).
	if err != nil || !ok || w.Min.Y <= 200 || w.Dx() > 60 {
		t.Errorf("box across ±180 beyond the pole: window %v %v %v", w, ok, err)
	}
}

// SourceRect holds every pixel NearestIn maps to, within a pixel's margin,
// for another resolution of the same CRS and for another CRS.
func TestSourceRectHoldsNearestIn(t *testing.T) {
	utm13, err := FromEPSG(32613)
	if err != nil {
		t.Fatal(err)
	}
	utm12, err := FromEPSG(32612)
	if err != nil {
		t.Fatal(err)
	}
	g := Grid{CRS: utm13, GeoTransform: [6]float64{478000, 10, 0, 4438000, 0, -10}, Width: 500, Height: 400}
	for _, src := range []Grid{
		{CRS: utm13, GeoTransform: [6]float64{477000, 0.5, 0, 4439000, 0, -0.5}, Width: 20000, Height: 20000},
		{CRS: utm12, GeoTransform: [6]float64{990000, 20, 0, 4460000, 0, -20}, Width: 5000, Height: 5000},
	} {
		win := image.Rect(37, 21, 311, 250)
		rect, err := g.SourceRect(src, win)
		if err != nil {
			t.Fatal(err)
		}
		cols, rows, err := g.NearestIn(src, win)
		if err != nil {
			t.Fatal(err)
		}
		exact := image.Rectangle{Min: image.Pt(math.MaxInt32, math.MaxInt32)}
		for k := range cols {
			if cols[k] < 0 {
				continue
			}
			if !image.Pt(cols[k], rows[k]).In(rect) {
				t.Fatalf("EPSG:%d: NearestIn maps to (%d, %d), outside SourceRect %v", src.CRS.EPSG, cols[k], rows[k], rect)
			}
			exact.Min = image.Pt(min(exact.Min.X, cols[k]), min(exact.Min.Y, rows[k]))
			exact.Max = image.Pt(max(exact.Max.X, cols[k]+1), max(exact.Max.Y, rows[k]+1))
		}
		if rect.Dx() > exact.Dx()+4 || rect.Dy() > exact.Dy()+4 {
			t.Fatalf("EPSG:%d: SourceRect %v is more than a margin larger than NearestIn's %v", src.CRS.EPSG, rect, exact)
		}
	}
}
