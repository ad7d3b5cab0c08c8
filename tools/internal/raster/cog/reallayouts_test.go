package cog

import (
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
)

// The bounds against hostile files leave the layouts real catalogs serve
// readable: GDAL writes them here at their real sizes (Sentinel-2's
// 10980 px in 1024 px COG tiles; Landsat's 7611×7761 in 256 and 512 px
// tiles; GDAL's default strips, 1 row of 10980 px each) and our reader
// opens them in one header request, and reads the windows the pixel tools
// read (an aoi's at full resolution, a whole scene at the level a 1 Mpx
// budget picks) with the defaults, agreeing with GDAL.
func TestRealLayoutsReadWithinTheBounds(t *testing.T) {
	gdaltest.Need(t, "gdal_translate")
	if testing.Short() {
		t.Skip("writes 10980-pixel rasters with GDAL")
	}
	dir := t.TempDir()
	src := "testdata/u8_deflate_sparse.tif"
	gen := func(name string, w, h int, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		a := append([]string{"-q", "-ot", "UInt16", "-scale", "0", "255", "0", "10000", "-outsize", strconv.Itoa(w), strconv.Itoa(h), "-r", "bilinear"}, args...)
		if msg, err := exec.Command("gdal_translate", append(a, src, out)...).CombinedOutput(); err != nil {
			t.Fatalf("gdal_translate %v: %v: %s", a, err, msg)
		}
		return out
	}
	cogArgs := func(block int) []string {
		return []string{"-of", "COG", "-co", "BLOCKSIZE=" + strconv.Itoa(block), "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2", "-co", "RESAMPLING=NEAREST"}
	}
	for _, c := range []struct {
		name string
		path string
		tile int // 0: strips
	}{
		{"Sentinel-2 10980 px, 1024 px tiles", gen("s2.tif", 10980, 10980, cogArgs(1024)...), 1024},
		{"Landsat 7611x7761, 256 px tiles", gen("l8_256.tif", 7611, 7761, cogArgs(256)...), 256},
		{"Landsat 7611x7761, 512 px tiles", gen("l8_512.tif", 7611, 7761, cogArgs(512)...), 512},
		{"GDAL strips, 10980 px rows", gen("strips.tif", 10980, 10980, "-co", "COMPRESS=DEFLATE"), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			f, err := Open(ctx, BytesSource(c.path, b), Options{})
			if err != nil {
				t.Fatal(err)
			}
			in := f.Info()
			l0 := in.Levels[0]
			if c.tile > 0 && (l0.TileWidth != c.tile || in.HeaderRequests != 1) {
				t.Errorf("tiles %dx%d, header in %d requests; want %d px tiles, 1 request", l0.TileWidth, l0.TileHeight, in.HeaderRequests, c.tile)
			}
			if c.tile == 0 && (l0.TileHeight != 1 || l0.TileWidth != 10980) {
				t.Errorf("strips of %dx%d; GDAL's default is 1 row", l0.TileWidth, l0.TileHeight)
			}
			if in.HeaderMemory > 256<<10 {
				t.Errorf("HeaderMemory %d", in.HeaderMemory)
			}
			type read struct {
				lvl int
				win image.Rectangle
			}
			aoi := image.Rect(3000, 2000, 4024, 3024)
			reads := []read{{0, aoi}, {0, image.Rect(5000, 0, 5064, 7000)}}
			if len(in.Levels) > 1 {
				lvl, win := f.ChooseLevel(image.Rect(0, 0, in.Width, in.Height), 1<<20)
				reads = append(reads, read{lvl, win})
			}
			for _, r := range reads {
				cost, err := f.WindowCost(r.lvl, r.win, nil)
				if err != nil {
					t.Fatalf("level %d %v: %v", r.lvl, r.win, err)
				}
				w, err := f.ReadWindow(ctx, r.lvl, r.win, nil)
				if err != nil {
					t.Fatalf("level %d %v: %v", r.lvl, r.win, err)
				}
				t.Logf("level %d %v: %d blocks, %d requests, %d bytes fetched, cost %d bytes (%.1f× the values)",
					r.lvl, w.Rect, w.Blocks, w.Requests, w.Bytes, cost.Bytes, float64(cost.Bytes)/float64(8*cost.Values))
				if r.win == aoi {
					want, err := gdalWindow(dir, c.path, f.h.levels[r.lvl].ifd, w.Rect)
					if err != nil {
						t.Fatal(err)
					}
					for i := range want[0] {
						if w.Bands[0][i] != want[0][i] {
							t.Fatalf("pixel %d: ours %v, GDAL's %v", i, w.Bands[0][i], want[0][i])
						}
					}
				}
			}
		})
	}
}
