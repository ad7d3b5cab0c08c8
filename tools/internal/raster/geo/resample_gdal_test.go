package geo

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
)

// TestNearestInAgreesWithGDALWarp warps a source whose pixels are numbered
// (value = row*width + col + 1) onto other grids with gdalwarp -r near
// (-et 0: exact transforms) and checks NearestIn picks the same source
// pixel for every destination pixel: a finer and a coarser grid offset in
// the same CRS, one whose centres lie on the source's pixel edges, a geographic grid and a grid in the next UTM zone.
func TestNearestInAgreesWithGDALWarp(t *testing.T) {
	gdaltest.Need(t, "gdal_create", "gdalwarp", "gdalinfo")
	const sw, sh = 300, 250
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src.bil")
	gdal(t, "", "gdal_create", "-of", "EHdr", "-outsize", strconv.Itoa(sw), strconv.Itoa(sh), "-bands", "1", "-ot", "UInt32",
		"-burn", "0", "-a_srs", "EPSG:32633", "-a_ullr", "500000", "5000000", "506000", "4995000", srcPath)
	px := make([]byte, 4*sw*sh)
	for i := range sw * sh {
		binary.LittleEndian.PutUint32(px[4*i:], uint32(i+1))
	}
	if err := os.WriteFile(srcPath, px, 0o644); err != nil {
		t.Fatal(err)
	}
	src := Grid{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{500000, 20, 0, 5000000, 0, -20}, Width: sw, Height: sh}
	lon, lat, _ := src.PixelToLonLat(sw/2, sh/2)
	total, diffs := 0, 0
	for _, dst := range []Grid{
		{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{500003, 10, 0, 4999993, 0, -10}, Width: 500, Height: 400},
		{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{499917, 60, 0, 5000031, 0, -60}, Width: 110, Height: 90},
		// Centres exactly on the source's pixel edges: the tie goes to the
		// pixel after the edge, in GDAL and here.
		{CRS: mustCRS(t, 32633), GeoTransform: [6]float64{499990, 20, 0, 5000010, 0, -20}, Width: 120, Height: 100},
		{CRS: mustCRS(t, 4326), GeoTransform: [6]float64{lon - 0.03, 0.0002, 0, lat + 0.02, 0, -0.0002}, Width: 300, Height: 200},
		{CRS: mustCRS(t, 32634), GeoTransform: [6]float64{30000, 15, 0, 5002000, 0, -15}, Width: 200, Height: 150},
	} {
		t.Run(dst.CRS.Name, func(t *testing.T) {
			// Where the next zone's grid lands, from ours: put it over the source.
			if dst.CRS.EPSG == 32634 {
				x, y, _ := dst.CRS.FromLonLat(lon, lat)
				dst.GeoTransform[0], dst.GeoTransform[3] = x-1500.5, y+1100.25
			}
			gt := dst.GeoTransform
			out := filepath.Join(t.TempDir(), "dst.bil")
			gdal(t, "", "gdalwarp", "-q", "-of", "EHdr", "-r", "near", "-et", "0", "-ot", "UInt32", "-dstnodata", "0",
				"-t_srs", fmt.Sprintf("EPSG:%d", dst.CRS.EPSG),
				"-te", ftoa(gt[0]), ftoa(gt[3]+float64(dst.Height)*gt[5]), ftoa(gt[0]+float64(dst.Width)*gt[1]), ftoa(gt[3]),
				"-ts", strconv.Itoa(dst.Width), strconv.Itoa(dst.Height), srcPath, out)
			ref, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			cols, rows, err := dst.NearestIn(src, dst.Bounds())
			if err != nil {
				t.Fatal(err)
			}
			inside, bad := 0, 0
			for i := range cols {
				v := int(binary.LittleEndian.Uint32(ref[4*i:]))
				want := [2]int{-1, -1}
				if v > 0 {
					want = [2]int{(v - 1) % sw, (v - 1) / sw}
					inside++
				}
				if got := [2]int{cols[i], rows[i]}; got != want {
					bad++
					if bad <= 5 {
						t.Errorf("pixel (%d, %d): ours %v, gdalwarp %v", i%dst.Width, i/dst.Width, got, want)
					}
				}
			}
			if inside == 0 {
				t.Fatal("the destination misses the source: the case tests nothing")
			}
			t.Logf("%s: %d pixels, %d from the source, %d differ", dst.CRS, len(cols), inside, bad)
			total += len(cols)
			diffs += bad
		})
	}
	t.Logf("NearestIn vs gdalwarp -r near: %d pixels, %d differ", total, diffs)
}
