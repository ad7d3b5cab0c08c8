package cog_test

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
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
	gdaltest.WriteCOG(tb, dir, gdaltest.COGSpec{Name: "s2_b04", Size: 2048, Tile: 512, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: 1})
	gdaltest.WriteCOG(tb, dir, gdaltest.COGSpec{Name: "s2_scl", Size: 1024, Tile: 512, DataType: "Byte", Compress: "DEFLATE", Classes: true, Resampling: "NEAREST"})
	gdaltest.WriteCOG(tb, dir, gdaltest.COGSpec{Name: "naip_rgb", Size: 1024, Tile: 256, DataType: "Byte", Compress: "JPEG", NoiseDN: 20, Seed: 3,
		ExtraCreate: []string{"-b", "1", "-b", "1", "-b", "1", "-co", "QUALITY=85"}})
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
	return gdaltest.Run(ctx, env, "gdal_translate", args...)
}

// TestRangeRequestsAgainstGDAL: for the same window reads over a loopback
// server, our reader sends no more range requests and reads no more bytes
// than GDAL's /vsicurl/, with GDAL's defaults or with the settings COG
// users tune. Everything is counted on the server side.
// With STAC_MCP_GDAL_TABLE=path the table is written there (bench/RESULTS.md).
func TestRangeRequestsAgainstGDAL(t *testing.T) {
	gdaltest.Need(t, "gdal_translate", "gdalinfo")
	dir := t.TempDir()
	compareFiles(t, dir)
	srv := gdaltest.NewCOGServer(t, dir, 0)
	fetch := newLayerFetcher(t, srv.URL)
	ctx := t.Context()
	var rows []gdalRow
	for i, c := range gdalCases {
		url := srv.URL + "/" + c.file
		row := gdalRow{gdalCase: c}
		srv.Take()
		if err := gdalRead(ctx, gdaltest.Env(), url, filepath.Join(t.TempDir(), fmt.Sprintf("d%d.tif", i)), c); err != nil {
			t.Fatal(err)
		}
		logD := srv.Take()
		row.gdalDefaultReq, row.gdalDefaultBytes = gdaltest.RequestTotals(logD)
		if err := gdalRead(ctx, gdaltest.Env(gdaltest.Tuned...), url, filepath.Join(t.TempDir(), fmt.Sprintf("t%d.tif", i)), c); err != nil {
			t.Fatal(err)
		}
		logT := srv.Take()
		row.gdalTunedReq, row.gdalTunedBytes = gdaltest.RequestTotals(logT)
		w, err := oursRead(ctx, fetch, url, c)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		logO := srv.Take()
		row.oursReq, row.oursBytes = gdaltest.RequestTotals(logO)
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

// Pixel reads measured from the serving side: a loopback file
// server that logs every request it answers, the COGs it serves generated
// with GDAL at test time, and GDAL's own /vsicurl/ reads to compare with.
