package cog_test

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/stats"
)

// The NDVI benchmark: statistics of NDVI over a 10 km × 10 km
// AOI at 10 m (1000 × 1000 px of red and nir, and the 20 m SCL as a mask)
// read from Sentinel-2-style COGs over a loopback server that adds 50 ms
// to every request; GDAL's /vsicurl/ reads the same three windows in the
// same run. Run with
//
//	go test -run '^$' -bench NDVI -benchtime 5x ./tools/internal/raster/cog/
const ndviLatency = 50 * time.Millisecond

// ndviFiles generates a 2048 × 2048 px 10 m red and nir and a 1024 × 1024
// px 20 m SCL, tiled as Sentinel-2 L2A COGs are (1024 px tiles, DEFLATE;
// nearest overviews for SCL).
func ndviFiles(b *testing.B) string {
	b.Helper()
	gdaltest.Need(b, "gdal_translate", "gdalinfo")
	dir := b.TempDir()
	gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: "red", Size: 2048, Tile: 1024, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: 1})
	gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: "nir", Size: 2048, Tile: 1024, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: 2})
	gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: "scl", Size: 1024, Tile: 1024, DataType: "Byte", Compress: "DEFLATE", Classes: true, Resampling: "NEAREST"})
	return dir
}

// The AOI: 1000 × 1000 px at 10 m from (500, 500), not aligned to tiles,
// as a user's area is not; 500 × 500 px of the 20 m SCL.
var (
	ndviWin10 = image.Rect(500, 500, 1500, 1500)
	ndviWin20 = image.Rect(250, 250, 750, 750)
)

// peakHeap samples the live heap while the measured work runs.
type peakHeap struct {
	stop chan struct{}
	done chan struct{}
	peak atomic.Uint64
}

func startPeakHeap() *peakHeap {
	p := &peakHeap{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(p.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > p.peak.Load() {
				p.peak.Store(v)
			}
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakHeap) end() uint64 {
	close(p.stop)
	<-p.done
	return p.peak.Load()
}

// ndviStats reads the three windows side by side (each file opened cold:
// no cache, as a first call) and summarises NDVI over the pixels that are
// valid in both bands and clear in SCL.
func ndviStats(ctx context.Context, fetch cog.RangeFetcher, base string) (stats.Summary, error) {
	var red, nir, scl *cog.Window
	g, gctx := errgroup.WithContext(ctx)
	read := func(name string, win image.Rectangle, out **cog.Window) {
		g.Go(func() error {
			url := base + "/" + name + ".tif"
			f, err := cog.Open(gctx, cog.HTTPSource(fetch, url, url), cog.Options{})
			if err != nil {
				return err
			}
			w, err := f.ReadWindow(gctx, 0, win, nil)
			*out = w
			return err
		})
	}
	read("red", ndviWin10, &red)
	read("nir", ndviWin10, &nir)
	read("scl", ndviWin20, &scl)
	if err := g.Wait(); err != nil {
		return stats.Summary{}, err
	}
	w := ndviWin10.Dx()
	values := make([]float64, len(red.Bands[0]))
	keep := make([]bool, len(values))
	for i := range values {
		x, y := i%w, i/w
		class := scl.Bands[0][(y/2)*scl.Rect.Dx()+x/2]
		clear := class == 4 || class == 5 || class == 6 || class == 7
		ok := clear && (red.Valid == nil || red.Valid[i]) && (nir.Valid == nil || nir.Valid[i])
		// Sentinel-2 L2A baseline 04.00: reflectance = DN × 0.0001 − 0.1.
		r, n := red.Bands[0][i]*0.0001-0.1, nir.Bands[0][i]*0.0001-0.1
		if ok && n+r != 0 {
			values[i], keep[i] = (n-r)/(n+r), true
		}
	}
	return stats.Summarize(values, keep, 64), nil
}

func BenchmarkNDVIStatsAgainstGDAL(b *testing.B) {
	dir := ndviFiles(b)
	srv := gdaltest.NewCOGServer(b, dir, ndviLatency)

	b.Run("ours", func(b *testing.B) {
		fetch := newLayerFetcher(b, srv.URL)
		srv.Take()
		var peak uint64
		for b.Loop() {
			runtime.GC()
			p := startPeakHeap()
			s, err := ndviStats(b.Context(), fetch, srv.URL)
			if v := p.end(); v > peak {
				peak = v
			}
			if err != nil {
				b.Fatal(err)
			}
			if s.Valid == 0 {
				b.Fatal("no valid NDVI pixel")
			}
		}
		reqs, bytes := gdaltest.RequestTotals(srv.Take())
		b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
		b.ReportMetric(float64(bytes)/float64(b.N)/1e6, "MB-read/op")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	})

	// GDAL reads the same three windows, one gdal_translate per file side by
	// side (as our reads are), with the tuned /vsicurl/ settings (its
	// defaults add some 40 probes per file, 2 s at 50 ms each). It only
	// reads and writes the windows: it computes no NDVI.
	b.Run("gdal", func(b *testing.B) {
		out := b.TempDir()
		srv.Take()
		for b.Loop() {
			var g errgroup.Group
			for i, c := range []struct {
				name string
				win  image.Rectangle
			}{{"red", ndviWin10}, {"nir", ndviWin10}, {"scl", ndviWin20}} {
				g.Go(func() error {
					return gdalRead(b.Context(), gdaltest.Env(gdaltest.Tuned...), srv.URL+"/"+c.name+".tif",
						filepath.Join(out, fmt.Sprintf("%d.tif", i)), gdalCase{name: c.name, win: c.win})
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		reqs, bytes := gdaltest.RequestTotals(srv.Take())
		b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
		b.ReportMetric(float64(bytes)/float64(b.N)/1e6, "MB-read/op")
	})
}
