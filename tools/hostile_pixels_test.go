package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// TestHostilePixelCallsRSS measures the process's peak RSS while 16
// aoi_statistics calls run at once against a hostile catalog: its items'
// scl asset is a cloud mask 57 times finer than their 10 m bands (a
// 57,000 px square, sparse, 100 KB on the wire), without overviews and
// with sparse overviews down to 891 px. Before the engine bounded a
// resampled band's window, eight such calls took 2.2 GB and sixteen killed
// the server. A measurement, not a unit test: skipped unless
// STAC_MCP_PIXEL_HOSTILE_RSS is set (to the growth allowed, MiB):
//
//	STAC_MCP_PIXEL_HOSTILE_RSS=400 go test -run TestHostilePixelCallsRSS -v ./tools/
func TestHostilePixelCallsRSS(t *testing.T) {
	limit, err := strconv.Atoi(os.Getenv("STAC_MCP_PIXEL_HOSTILE_RSS"))
	if err != nil {
		t.Skip("a measurement: set STAC_MCP_PIXEL_HOSTILE_RSS to the RSS growth allowed (MiB)")
	}
	gdaltest.Need(t, "gdal_create", "gdaladdo")
	dir := t.TempDir()
	create := func(name string, size int, nodata bool) {
		args := []string{"-of", "GTiff", "-outsize", strconv.Itoa(size), strconv.Itoa(size), "-bands", "1", "-ot", "UInt16",
			"-co", "TILED=YES", "-co", "SPARSE_OK=TRUE", "-co", "BLOCKXSIZE=512", "-co", "BLOCKYSIZE=512",
			"-a_srs", "EPSG:32613", "-a_ullr", "478000", "4438000", "488000", "4428000"}
		if nodata {
			args = append(args, "-a_nodata", "0")
		}
		if msg, err := exec.Command("gdal_create", append(args, filepath.Join(dir, name))...).CombinedOutput(); err != nil {
			t.Fatalf("gdal_create %s: %v: %s", name, err, msg)
		}
	}
	create("red.tif", 1000, true)
	create("nir.tif", 1000, true)
	create("fine.tif", 57000, false)
	create("fineovr.tif", 57000, false)
	if msg, err := exec.Command("gdaladdo", "--config", "SPARSE_OK_OVERVIEW", "ON", "-r", "nearest", filepath.Join(dir, "fineovr.tif"),
		"2", "4", "8", "16", "32", "64").CombinedOutput(); err != nil {
		t.Fatalf("gdaladdo: %v: %s", err, msg)
	}
	files := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(files.Close)
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"hostile","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-106,39,-104,41]]},"temporal":{"interval":[["2023-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	tif := "image/tiff; application=geotiff; profile=cloud-optimized"
	for i := range 16 {
		scl := "fine.tif"
		if i%2 == 1 {
			scl = "fineovr.tif"
		}
		item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"h%d","collection":"hostile","bbox":[-105.3,40.0,-105.1,40.1],
			"geometry":{"type":"Polygon","coordinates":[[[-105.3,40.0],[-105.1,40.0],[-105.1,40.1],[-105.3,40.1],[-105.3,40.0]]]},
			"properties":{"datetime":"2023-08-03T17:52:49Z"},"links":[],"assets":{
			"red":{"href":%q,"type":%q,"eo:bands":[{"name":"B04","common_name":"red"}]},
			"nir":{"href":%q,"type":%q,"eo:bands":[{"name":"B08","common_name":"nir"}]},
			"scl":{"href":%q,"type":%q}}}`, i, files.URL+"/red.tif?i="+strconv.Itoa(i), tif, files.URL+"/nir.tif?i="+strconv.Itoa(i), tif,
			files.URL+"/"+scl+"?i="+strconv.Itoa(i), tif)
		if err := store.AddItem([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: serveStore(t, store, stacserver.Options{}), Silent: true})
	// The peak RSS from here on: Linux resets VmHWM when 5 is written to
	// clear_refs.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS here: %v", err)
	}
	before := procStatusKiB(t, "VmHWM")
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for i := range 16 {
		wg.Go(func() {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "aoi_statistics", Arguments: map[string]any{
				"collection_id": "hostile", "item_id": fmt.Sprintf("h%d", i), "aoi": []float64{-105.25, 40.0, -105.15, 40.08}, "bands": []string{"red", "nir"}}})
			what := "answered"
			switch {
			case err != nil:
				what = "protocol error"
			case res.IsError:
				what = "refused: " + firstWords(resultText(res), 12)
			}
			mu.Lock()
			outcomes[what]++
			mu.Unlock()
		})
	}
	wg.Wait()
	growth := (procStatusKiB(t, "VmHWM") - before) / 1024
	t.Logf("16 concurrent aoi_statistics calls, scl 57x finer than the bands: peak RSS +%d MiB; outcomes %v", growth, outcomes)
	if growth > int64(limit) {
		t.Errorf("peak RSS grew %d MiB, more than the %d allowed", growth, limit)
	}
}

func firstWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}

// procStatusKiB reads a kB field of /proc/self/status.
func procStatusKiB(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
