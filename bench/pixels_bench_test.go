package bench

import (
	"bytes"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools"
)

// BenchmarkNDVIStatistics is the pixel tools' reference benchmark: NDVI statistics over a
// 10 km × 10 km area at 10 m (about 1000 × 1000 px of red and nir, and the
// 20 m SCL as the cloud mask) through the real MCP tool (render_aoi, view
// ndvi: the index's statistics and its map), from Sentinel-2-style COGs
// (2048 px a side, 1024 px tiles, DEFLATE, overviews; generated with GDAL
// at the start) on a loopback server that adds 50 ms to every request.
// GDAL's /vsicurl/ reads the same three windows in the same run
// (gdal_translate -srcwin, one process per file, side by side). Requests
// and bytes are counted by the file server; peak-heap-MB is the largest
// live heap sampled every 2 ms during a call.
//
//	go test -run '^$' -bench NDVIStatistics -benchtime 5x ./bench/
func BenchmarkNDVIStatistics(b *testing.B) {
	gdaltest.Need(b, "gdal_translate", "gdalinfo")
	dir := b.TempDir()
	gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: "red", Size: 2048, Tile: 1024, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: 1})
	gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: "nir", Size: 2048, Tile: 1024, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: 2})
	gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: "scl", Size: 1024, Tile: 1024, DataType: "Byte", Compress: "DEFLATE", Classes: true, Resampling: "NEAREST"})
	files := gdaltest.NewCOGServer(b, dir, ndviLatency)

	b.Run("stac-mcp", func(b *testing.B) {
		// Each call reads its own copy of the files (the hrefs carry the
		// call's number), so no call is served from the tile cache.
		var call atomic.Int64
		catalog := httptest.NewServer(ndviCatalog(b, files.URL, &call))
		b.Cleanup(catalog.Close)
		policy := sloTestPolicy()
		policy.AttemptTimeout, policy.ToolTimeout = 30*time.Second, time.Minute
		deps := newBenchDeps(b, catalog.URL, policy, nil, tools.Limits{})
		cs := connectInMemory(b, tools.NewServer(deps, "bench"), "bench")
		srv := &benchServer{session: cs}
		files.Take()
		var peak uint64
		for b.Loop() {
			call.Add(1)
			runtime.GC()
			p := startPeakHeap()
			res := srv.call(b, "render_aoi", map[string]any{"collection_id": "ndvi-bench", "item_id": "ndvi-bench-item",
				"aoi": ndviAOI, "view": "ndvi"})
			if v := p.end(); v > peak {
				peak = v
			}
			if res.IsError || !strings.Contains(textOf(res), "ndvi") {
				b.Fatalf("render_aoi failed: %s", textOf(res))
			}
		}
		reqs, n := gdaltest.RequestTotals(files.Take())
		b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
		b.ReportMetric(float64(n)/float64(b.N)/1e6, "MB-read/op")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	})

	b.Run("gdal", func(b *testing.B) {
		out := b.TempDir()
		files.Take()
		for b.Loop() {
			var g errgroup.Group
			for i, f := range []struct {
				name string
				win  image.Rectangle
			}{{"red", ndviWin10}, {"nir", ndviWin10}, {"scl", ndviWin20}} {
				g.Go(func() error {
					w := f.win
					return gdaltest.Run(b.Context(), gdaltest.Env(gdaltest.Tuned...), "gdal_translate", "-q", "-srcwin",
						strconv.Itoa(w.Min.X), strconv.Itoa(w.Min.Y), strconv.Itoa(w.Dx()), strconv.Itoa(w.Dy()),
						"/vsicurl/"+files.URL+"/"+f.name+".tif", filepath.Join(out, fmt.Sprintf("%d.tif", i)))
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		reqs, n := gdaltest.RequestTotals(files.Take())
		b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
		b.ReportMetric(float64(n)/float64(b.N)/1e6, "MB-read/op")
	})
}

const ndviLatency = 50 * time.Millisecond

// The area: 10 km × 10 km from (505000, 4995000) in EPSG:32633 (the test
// files' grid starts at 500000, 5000000), in longitude/latitude
// (gdaltransform), the pixels 500–1500 of the 10 m files: not aligned to
// their tiles, as a user's area is not.
var (
	ndviAOI   = []float64{15.0636, 45.0184, 15.1905, 45.1083}
	ndviWin10 = image.Rect(500, 500, 1500, 1500)
	ndviWin20 = image.Rect(250, 250, 750, 750)
)

// ndviCatalog serves one Sentinel-2-L2A-style item whose red, nir and scl
// assets are the files on fileBase, under a path that carries the current
// call's number (the file server ignores the first path segment).
func ndviCatalog(tb testing.TB, fileBase string, call *atomic.Int64) http.Handler {
	tb.Helper()
	store := stacserver.NewStore()
	coll := map[string]any{
		"type": "Collection", "stac_version": "1.0.0", "id": "ndvi-bench", "license": "CC0-1.0", "description": "NDVI benchmark",
		"extent": map[string]any{"spatial": map[string]any{"bbox": [][]float64{{15, 44.96, 15.27, 45.16}}},
			"temporal": map[string]any{"interval": [][]any{{"2024-06-01T00:00:00Z", nil}}}},
		"links": []any{},
	}
	if err := store.AddCollection(mustJSON(coll)); err != nil {
		tb.Fatal(err)
	}
	asset := func(name, common string, size, res int, dataType string) map[string]any {
		a := map[string]any{
			"href": "FILES/CALL/" + name + ".tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": []string{"data"},
			"proj:shape": []int{size, size}, "proj:transform": []float64{float64(res), 0, 500000, 0, -float64(res), 5000000},
			"raster:bands": []any{map[string]any{"nodata": 0, "data_type": dataType, "scale": 0.0001, "offset": -0.1}},
		}
		if common != "" {
			a["eo:bands"] = []any{map[string]any{"name": name, "common_name": common}}
		} else {
			a["raster:bands"] = []any{map[string]any{"nodata": 0, "data_type": dataType}}
		}
		return a
	}
	item := map[string]any{
		"type": "Feature", "stac_version": "1.0.0", "id": "ndvi-bench-item", "collection": "ndvi-bench",
		"bbox":       []float64{15, 44.969, 15.2605, 45.1535},
		"geometry":   map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{15, 45.1535}, {15, 44.9691}, {15.2597, 44.9688}, {15.2605, 45.1532}, {15, 45.1535}}}},
		"properties": map[string]any{"datetime": "2024-06-15T10:00:00Z", "proj:epsg": 32633, "eo:cloud_cover": 3},
		"assets": map[string]any{
			"red": asset("red", "red", 2048, 10, "uint16"), "nir": asset("nir", "nir", 2048, 10, "uint16"),
			"scl": asset("scl", "", 1024, 20, "uint8"),
		},
		"links": []any{},
	}
	if err := store.AddItem(mustJSON(item)); err != nil {
		tb.Fatal(err)
	}
	api := stacserver.New(store, stacserver.Options{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte("FILES/CALL/"), []byte(fmt.Sprintf("%s/call-%d/", fileBase, call.Load())))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// peakHeap samples the live heap while a call runs.
type peakHeap struct {
	stop, done chan struct{}
	peak       atomic.Uint64
}

func startPeakHeap() *peakHeap { return startPeakSampler("/memory/classes/heap/objects:bytes") }

// startPeakSampler samples a runtime/metrics byte count every 2 ms until
// end, keeping its largest value.
func startPeakSampler(metric string) *peakHeap {
	p := &peakHeap{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: metric}}
	go func() {
		defer close(p.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				if v := sample[0].Value.Uint64(); v > p.peak.Load() {
					p.peak.Store(v)
				}
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
