package bench

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

// Pixel reads measured from the serving side (issue 26): a loopback file
// server that logs every request it answers, the COGs it serves generated
// with GDAL at test time, and GDAL's own /vsicurl/ reads to compare with.

// loggedRequest is one request the COG server answered.
type loggedRequest struct {
	Method, Path, Range string
	Status              int
	Bytes               int64 // body bytes sent
}

// cogServer serves the files of a directory with Range support
// (http.ServeContent), after an optional delay per request, and logs what
// it sends.
type cogServer struct {
	*httptest.Server
	delay time.Duration

	inflight sync.WaitGroup // handlers still running: take waits for them
	mu       sync.Mutex
	log      []loggedRequest
}

func newCOGServer(tb testing.TB, dir string, delay time.Duration) *cogServer {
	tb.Helper()
	s := &cogServer{delay: delay}
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
		s.log = append(s.log, loggedRequest{Method: r.Method, Path: r.URL.Path, Range: r.Header.Get("Range"), Status: cw.status, Bytes: cw.n})
		s.mu.Unlock()
	}))
	tb.Cleanup(s.Close)
	return s
}

// take returns the requests logged since the last take and clears the log.
// A client has its last byte before the handler that sent it returns, so
// take first waits for the handlers still running.
func (s *cogServer) take() []loggedRequest {
	s.inflight.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.log
	s.log = nil
	return out
}

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

// requestTotals sums a log: requests of any kind (HEAD, 404 probes for
// side-car files and directory listings included: each is a round trip)
// and body bytes.
func requestTotals(log []loggedRequest) (requests int, bytes int64) {
	for _, r := range log {
		requests++
		bytes += r.Bytes
	}
	return requests, bytes
}

// needGDAL skips without gdal-bin, except in CI (CI=true), where .ci/run
// installs it and the comparison must run.
func needGDAL(tb testing.TB) {
	tb.Helper()
	for _, tool := range []string{"gdal_translate", "gdalinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				tb.Fatalf("%s is not installed; CI installs gdal-bin (.ci/run)", tool)
			}
			tb.Skipf("%s is not installed (apt-get install gdal-bin): the comparison with GDAL is skipped", tool)
		}
	}
}

// gdalEnv is the environment GDAL runs with: this process's, without
// proxies (the server is on loopback) and without GDAL or CPL settings of
// the caller's, plus extra.
func gdalEnv(extra ...string) []string {
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

// gdalTuned are the /vsicurl/ settings COG servers and titiler users set:
// the first read holds the headers, consecutive ranges are merged, and no
// directory listing or side-car file is looked for.
var gdalTuned = []string{
	"GDAL_INGESTED_BYTES_AT_OPEN=32768",
	"GDAL_HTTP_MERGE_CONSECUTIVE_RANGES=YES",
	"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR",
}

func runGDAL(ctx context.Context, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// cogSpec is a COG to generate: size, tile size, and the GDAL creation
// options beyond COMPRESS/BLOCKSIZE.
type cogSpec struct {
	name        string
	size, tile  int
	dataType    string // UInt16 or Byte
	compress    string
	predictor   int
	noiseDN     float64
	seed        int
	classes     bool // SCL-like classes (nearest overviews) instead of reflectance
	resampling  string
	extraCreate []string
	// origin is the upper-left corner in EPSG:32633 (zero: 500000,
	// 5000000), res the pixel size in metres (0: 10); cloud, for classes,
	// says where the cloud is (nil: a disc left of the centre).
	origin [2]float64
	res    int
	cloud  func(x, y int) bool
}

// writeTestCOG writes spec's pixels (a field pattern with noise, like the
// demo's synthetic scenes; classes for an SCL-like band) as a raw file
// described by a VRT, and converts it with gdal_translate -of COG.
func writeTestCOG(tb testing.TB, dir string, spec cogSpec) string {
	tb.Helper()
	n := spec.size
	var raw bytes.Buffer
	for y := range n {
		for x := range n {
			field := (y/64)*131 + x/64 + spec.seed*7
			if spec.classes {
				c := byte(4 + field%3) // vegetation, not vegetated, water
				if spec.cloud != nil && spec.cloud(x, y) || spec.cloud == nil && (x-n/3)*(x-n/3)+(y-n/2)*(y-n/2) < n*n/40 {
					c = 9 // a cloud
				}
				raw.WriteByte(c)
				continue
			}
			base := 1500 + float64(field%9)*350
			noise := spec.noiseDN * pixelNoise(x, y, spec.seed)
			if spec.dataType == "Byte" {
				raw.WriteByte(byte(40 + float64(field%9)*20 + noise))
				continue
			}
			v := uint16(base + noise)
			_ = binary.Write(&raw, binary.LittleEndian, v)
		}
	}
	bin := filepath.Join(dir, spec.name+".bin")
	if err := os.WriteFile(bin, raw.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	bytesPer := 2
	if spec.dataType == "Byte" {
		bytesPer = 1
	}
	vrt := filepath.Join(dir, spec.name+".vrt")
	x0, y0 := 500000.0, 5000000.0
	if spec.origin != [2]float64{} {
		x0, y0 = spec.origin[0], spec.origin[1]
	}
	res := spec.res
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
`, n, n, x0, res, y0, res, spec.dataType, filepath.Base(bin), bytesPer, n*bytesPer)
	if err := os.WriteFile(vrt, []byte(desc), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, spec.name+".tif")
	resampling := spec.resampling
	if resampling == "" {
		resampling = "AVERAGE"
	}
	args := []string{"-q", "-of", "COG", "-co", "COMPRESS=" + spec.compress, "-co", fmt.Sprintf("BLOCKSIZE=%d", spec.tile),
		"-co", "OVERVIEWS=AUTO", "-co", "OVERVIEW_RESAMPLING=" + resampling}
	if spec.predictor > 0 {
		args = append(args, "-co", fmt.Sprintf("PREDICTOR=%d", spec.predictor))
	}
	args = append(args, spec.extraCreate...)
	args = append(args, vrt, out)
	if err := runGDAL(context.Background(), gdalEnv(), "gdal_translate", args...); err != nil {
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
