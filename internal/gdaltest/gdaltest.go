// Package gdaltest is what the tests and benchmarks that compare with GDAL
// share. GDAL (Debian's gdal-bin and python3-gdal, installed by .ci/run) is
// the reference for the pixel tools' reading, projections, masks and
// written GeoTIFFs. Need and COGValidator keep one rule everywhere: without
// GDAL a test skips, saying so, except in CI (CI=true), where the
// comparison must run and a missing command is a failure. WriteCOG makes
// test COGs with gdal_translate as real catalogs' files are made, and
// COGServer serves them over loopback, logging every request, so that a
// reader's requests and bytes can be counted beside GDAL's own /vsicurl/
// reads (Env, Tuned, Run).
package gdaltest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Need skips tb when one of commands is not installed, or fails it when
// CI=true.
func Need(tb testing.TB, commands ...string) {
	tb.Helper()
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			msg := fmt.Sprintf("%s not found: GDAL (Debian's gdal-bin) is the reference this test compares with", c)
			if os.Getenv("CI") == "true" {
				tb.Fatalf("%s; CI=true, so this is a failure (.ci/run installs gdal-bin)", msg)
			}
			tb.Skip(msg + "; skipped (apt-get install gdal-bin to run it)")
		}
	}
}

// validatorPaths are where Debian's python3-gdal puts GDAL's COG
// validator (swig/python/gdal-utils/osgeo_utils/samples in GDAL's tree).
var validatorPaths = []string{
	"/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_cloud_optimized_geotiff.py",
	"/usr/share/doc/python3-gdal/examples/validate_cloud_optimized_geotiff.py",
}

// COGValidator returns a Python interpreter that imports GDAL's bindings
// and the path of GDAL's validate_cloud_optimized_geotiff.py, skipping tb
// without them (failing it when CI=true: .ci/run installs python3-gdal).
func COGValidator(tb testing.TB) (python, script string) {
	tb.Helper()
	for _, p := range validatorPaths {
		if _, err := os.Stat(p); err == nil {
			script = p
			break
		}
	}
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.CommandContext(context.Background(), py, "-c", "from osgeo import gdal").Run() == nil {
			python = py
			break
		}
	}
	if python == "" || script == "" {
		msg := "GDAL's validate_cloud_optimized_geotiff.py or its Python bindings are missing (Debian's python3-gdal)"
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s; CI=true, so this is a failure (.ci/run installs python3-gdal)", msg)
		}
		tb.Skip(msg + "; skipped")
	}
	return python, script
}

// LoggedRequest is one request the COG server answered.
type LoggedRequest struct {
	Method, Path, Range string
	Status              int
	Bytes               int64 // body bytes sent
}

// COGServer serves the files of a directory with Range support
// (http.ServeContent), after an optional delay per request, and logs what
// it sends.
type COGServer struct {
	*httptest.Server
	delay time.Duration

	inflight sync.WaitGroup // handlers still running: take waits for them
	mu       sync.Mutex
	log      []LoggedRequest
}

// NewCOGServer serves dir on loopback until tb ends; each request waits
// delay first (a catalog host's latency), and /call-<n>/<file> serves
// <file> under another URL (a call's own cache keys).
func NewCOGServer(tb testing.TB, dir string, delay time.Duration) *COGServer {
	tb.Helper()
	s := &COGServer{delay: delay}
	files := http.FileServer(http.Dir(dir))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Done()
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-r.Context().Done():
				return
			}
		}
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK, head: r.Method == http.MethodHead}
		switch {
		case strings.HasSuffix(r.URL.Path, "/"):
			// No directory listings: an object store's answer to one is
			// not a file GDAL reads (GDAL_DISABLE_READDIR_ON_OPEN's probe).
			http.NotFound(cw, r)
		case strings.HasPrefix(r.URL.Path, "/call-"):
			// /call-<n>/<file>: a call's own copy of <file> (its own
			// cache keys), the same bytes.
			_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			inner := r.Clone(r.Context())
			inner.URL.Path = "/" + rest
			files.ServeHTTP(cw, inner)
		default:
			files.ServeHTTP(cw, r)
		}
		s.mu.Lock()
		s.log = append(s.log, LoggedRequest{Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range"), Status: cw.status, Bytes: cw.n})
		s.mu.Unlock()
	}))
	tb.Cleanup(s.Close)
	return s
}

// Take returns the requests logged since the last Take and clears the log.
// A client has its last byte before the handler that sent it returns, so
// Take first waits for the handlers still running.
func (s *COGServer) Take() []LoggedRequest {
	s.inflight.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.log
	s.log = nil
	return out
}

// countingWriter counts the body bytes a handler sends.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
	head   bool // a HEAD answer's body is never sent
}

func (w *countingWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if !w.head {
		w.n += int64(n)
	}
	return n, err
}

// RequestTotals sums a log: requests of any kind (HEAD, 404 probes for
// side-car files and directory listings included: each is a round trip)
// and body bytes.
func RequestTotals(log []LoggedRequest) (requests int, bytes int64) {
	for _, r := range log {
		requests++
		bytes += r.Bytes
	}
	return requests, bytes
}

// Env is the environment GDAL runs with: this process's, without
// proxies (the server is on loopback) and without GDAL or CPL settings of
// the caller's, plus extra.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.EqualFold(k, "http_proxy"), strings.EqualFold(k, "https_proxy"), strings.EqualFold(k, "all_proxy"),
			strings.HasPrefix(k, "GDAL_"), strings.HasPrefix(k, "CPL_"), strings.HasPrefix(k, "VSI_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// Tuned are the /vsicurl/ settings COG servers and titiler users set:
// the first read holds the headers, consecutive ranges are merged, and no
// directory listing or side-car file is looked for.
var Tuned = []string{
	"GDAL_INGESTED_BYTES_AT_OPEN=32768",
	"GDAL_HTTP_MERGE_CONSECUTIVE_RANGES=YES",
	"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR",
}

// Run runs a GDAL command with env, its standard error in the error.
func Run(ctx context.Context, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// COGSpec is a COG to generate: size, tile size, and the GDAL creation
// options beyond COMPRESS/BLOCKSIZE.
type COGSpec struct {
	Name        string
	Size, Tile  int
	DataType    string // UInt16 or Byte
	Compress    string
	Predictor   int
	NoiseDN     float64
	Seed        int
	Classes     bool // SCL-like classes (nearest overviews) instead of reflectance
	Resampling  string
	ExtraCreate []string
	// Origin is the upper-left corner in EPSG:32633 (zero: 500000,
	// 5000000), Res the pixel size in metres (0: 10); Cloud, for Classes,
	// says where the cloud is (nil: a disc left of the centre).
	Origin [2]float64
	Res    int
	Cloud  func(x, y int) bool
}

// WriteCOG writes spec's pixels (a field pattern with noise, like the
// demo's synthetic scenes; classes for an SCL-like band) as a raw file
// described by a VRT, and converts it with gdal_translate -of COG.
func WriteCOG(tb testing.TB, dir string, spec COGSpec) string {
	tb.Helper()
	n := spec.Size
	var raw bytes.Buffer
	for y := range n {
		for x := range n {
			field := (y/64)*131 + x/64 + spec.Seed*7
			if spec.Classes {
				c := byte(4 + field%3) // vegetation, not vegetated, water
				if spec.Cloud != nil && spec.Cloud(x, y) || spec.Cloud == nil && (x-n/3)*(x-n/3)+(y-n/2)*(y-n/2) < n*n/40 {
					c = 9 // a cloud
				}
				raw.WriteByte(c)
				continue
			}
			base := 1500 + float64(field%9)*350
			noise := spec.NoiseDN * pixelNoise(x, y, spec.Seed)
			if spec.DataType == "Byte" {
				raw.WriteByte(byte(40 + float64(field%9)*20 + noise))
				continue
			}
			v := uint16(base + noise)
			_ = binary.Write(&raw, binary.LittleEndian, v)
		}
	}
	bin := filepath.Join(dir, spec.Name+".bin")
	if err := os.WriteFile(bin, raw.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	bytesPer := 2
	if spec.DataType == "Byte" {
		bytesPer = 1
	}
	vrt := filepath.Join(dir, spec.Name+".vrt")
	x0, y0 := 500000.0, 5000000.0
	if spec.Origin != [2]float64{} {
		x0, y0 = spec.Origin[0], spec.Origin[1]
	}
	res := spec.Res
	if res == 0 {
		res = 10
	}
	desc := fmt.Sprintf(`<VRTDataset rasterXSize="%d" rasterYSize="%d">
  <SRS>EPSG:32633</SRS>
  <GeoTransform>%g, %d, 0, %g, 0, -%d</GeoTransform>
  <VRTRasterBand dataType="%s" band="1" subClass="VRTRawRasterBand">
    <NoDataValue>0</NoDataValue>
    <SourceFilename relativeToVRT="1">%s</SourceFilename>
    <ImageOffset>0</ImageOffset><PixelOffset>%d</PixelOffset><LineOffset>%d</LineOffset><ByteOrder>LSB</ByteOrder>
  </VRTRasterBand>
</VRTDataset>
`, n, n, x0, res, y0, res, spec.DataType, filepath.Base(bin), bytesPer, n*bytesPer)
	if err := os.WriteFile(vrt, []byte(desc), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, spec.Name+".tif")
	resampling := spec.Resampling
	if resampling == "" {
		resampling = "AVERAGE"
	}
	args := []string{"-q", "-of", "COG", "-co", "COMPRESS=" + spec.Compress, "-co", fmt.Sprintf("BLOCKSIZE=%d", spec.Tile),
		"-co", "OVERVIEWS=AUTO", "-co", "OVERVIEW_RESAMPLING=" + resampling}
	if spec.Predictor > 0 {
		args = append(args, "-co", fmt.Sprintf("PREDICTOR=%d", spec.Predictor))
	}
	args = append(args, spec.ExtraCreate...)
	args = append(args, vrt, out)
	if err := Run(context.Background(), Env(), "gdal_translate", args...); err != nil {
		tb.Fatal(err)
	}
	_ = os.Remove(bin)
	_ = os.Remove(vrt)
	return out
}

// pixelNoise is deterministic noise in [-1, 1): the texture real scenes
// have, so that tiles compress about as well as a satellite band's.
func pixelNoise(x, y, seed int) float64 {
	h := uint32(x)*73856093 ^ uint32(y)*19349663 ^ uint32(seed)*83492791
	h ^= h >> 13
	h *= 0x5bd1e995
	h ^= h >> 15
	return float64(h)/float64(1<<31) - 1
}
