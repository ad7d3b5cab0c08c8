package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools"
)

// BenchmarkSeason is the season benchmark: a year of NDVI (73
// acquisitions, every 5 days, of two adjacent tiles each) over a 10 km ×
// 10 km area across the tiles' edge, through index_time_series and its
// cursor pages, from Sentinel-2-style COGs (2048 px at 10 m a side,
// 1024 px tiles, DEFLATE; SCL at 20 m with clouds on some dates; generated
// with GDAL at the start) on a loopback server that adds 50 ms to every
// request. Each date's files have their own URLs (no tile is served from
// a cache). GDAL (python3-gdal, bench/testdata/season_gdal_reads.py) reads
// the same windows of the same files with the same concurrency: 2 dates
// side by side, each date's 6 files side by side. A third run injects 20 %
// retryable faults (faultinject's ClassRetryable kinds, per request) into
// the catalog's and the files' answers.
//
//	go test -run '^$' -bench Season -benchtime 1x ./bench/
func BenchmarkSeason(b *testing.B) {
	gdaltest.Need(b, "gdal_translate", "gdalinfo")
	dir := b.TempDir()
	for _, t := range seasonTiles {
		gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: t.name + "_red", Size: 2048, Tile: 1024, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: t.seed, Origin: t.origin})
		gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: t.name + "_nir", Size: 2048, Tile: 1024, DataType: "UInt16", Compress: "DEFLATE", Predictor: 2, NoiseDN: 60, Seed: t.seed + 1, Origin: t.origin})
		for v, cloud := range seasonClouds {
			gdaltest.WriteCOG(b, dir, gdaltest.COGSpec{Name: fmt.Sprintf("%s_scl_v%d", t.name, v), Size: 1024, Tile: 1024, DataType: "Byte", Compress: "DEFLATE",
				Classes: true, Resampling: "NEAREST", Origin: t.origin, Res: 20, Cloud: cloud})
		}
	}
	files := gdaltest.NewCOGServer(b, dir, ndviLatency)
	aoi := seasonAOI(b)

	run := func(b *testing.B, faults float64, datetime string, wantDates int) {
		var iter atomic.Int64
		catalogHandler := seasonCatalog(b, files.URL, &iter)
		var injected *faultinject.Injector
		if faults > 0 {
			in, err := faultinject.New(faultinject.Plan{Seed: 37, Rate: faults, Mix: faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassRetryable)...)},
				faultinject.WithKeyFunc(seasonFaultKey))
			if err != nil {
				b.Fatal(err)
			}
			injected = in
			target, _ := url.Parse(files.URL)
			rp := httputil.NewSingleHostReverseProxy(target)
			rp.ErrorLog = log.New(io.Discard, "", 0) // a read cancelled at a page's end is no news
			proxy := httptest.NewServer(in.Middleware(rp))
			b.Cleanup(proxy.Close)
			catalogHandler = in.Middleware(seasonCatalog(b, proxy.URL, &iter))
		}
		catalog := httptest.NewServer(catalogHandler)
		b.Cleanup(catalog.Close)
		policy := sloTestPolicy()
		def := reliability.DefaultPolicy()
		policy.ToolTimeout, policy.AttemptTimeout = def.ToolTimeout, def.AttemptTimeout
		deps := newBenchDeps(b, catalog.URL, policy, nil, tools.Limits{})
		cs := connectInMemory(b, tools.NewServer(deps, "bench"), "bench")
		files.Take()
		var peak, live uint64
		var pages, obtained, failed, clear int
		cpu0 := processCPU()
		start := time.Now()
		for b.Loop() {
			iter.Add(1)
			runtime.GC()
			p, l := startPeakHeap(), startPeakLive()
			args := map[string]any{"collections": "season-bench", "datetime": datetime, "aoi": aoi, "index": "ndvi"}
			seen := map[string]bool{}
			for page := 0; ; page++ {
				if page > 40 {
					b.Fatal("the cursor does not end")
				}
				res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "index_time_series", Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("index_time_series: %v %s", err, textOf(res))
				}
				var out tools.IndexTimeSeriesOut
				raw, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(raw, &out); err != nil {
					b.Fatal(err)
				}
				pages++
				for _, r := range out.Rows {
					seen[r.Date] = true
					clear++
				}
				for _, s := range out.Skipped {
					seen[s.ID] = true
				}
				for _, s := range out.Failed {
					seen[s.ID] = true
					failed++
					b.Logf("failed: %s: %s", s.ID, s.Reason)
				}
				if out.Dates != wantDates {
					b.Fatalf("%d dates, want %d", out.Dates, wantDates)
				}
				if out.Cursor == "" {
					break
				}
				args["cursor"] = out.Cursor
			}
			obtained += len(seen)
			if v := p.end(); v > peak {
				peak = v
			}
			if v := l.end(); v > live {
				live = v
			}
		}
		elapsed := time.Since(start)
		cpu := processCPU() - cpu0
		reqs, n := gdaltest.RequestTotals(files.Take())
		runs := float64(b.N)
		b.ReportMetric(cpu.Seconds()/runs, "cpu-s/op")
		b.ReportMetric(float64(pages)/runs, "pages/op")
		b.ReportMetric(float64(obtained-failed)/runs, "dates-obtained/op")
		b.ReportMetric(float64(clear)/runs, "dates-clear/op")
		b.ReportMetric(float64(failed)/runs, "dates-failed/op")
		b.ReportMetric(float64(reqs)/runs, "requests/op")
		b.ReportMetric(float64(reqs)/runs/float64(wantDates), "requests/date")
		b.ReportMetric(float64(n)/runs/1e6, "MB-read/op")
		b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
		b.ReportMetric(float64(live)/1e6, "peak-live-MB")
		b.ReportMetric(elapsed.Seconds()/runs, "wall-s/op")
		if injected != nil {
			attempts, faulted := 0, 0
			for _, r := range injected.Journal().Records() {
				attempts++
				if r.Kind != faultinject.None {
					faulted++
				}
			}
			b.ReportMetric(float64(faulted)/float64(max(attempts, 1)), "fault-share")
		}
	}
	b.Run("stac-mcp", func(b *testing.B) { run(b, 0, "2024", seasonDates) })
	// A quarter of the year: the peak memory does not grow with the dates.
	b.Run("stac-mcp-quarter", func(b *testing.B) { run(b, 0, "2024-01/2024-03", 18) })
	b.Run("stac-mcp-faults-20pct", func(b *testing.B) { run(b, 0.2, "2024", seasonDates) })

	b.Run("gdal", func(b *testing.B) {
		var iter int
		files.Take()
		var seconds float64
		var cpu time.Duration
		for b.Loop() {
			iter++
			job := map[string]any{"dates_at_once": 2, "dates": seasonGDALReads(files.URL, iter)}
			in, _ := json.Marshal(job)
			cmd := exec.CommandContext(b.Context(), "/usr/bin/python3", filepath.Join("testdata", "season_gdal_reads.py"))
			cmd.Env = gdaltest.Env(gdaltest.Tuned...)
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("%v: %s", err, stderr.String())
			}
			var res struct {
				Seconds float64 `json:"seconds"`
				Failed  int     `json:"failed"`
			}
			if err := json.Unmarshal(out, &res); err != nil || res.Failed > 0 {
				b.Fatalf("%s (%v)", out, err)
			}
			seconds += res.Seconds
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		reqs, n := gdaltest.RequestTotals(files.Take())
		runs := float64(b.N)
		b.ReportMetric(float64(reqs)/runs, "requests/op")
		b.ReportMetric(float64(reqs)/runs/seasonDates, "requests/date")
		b.ReportMetric(float64(n)/runs/1e6, "MB-read/op")
		b.ReportMetric(seconds/runs, "wall-s/op")
		b.ReportMetric(cpu.Seconds()/runs, "cpu-s/op")
	})
}

// seasonDates is the year's acquisitions: every 5 days from 2024-01-03.
const seasonDates = 73

// seasonTiles are the two tiles: 2048 px at 10 m, the east one 1500 px
// (15 km) east of the west one, so they overlap by 5.48 km, on one
// lattice, as neighbouring MGRS tiles do.
var seasonTiles = []struct {
	name   string
	origin [2]float64
	seed   int
}{{"W", [2]float64{500000, 5000000}, 11}, {"E", [2]float64{515000, 5000000}, 21}}

// seasonClouds are the SCL variants (20 m pixels): clear; a cloud over
// part of the area; a cloud over most of it (the date is skipped).
var seasonClouds = []func(x, y int) bool{
	func(x, y int) bool { return false },
	func(x, y int) bool { return (x-700)*(x-700)+(y-500)*(y-500) < 150*150 },
	func(x, y int) bool { return (x-600)*(x-600)+(y-500)*(y-500) < 500*500 },
}

// seasonVariant is the SCL variant of date k: two clear dates in five,
// two partly cloudy, one cloudy.
func seasonVariant(k int) int { return []int{0, 0, 1, 1, 2}[k%5] }

// The area: x 512003–522003, y 4985003–4995003 in EPSG:32633 (10 km a
// side, not aligned to pixels or tiles), 85 % of it in the west tile.
var seasonUTM = [4][2]float64{{512003, 4985003}, {522003, 4985003}, {522003, 4995003}, {512003, 4995003}}

// seasonAOI is the area as a GeoJSON polygon (gdaltransform).
func seasonAOI(tb testing.TB) map[string]any {
	tb.Helper()
	ring := toLonLat(tb, seasonUTM[:])
	ring = append(ring, ring[0])
	return map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}}
}

// toLonLat converts EPSG:32633 points with gdaltransform.
func toLonLat(tb testing.TB, pts [][2]float64) [][2]float64 {
	tb.Helper()
	var in strings.Builder
	for _, p := range pts {
		fmt.Fprintf(&in, "%f %f\n", p[0], p[1])
	}
	cmd := exec.Command("gdaltransform", "-s_srs", "EPSG:32633", "-t_srs", "EPSG:4326", "-output_xy")
	cmd.Env = gdaltest.Env()
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		tb.Fatal(err)
	}
	var res [][2]float64
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var lon, lat float64
		if _, err := fmt.Sscan(line, &lon, &lat); err != nil {
			tb.Fatal(err)
		}
		res = append(res, [2]float64{math.Round(lon*1e7) / 1e7, math.Round(lat*1e7) / 1e7})
	}
	return res
}

// seasonCatalog serves the year's items: per date one item per tile,
// red, nir and its SCL variant, under a path that carries the run and the
// date (the file server ignores the first path segment).
func seasonCatalog(tb testing.TB, fileBase string, iter *atomic.Int64) http.Handler {
	tb.Helper()
	store := stacserver.NewStore()
	coll := map[string]any{
		"type": "Collection", "stac_version": "1.0.0", "id": "season-bench", "license": "CC0-1.0", "description": "a year over two tiles",
		"extent": map[string]any{"spatial": map[string]any{"bbox": [][]float64{{14.9, 44.8, 15.5, 45.2}}},
			"temporal": map[string]any{"interval": [][]any{{"2024-01-01T00:00:00Z", nil}}}},
		"links": []any{},
	}
	if err := store.AddCollection(mustJSON(coll)); err != nil {
		tb.Fatal(err)
	}
	first := time.Date(2024, 1, 3, 10, 0, 0, 0, time.UTC)
	for _, t := range seasonTiles {
		x0, y0 := t.origin[0], t.origin[1]
		fp := toLonLat(tb, [][2]float64{{x0, y0 - 20480}, {x0 + 20480, y0 - 20480}, {x0 + 20480, y0}, {x0, y0}})
		fp = append(fp, fp[0])
		for k := range seasonDates {
			asset := func(file, common string, size, res int, dataType string) map[string]any {
				a := map[string]any{
					"href": fmt.Sprintf("FILES/ITER-%d/%s.tif", k, file), "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": []string{"data"},
					"proj:shape": []int{size, size}, "proj:transform": []float64{float64(res), 0, x0, 0, -float64(res), y0},
					"raster:bands": []any{map[string]any{"nodata": 0, "data_type": dataType, "scale": 0.0001, "offset": -0.1}},
				}
				if common != "" {
					a["eo:bands"] = []any{map[string]any{"name": file, "common_name": common}}
				} else {
					a["raster:bands"] = []any{map[string]any{"nodata": 0, "data_type": dataType}}
				}
				return a
			}
			platform := "sentinel-2a"
			if k%2 == 1 {
				platform = "sentinel-2b"
			}
			item := map[string]any{
				"type": "Feature", "stac_version": "1.0.0", "id": fmt.Sprintf("%s_%03d", t.name, k), "collection": "season-bench",
				"geometry": map[string]any{"type": "Polygon", "coordinates": [][][2]float64{fp}},
				"bbox":     []float64{fp[0][0], fp[0][1], fp[2][0], fp[2][1]},
				"properties": map[string]any{"datetime": first.AddDate(0, 0, 5*k).Add(time.Duration(len(t.name)) * time.Second).Format(time.RFC3339),
					"platform": platform, "proj:epsg": 32633, "eo:cloud_cover": 10 * seasonVariant(k)},
				"assets": map[string]any{
					"red": asset(t.name+"_red", "red", 2048, 10, "uint16"), "nir": asset(t.name+"_nir", "nir", 2048, 10, "uint16"),
					"scl": asset(fmt.Sprintf("%s_scl_v%d", t.name, seasonVariant(k)), "", 1024, 20, "uint8"),
				},
				"links": []any{},
			}
			if err := store.AddItem(mustJSON(item)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	api := stacserver.New(store, stacserver.Options{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte("FILES/ITER-"), []byte(fmt.Sprintf("%s/call-%d-", fileBase, iter.Load())))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// seasonGDALReads are the windows stac-mcp reads of each date's six files
// (the area's extent on each file, clipped to it), as GDAL's job.
func seasonGDALReads(fileBase string, iter int) [][]map[string]any {
	var dates [][]map[string]any
	for k := range seasonDates {
		var reads []map[string]any
		for _, t := range seasonTiles {
			for _, f := range []struct {
				file      string
				res, size int
			}{{t.name + "_red", 10, 2048}, {t.name + "_nir", 10, 2048}, {fmt.Sprintf("%s_scl_v%d", t.name, seasonVariant(k)), 20, 1024}} {
				res := float64(f.res)
				x0 := int(math.Max(0, math.Floor((seasonUTM[0][0]-t.origin[0])/res)))
				x1 := int(math.Min(float64(f.size), math.Ceil((seasonUTM[1][0]-t.origin[0])/res)))
				y0 := int(math.Max(0, math.Floor((t.origin[1]-seasonUTM[2][1])/res)))
				y1 := int(math.Min(float64(f.size), math.Ceil((t.origin[1]-seasonUTM[0][1])/res)))
				reads = append(reads, map[string]any{"url": fmt.Sprintf("%s/call-%d-%d/%s.tif", fileBase, iter, k, f.file), "window": []int{x0, y0, x1 - x0, y1 - y0}})
			}
		}
		dates = append(dates, reads)
	}
	return dates
}

// seasonFaultKey keys an attempt on the request itself (method, path and
// range), so each range request has its own attempt numbers.
func seasonFaultKey(r *http.Request) (faultinject.Key, bool) {
	return faultinject.Key{Tool: "season", Invocation: r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Range")}, true
}

// startPeakLive samples the heap the last garbage collection found live
// (runtime/metrics /gc/heap/live:bytes) while a run goes on: the memory
// held, without the garbage peakHeap also sees.
func startPeakLive() *peakHeap { return startPeakSampler("/gc/heap/live:bytes") }
