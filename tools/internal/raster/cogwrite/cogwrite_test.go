package cogwrite

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
)

// testRaster is a w×h raster of n bands of type dt: a smooth pattern with
// a hole of no value in the middle and a few values at the type's limits.
func testRaster(w, h, n int, dt DataType, epsg int) *Raster {
	r := &Raster{Width: w, Height: h, DataType: dt, EPSG: epsg, Geographic: epsg == 4326,
		GeoTransform: [6]float64{480000, 10, 0, 4440000, 0, -10},
		Metadata:     map[string]string{"ITEM_IDS": "a,b", "NOTE": `<&"quoted">`}}
	if epsg == 4326 {
		r.GeoTransform = [6]float64{-105.25, 0.0001, 0, 40.085, 0, -0.0001}
	}
	var nd float64
	if !dt.Float() {
		nd = 0
		r.NoData = &nd
	}
	for b := range n {
		vals := make([]float64, w*h)
		for y := range h {
			for x := range w {
				var v float64
				if dt.Float() {
					v = math.Sin(float64(x)/37+float64(b)) * math.Cos(float64(y)/23) * 0.9
				} else {
					v = float64(1 + (x*7+y*13+b*101)%250)
				}
				if x > w/3 && x < w/2 && y > h/3 && y < h/2 {
					v = math.NaN()
				}
				vals[y*w+x] = v
			}
		}
		r.Bands = append(r.Bands, vals)
		// XML's special characters and an entity's text: GDAL and our
		// reader both read back what was written.
		r.Descriptions = append(r.Descriptions, "band "+string(rune('a'+b))+` & <b4/b8> "q" &amp;`)
	}
	r.BandMetadata = make([]map[string]string, n)
	r.BandMetadata[0] = map[string]string{"CALIBRATION": "× 0.0001"}
	return r
}

func writeFile(t *testing.T, r *Raster, o Options) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	n, err := Write(context.Background(), &buf, r, o)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("Write returned %d, wrote %d", n, buf.Len())
	}
	path := filepath.Join(t.TempDir(), "out.tif")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// gdalInfo is the part of gdalinfo -json -stats the tests read.
type gdalInfo struct {
	Size         []int     `json:"size"`
	GeoTransform []float64 `json:"geoTransform"`
	STAC         struct {
		EPSG int `json:"proj:epsg"`
	} `json:"stac"`
	Metadata map[string]map[string]string `json:"metadata"`
	Bands    []struct {
		Type        string                       `json:"type"`
		Description string                       `json:"description"`
		Block       []int                        `json:"block"`
		NoData      any                          `json:"noDataValue"`
		Metadata    map[string]map[string]string `json:"metadata"`
		Overviews   []struct {
			Size []int `json:"size"`
		} `json:"overviews"`
	} `json:"bands"`
}

func gdalinfo(t *testing.T, path string) gdalInfo {
	t.Helper()
	out, err := exec.Command("gdalinfo", "-json", "-stats", "-mdd", "all", path).Output()
	if err != nil {
		t.Fatalf("gdalinfo: %v", err)
	}
	_ = os.Remove(path + ".aux.xml") // -stats writes the statistics beside the file
	var info gdalInfo
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("gdalinfo output: %v\n%s", err, out)
	}
	return info
}

// stats are the population statistics GDAL computes over the valid values
// (as float32 when the type is).
func stats(vals []float64, nodata *float64, dt DataType) (minV, maxV, mean, std float64) {
	minV, maxV = math.Inf(1), math.Inf(-1)
	var sum, sum2 float64
	n := 0
	for _, v := range vals {
		if math.IsNaN(v) || (nodata != nil && v == *nodata) {
			continue
		}
		if dt == Float32 {
			v = float64(float32(v))
		}
		minV, maxV = math.Min(minV, v), math.Max(maxV, v)
		sum += v
		sum2 += v * v
		n++
	}
	mean = sum / float64(n)
	return minV, maxV, mean, math.Sqrt(sum2/float64(n) - mean*mean)
}

func TestGDALReadsItAsCOG(t *testing.T) {
	gdaltest.Need(t, "gdalinfo", "gdal_translate")
	python, validator := gdaltest.COGValidator(t)
	cases := []struct {
		name    string
		r       *Raster
		gdalTyp string
	}{
		{"float32 one band UTM", testRaster(700, 530, 1, Float32, 32613), "Float32"},
		{"float32 three bands", testRaster(300, 260, 3, Float32, 32633), "Float32"},
		{"uint16 four bands", testRaster(513, 257, 4, Uint16, 32613), "UInt16"},
		{"uint8 geographic small", testRaster(90, 70, 2, Uint8, 4326), "Byte"},
		{"int16", testRaster(260, 600, 1, Int16, 3857), "Int16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, _ := writeFile(t, c.r, Options{})
			info := gdalinfo(t, path)
			if got := info.Metadata["IMAGE_STRUCTURE"]["LAYOUT"]; got != "COG" {
				t.Errorf("IMAGE_STRUCTURE LAYOUT = %q, want COG (%v)", got, info.Metadata["IMAGE_STRUCTURE"])
			}
			if got := info.Metadata["IMAGE_STRUCTURE"]["COMPRESSION"]; got != "DEFLATE" {
				t.Errorf("COMPRESSION = %q", got)
			}
			if info.STAC.EPSG != c.r.EPSG {
				t.Errorf("EPSG = %d, want %d", info.STAC.EPSG, c.r.EPSG)
			}
			for i, v := range c.r.GeoTransform {
				if math.Abs(info.GeoTransform[i]-v) > 1e-9*math.Max(1, math.Abs(v)) {
					t.Errorf("geotransform = %v, want %v", info.GeoTransform, c.r.GeoTransform)
					break
				}
			}
			if info.Size[0] != c.r.Width || info.Size[1] != c.r.Height {
				t.Errorf("size %v", info.Size)
			}
			if info.Metadata[""]["ITEM_IDS"] != "a,b" || info.Metadata[""]["NOTE"] != `<&"quoted">` {
				t.Errorf("metadata %v", info.Metadata[""])
			}
			if len(info.Bands) != len(c.r.Bands) {
				t.Fatalf("%d bands", len(info.Bands))
			}
			wantOvr := OverviewSizes(c.r.Width, c.r.Height, 256)
			for b, band := range info.Bands {
				if band.Type != c.gdalTyp || band.Description != c.r.Descriptions[b] {
					t.Errorf("band %d: type %s description %q", b+1, band.Type, band.Description)
				}
				if band.Block[0] != 256 || band.Block[1] != 256 {
					t.Errorf("band %d: block %v", b+1, band.Block)
				}
				switch nd := band.NoData.(type) {
				case string:
					if !c.r.DataType.Float() || nd != "NaN" {
						t.Errorf("band %d: nodata %q", b+1, nd)
					}
				case float64:
					if c.r.NoData == nil || nd != *c.r.NoData {
						t.Errorf("band %d: nodata %v", b+1, nd)
					}
				default:
					t.Errorf("band %d: nodata %v", b+1, band.NoData)
				}
				if len(band.Overviews) != len(wantOvr) {
					t.Errorf("band %d: %d overviews, want %d", b+1, len(band.Overviews), len(wantOvr))
				}
				for k, o := range band.Overviews {
					if k < len(wantOvr) && (o.Size[0] != wantOvr[k][0] || o.Size[1] != wantOvr[k][1]) {
						t.Errorf("overview %d is %v, want %v", k, o.Size, wantOvr[k])
					}
				}
				// gdalinfo -json rounds the statistics it prints to 3
				// decimals; the band's metadata has them in full.
				mn, mx, mean, std := stats(c.r.Bands[b], c.r.NoData, c.r.DataType)
				got := gdalStats(t, band.Metadata[""])
				for k, want := range []float64{mn, mx, mean, std} {
					if math.Abs(got[k]-want) > 1e-6*math.Max(1, math.Abs(want)) {
						t.Errorf("band %d: GDAL's min/max/mean/std %v, ours %v %v %v %v", b+1, got, mn, mx, mean, std)
						break
					}
				}
			}
			if got := info.Bands[0].Metadata[""]["CALIBRATION"]; got != "× 0.0001" {
				t.Errorf("band 1 metadata %v", info.Bands[0].Metadata)
			}
			out, err := exec.Command(python, validator, "--full-check=yes", path).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "is a valid cloud optimized GeoTIFF") || strings.Contains(string(out), "warning") {
				t.Errorf("validate_cloud_optimized_geotiff.py: %v\n%s", err, out)
			}
			compareValues(t, path, c.r)
			readBack(t, path, c.r)
		})
	}
}

// gdalStats are the STATISTICS_* items gdalinfo -stats computed.
func gdalStats(t *testing.T, md map[string]string) [4]float64 {
	t.Helper()
	var out [4]float64
	for k, name := range []string{"MINIMUM", "MAXIMUM", "MEAN", "STDDEV"} {
		v, err := strconv.ParseFloat(md["STATISTICS_"+name], 64)
		if err != nil {
			t.Fatalf("STATISTICS_%s: %v (%v)", name, err, md)
		}
		out[k] = v
	}
	return out
}

// compareValues checks every value GDAL reads at full resolution.
func compareValues(t *testing.T, path string, r *Raster) {
	t.Helper()
	raw := filepath.Join(t.TempDir(), "values.bil")
	if out, err := exec.Command("gdal_translate", "-q", "-of", "ENVI", "-co", "INTERLEAVE=BSQ", path, raw).CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate: %v\n%s", err, out)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	bps := r.DataType.bytesPer()
	n := r.Width * r.Height
	if len(data) != n*bps*len(r.Bands) {
		t.Fatalf("%d bytes of values, want %d", len(data), n*bps*len(r.Bands))
	}
	bad := 0
	for b, vals := range r.Bands {
		for i, want := range vals {
			got := sample(data[(b*n+i)*bps:], r.DataType)
			if math.IsNaN(want) && r.NoData != nil {
				want = *r.NoData
			}
			switch {
			case math.IsNaN(want):
				if !math.IsNaN(got) {
					bad++
				}
			case r.DataType == Float32:
				if got != float64(float32(want)) {
					bad++
				}
			case got != math.Round(want):
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d values differ from GDAL's reading", bad)
	}
}

func sample(b []byte, dt DataType) float64 {
	le := binary.LittleEndian
	switch dt {
	case Uint8:
		return float64(b[0])
	case Int8:
		return float64(int8(b[0]))
	case Uint16:
		return float64(le.Uint16(b))
	case Int16:
		return float64(int16(le.Uint16(b)))
	case Uint32:
		return float64(le.Uint32(b))
	case Int32:
		return float64(int32(le.Uint32(b)))
	case Float32:
		return float64(math.Float32frombits(le.Uint32(b)))
	}
	return math.Float64frombits(le.Uint64(b))
}

// readBack reads the file with our own COG reader: the header as written,
// and every value of the full resolution and of the first overview.
func readBack(t *testing.T, path string, r *Raster) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cog.Open(context.Background(), cog.BytesSource(path, data), cog.Options{})
	if err != nil {
		t.Fatalf("our reader: %v", err)
	}
	in := f.Info()
	if in.EPSG != r.EPSG || in.GeoTransform != r.GeoTransform || in.DataType != string(r.DataType) || in.Bands != len(r.Bands) ||
		in.Compression != "deflate" || len(in.Levels) != 1+len(OverviewSizes(r.Width, r.Height, 256)) {
		t.Errorf("our reader's info: %+v", in)
	}
	if in.Descriptions[0] != r.Descriptions[0] {
		t.Errorf("descriptions %q", in.Descriptions)
	}
	bands := make([]int, len(r.Bands))
	for i := range bands {
		bands[i] = i
	}
	w, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, r.Width, r.Height), bands)
	if err != nil {
		t.Fatal(err)
	}
	for b := range r.Bands {
		for i, want := range r.Bands[b] {
			got := w.Bands[b][i]
			if math.IsNaN(want) {
				if r.NoData != nil {
					want = *r.NoData
				} else if !math.IsNaN(got) {
					t.Fatalf("band %d pixel %d: %v, want NaN", b, i, got)
				} else {
					continue
				}
			}
			if r.DataType == Float32 {
				want = float64(float32(want))
			}
			if got != want {
				t.Fatalf("band %d pixel %d: %v, want %v", b, i, got, want)
			}
		}
	}
	if len(in.Levels) > 1 {
		l := in.Levels[1]
		ov, err := f.ReadWindow(context.Background(), 1, image.Rect(0, 0, l.Width, l.Height), []int{0})
		if err != nil {
			t.Fatal(err)
		}
		// The first overview's top-left pixel is the mean of the valid
		// pixels of the full resolution's top-left 2×2.
		sum, n := 0.0, 0
		for _, i := range []int{0, 1, r.Width, r.Width + 1} {
			if v := r.Bands[0][i]; !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		want := sum / float64(n)
		if !r.DataType.Float() {
			want = math.Round(want)
		} else {
			want = float64(float32(want))
		}
		if got := ov.Bands[0][0]; got != want {
			t.Errorf("overview pixel (0,0) = %v, want %v", got, want)
		}
	}
}

func TestLimitAndCancel(t *testing.T) {
	r := testRaster(600, 600, 2, Float32, 32613)
	var buf bytes.Buffer
	if _, err := Write(context.Background(), &buf, r, Options{MaxBytes: 10_000}); !errors.Is(err, ErrTooLarge) || buf.Len() != 0 {
		t.Errorf("over the limit: err %v, %d bytes written", err, buf.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, &buf, r, Options{}); !errors.Is(err, context.Canceled) || buf.Len() != 0 {
		t.Errorf("cancelled: err %v, %d bytes written", err, buf.Len())
	}
	bad := *r
	bad.Bands = [][]float64{make([]float64, 10)}
	if _, err := Write(context.Background(), &buf, &bad, Options{}); err == nil || buf.Len() != 0 {
		t.Errorf("a band of the wrong size: %v", err)
	}
	ints := testRaster(40, 40, 1, Uint16, 32613)
	ints.NoData = nil
	if _, err := Write(context.Background(), &buf, ints, Options{}); err == nil {
		t.Error("an integer raster without nodata was written")
	}
}

// failingWriter fails after n bytes, as a full disk does.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("no space left on device")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriterFailure(t *testing.T) {
	r := testRaster(300, 300, 1, Float32, 32613)
	if _, err := Write(context.Background(), &failingWriter{n: 5000}, r, Options{}); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Errorf("err = %v, want the writer's", err)
	}
}
