package cog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
)

// testFiles are the committed GeoTIFFs: the generated layouts and the
// rasterio ones.
func testFiles(t testing.TB) []string {
	t.Helper()
	a, _ := filepath.Glob("testdata/*.tif")
	b, _ := filepath.Glob("testdata/rasterio/*.tif")
	files := append(a, b...)
	if len(files) < 10 {
		t.Fatalf("only %d test files in testdata; run testdata/make.sh", len(files))
	}
	return files
}

func openFile(t testing.TB, path string) *File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), BytesSource(path, b), Options{})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return f
}

// jpegTolerance is the largest difference allowed between our JPEG
// decoding (Go's image/jpeg inverse DCT, libjpeg's upsampling and colour
// conversion in ycbcr.go) and GDAL's (libjpeg-turbo): the inverse DCTs
// round differently, ±1 per component, up to 3 after YCbCr conversion
// (measured: see TestGDALAgreement's log; Go's own nearest-sample
// upsampling and conversion differed by up to 21).
const jpegTolerance = 3

// agreement counts what TestGDALAgreement compared.
var agreement struct{ files, windows, values, mismatches, jpegValues, jpegDiffer, maxJPEGDiff atomic.Int64 }

func TestGDALAgreement(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	dir := t.TempDir()
	for _, path := range testFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := openFile(t, path)
			in := f.Info()
			agreement.files.Add(1)
			for lvl, l := range in.Levels {
				// GDAL reads the whole level once and, with -srcwin, the
				// windows across tile edges and in the last partial tile;
				// the other windows are compared with its whole-level read.
				whole := image.Rect(0, 0, l.Width, l.Height)
				all, err := gdalWindow(dir, path, f.h.levels[lvl].ifd, whole)
				if err != nil {
					t.Fatal(err)
				}
				for i, win := range testWindows(l.Width, l.Height, l.TileWidth, l.TileHeight) {
					var want [][]float64
					if i == 3 || i == 6 {
						if want, err = gdalWindow(dir, path, f.h.levels[lvl].ifd, win); err != nil {
							t.Fatal(err)
						}
					} else {
						want = crop(all, whole, win)
					}
					compareWindow(t, f, lvl, win, want)
				}
			}
		})
	}
	t.Logf("GDAL agreement: %d files, %d windows, %d values compared, %d mismatches; JPEG: %d of %d values differ, by at most %d",
		agreement.files.Load(), agreement.windows.Load(), agreement.values.Load(), agreement.mismatches.Load(),
		agreement.jpegDiffer.Load(), agreement.jpegValues.Load(), agreement.maxJPEGDiff.Load())
}

// testWindows are the whole level, its corners, a window across tile
// boundaries (index 3), single rows and columns, and the bottom-right
// partial tile (index 6). Windows that clip to an earlier one are kept
// (the indexes matter), and compared again.
func testWindows(w, h, tw, th int) []image.Rectangle {
	ws := []image.Rectangle{
		image.Rect(0, 0, w, h),
		image.Rect(0, 0, 1, 1),
		image.Rect(w-1, h-1, w, h),
		image.Rect(tw/2+1, th/2+1, tw/2+1+tw+3, th/2+1+th/2+5),
		image.Rect(0, h/2, w, h/2+1),
		image.Rect(w/3, 0, w/3+1, h),
		image.Rect(max(w-13, 0), max(h-9, 0), w, h),
	}
	for i, r := range ws {
		if r = r.Intersect(image.Rect(0, 0, w, h)); r.Empty() {
			r = image.Rect(0, 0, 1, 1)
		}
		ws[i] = r
	}
	return ws
}

// crop is the window win of bands read over the window whole.
func crop(bands [][]float64, whole, win image.Rectangle) [][]float64 {
	out := make([][]float64, len(bands))
	for b, band := range bands {
		for y := win.Min.Y; y < win.Max.Y; y++ {
			i := (y-whole.Min.Y)*whole.Dx() + win.Min.X - whole.Min.X
			out[b] = append(out[b], band[i:i+win.Dx()]...)
		}
	}
	return out
}

func compareWindow(t *testing.T, f *File, lvl int, win image.Rectangle, want [][]float64) {
	t.Helper()
	got, err := f.ReadWindow(context.Background(), lvl, win, nil)
	if err != nil {
		t.Fatalf("level %d window %v: %v", lvl, win, err)
	}
	if len(want) != len(got.Bands) {
		t.Fatalf("level %d window %v: GDAL gave %d bands, we %d", lvl, win, len(want), len(got.Bands))
	}
	isJPEG := f.Info().Compression == "jpeg"
	if f.Info().DataType == "int8" {
		// GDAL 3.6 has no Int8: it reads signed bytes as Byte (with
		// PIXELTYPE=SIGNEDBYTE), so its values are reinterpreted here.
		for _, band := range want {
			for i, v := range band {
				band[i] = float64(int8(uint8(v)))
			}
		}
	}
	agreement.windows.Add(1)
	bad := 0
	for b := range want {
		if len(want[b]) != len(got.Bands[b]) {
			t.Fatalf("level %d window %v band %d: GDAL gave %d values, we %d", lvl, win, b, len(want[b]), len(got.Bands[b]))
		}
		for i, w := range want[b] {
			g := got.Bands[b][i]
			agreement.values.Add(1)
			if isJPEG {
				agreement.jpegValues.Add(1)
			}
			if w == g || (math.IsNaN(w) && math.IsNaN(g)) {
				continue
			}
			if isJPEG {
				agreement.jpegDiffer.Add(1)
				d := int64(math.Abs(w - g))
				for {
					old := agreement.maxJPEGDiff.Load()
					if d <= old || agreement.maxJPEGDiff.CompareAndSwap(old, d) {
						break
					}
				}
				if d <= jpegTolerance {
					continue
				}
			}
			agreement.mismatches.Add(1)
			if bad++; bad <= 3 {
				t.Errorf("level %d window %v band %d pixel (%d,%d): GDAL %v, we %v", lvl, win, b,
					win.Min.X+i%win.Dx(), win.Min.Y+i/win.Dx(), w, g)
			}
		}
	}
}

var gdalCalls atomic.Int64

// TestNodataAgreesWithGDAL compares Window.Valid of the single-band files
// with nodata with GDAL's mask band (gdal_translate -b mask: its nodata
// mask), over the whole full-resolution image.
func TestNodataAgreesWithGDAL(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	dir := t.TempDir()
	// GDAL writes a float32 band's nodata rounded to float32
	// (0.100000001490116119); other writers write "0.1", which GDAL and we
	// must compare in the band's type.
	b, err := os.ReadFile("testdata/f32_nodata_0.1.tif")
	if err != nil {
		t.Fatal(err)
	}
	patched := bytes.Replace(b, []byte("0.100000001490116119\x00"), []byte("0.1\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 1)
	if bytes.Equal(patched, b) {
		t.Fatal("the nodata text of f32_nodata_0.1.tif was not found")
	}
	if err := os.WriteFile(filepath.Join(dir, "f32_nodata_text_0.1.tif"), patched, 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range append(testFiles(t), filepath.Join(dir, "f32_nodata_text_0.1.tif")) {
		f := openFile(t, path)
		in := f.Info()
		if in.NoData == nil || in.Bands != 1 || in.Mask {
			continue
		}
		n++
		out := filepath.Join(dir, filepath.Base(path)+".bin")
		if msg, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-b", "mask", path, out).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", path, err, msg)
		}
		mask, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		w, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, in.Width, in.Height), nil)
		if err != nil {
			t.Fatal(err)
		}
		bad, invalid := 0, 0
		for i := range in.Width * in.Height {
			valid := w.Valid == nil || w.Valid[i]
			if !valid {
				invalid++
			}
			if valid != (mask[i] != 0) {
				if bad++; bad <= 3 {
					t.Errorf("%s pixel %d: valid %v, GDAL's mask %d", path, i, valid, mask[i])
				}
			}
		}
		if invalid == 0 && !strings.Contains(path, "float32.tif") {
			t.Errorf("%s: no pixel is nodata: the comparison proves little", path)
		}
	}
	if n < 4 {
		t.Errorf("only %d single-band files with nodata", n)
	}
}

// gdalWindow is gdal_translate -srcwin of the window of the image in IFD
// ifd (GDAL's GTIFF_DIR syntax), written as ENVI and read back per band.
func gdalWindow(dir, path string, ifd int, win image.Rectangle) ([][]float64, error) {
	out := filepath.Join(dir, fmt.Sprintf("w%d.bin", gdalCalls.Add(1)))
	args := []string{"-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ", "-srcwin", strconv.Itoa(win.Min.X), strconv.Itoa(win.Min.Y), strconv.Itoa(win.Dx()), strconv.Itoa(win.Dy())}
	if ifd > 0 {
		path = fmt.Sprintf("GTIFF_DIR:%d:%s", ifd+1, path)
	}
	args = append(args, path, out)
	if msg, err := exec.Command("gdal_translate", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gdal_translate %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	hdr, err := os.ReadFile(strings.TrimSuffix(out, ".bin") + ".hdr")
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	field := func(name string) int {
		m := regexp.MustCompile(`(?m)^` + name + `\s*=\s*(\d+)`).FindSubmatch(hdr)
		if m == nil {
			return -1
		}
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	var order binary.ByteOrder = binary.LittleEndian
	if field("byte order") == 1 {
		order = binary.BigEndian
	}
	typ := field("data type")
	size := map[int]int{1: 1, 2: 2, 3: 4, 4: 4, 5: 8, 12: 2, 13: 4}[typ]
	if size == 0 {
		return nil, fmt.Errorf("ENVI data type %d", typ)
	}
	n := win.Dx() * win.Dy()
	bands := field("bands")
	if bands*n*size > len(data) { // GDAL's ENVI driver writes at least 2 bytes
		return nil, fmt.Errorf("ENVI file of %d bytes for %d bands of %d values of %d bytes", len(data), bands, n, size)
	}
	res := make([][]float64, bands)
	for b := range res {
		res[b] = make([]float64, n)
		for i := range n {
			o := (b*n + i) * size
			var v float64
			switch typ {
			case 1:
				v = float64(data[o])
			case 2:
				v = float64(int16(order.Uint16(data[o:])))
			case 3:
				v = float64(int32(order.Uint32(data[o:])))
			case 4:
				v = float64(math.Float32frombits(order.Uint32(data[o:])))
			case 5:
				v = math.Float64frombits(order.Uint64(data[o:]))
			case 12:
				v = float64(order.Uint16(data[o:]))
			case 13:
				v = float64(order.Uint32(data[o:]))
			}
			res[b][i] = v
		}
	}
	return res, nil
}

// gdalInfo is the part of gdalinfo -json the tests compare.
type gdalInfo struct {
	Size             [2]int                       `json:"size"`
	GeoTransform     []float64                    `json:"geoTransform"`
	CoordinateSystem struct{ WKT string }         `json:"coordinateSystem"`
	Metadata         map[string]map[string]string `json:"metadata"`
	Bands            []struct {
		Type        string          `json:"type"`
		NoData      json.RawMessage `json:"noDataValue"`
		Scale       *float64        `json:"scale"`
		Offset      *float64        `json:"offset"`
		Description string          `json:"description"`
		Overviews   []struct {
			Size [2]int `json:"size"`
		} `json:"overviews"`
	} `json:"bands"`
}

var epsgAtEnd = regexp.MustCompile(`ID\["EPSG",(\d+)\]\]$`)

func TestGDALInfoAgreement(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	for _, path := range testFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out, err := exec.Command("gdalinfo", "-json", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var g gdalInfo
			if err := json.Unmarshal(out, &g); err != nil {
				t.Fatal(err)
			}
			in := openFile(t, path).Info()
			if in.Width != g.Size[0] || in.Height != g.Size[1] || in.Bands != len(g.Bands) {
				t.Errorf("size %dx%d×%d, GDAL %dx%d×%d", in.Width, in.Height, in.Bands, g.Size[0], g.Size[1], len(g.Bands))
			}
			gt := g.GeoTransform
			if gt == nil {
				gt = []float64{0, 1, 0, 0, 0, 1}
			} else if !in.Georeferenced {
				t.Errorf("not georeferenced; GDAL has a geotransform")
			}
			for i := range 6 {
				if math.Abs(gt[i]-in.GeoTransform[i]) > 1e-9*max(1, math.Abs(gt[i])) {
					t.Errorf("geotransform %v, GDAL %v", in.GeoTransform, gt)
					break
				}
			}
			epsg := 0
			if m := epsgAtEnd.FindStringSubmatch(strings.TrimSpace(g.CoordinateSystem.WKT)); m != nil {
				epsg, _ = strconv.Atoi(m[1])
			}
			if in.EPSG != epsg {
				t.Errorf("EPSG %d, GDAL %d", in.EPSG, epsg)
			}
			if g.Bands[0].Type == "Byte" && in.DataType == "int8" {
				g.Bands[0].Type = "Int8" // GDAL 3.6: Byte with PIXELTYPE=SIGNEDBYTE
			}
			wantType := map[string]string{"Int8": "int8", "Byte": "uint8", "UInt16": "uint16", "Int16": "int16", "UInt32": "uint32",
				"Int32": "int32", "Float32": "float32", "Float64": "float64"}[g.Bands[0].Type]
			if in.DataType != wantType {
				t.Errorf("data type %s, GDAL %s", in.DataType, g.Bands[0].Type)
			}
			var nd *float64
			if s := strings.Trim(string(g.Bands[0].NoData), `"`); s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatalf("GDAL nodata %s", s)
				}
				nd = &v
			}
			if nd != nil && in.NoData != nil && in.DataType == "float32" {
				// One float32 value, however written: GDAL writes it rounded
				// to float32 and reports it shortest (0.1 for 0.100000001490116119).
				a, b := float64(float32(*nd)), float64(float32(*in.NoData))
				nd, in.NoData = &a, &b
			}
			switch {
			case (nd == nil) != (in.NoData == nil):
				t.Errorf("nodata %v, GDAL %s", in.NoData, g.Bands[0].NoData)
			case nd != nil && !(*nd == *in.NoData || math.IsNaN(*nd) && math.IsNaN(*in.NoData)):
				t.Errorf("nodata %v, GDAL %v", *in.NoData, *nd)
			}
			for b, gb := range g.Bands {
				if in.Descriptions[b] != gb.Description {
					t.Errorf("band %d description %q, GDAL %q", b+1, in.Descriptions[b], gb.Description)
				}
				scale, offset := 1.0, 0.0
				if gb.Scale != nil {
					scale = *gb.Scale
				}
				if gb.Offset != nil {
					offset = *gb.Offset
				}
				if in.Scale[b] != scale || in.Offset[b] != offset {
					t.Errorf("band %d scale/offset %v/%v, GDAL %v/%v", b+1, in.Scale[b], in.Offset[b], scale, offset)
				}
			}
			var ovr [][2]int
			for _, o := range g.Bands[0].Overviews {
				ovr = append(ovr, o.Size)
			}
			var ours [][2]int
			for _, l := range in.Levels[1:] {
				ours = append(ours, [2]int{l.Width, l.Height})
			}
			if fmt.Sprint(ovr) != fmt.Sprint(ours) {
				t.Errorf("overviews %v, GDAL %v", ours, ovr)
			}
			is := g.Metadata["IMAGE_STRUCTURE"]
			wantComp := map[string]string{"": "none", "DEFLATE": "deflate", "LZW": "lzw", "ZSTD": "zstd", "JPEG": "jpeg", "YCbCr JPEG": "jpeg"}[is["COMPRESSION"]]
			if in.Compression != wantComp {
				t.Errorf("compression %s, GDAL %q", in.Compression, is["COMPRESSION"])
			}
			if want := strings.ToLower(is["INTERLEAVE"]); want != "" && in.Interleave != want {
				t.Errorf("interleave %s, GDAL %s", in.Interleave, want)
			}
		})
	}
}

// TestMaskAgreesWithGDAL compares Window.Valid of files with an internal
// mask with the mask GDAL reads (the mask IFD opened with GTIFF_DIR: 0
// masked, 1 or 255 valid), at every level, over the test windows.
func TestMaskAgreesWithGDAL(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	dir := t.TempDir()
	masked, maskedPixels := 0, false
	for _, path := range testFiles(t) {
		f := openFile(t, path)
		if !f.Info().Mask {
			continue
		}
		masked++
		t.Run(filepath.Base(path), func(t *testing.T) {
			for lvl, l := range f.h.levels {
				if l.mask == nil {
					t.Errorf("level %d (%dx%d) has no mask; GDAL has one per level", lvl, l.Width, l.Height)
					continue
				}
				whole := image.Rect(0, 0, l.Width, l.Height)
				all, err := gdalWindow(dir, path, l.mask.ifd, whole)
				if err != nil {
					t.Fatal(err)
				}
				for k, win := range testWindows(l.Width, l.Height, l.TileWidth, l.TileHeight) {
					w, err := f.ReadWindow(context.Background(), lvl, win, []int{0})
					if err != nil {
						t.Fatal(err)
					}
					if k == 0 && lvl == 0 && slices.Contains(w.Valid, false) {
						maskedPixels = true
					}
					want := crop(all, whole, win)[0]
					bad := 0
					for i, m := range want {
						valid := w.Valid == nil || w.Valid[i]
						nodata := f.h.info.NoData != nil && w.Bands[0][i] == *f.h.info.NoData
						if valid != (m != 0 && !nodata) {
							if bad++; bad <= 3 {
								t.Errorf("level %d window %v pixel %d: valid %v, GDAL's mask %v", lvl, win, i, valid, m)
							}
						}
					}
				}
			}
		})
	}
	if masked < 2 || !maskedPixels {
		t.Errorf("%d test files with a mask (cogeo.tif and u8_strips_mask.tif have one), masking pixels: %v; the test proves nothing", masked, maskedPixels)
	}
}

// TestLevelGeoTransformAgreesWithGDAL compares an overview's geotransform
// with the one GDAL writes when it copies that overview (gdal_translate -ovr).
func TestLevelGeoTransformAgreesWithGDAL(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	dir := t.TempDir()
	for _, name := range []string{"s2_u16_deflate_cog.tif", "f32_deflate_pred3_band_be.tif", "rasterio/cogeo.tif"} {
		path := filepath.Join("testdata", name)
		f := openFile(t, path)
		for lvl := 1; lvl < len(f.Info().Levels); lvl++ {
			out := filepath.Join(dir, fmt.Sprintf("ovr%d.tif", lvl))
			if msg, err := exec.Command("gdal_translate", "-q", "-ovr", strconv.Itoa(lvl-1), path, out).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, msg)
			}
			js, err := exec.Command("gdalinfo", "-json", out).Output()
			if err != nil {
				t.Fatal(err)
			}
			var g gdalInfo
			if err := json.Unmarshal(js, &g); err != nil {
				t.Fatal(err)
			}
			got := f.LevelGeoTransform(lvl)
			for i := range 6 {
				if math.Abs(got[i]-g.GeoTransform[i]) > 1e-9*max(1, math.Abs(got[i])) {
					t.Errorf("%s level %d: geotransform %v, GDAL %v", name, lvl, got, g.GeoTransform)
					break
				}
			}
		}
	}
}

// TestAlphaAgreesWithGDAL compares Window.MaskValid of a file with an
// alpha band (rasterio's RGBA.uint16.tif: ExtraSamples unassociated alpha)
// with GDAL's mask of its first band, which GDAL takes from the alpha band
// (gdal_translate -b mask: 0 where alpha is 0), for each band read alone:
// the alpha band masks every band, read with it or not.
func TestAlphaAgreesWithGDAL(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	path := "testdata/rasterio/RGBA.uint16.tif"
	f := openFile(t, path)
	in := f.Info()
	if in.Alpha != 4 {
		t.Fatalf("Alpha = %d, want 4 (the fourth sample is unassociated alpha)", in.Alpha)
	}
	out := filepath.Join(t.TempDir(), "mask.bin")
	if msg, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-b", "mask", path, out).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	mask, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, band := range []int{0, 2, 3} {
		w, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, in.Width, in.Height), []int{band})
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Bands) != 1 {
			t.Fatalf("band %d: %d bands returned, want the one asked for", band, len(w.Bands))
		}
		if w.MaskValid == nil {
			t.Fatalf("band %d: no pixel masked, though GDAL's mask has %d zeros", band, bytes.Count(mask, []byte{0}))
		}
		bad, invalid := 0, 0
		for i := range in.Width * in.Height {
			if !w.MaskValid[i] {
				invalid++
			}
			if w.MaskValid[i] != (mask[i] != 0) || w.Valid[i] != w.MaskValid[i] {
				if bad++; bad <= 3 {
					t.Errorf("band %d pixel %d: mask-valid %v valid %v, GDAL's mask %d", band, i, w.MaskValid[i], w.Valid[i], mask[i])
				}
			}
		}
		if zeros := bytes.Count(mask, []byte{0}); invalid != zeros || invalid == 0 {
			t.Errorf("band %d: %d pixels masked by alpha, GDAL's mask has %d zeros", band, invalid, zeros)
		}
	}
}
