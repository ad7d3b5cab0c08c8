package cog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
)

// gdalCase is one window read done by GDAL (gdal_translate -srcwin over
// /vsicurl/) and by our reader, over the same logging loopback server.
type gdalCase struct {
	name, file string
	win        image.Rectangle // full-resolution pixels
	outSize    int             // > 0: read at the overview of this size (gdal_translate -outsize)
	bands      []int           // ours: nil, every band
}

// gdalRow is what one case cost each reader, counted on the server.
type gdalRow struct {
	gdalCase
	gdalDefaultReq, gdalTunedReq, oursReq       int
	gdalDefaultBytes, gdalTunedBytes, oursBytes int64
}

// compareFiles generates the COGs the cases read: a Sentinel-2-style
// 10 m band (uint16, DEFLATE, predictor 2, 512 px tiles, overviews), its
// 20 m SCL (uint8, nearest overviews) and a NAIP-style RGB JPEG (YCbCr).
func compareFiles(tb testing.TB, dir string) {
	tb.Helper()
	writeTestCOG(tb, dir, cogSpec{name: "s2_b04", size: 2048, tile: 512, dataType: "UInt16", compress: "DEFLATE", predictor: 2, noiseDN: 60, seed: 1})
	writeTestCOG(tb, dir, cogSpec{name: "s2_scl", size: 1024, tile: 512, dataType: "Byte", compress: "DEFLATE", classes: true, resampling: "NEAREST"})
	writeTestCOG(tb, dir, cogSpec{name: "naip_rgb", size: 1024, tile: 256, dataType: "Byte", compress: "JPEG", noiseDN: 20, seed: 3,
		extraCreate: []string{"-b", "1", "-b", "1", "-b", "1", "-co", "QUALITY=85"}})
}

var gdalCases = []gdalCase{
	{name: "S2 10 m, 200×200 px in one tile", file: "s2_b04.tif", win: image.Rect(100, 100, 300, 300)},
	{name: "S2 10 m, 300×300 px across 4 tiles", file: "s2_b04.tif", win: image.Rect(400, 400, 700, 700)},
	{name: "S2 10 m, 1000×1000 px AOI (9 tiles)", file: "s2_b04.tif", win: image.Rect(500, 500, 1500, 1500)},
	{name: "S2 10 m, whole image at the 512 px overview", file: "s2_b04.tif", win: image.Rect(0, 0, 2048, 2048), outSize: 512},
	{name: "S2 SCL 20 m, 500×500 px across 4 tiles", file: "s2_scl.tif", win: image.Rect(250, 250, 750, 750)},
	{name: "NAIP-style RGB JPEG, 400×400 px (9 tiles)", file: "naip_rgb.tif", win: image.Rect(600, 600, 1000, 1000)},
}

// newLayerFetcher is the fetcher the pixel tools use: stacclient's
// FetchRange over the reliability layer's client (attempts, budgets,
// breaker, hedging, address rules), one GET with a Range header per range.
// Its response cache is off: every read is counted cold, as GDAL's are;
// and so is hedging, whose copies go out when an answer is slower than the
// host's usual (on a loaded machine, a matter of scheduling): the counts
// are the reader's requests, the same on every run.
func newLayerFetcher(tb testing.TB, base string) cog.RangeFetcher {
	tb.Helper()
	logger := zerolog.Nop()
	policy := reliability.DefaultPolicy()
	policy.CacheTTL = 0
	policy.Hedge = false
	client, err := stacclient.New(base, stacclient.Options{HTTPClient: reliability.New(policy, reliability.Options{Logger: &logger}).HTTPClient()})
	if err != nil {
		tb.Fatal(err)
	}
	return client
}

// oursRead opens url afresh (no cache: GDAL starts cold too) and reads c.
func oursRead(ctx context.Context, fetch cog.RangeFetcher, url string, c gdalCase) (*cog.Window, error) {
	f, err := cog.Open(ctx, cog.HTTPSource(fetch, url, url), cog.Options{})
	if err != nil {
		return nil, err
	}
	lvl, win := 0, c.win
	if c.outSize > 0 {
		for i, l := range f.Info().Levels {
			if l.Width == c.outSize {
				lvl = i
			}
		}
		win = f.LevelWindow(c.win, lvl)
	}
	return f.ReadWindow(ctx, lvl, win, c.bands)
}

// gdalRead runs gdal_translate over /vsicurl/ for c with env.
func gdalRead(ctx context.Context, env []string, url, out string, c gdalCase) error {
	args := []string{"-q", "-srcwin", fmt.Sprint(c.win.Min.X), fmt.Sprint(c.win.Min.Y), fmt.Sprint(c.win.Dx()), fmt.Sprint(c.win.Dy())}
	if c.outSize > 0 {
		args = append(args, "-outsize", fmt.Sprint(c.outSize), fmt.Sprint(c.outSize))
	}
	args = append(args, "/vsicurl/"+url, out)
	return runGDAL(ctx, env, "gdal_translate", args...)
}

// TestRangeRequestsAgainstGDAL: for the same window reads over a loopback
// server, our reader sends no more range requests and reads no more bytes
// than GDAL's /vsicurl/, with GDAL's defaults or with the settings COG
// users tune (issue 26 Proof). Everything is counted on the server side.
// With STAC_MCP_GDAL_TABLE=path the table is written there (bench/RESULTS.md).
func TestRangeRequestsAgainstGDAL(t *testing.T) {
	gdaltest.Need(t, "gdal_translate", "gdalinfo")
	dir := t.TempDir()
	compareFiles(t, dir)
	srv := newCOGServer(t, dir, 0)
	fetch := newLayerFetcher(t, srv.URL)
	ctx := t.Context()
	var rows []gdalRow
	for i, c := range gdalCases {
		url := srv.URL + "/" + c.file
		row := gdalRow{gdalCase: c}
		srv.take()
		if err := gdalRead(ctx, gdalEnv(), url, filepath.Join(t.TempDir(), fmt.Sprintf("d%d.tif", i)), c); err != nil {
			t.Fatal(err)
		}
		logD := srv.take()
		row.gdalDefaultReq, row.gdalDefaultBytes = requestTotals(logD)
		if err := gdalRead(ctx, gdalEnv(gdalTuned...), url, filepath.Join(t.TempDir(), fmt.Sprintf("t%d.tif", i)), c); err != nil {
			t.Fatal(err)
		}
		logT := srv.take()
		row.gdalTunedReq, row.gdalTunedBytes = requestTotals(logT)
		w, err := oursRead(ctx, fetch, url, c)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		logO := srv.take()
		row.oursReq, row.oursBytes = requestTotals(logO)
		if os.Getenv("STAC_MCP_GDAL_LOG") != "" {
			t.Logf("%s\ndefaults %+v\ntuned %+v\nours %+v", c.name, logD, logT, logO)
		}
		// The reader's own count must be the server's (header reads are
		// not in Window.Requests, so it is at most the server's).
		if w.Requests > row.oursReq || int64(w.Bytes) > row.oursBytes {
			t.Errorf("%s: the reader counted %d requests and %d bytes, the server %d and %d", c.name, w.Requests, w.Bytes, row.oursReq, row.oursBytes)
		}
		best, bestBytes := min(row.gdalDefaultReq, row.gdalTunedReq), min(row.gdalDefaultBytes, row.gdalTunedBytes)
		if row.oursReq > best || row.oursBytes > bestBytes {
			t.Errorf("%s: ours %d requests, %d bytes; GDAL's best %d requests, %d bytes (defaults %d/%d, tuned %d/%d)",
				c.name, row.oursReq, row.oursBytes, best, bestBytes, row.gdalDefaultReq, row.gdalDefaultBytes, row.gdalTunedReq, row.gdalTunedBytes)
		}
		rows = append(rows, row)
	}
	table := gdalTable(rows)
	t.Log("\n" + table)
	if path := os.Getenv("STAC_MCP_GDAL_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gdalTable(rows []gdalRow) string {
	var b strings.Builder
	b.WriteString("| read | GDAL defaults: requests / bytes | GDAL tuned: requests / bytes | ours: requests / bytes |\n|---|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d / %d | %d / %d | %d / %d |\n", r.name, r.gdalDefaultReq, r.gdalDefaultBytes,
			r.gdalTunedReq, r.gdalTunedBytes, r.oursReq, r.oursBytes)
	}
	return b.String()
}

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
		if strings.HasSuffix(r.URL.Path, "/") {
			// No directory listings: an object store's answer to one is
			// not a file GDAL reads (GDAL_DISABLE_READDIR_ON_OPEN's probe).
			http.NotFound(cw, r)
		} else {
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
				if (x-n/3)*(x-n/3)+(y-n/2)*(y-n/2) < n*n/40 {
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
	desc := fmt.Sprintf(`<VRTDataset rasterXSize="%d" rasterYSize="%d">
  <SRS>EPSG:32633</SRS>
  <GeoTransform>500000, 10, 0, 5000000, 0, -10</GeoTransform>
  <VRTRasterBand dataType="%s" band="1" subClass="VRTRawRasterBand">
    <NoDataValue>0</NoDataValue>
    <SourceFilename relativeToVRT="1">%s</SourceFilename>
    <ImageOffset>0</ImageOffset><PixelOffset>%d</PixelOffset><LineOffset>%d</LineOffset><ByteOrder>LSB</ByteOrder>
  </VRTRasterBand>
</VRTDataset>
`, n, n, spec.dataType, filepath.Base(bin), bytesPer, n*bytesPer)
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
