// Command gencogs writes the demo catalog's synthetic Sentinel-2 L2A
// collection: Cloud-Optimized GeoTIFFs in the layout Earth Search serves
// (UTM, uint16, DEFLATE, internal overviews, nodata 0; 10 m blue, green,
// red, nir and 20 m swir16, swir22, SCL) and the Items that describe them.
// The pixels are invented (see the demo README): a 5.12 km square of fields,
// a reservoir, a small town and roads, seen on three dates with different
// crops, a cloud with its shadow and a swath edge. The generator is
// deterministic, so a rerun writes the same pixels.
//
// It needs GDAL's command-line tools (gdal_translate, gdaltransform):
//
//	go run ./stacclient/stacserver/demo/gencogs
//
// run from the repository root; it rewrites
// stacclient/stacserver/demo/catalog/sentinel-2-l2a-synthetic/.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	collectionID = "sentinel-2-l2a-synthetic"
	outDir       = "stacclient/stacserver/demo/catalog/" + collectionID

	// The tile: UTM 13N (MGRS 13TDE, the demo's Colorado Sentinel-2 tile),
	// a 5.12 km square north-east of Boulder, Colorado.
	epsg   = 32613
	x0, y0 = 478000.0, 4438000.0 // upper-left corner
	size10 = 512                 // 10 m pixels per side
	size20 = size10 / 2          // 20 m pixels per side

	// Earth Search's harmonised Sentinel-2 L2A numbers: processing baseline
	// 04.00 adds 1000 (DN = reflectance × 10000 + 1000) and Earth Search
	// takes it out again, saying so with earthsearch:boa_offset_applied:
	// true, while its raster:bands still name offset −0.1 (the pixel engine
	// knows the convention: tools/internal/pixel/calibrate.go).
	dnScale, dnOffset = 10000.0, 0.0
)

// Surface classes of the invented landscape.
type class int

const (
	crop class = iota
	grass
	soil
	water
	urban
	road
)

// reflectance per class (blue, green, red, nir, swir16, swir22), typical
// surface reflectances of each cover in summer.
var reflectance = map[class][6]float64{
	crop:  {0.030, 0.065, 0.040, 0.420, 0.200, 0.100},
	grass: {0.050, 0.085, 0.090, 0.300, 0.270, 0.180},
	soil:  {0.080, 0.120, 0.160, 0.220, 0.320, 0.260},
	water: {0.060, 0.050, 0.030, 0.015, 0.008, 0.005},
	urban: {0.100, 0.115, 0.135, 0.180, 0.220, 0.200},
	road:  {0.120, 0.130, 0.140, 0.160, 0.200, 0.190},
}

var cloudReflectance = [6]float64{0.450, 0.450, 0.460, 0.480, 0.350, 0.250}

// tile is where a scene's pixels are: its upper-left corner in the
// landscape's 10 m pixels, its size, and the bands written.
type tile struct {
	col0, row0, size int
	bands            []band
}

// origin is the tile's upper-left corner in UTM metres.
func (t tile) origin() (float64, float64) {
	return x0 + float64(t.col0)*10, y0 - float64(t.row0)*10
}

// square is the three-date collection's one tile: the whole 5.12 km square.
var square = tile{size: size10, bands: bands}

// scene is one acquisition date.
type scene struct {
	id, datetime, platform string
	// season moves the crops: 1 is peak green, 0 harvested or senescent.
	season float64
	// harvested fields are bare soil on this date (every k-th field).
	harvestEvery int
	cloud        *blob // nil: clear
	// swathEdge: pixels with x+y below it lie outside the orbit's swath (nodata).
	swathEdge int
}

type blob struct{ cx, cy, rx, ry, shadowDX, shadowDY float64 }

var scenes = []scene{
	{id: "S2B_13TDE_20230614_0_L2A_synthetic", datetime: "2023-06-14T17:52:51Z", platform: "sentinel-2b", season: 1, harvestEvery: 0},
	{id: "S2A_13TDE_20230803_0_L2A_synthetic", datetime: "2023-08-03T17:52:49Z", platform: "sentinel-2a", season: 0.85, harvestEvery: 4,
		cloud: &blob{cx: 330, cy: 170, rx: 70, ry: 48, shadowDX: -38, shadowDY: 62}, swathEdge: 90},
	{id: "S2A_13TDE_20231008_0_L2A_synthetic", datetime: "2023-10-08T18:02:55Z", platform: "sentinel-2a", season: 0.25, harvestEvery: 2,
		cloud: &blob{cx: 80, cy: 430, rx: 26, ry: 20, shadowDX: -14, shadowDY: 24}},
}

// hash is a deterministic integer hash (pixel noise without math/rand state).
func hash(a, b, c int) uint32 {
	h := uint32(a)*73856093 ^ uint32(b)*19349663 ^ uint32(c)*83492791
	h ^= h >> 13
	h *= 0x5bd1e995
	h ^= h >> 15
	return h
}

// unit is hash mapped to [-1, 1).
func unit(a, b, c int) float64 { return float64(hash(a, b, c))/float64(1<<31) - 1 }

// smooth is value noise at the given cell size: slow variation within a field.
func smooth(x, y, cell, seed int) float64 {
	gx, gy := x/cell, y/cell
	fx, fy := float64(x%cell)/float64(cell), float64(y%cell)/float64(cell)
	a, b := unit(gx, gy, seed), unit(gx+1, gy, seed)
	c, d := unit(gx, gy+1, seed), unit(gx+1, gy+1, seed)
	top := a + (b-a)*fx
	bot := c + (d-c)*fx
	return top + (bot-top)*fy
}

// landscape is the date-independent cover at a 10 m pixel and the index of
// its field (for per-field crop choices).
func landscape(x, y int) (class, int) {
	// Reservoir: an ellipse with a wobbly shore.
	dx, dy := float64(x-150)/95, float64(y-330)/70
	if dx*dx+dy*dy < 1+0.12*smooth(x, y, 16, 7) {
		return water, -1
	}
	// Two section-line roads and a diagonal highway.
	if (x >= 254 && x < 257) || (y >= 126 && y < 129) || abs(x-(y*3/4+300)) < 2 {
		return road, -1
	}
	// A small town in the south-east quarter.
	if x > 380 && y > 380 && smooth(x, y, 24, 11) > -0.4 {
		return urban, -1
	}
	// Fields: a 64 px (640 m) grid, each field one cover.
	fi := (y/64)*8 + x/64
	switch v := hash(x/64, y/64, 3) % 10; {
	case v < 6:
		return crop, fi
	case v < 8:
		return grass, fi
	default:
		return soil, fi
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func lerp6(a, b [6]float64, t float64) [6]float64 {
	var o [6]float64
	for i := range o {
		o[i] = a[i] + (b[i]-a[i])*t
	}
	return o
}

// SCL classes (Sentinel-2 L2A scene classification).
const (
	sclNoData      = 0
	sclShadow      = 3
	sclVegetation  = 4
	sclNotVeg      = 5
	sclWater       = 6
	sclCloudMedium = 8
	sclCloudHigh   = 9
)

// pixel is the reflectance of the six bands and the SCL class at a 10 m pixel
// on a date; ok is false outside the swath.
func pixel(s scene, x, y int) (r [6]float64, scl uint8, ok bool) {
	if x+y < s.swathEdge {
		return r, sclNoData, false
	}
	cls, field := landscape(x, y)
	r = reflectance[cls]
	scl = sclNotVeg
	switch cls {
	case water:
		scl = sclWater
	case crop:
		harvested := s.harvestEvery > 0 && field%s.harvestEvery == 0
		if harvested {
			r = lerp6(reflectance[soil], reflectance[grass], 0.15)
		} else {
			// Fields ripen at their own pace around the season.
			t := math.Max(0, math.Min(1, s.season+0.15*unit(field, 0, 5)))
			r = lerp6(reflectance[grass], reflectance[crop], t)
		}
	case grass:
		r = lerp6(reflectance[soil], reflectance[grass], 0.5+0.5*s.season)
	}
	// Slow within-field variation (±8 %) and sensor noise (±0.0003).
	v := 1 + 0.08*smooth(x, y, 32, field+100)
	for i := range r {
		r[i] = r[i]*v + 0.0003*unit(x, y, i+11*int(s.season*100))
	}
	if cls != water && cls != urban && cls != road && r[3] > 1.6*r[2] && (r[3]-r[2])/(r[3]+r[2]) > 0.4 {
		scl = sclVegetation
	}
	if s.cloud != nil {
		c := s.cloud
		// Shadow: the cloud's shape moved away from the sun.
		sdx, sdy := (float64(x)-c.cx-c.shadowDX)/c.rx, (float64(y)-c.cy-c.shadowDY)/c.ry
		if d := sdx*sdx + sdy*sdy + 0.25*smooth(x, y, 12, 21); d < 1 {
			for i := range r {
				r[i] *= 0.35
			}
			scl = sclShadow
		}
		cdx, cdy := (float64(x)-c.cx)/c.rx, (float64(y)-c.cy)/c.ry
		if d := cdx*cdx + cdy*cdy + 0.25*smooth(x, y, 12, 21); d < 1 {
			// Opacity falls off towards the edge: thick core, thin rim.
			op := math.Min(1, 1.6*(1-d))
			r = lerp6(r, cloudReflectance, op)
			scl = sclCloudHigh
			if op < 0.6 {
				scl = sclCloudMedium
			}
		}
	}
	return r, scl, true
}

func dn(refl float64) uint16 {
	v := math.Round(refl*dnScale + dnOffset)
	return uint16(math.Max(1, math.Min(65535, v))) // 0 is nodata
}

type band struct {
	key, file, name, title string
	common                 string
	center, fwhm           float64
	index                  int // into the reflectance array; -1 for SCL
	res                    int
}

var bands = []band{
	{"blue", "B02.tif", "blue", "Blue (band 2) - 10m", "blue", 0.49, 0.098, 0, 10},
	{"green", "B03.tif", "green", "Green (band 3) - 10m", "green", 0.56, 0.045, 1, 10},
	{"red", "B04.tif", "red", "Red (band 4) - 10m", "red", 0.665, 0.038, 2, 10},
	{"nir", "B08.tif", "nir", "NIR 1 (band 8) - 10m", "nir", 0.842, 0.145, 3, 10},
	{"swir16", "B11.tif", "swir16", "SWIR 1 (band 11) - 20m", "swir16", 1.61, 0.143, 4, 20},
	{"swir22", "B12.tif", "swir22", "SWIR 2 (band 12) - 20m", "swir22", 2.19, 0.242, 5, 20},
	{"scl", "SCL.tif", "", "Scene classification map (SCL)", "", 0, 0, -1, 20},
}

func main() {
	log.SetFlags(0)
	if err := os.RemoveAll(outDir); err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "gencogs")
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	footprint := lonLat([][2]float64{{x0, y0}, {x0, y0 - size10*10}, {x0 + size10*10, y0 - size10*10}, {x0 + size10*10, y0}, {x0, y0}})
	var itemLinks []any
	for _, s := range scenes {
		assetDir := filepath.Join(outDir, "assets", s.id)
		if err := os.MkdirAll(assetDir, 0o755); err != nil {
			log.Fatal(err)
		}
		stats := writeScene(s, square, tmp, assetDir)
		writeItem(outDir, collectionID, s, square, footprint, stats)
		itemLinks = append(itemLinks, map[string]any{"rel": "item", "href": "./items/" + s.id + ".json", "type": "application/geo+json"})
	}
	writeCollection(footprint, itemLinks)
	writeSeries(tmp)
}

// sceneStats are the SCL class shares of a scene, in percent, as Earth
// Search's s2:* properties report them.
type sceneStats map[uint8]float64

func writeScene(s scene, t tile, tmp, assetDir string) sceneStats {
	size10, size20 := t.size, t.size/2
	refl := make([][6]float64, size10*size10)
	scl10 := make([]uint8, size10*size10)
	valid := make([]bool, size10*size10)
	for y := 0; y < size10; y++ {
		for x := 0; x < size10; x++ {
			i := y*size10 + x
			refl[i], scl10[i], valid[i] = pixel(s, t.col0+x, t.row0+y)
		}
	}
	stats := sceneStats{}
	for _, b := range t.bands {
		n := size10
		if b.res == 20 {
			n = size20
		}
		raw := make([]uint16, n*n)
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				if b.res == 10 {
					i := y*size10 + x
					if valid[i] {
						raw[y*n+x] = dn(refl[i][b.index])
					}
					continue
				}
				// 20 m: the mean of the 2×2 block (nodata if any is outside
				// the swath); SCL: the block's most severe class.
				var sum float64
				var cls uint8 = 255
				ok := true
				for _, d := range [4][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
					i := (2*y+d[1])*size10 + 2*x + d[0]
					if !valid[i] {
						ok = false
						break
					}
					if b.index >= 0 {
						sum += refl[i][b.index]
					}
					cls = severer(cls, scl10[i])
				}
				switch {
				case !ok:
				case b.index >= 0:
					raw[y*n+x] = dn(sum / 4)
				default:
					raw[y*n+x] = uint16(cls)
					stats[cls]++
				}
			}
		}
		if b.index < 0 {
			for k := range stats {
				stats[k] = stats[k] * 100 / float64(n*n)
			}
		}
		ox, oy := t.origin()
		writeCOG(b, raw, n, ox, oy, tmp, filepath.Join(assetDir, b.file))
	}
	return stats
}

// severer orders SCL classes for 20 m aggregation: a 2×2 block touching a
// cloud is cloud, then shadow, then water, vegetation, other.
func severer(a, b uint8) uint8 {
	rank := map[uint8]int{255: -1, sclNotVeg: 1, sclVegetation: 2, sclWater: 3, sclShadow: 4, sclCloudMedium: 5, sclCloudHigh: 6}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// writeCOG writes raw (n×n) as a VRT-described raw file and converts it with
// gdal_translate into a COG laid out as Earth Search's Sentinel-2 COGs are.
func writeCOG(b band, raw []uint16, n int, ox, oy float64, tmp, out string) {
	bin := filepath.Join(tmp, "band.bin")
	vrt := filepath.Join(tmp, "band.vrt")
	dtype, pixelOffset := "UInt16", 2
	var buf bytes.Buffer
	if b.index < 0 {
		dtype, pixelOffset = "Byte", 1
		for _, v := range raw {
			buf.WriteByte(byte(v))
		}
	} else if err := binary.Write(&buf, binary.LittleEndian, raw); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(bin, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	res := float64(b.res)
	desc := fmt.Sprintf(`<VRTDataset rasterXSize="%d" rasterYSize="%d">
  <SRS>EPSG:%d</SRS>
  <GeoTransform>%.1f, %.1f, 0, %.1f, 0, %.1f</GeoTransform>
  <VRTRasterBand dataType="%s" band="1" subClass="VRTRawRasterBand">
    <NoDataValue>0</NoDataValue>
    <SourceFilename relativeToVRT="1">band.bin</SourceFilename>
    <ImageOffset>0</ImageOffset>
    <PixelOffset>%d</PixelOffset>
    <LineOffset>%d</LineOffset>
    <ByteOrder>LSB</ByteOrder>
  </VRTRasterBand>
</VRTDataset>
`, n, n, epsg, ox, res, oy, -res, dtype, pixelOffset, n*pixelOffset)
	if err := os.WriteFile(vrt, []byte(desc), 0o644); err != nil {
		log.Fatal(err)
	}
	resampling := "AVERAGE"
	if b.index < 0 {
		resampling = "NEAREST" // classes are not averaged
	}
	run("gdal_translate", "-q", "-of", "COG",
		"-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2", "-co", "BLOCKSIZE=256",
		"-co", "OVERVIEWS=AUTO", "-co", "OVERVIEW_RESAMPLING="+resampling,
		"-mo", "AREA_OR_POINT=Area", vrt, out)
	// gdal_translate leaves a .aux.xml only when asked for statistics; make sure.
	_ = os.Remove(out + ".aux.xml")
}

func run(name string, args ...string) string {
	cmd := exec.CommandContext(context.Background(), name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// lonLat converts UTM points to WGS 84 longitude/latitude with gdaltransform.
func lonLat(pts [][2]float64) [][2]float64 {
	var in strings.Builder
	for _, p := range pts {
		fmt.Fprintf(&in, "%f %f\n", p[0], p[1])
	}
	cmd := exec.CommandContext(context.Background(), "gdaltransform", "-s_srs", fmt.Sprintf("EPSG:%d", epsg), "-t_srs", "EPSG:4326", "-output_xy")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("gdaltransform: %v", err)
	}
	var res [][2]float64
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var lon, lat float64
		// -output_xy prints x then y in traditional GIS order: longitude, latitude.
		if _, err := fmt.Sscan(line, &lon, &lat); err != nil {
			log.Fatalf("gdaltransform output %q: %v", line, err)
		}
		res = append(res, [2]float64{round6(lon), round6(lat)})
	}
	return res
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func bbox(pts [][2]float64) []float64 {
	b := []float64{pts[0][0], pts[0][1], pts[0][0], pts[0][1]}
	for _, p := range pts {
		b[0], b[1] = math.Min(b[0], p[0]), math.Min(b[1], p[1])
		b[2], b[3] = math.Max(b[2], p[0]), math.Max(b[3], p[1])
	}
	return b
}

func writeItem(dir, collection string, s scene, t tile, footprint [][2]float64, stats sceneStats) {
	assets := map[string]any{}
	ox, oy := t.origin()
	for _, b := range t.bands {
		n := t.size
		if b.res == 20 {
			n = t.size / 2
		}
		a := map[string]any{
			"href":           "../assets/" + s.id + "/" + b.file,
			"type":           "image/tiff; application=geotiff; profile=cloud-optimized",
			"title":          b.title,
			"proj:shape":     []int{n, n},
			"proj:transform": []float64{float64(b.res), 0, ox, 0, -float64(b.res), oy},
			"roles":          []string{"data", "reflectance"},
			"raster:bands":   []any{map[string]any{"nodata": 0, "data_type": "uint16", "bits_per_sample": 15, "spatial_resolution": b.res, "scale": 0.0001, "offset": -0.1}},
			"gsd":            b.res,
		}
		if b.common != "" {
			a["eo:bands"] = []any{map[string]any{"name": b.name, "common_name": b.common, "description": strings.SplitN(b.title, " - ", 2)[0], "center_wavelength": b.center, "full_width_half_max": b.fwhm}}
		} else {
			delete(a, "gsd")
			a["roles"] = []string{"data"}
			a["raster:bands"] = []any{map[string]any{"nodata": 0, "data_type": "uint8", "spatial_resolution": b.res}}
			a["classification:classes"] = sclClasses()
		}
		assets[b.key] = a
	}
	pct := func(c uint8) float64 { return math.Round(stats[c]*1e4) / 1e4 }
	item := map[string]any{
		"type":         "Feature",
		"stac_version": "1.0.0",
		"stac_extensions": []string{
			"https://stac-extensions.github.io/eo/v1.1.0/schema.json",
			"https://stac-extensions.github.io/projection/v1.1.0/schema.json",
			"https://stac-extensions.github.io/raster/v1.1.0/schema.json",
			"https://stac-extensions.github.io/grid/v1.0.0/schema.json",
			"https://stac-extensions.github.io/classification/v1.1.0/schema.json",
		},
		"id": s.id,
		"properties": map[string]any{
			"datetime":                          s.datetime,
			"platform":                          s.platform,
			"constellation":                     "sentinel-2",
			"instruments":                       []string{"msi"},
			"eo:cloud_cover":                    math.Round((stats[sclCloudHigh]+stats[sclCloudMedium])*1e4) / 1e4,
			"proj:epsg":                         epsg,
			"grid:code":                         "MGRS-13TDE",
			"s2:processing_baseline":            "05.09",
			"s2:product_type":                   "S2MSI2A",
			"s2:nodata_pixel_percentage":        pct(sclNoData),
			"s2:cloud_shadow_percentage":        pct(sclShadow),
			"s2:vegetation_percentage":          pct(sclVegetation),
			"s2:not_vegetated_percentage":       pct(sclNotVeg),
			"s2:water_percentage":               pct(sclWater),
			"s2:medium_proba_clouds_percentage": pct(sclCloudMedium),
			"s2:high_proba_clouds_percentage":   pct(sclCloudHigh),
			"earthsearch:boa_offset_applied":    true,
			"description":                       "Synthetic pixels in the layout of an Earth Search Sentinel-2 L2A item, made for the stac-mcp demo (stacclient/stacserver/demo/gencogs); not an observation.",
		},
		"geometry": map[string]any{"type": "Polygon", "coordinates": [][][2]float64{footprint}},
		"bbox":     bbox(footprint),
		"links": []any{
			map[string]any{"rel": "root", "href": "../../catalog.json", "type": "application/json"},
			map[string]any{"rel": "parent", "href": "../collection.json", "type": "application/json"},
			map[string]any{"rel": "collection", "href": "../collection.json", "type": "application/json"},
		},
		"assets":     assets,
		"collection": collection,
	}
	writeJSON(filepath.Join(dir, "items", s.id+".json"), item)
}

func sclClasses() []any {
	names := []struct {
		v    int
		name string
	}{{0, "no_data"}, {1, "saturated_or_defective"}, {2, "dark_area_pixels"}, {3, "cloud_shadows"}, {4, "vegetation"},
		{5, "not_vegetated"}, {6, "water"}, {7, "unclassified"}, {8, "cloud_medium_probability"},
		{9, "cloud_high_probability"}, {10, "thin_cirrus"}, {11, "snow"}}
	var out []any
	for _, n := range names {
		c := map[string]any{"value": n.v, "name": n.name}
		if n.v == 0 {
			c["nodata"] = true
		}
		out = append(out, c)
	}
	return out
}

func writeCollection(footprint [][2]float64, itemLinks []any) {
	links := []any{
		map[string]any{"rel": "root", "href": "../catalog.json", "type": "application/json"},
		map[string]any{"rel": "parent", "href": "../catalog.json", "type": "application/json"},
	}
	links = append(links, itemLinks...)
	first, last := scenes[0].datetime, scenes[len(scenes)-1].datetime
	coll := map[string]any{
		"type":         "Collection",
		"id":           collectionID,
		"stac_version": "1.0.0",
		"title":        "Sentinel-2 L2A, synthetic demo scenes",
		"description":  "Three invented Sentinel-2 Level-2A scenes of one 5.12 km square of MGRS tile 13TDE (north-east of Boulder, Colorado), in the layout Earth Search serves: Cloud-Optimized GeoTIFFs (uint16, DEFLATE, internal overviews, nodata 0, processing baseline 04.00 offset) for the 10 m blue, green, red, nir and 20 m swir16, swir22 and SCL bands. The pixels are made up (fields, a reservoir, a town, a cloud with its shadow), so that the demo can show pixel statistics, indices and renders offline; they are not an observation.",
		"license":      "CC0-1.0",
		"extent": map[string]any{
			"spatial":  map[string]any{"bbox": [][]float64{bbox(footprint)}},
			"temporal": map[string]any{"interval": [][]string{{first, last}}},
		},
		"links": links,
	}
	writeJSON(filepath.Join(outDir, "collection.json"), coll)
}

func writeJSON(path string, v any) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}

// The series collection: two adjacent tiles of 128 × 128 px (1.28 km) over
// the square's fields and roads, overlapping by 16 px as MGRS
// tiles overlap (so on one 10 m lattice), seen on eight dates of 2023 from
// spring green-up to harvest, with clouds on some, and the east tile
// missing on one date. Blue, green, red and nir at 10 m and SCL at 20 m.
const (
	seriesID   = "sentinel-2-l2a-synthetic-series"
	seriesDir  = "stacclient/stacserver/demo/catalog/" + seriesID
	seriesSize = 128
)

var (
	seriesBands = []band{bands[0], bands[1], bands[2], bands[3], bands[6]}
	seriesTiles = map[string]tile{
		"w": {col0: 140, row0: 40, size: seriesSize, bands: seriesBands},
		"e": {col0: 252, row0: 40, size: seriesSize, bands: seriesBands},
	}
)

// seriesScene is a date of the series: the scene, and the tiles it has.
type seriesScene struct {
	scene
	tiles []string
}

var seriesScenes = []seriesScene{
	{scene{datetime: "2023-04-10T17:52:51Z", platform: "sentinel-2b", season: 0.1}, []string{"w", "e"}},
	{scene{datetime: "2023-05-10T17:52:51Z", platform: "sentinel-2b", season: 0.45, cloud: &blob{cx: 270, cy: 100, rx: 70, ry: 45, shadowDX: -16, shadowDY: 26}}, []string{"w", "e"}},
	{scene{datetime: "2023-06-09T17:52:51Z", platform: "sentinel-2b", season: 0.85}, []string{"w", "e"}},
	{scene{datetime: "2023-07-04T17:52:49Z", platform: "sentinel-2a", season: 1, cloud: &blob{cx: 300, cy: 100, rx: 40, ry: 28, shadowDX: -20, shadowDY: 30}}, []string{"w", "e"}},
	{scene{datetime: "2023-08-03T17:52:49Z", platform: "sentinel-2a", season: 0.9, harvestEvery: 4}, []string{"w"}},
	{scene{datetime: "2023-09-02T17:52:49Z", platform: "sentinel-2a", season: 0.6, harvestEvery: 3, cloud: &blob{cx: 190, cy: 70, rx: 36, ry: 26, shadowDX: -18, shadowDY: 28}}, []string{"w", "e"}},
	{scene{datetime: "2023-10-02T17:52:49Z", platform: "sentinel-2a", season: 0.3, harvestEvery: 2}, []string{"w", "e"}},
	{scene{datetime: "2023-11-06T17:52:51Z", platform: "sentinel-2b", season: 0.1, harvestEvery: 1}, []string{"w", "e"}},
}

func writeSeries(tmp string) {
	if err := os.RemoveAll(seriesDir); err != nil {
		log.Fatal(err)
	}
	var itemLinks []any
	var all [][2]float64
	for _, ss := range seriesScenes {
		for _, name := range ss.tiles {
			t := seriesTiles[name]
			s := ss.scene
			day := strings.ReplaceAll(s.datetime[:10], "-", "")
			s.id = fmt.Sprintf("S%s_13TDE_%s_0_L2A_synthetic_%s", strings.ToUpper(s.platform[len(s.platform)-2:]), day, name)
			assetDir := filepath.Join(seriesDir, "assets", s.id)
			if err := os.MkdirAll(assetDir, 0o755); err != nil {
				log.Fatal(err)
			}
			ox, oy := t.origin()
			side := float64(t.size * 10)
			fp := lonLat([][2]float64{{ox, oy}, {ox, oy - side}, {ox + side, oy - side}, {ox + side, oy}, {ox, oy}})
			all = append(all, fp...)
			stats := writeScene(s, t, tmp, assetDir)
			writeItem(seriesDir, seriesID, s, t, fp, stats)
			itemLinks = append(itemLinks, map[string]any{"rel": "item", "href": "./items/" + s.id + ".json", "type": "application/geo+json"})
		}
	}
	links := []any{
		map[string]any{"rel": "root", "href": "../catalog.json", "type": "application/json"},
		map[string]any{"rel": "parent", "href": "../catalog.json", "type": "application/json"},
	}
	coll := map[string]any{
		"type":         "Collection",
		"id":           seriesID,
		"stac_version": "1.0.0",
		"title":        "Sentinel-2 L2A, synthetic demo series over two adjacent tiles",
		"description":  "Eight invented Sentinel-2 Level-2A dates of 2023 over two adjacent, overlapping 1.28 km tiles north-east of Boulder, Colorado (UTM 13N, one 10 m lattice), in the layout Earth Search serves (blue, green, red, nir at 10 m, SCL at 20 m; uint16, DEFLATE, nodata 0, harmonised numbers): fields greening and being harvested, clouds and their shadows on some dates, the east tile missing on one. Made for the demo's time series, mosaics, composites and change maps; not an observation.",
		"license":      "CC0-1.0",
		"extent": map[string]any{
			"spatial":  map[string]any{"bbox": [][]float64{bbox(all)}},
			"temporal": map[string]any{"interval": [][]string{{seriesScenes[0].datetime, seriesScenes[len(seriesScenes)-1].datetime}}},
		},
		"links": append(links, itemLinks...),
	}
	writeJSON(filepath.Join(seriesDir, "collection.json"), coll)
}
