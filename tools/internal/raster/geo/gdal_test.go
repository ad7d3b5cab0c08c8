package geo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
)

// gdal runs a GDAL command and returns its standard output.
func gdal(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// gdalTransform runs gdaltransform on points (x y per line) and returns its
// output pairs.
func gdalTransform(t *testing.T, from, to int, pts [][2]float64) [][2]float64 {
	t.Helper()
	var in strings.Builder
	for _, p := range pts {
		fmt.Fprintf(&in, "%.15g %.15g\n", p[0], p[1])
	}
	out := gdal(t, in.String(), "gdaltransform", "-s_srs", fmt.Sprintf("EPSG:%d", from), "-t_srs", fmt.Sprintf("EPSG:%d", to), "-output_xy")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(pts) {
		t.Fatalf("gdaltransform EPSG:%d→%d gave %d lines for %d points:\n%s", from, to, len(lines), len(pts), out)
	}
	res := make([][2]float64, len(pts))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("gdaltransform line %q", l)
		}
		x, err1 := strconv.ParseFloat(f[0], 64)
		y, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("gdaltransform line %q", l)
		}
		res[i] = [2]float64{x, y}
	}
	return res
}

// TestTransformsAgreeWithGDAL compares FromLonLat and ToLonLat with PROJ
// through gdaltransform, for points across UTM zones north and south (on
// the central meridian, inside the zone, on its edges 3° out, and 6° out),
// Web Mercator and the geographic CRSs.
func TestTransformsAgreeWithGDAL(t *testing.T) {
	gdaltest.Need(t, "gdaltransform")
	// Largest errors per family of CRS, in metres (forward: in the CRS's
	// units, metres except geographic, measured on the ground there;
	// inverse: on the ground).
	type stat struct {
		n        int
		fwd, inv float64
	}
	stats := map[string]*stat{}
	families := []string{"UTM, |Δlon| ≤ 3°", "UTM, 6° off the central meridian", "Web Mercator", "polar stereographic",
		"Albers", "Lambert azimuthal", "geographic"}
	for _, f := range families {
		stats[f] = &stat{}
	}
	for _, tc := range []struct {
		code, geog int
	}{
		{32601, 4326}, {32610, 4326}, {32631, 4326}, {32633, 4326}, {32660, 4326},
		{32701, 4326}, {32723, 4326}, {32733, 4326}, {32760, 4326},
		{26910, 4269}, {26918, 4269}, {25832, 4258},
		{3857, 4326}, {4326, 4326}, {4269, 4269},
		{3031, 4326}, {3413, 4326}, {3976, 4326}, {3995, 4326}, {32661, 4326}, {32761, 4326},
		{5070, 4269}, {3577, 4283}, {3035, 4258},
	} {
		c, err := FromEPSG(tc.code)
		if err != nil {
			t.Fatal(err)
		}
		var pts [][2]float64
		var dlons []float64
		switch c.kind {
		case transverseMercator:
			lats := []float64{0, 0.25, 5, 17.5, 33, 45, 52.3, 64, 72, 84}
			if tc.code >= 32701 && tc.code <= 32760 {
				lats = []float64{-80, -72, -61.4, -45, -33.9, -20, -5, -0.25, 0}
			}
			for _, lat := range lats {
				for _, dl := range []float64{-6, -3, -2.999, -2.1, -1, -0.3, 0, 0.6, 1.7, 2.5, 2.999, 3, 6} {
					pts = append(pts, [2]float64{normLon(c.tm.lon0 + dl), lat})
					dlons = append(dlons, dl)
				}
			}
		case webMercator:
			for lat := -85.0; lat <= 85; lat += 8.5 {
				for lon := -180.0; lon <= 180; lon += 22.5 {
					pts = append(pts, [2]float64{lon, lat})
					dlons = append(dlons, 0)
				}
			}
		case polarStereographic:
			for _, lat := range []float64{45, 60, 71, 80, 88.5, 89.99, 90} {
				if c.ps.south {
					lat = -lat
				}
				for lon := -180.0; lon < 180; lon += 27.5 {
					pts = append(pts, [2]float64{lon, lat})
					dlons = append(dlons, 0)
				}
			}
		case albersEqualArea, lambertAzimuthal:
			// Across the area each is made for (CONUS, Australia, Europe)
			// and well beyond it.
			lon0, lat0 := c.aea.lon0, 37.0
			switch {
			case c.EPSG == 3577:
				lat0 = -27
			case c.kind == lambertAzimuthal:
				lon0, lat0 = c.la.lon0, 52
			}
			for dlat := -30.0; dlat <= 30; dlat += 6 {
				for dlon := -50.0; dlon <= 50; dlon += 12.5 {
					pts = append(pts, [2]float64{lon0 + dlon, lat0 + dlat})
					dlons = append(dlons, 0)
				}
			}
		case geographic:
			for _, p := range [][2]float64{{-180, -90}, {0, 0}, {13.4, 52.5}, {179.9, -45}, {-73.9, 40.7}} {
				pts = append(pts, p)
				dlons = append(dlons, 0)
			}
		}
		ref := gdalTransform(t, tc.geog, tc.code, pts)
		ours := make([][2]float64, len(pts))
		for i, p := range pts {
			x, y, err := c.FromLonLat(p[0], p[1])
			if err != nil {
				t.Fatalf("%s FromLonLat(%v): %v", c, p, err)
			}
			ours[i] = [2]float64{x, y}
		}
		// Inverse: GDAL's lon/lat of our x, y against ours of the same x, y.
		refInv := gdalTransform(t, tc.code, tc.geog, ours)
		for i, p := range pts {
			fwd := math.Hypot(ours[i][0]-ref[i][0], ours[i][1]-ref[i][1])
			if c.kind == geographic {
				fwd = groundDistance(ours[i][0], ours[i][1], ref[i][0], ref[i][1])
			}
			lon, lat, err := c.ToLonLat(ours[i][0], ours[i][1])
			if err != nil {
				t.Fatalf("%s ToLonLat(%v): %v", c, ours[i], err)
			}
			inv := groundDistance(lon, lat, refInv[i][0], refInv[i][1])
			if c.kind == lambertAzimuthal {
				// PROJ 9.1 (Debian 12) inverts LAEA with a truncated series
				// for the authalic latitude: its own round trip is 1.6 mm
				// off at 22° N. Measure ours against the point GDAL projected
				// instead (GDAL's forward agrees with ours to 1e-8 m).
				lon2, lat2, err := c.ToLonLat(ref[i][0], ref[i][1])
				if err != nil {
					t.Fatal(err)
				}
				if d := groundDistance(lon, lat, refInv[i][0], refInv[i][1]); d > 0.001 {
					t.Logf("%s at %v: inverse %.2g m from PROJ's (PROJ's truncated series)", c, p, d)
				}
				inv = groundDistance(lon2, lat2, p[0], p[1])
			}
			if math.IsNaN(fwd) || math.IsNaN(inv) {
				t.Fatalf("%s at %v: NaN (fwd %g, inv %g)", c, p, fwd, inv)
			}
			family := map[kind]string{geographic: "geographic", webMercator: "Web Mercator", polarStereographic: "polar stereographic",
				albersEqualArea: "Albers", lambertAzimuthal: "Lambert azimuthal"}[c.kind]
			if c.kind == transverseMercator {
				family = families[0]
				if math.Abs(dlons[i]) > 3 {
					family = families[1]
				}
			}
			st := stats[family]
			st.n++
			st.fwd, st.inv = math.Max(st.fwd, fwd), math.Max(st.inv, inv)
			if family == families[1] {
				continue // reported, not bounded: outside the zone UTM is not used
			}
			if fwd > 0.001 || inv > 0.001 {
				t.Errorf("%s at lon/lat %v: forward %.6f m, inverse %.6f m from gdaltransform; want < 1 mm", c, p, fwd, inv)
			}
		}
	}
	for _, f := range families {
		t.Logf("%s: %d points, max error vs gdaltransform forward %.2g m, inverse %.2g m", f, stats[f].n, stats[f].fwd, stats[f].inv)
	}
}

// gridFile is a GDAL raster (EHdr: raw bytes, one per pixel) of a grid,
// burnt 0, and the grid as GDAL reads it back.
type gridFile struct {
	dir  string
	grid Grid
}

func makeGridFile(t *testing.T, code int, ulx, uly, res float64, w, h int) gridFile {
	t.Helper()
	c, err := FromEPSG(code)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gdal(t, "", "gdal_create", "-of", "EHdr", "-outsize", strconv.Itoa(w), strconv.Itoa(h), "-bands", "1", "-ot", "Byte",
		"-burn", "0", "-a_srs", fmt.Sprintf("EPSG:%d", code),
		"-a_ullr", ftoa(ulx), ftoa(uly), ftoa(ulx+float64(w)*res), ftoa(uly-float64(h)*res),
		filepath.Join(dir, "grid.bil"))
	gdal(t, "", "gdal_create", "-of", "EHdr", "-outsize", strconv.Itoa(w), strconv.Itoa(h), "-bands", "1", "-ot", "Byte",
		"-burn", "1", "-a_srs", fmt.Sprintf("EPSG:%d", code),
		"-a_ullr", ftoa(ulx), ftoa(uly), ftoa(ulx+float64(w)*res), ftoa(uly-float64(h)*res),
		filepath.Join(dir, "ones.bil"))
	var info struct {
		GeoTransform []float64 `json:"geoTransform"`
		Size         []int     `json:"size"`
	}
	if err := json.Unmarshal([]byte(gdal(t, "", "gdalinfo", "-json", filepath.Join(dir, "grid.bil"))), &info); err != nil || len(info.GeoTransform) != 6 {
		t.Fatalf("gdalinfo: %v %v", err, info)
	}
	g := Grid{CRS: c, Width: w, Height: h}
	copy(g.GeoTransform[:], info.GeoTransform)
	return gridFile{dir: dir, grid: g}
}

// cutline warps the grid's all-ones copy onto the same grid with
// gdalwarp -cutline (the AOI as GeoJSON in EPSG:4326) and returns the
// pixels: 1 where the cutline keeps the pixel, 0 (the nodata) elsewhere;
// an error when gdalwarp refuses the cutline.
func (gf gridFile) cutline(t *testing.T, name string, geojson []byte) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	aoi := filepath.Join(dir, name+".geojson")
	if err := os.WriteFile(aoi, geojson, 0o644); err != nil {
		t.Fatal(err)
	}
	g := gf.grid
	gt := g.GeoTransform
	out := filepath.Join(dir, "cut.bil")
	cmd := exec.Command("gdalwarp", "-q", "-of", "EHdr", "-cutline", aoi, "-dstnodata", "0", "-r", "near",
		"-te", ftoa(gt[0]), ftoa(gt[3]+float64(g.Height)*gt[5]), ftoa(gt[0]+float64(g.Width)*gt[1]), ftoa(gt[3]),
		"-ts", strconv.Itoa(g.Width), strconv.Itoa(g.Height),
		filepath.Join(gf.dir, "ones.bil"), out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(string(msg)))
	}
	px, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(px) != g.Width*g.Height {
		t.Fatalf("gdalwarp wrote %d bytes for %d×%d", len(px), g.Width, g.Height)
	}
	return px, nil
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// rasterize burns 1 into a copy of the grid file where gdal_rasterize puts
// the AOI (written as GeoJSON in EPSG:4326), and returns the pixels.
func (gf gridFile) rasterize(t *testing.T, name string, geojson []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"grid.bil", "grid.hdr", "grid.prj"} {
		b, err := os.ReadFile(filepath.Join(gf.dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	aoi := filepath.Join(dir, name+".geojson")
	if err := os.WriteFile(aoi, geojson, 0o644); err != nil {
		t.Fatal(err)
	}
	gdal(t, "", "gdal_rasterize", "-q", "-burn", "1", aoi, filepath.Join(dir, "grid.bil"))
	px, err := os.ReadFile(filepath.Join(dir, "grid.bil"))
	if err != nil {
		t.Fatal(err)
	}
	if len(px) != gf.grid.Width*gf.grid.Height {
		t.Fatalf("gdal_rasterize wrote %d bytes for %d×%d", len(px), gf.grid.Width, gf.grid.Height)
	}
	return px
}
