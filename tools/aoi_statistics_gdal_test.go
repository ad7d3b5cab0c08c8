package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
)

// aoi_statistics against GDAL (issue 26: "our statistics with GDAL's
// within float tolerance"). The scene is the demo's synthetic Sentinel-2
// L2A item (512×512 px of 10 m, 256 px tiles, an SCL with clouds,
// shadows, water and nodata), read from the demo's local catalog. GDAL's
// side: gdalwarp -cutline aoi.geojson -crop_to_cutline on the source grid
// (-tap -tr 10 10, nearest: the pixels are copied, not resampled; the
// cutline keeps the pixels whose centre is inside, as the tool does),
// then gdal_translate -of XYZ (the area's pixel count from the same
// warp's -dstalpha with the source nodata ignored); the test drops nodata (0) and the pixels
// whose SCL class the tool masks (mask.SCLMasked, SCL's nodata too, SCL
// looked up at the 20 m pixel holding the 10 m pixel's centre, which is
// the tool's nearest-neighbour resampling), calibrates DN × 0.0001 (Earth
// Search's harmonised numbers, as earthsearch:boa_offset_applied says;
// raster:bands' −0.1 is not applied) and computes count, min, max, mean and population
// std. The tool's structured output is rounded to 4 decimals (round4),
// so min and max must equal GDAL's rounded the same way and mean and std
// must lie within half a rounding step (5e-5) of GDAL's full-precision
// values: that step, not float error, is the tolerance.

// runGDAL runs a GDAL command and returns its standard output.
func runGDAL(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// xyzPixel is one pixel of gdal_translate -of XYZ: its centre and value.
type xyzPixel struct{ x, y, v float64 }

func readXYZ(t *testing.T, args ...string) []xyzPixel {
	t.Helper()
	var px []xyzPixel
	sc := bufio.NewScanner(bytes.NewReader(runGDAL(t, "gdal_translate", append(append([]string{"-q", "-of", "XYZ"}, args...), "/vsistdout/")...)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			t.Fatalf("XYZ line %q", sc.Text())
		}
		var p [3]float64
		for i, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("XYZ line %q: %v", sc.Text(), err)
			}
			p[i] = v
		}
		px = append(px, xyzPixel{p[0], p[1], p[2]})
	}
	return px
}

// gdalStats are the statistics computed from GDAL's pixels.
type gdalStats struct {
	valid               int
	min, max, mean, std float64
}

func TestAOIStatisticsAgreesWithGDAL(t *testing.T) {
	t.Parallel()
	gdaltest.Need(t, "gdalwarp", "gdal_translate")
	catalog, err := filepath.Abs(filepath.Join("..", "stacclient", "stacserver", "demo", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	const item = "S2A_13TDE_20230803_0_L2A_synthetic"
	assets := filepath.Join(catalog, "sentinel-2-l2a-synthetic", "assets", item)
	const x0, y0 = 478000.0, 4438000.0 // the scene's north-west corner (EPSG:32613)

	// SCL at 20 m, by (column, row).
	scl := map[[2]int]float64{}
	for _, p := range readXYZ(t, filepath.Join(assets, "SCL.tif")) {
		scl[[2]int{int(math.Floor((p.x - x0) / 20)), int(math.Floor((y0 - p.y) / 20))}] = p.v
	}
	if len(scl) != 256*256 {
		t.Fatalf("SCL: %d pixels", len(scl))
	}

	crs, err := geo.FromEPSG(32613)
	if err != nil {
		t.Fatal(err)
	}
	lonLat := func(ring [][2]float64) [][]float64 {
		var out [][]float64
		for _, c := range ring {
			lon, lat, err := crs.ToLonLat(c[0], c[1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, []float64{lon, lat})
		}
		return append(out, out[0])
	}
	// The vertices are off the 10 m pixel centres (x, y ≡ 5 mod 10).
	bbox := lonLatBBox(t, 478333, 4436111, 479207, 4436999)
	cases := []struct {
		name string
		aoi  any         // the tool's aoi
		ring [][]float64 // the same area for the cutline (lon/lat)
	}{
		{"bbox", bbox, [][]float64{{bbox[0], bbox[1]}, {bbox[2], bbox[1]}, {bbox[2], bbox[3]}, {bbox[0], bbox[3]}, {bbox[0], bbox[1]}}},
		// A concave U (notch from the north) with slanted edges.
		{"concave", nil, lonLat([][2]float64{{478512.3, 4433207.7}, {479893.1, 4433391.2}, {480101.7, 4434602.9},
			{479603.4, 4434511.6}, {479422.2, 4433802.8}, {478988.6, 4433861.1}, {478877.9, 4434688.4}, {478401.2, 4434577.3}})},
		// Across the corner where four 256 px tiles meet (480560, 4435440).
		{"tile-corner", nil, lonLat([][2]float64{{480103.3, 4435012.4}, {481122.8, 4434901.9}, {480987.1, 4435876.6}, {480211.6, 4436023.2}})},
	}
	for i := range cases {
		if cases[i].aoi == nil {
			cases[i].aoi = map[string]any{"type": "Polygon", "coordinates": [][][]float64{cases[i].ring}}
		}
	}

	cs := newTestSession(t, testSessionOptions{CatalogURL: filepath.Join(catalog, "catalog.json")})
	bands := map[string]string{"blue": "B02", "red": "B04", "nir": "B08"}
	order := []string{"blue", "red", "nir"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := callOK(t, cs, "aoi_statistics", map[string]any{"collection_id": "sentinel-2-l2a-synthetic", "item_id": item,
				"aoi": c.aoi, "bands": order})
			out := structured[AOIStatisticsOut](t, res)
			if out.Resolution.Level != 0 || out.Mask == nil || out.Mask.Asset != "scl" {
				t.Fatalf("read %+v, mask %+v", out.Resolution, out.Mask)
			}
			dir := t.TempDir()
			cut := filepath.Join(dir, "aoi.geojson")
			fc, _ := json.Marshal(map[string]any{"type": "FeatureCollection", "features": []any{map[string]any{"type": "Feature", "properties": map[string]any{},
				"geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{c.ring}}}}})
			if err := os.WriteFile(cut, fc, 0o644); err != nil {
				t.Fatal(err)
			}
			// The area's pixels: the cutline's alpha, source nodata ignored.
			alpha := filepath.Join(dir, "alpha.tif")
			runGDAL(t, "gdalwarp", "-q", "-overwrite", "-cutline", cut, "-crop_to_cutline", "-tap", "-tr", "10", "10", "-r", "near",
				"-srcnodata", "None", "-dstalpha", filepath.Join(assets, "B04.tif"), alpha)
			area := 0
			for _, p := range readXYZ(t, "-b", "2", alpha) {
				if p.v != 0 {
					area++
				}
			}
			for k, name := range order {
				warped := filepath.Join(dir, name+".tif")
				runGDAL(t, "gdalwarp", "-q", "-overwrite", "-cutline", cut, "-crop_to_cutline", "-tap", "-tr", "10", "10", "-r", "near",
					filepath.Join(assets, bands[name]+".tif"), warped)
				var vals []float64
				for _, p := range readXYZ(t, warped) {
					if p.v == 0 { // nodata, and outside the cutline
						continue
					}
					cl, ok := scl[[2]int{int(math.Floor((p.x - x0) / 20)), int(math.Floor((y0 - p.y) / 20))}]
					if !ok || cl == 0 || slices.Contains(mask.SCLMasked, int(cl)) {
						continue
					}
					vals = append(vals, p.v*0.0001)
				}
				g := summarizeGDAL(vals)
				s := out.Stats[k]
				if s.Band != name || s.Min == nil {
					t.Fatalf("%s: %+v", name, s)
				}
				t.Logf("%s: GDAL pixels %d valid %d min %.4f max %.4f mean %.9f std %.9f | tool valid %d of %d min %v max %v mean %v std %v",
					name, area, g.valid, g.min, g.max, g.mean, g.std, s.Valid, s.Pixels, *s.Min, *s.Max, *s.Mean, *s.Std)
				const half = 5e-5 * (1 + 1e-9) // round4's half step, and float slack
				if s.Pixels != area || s.Valid != g.valid || *s.Min != round4(g.min) || *s.Max != round4(g.max) ||
					math.Abs(*s.Mean-g.mean) > half || math.Abs(*s.Std-g.std) > half {
					t.Errorf("%s: the tool says pixels %d valid %d min %v max %v mean %v std %v; GDAL's pixels give pixels %d valid %d min %v max %v mean %v std %v",
						name, s.Pixels, s.Valid, *s.Min, *s.Max, *s.Mean, *s.Std, area, g.valid, g.min, g.max, g.mean, g.std)
				}
			}
		})
	}
}

// summarizeGDAL is count, min, max, mean and population std, two-pass.
func summarizeGDAL(v []float64) gdalStats {
	g := gdalStats{valid: len(v), min: math.Inf(1), max: math.Inf(-1)}
	var sum float64
	for _, x := range v {
		g.min, g.max = math.Min(g.min, x), math.Max(g.max, x)
		sum += x
	}
	g.mean = sum / float64(len(v))
	var sq float64
	for _, x := range v {
		sq += (x - g.mean) * (x - g.mean)
	}
	g.std = math.Sqrt(sq / float64(len(v)))
	return g
}
