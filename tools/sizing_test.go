package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/sizing"
)

func polygonJSON(points ...[2]float64) json.RawMessage {
	ring := make([][2]float64, 0, len(points)+1)
	ring = append(ring, points...)
	ring = append(ring, points[0])
	b, _ := json.Marshal(map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}})
	return b
}

// footprintFraction is the share of a footprint inside a search's area,
// as estimate_data_size scales raster assets by it.
func footprintFraction(t *testing.T, p stacclient.SearchParams, geometry json.RawMessage, bbox []float64) (float64, bool) {
	t.Helper()
	area, why := requestedArea(p)
	if area == nil {
		t.Fatalf("no area for %+v: %s", p, why)
	}
	o, ok := itemOverlap(area, &stacclient.Item{Geometry: geometry, BBox: bbox})
	return o.FootprintFraction, ok
}

// Near the equator the equal-area measure is within a few parts in ten
// thousand of the planar one; these cases are about the clipping.
const nearEquator = 2e-3

func TestCoverageFractionOnSimpleGeometries(t *testing.T) {
	t.Parallel()
	square := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 2}, [2]float64{0, 2})
	triangle := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{0, 2})
	for _, c := range []struct {
		name string
		geom json.RawMessage
		bbox []float64
		want float64
	}{
		{"square, right half", square, []float64{1, -1, 3, 3}, 0.5},
		{"square, one quadrant", square, []float64{1, 1, 5, 5}, 0.25},
		{"square, inside box", square, []float64{-10, -10, 10, 10}, 1},
		{"square, disjoint", square, []float64{5, 5, 6, 6}, 0},
		{"square, thin strip", square, []float64{0, 0, 2, 0.5}, 0.25},
		{"triangle, unit corner", triangle, []float64{0, 0, 1, 1}, 0.5},
		{"triangle, left half", triangle, []float64{-1, -1, 1, 3}, 0.75},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := footprintFraction(t, stacclient.SearchParams{BBox: c.bbox}, c.geom, nil)
			if !ok || math.Abs(got-c.want) > nearEquator {
				t.Errorf("coverage = %v (ok %v), want %v", got, ok, c.want)
			}
		})
	}
}

func TestCoverageAcrossTheAntimeridianAndFromBBox(t *testing.T) {
	t.Parallel()
	// Footprint from the item bbox only: [170, 0, 180, 10]; a box crossing
	// the antimeridian, 175°E to 170°W, holds half of it.
	across := stacclient.SearchParams{BBox: []float64{175, -5, -170, 20}}
	if got, ok := footprintFraction(t, across, nil, []float64{170, 0, 180, 10}); !ok || math.Abs(got-0.5) > 1e-9 {
		t.Errorf("coverage = %v (ok %v), want 0.5", got, ok)
	}
	// A footprint written across the antimeridian with a jump from 178 to
	// -178 is the 4° strip between them, half inside [175, 180].
	jumping := json.RawMessage(`{"type":"Polygon","coordinates":[[[178,0],[-178,0],[-178,1],[178,1],[178,0]]]}`)
	if got, ok := footprintFraction(t, stacclient.SearchParams{BBox: []float64{175, -5, 180, 20}}, jumping, nil); !ok || math.Abs(got-0.5) > 1e-9 {
		t.Errorf("jumping footprint: coverage = %v (ok %v), want 0.5", got, ok)
	}
	if _, ok := footprintFraction(t, stacclient.SearchParams{BBox: []float64{0, 0, 1, 1}}, nil, nil); ok {
		t.Error("an item without geometry or bbox must report no coverage, not 0")
	}
}

func TestRequestedAreaIsTheSearchArea(t *testing.T) {
	t.Parallel()
	if area, why := requestedArea(stacclient.SearchParams{}); area != nil || why != "" {
		t.Errorf("no area: %v %q, want none and no reason", area, why)
	}
	point := json.RawMessage(`{"type":"Point","coordinates":[1,2]}`)
	if area, why := requestedArea(stacclient.SearchParams{Intersects: point}); area != nil || !strings.Contains(why, "the requested area cannot be measured") {
		t.Errorf("point: %v %q, want no area and the reason", area, why)
	}
	lShape := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 1}, [2]float64{1, 1}, [2]float64{1, 2}, [2]float64{0, 2})
	if area, why := requestedArea(stacclient.SearchParams{Intersects: lShape}); area == nil || why != "" {
		t.Errorf("L shape: %v %q, want an area", area, why)
	}
}

func TestCoverageAgainstIntersectsPolygons(t *testing.T) {
	t.Parallel()
	square := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 2}, [2]float64{0, 2})
	lShape := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 1}, [2]float64{1, 1}, [2]float64{1, 2}, [2]float64{0, 2})
	for _, c := range []struct {
		name      string
		footprint json.RawMessage
		area      json.RawMessage
		want      float64
	}{
		// The lower-left triangle of the square: half of it.
		{"square by triangle", square, polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{0, 2}), 0.5},
		// A diamond touching the square's edge midpoints: half of it.
		{"square by diamond", square, polygonJSON([2]float64{1, 0}, [2]float64{2, 1}, [2]float64{1, 2}, [2]float64{0, 1}), 0.5},
		// A concave footprint (area 3) by a unit square centred on its notch: 0.75 of 3.
		{"L by square", lShape, polygonJSON([2]float64{0.5, 0.5}, [2]float64{1.5, 0.5}, [2]float64{1.5, 1.5}, [2]float64{0.5, 1.5}), 0.25},
		// A concave area is measured as drawn: the square holds 3 of its 4.
		{"square by L", square, lShape, 0.75},
		{"square by far triangle", square, polygonJSON([2]float64{5, 5}, [2]float64{6, 5}, [2]float64{5, 6}), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := footprintFraction(t, stacclient.SearchParams{Intersects: c.area}, c.footprint, nil)
			if !ok || math.Abs(got-c.want) > nearEquator {
				t.Errorf("coverage = %v (ok %v), want %v", got, ok, c.want)
			}
		})
	}
}

// assetHost is an httptest asset server: HEAD /sized/N answers with a
// Content-Length of N, /missing answers 404 (with a body, whose length must
// not be counted), and it records the largest number of requests in flight.
type assetHost struct {
	*httptest.Server
	requests, inFlight, maxInFlight atomic.Int64
	mu                              sync.Mutex
	methods                         map[string]int
}

func newAssetHost(t *testing.T, delay time.Duration) *assetHost {
	h := &assetHost{methods: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for {
			m := h.maxInFlight.Load()
			if n <= m || h.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		h.mu.Lock()
		h.methods[r.Method]++
		h.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		var size int
		if _, err := fmt.Sscanf(r.URL.Path, "/sized/%d", &size); err == nil {
			w.Header().Set("Content-Length", fmt.Sprint(size))
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "no such asset here, this error page is long enough to be mistaken for a size", http.StatusNotFound)
	}))
	t.Cleanup(h.Close)
	return h
}

// sizingCatalog serves one collection "sizing" holding the given items.
func sizingCatalog(t *testing.T, items ...map[string]any) string {
	t.Helper()
	store := stacserver.NewStore()
	col := map[string]any{"type": "Collection", "stac_version": "1.0.0", "id": "sizing", "description": "sizing test", "license": "CC0-1.0",
		"links": []any{}, "extent": map[string]any{"spatial": map[string]any{"bbox": [][]float64{{-180, -90, 180, 90}}},
			"temporal": map[string]any{"interval": [][]any{{"2024-01-01T00:00:00Z", nil}}}}}
	mustAdd := func(add func([]byte) error, doc any) {
		b, _ := json.Marshal(doc)
		if err := add(b); err != nil {
			t.Fatalf("store: %v", err)
		}
	}
	mustAdd(store.AddCollection, col)
	for _, it := range items {
		mustAdd(store.AddItem, it)
	}
	return serveStore(t, store, stacserver.Options{})
}

func sizingItem(id string, geometry json.RawMessage, bbox []float64, assets map[string]any) map[string]any {
	return map[string]any{"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": "sizing",
		"geometry": geometry, "bbox": bbox, "properties": map[string]any{"datetime": "2024-06-01T00:00:00Z"},
		"links": []any{}, "assets": assets}
}

func TestEstimateDataSizeMethodsTotalsAndCoverage(t *testing.T) {
	t.Parallel()
	host := newAssetHost(t, 0)
	tiff := "image/tiff; application=geotiff; profile=cloud-optimized"
	square := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 2}, [2]float64{0, 2})
	url := sizingCatalog(t, sizingItem("square", square, []float64{0, 0, 2, 2}, map[string]any{
		"sized":    map[string]any{"href": host.URL + "/never-asked.tif", "type": tiff, "file:size": 1000, "roles": []string{"data"}},
		"dtype":    map[string]any{"href": host.URL + "/never-asked-2.tif", "type": tiff, "proj:shape": []int{10, 20}, "raster:bands": []any{map[string]any{"data_type": "uint16"}, map[string]any{"data_type": "uint8"}}},
		"probed":   map[string]any{"href": host.URL + "/sized/5000", "type": tiff},
		"missing":  map[string]any{"href": host.URL + "/missing.tif", "type": tiff},
		"metadata": map[string]any{"href": host.URL + "/sized/200", "type": "application/xml"}, // no role: counted (role metadata is left out)
		"bucket":   map[string]any{"href": "s3://bucket/key.json", "type": "application/json"},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	res := callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing", "bbox": []float64{1, -1, 3, 3}})
	out := structured[EstimateDataSizeOut](t, res)

	// Raster assets scale by the 0.5 coverage; the XML metadata counts whole.
	wantTotal, wantClipped := int64(1000+600+5000+200), int64(500+300+2500+200)
	if out.ItemCount != 1 || out.TotalBytes != wantTotal || out.ClippedBytes != wantClipped || !out.AreaApplied {
		t.Errorf("items %d total %d clipped %d area %v; want 1, %d, %d, true", out.ItemCount, out.TotalBytes, out.ClippedBytes, out.AreaApplied, wantTotal, wantClipped)
	}
	if len(out.Coverage) != 1 || out.Coverage[0].Fraction != 0.5 {
		t.Errorf("coverage = %+v, want square at 0.5", out.Coverage)
	}
	methods := map[string]string{}
	for _, a := range out.Assets {
		methods[a.Key] = a.Method
	}
	wantMethods := map[string]string{"sized": sizing.MethodFileSize, "dtype": sizing.MethodDtypeShape, "probed": sizing.MethodHead, "metadata": sizing.MethodHead}
	for k, m := range wantMethods {
		if methods[k] != m {
			t.Errorf("asset %s sized by %q, want %q", k, methods[k], m)
		}
	}
	if len(methods) != len(wantMethods) {
		t.Errorf("sized assets %v; the 404 and the s3 asset must not be counted", methods)
	}
	reasons := map[string]string{}
	for _, u := range out.NotSized {
		reasons[u.Key] = u.Reason
	}
	if out.NotSizedCount != 2 || !strings.Contains(reasons["missing"], "404") || !strings.Contains(reasons["bucket"], "cannot be probed") {
		t.Errorf("not sized = %+v (count %d); want missing (HEAD 404) and bucket (s3)", out.NotSized, out.NotSizedCount)
	}
	if len(out.ByCollection) != 1 || out.ByCollection[0].Bytes != wantTotal || out.ByCollection[0].Unsized != 2 {
		t.Errorf("by_collection = %+v", out.ByCollection)
	}
	byKey := map[string]SizeTotal{}
	for _, k := range out.ByAssetKey {
		byKey[k.Name] = k
	}
	if byKey["probed"].Bytes != 5000 || byKey["probed"].ClippedBytes != 2500 || byKey["metadata"].ClippedBytes != 200 {
		t.Errorf("by_asset_key = %+v", out.ByAssetKey)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if host.methods["HEAD"] != 3 || len(host.methods) != 1 {
		t.Errorf("asset host saw %v, want exactly 3 HEAD requests (probed, metadata, missing)", host.methods)
	}
	if !strings.Contains(strings.Join(out.Notes, " "), "lower bound") {
		t.Errorf("notes %q do not say the total is a lower bound", out.Notes)
	}
}

func TestEstimateDataSizeMetadataOnlySendsNoHEAD(t *testing.T) {
	t.Parallel()
	host := newAssetHost(t, 0)
	url := sizingCatalog(t, sizingItem("a", nil, []float64{0, 0, 1, 1}, map[string]any{
		"probed": map[string]any{"href": host.URL + "/sized/5000", "type": "image/tiff"},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing", "force_metadata_only": true}))
	if host.requests.Load() != 0 || out.NotSizedCount != 1 || !strings.Contains(out.NotSized[0].Reason, "force_metadata_only") {
		t.Errorf("requests %d, not sized %+v; want no HEAD and the asset reported unsized", host.requests.Load(), out.NotSized)
	}
}

func TestEstimateDataSizeBoundsHEADParallelism(t *testing.T) {
	t.Parallel()
	host := newAssetHost(t, 20*time.Millisecond)
	assets := map[string]any{}
	for i := range 12 {
		assets[fmt.Sprintf("band%02d", i)] = map[string]any{"href": fmt.Sprintf("%s/sized/%d", host.URL, 100+i), "type": "image/tiff"}
	}
	url := sizingCatalog(t, sizingItem("many", nil, []float64{0, 0, 1, 1}, assets))
	// The bound is on probes; a hedged copy of a slow probe rides on its
	// probe's slot (adr/0031) but is a request in flight to the host, so a
	// loaded machine would count it here: hedging off counts probes alone.
	p := testPolicy()
	p.Hedge = false
	cs := newTestSession(t, testSessionOptions{CatalogURL: url, Policy: &p})
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing"}))
	want := int64(0)
	for i := range 12 {
		want += int64(100 + i)
	}
	if out.TotalBytes != want || out.NotSizedCount != 0 {
		t.Errorf("total %d (unsized %d), want %d", out.TotalBytes, out.NotSizedCount, want)
	}
	if m := host.maxInFlight.Load(); m > sizing.HeadParallelism || m < 1 {
		t.Errorf("%d HEAD requests in flight at once, want 1..%d", m, sizing.HeadParallelism)
	}
}

func TestEstimateDataSizeOnTheDemoCatalog(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true,
		"collections": "sentinel-2-l2a", "asset_keys": "red,nir,no-such-band", "max_items": 2, "force_metadata_only": true}))
	if out.ItemCount != 2 || !out.HasMore || len(out.ByAssetKey) != 2 {
		t.Fatalf("items %d has_more %v by_asset_key %+v", out.ItemCount, out.HasMore, out.ByAssetKey)
	}
	for _, a := range out.Assets {
		if a.Key != "red" && a.Key != "nir" {
			t.Errorf("asset %s sized although asset_keys excluded it", a.Key)
		}
	}
	if !strings.Contains(strings.Join(out.Warnings, " "), "no-such-band") {
		t.Errorf("warnings %q do not mention the unknown asset key", out.Warnings)
	}
}

func TestEstimateDataSizeWithIntersects(t *testing.T) {
	t.Parallel()
	square := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 2}, [2]float64{0, 2})
	url := sizingCatalog(t, sizingItem("square", square, []float64{0, 0, 2, 2}, map[string]any{
		"data": map[string]any{"href": "https://assets.invalid/data.tif", "type": "image/tiff", "file:size": 1000},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	triangle := `{"type":"Polygon","coordinates":[[[0,0],[2,0],[0,2],[0,0]]]}`
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing", "aoi": triangle}))
	if out.ClippedBytes != 500 || strings.Contains(strings.Join(out.Notes, " "), "upper bound") {
		t.Errorf("triangle: clipped %d, notes %q; want exactly 500 with no upper-bound note", out.ClippedBytes, out.Notes)
	}
	pyStyle := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing",
		"aoi_geojson": `{"type":"Feature","properties":{},"geometry":` + triangle + `}`}))
	if pyStyle.ClippedBytes != 500 {
		t.Errorf("aoi_geojson Feature: clipped %d, want 500 as with intersects", pyStyle.ClippedBytes)
	}
	// intersects, bbox and aoi_geojson are older names of aoi: accepted,
	// not listed; one area given twice is refused, naming both.
	for name, area := range map[string]any{"intersects": triangle, "bbox": "0,0,1,1", "aoi": []any{"0", "0", "1", "1"}} {
		got := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing", name: area}))
		if want := map[string]int64{"intersects": 500, "bbox": 250, "aoi": 250}[name]; got.ClippedBytes != want {
			t.Errorf("area as %s: clipped %d, want %d", name, got.ClippedBytes, want)
		}
	}
	for _, args := range []map[string]any{
		{"aoi_geojson": triangle, "bbox": "0,0,1,1"},
		{"aoi": triangle, "intersects": triangle},
	} {
		msg := callErr(t, cs, "estimate_data_size", args)
		for name := range args {
			if !strings.Contains(msg, name) || !strings.Contains(msg, "send it once, as aoi") {
				t.Errorf("%v: error %q does not name %s and say to send aoi once", args, msg, name)
			}
		}
	}
	lShape := `{"type":"Polygon","coordinates":[[[0,0],[2,0],[2,1],[1,1],[1,2],[0,2],[0,0]]]}`
	out = structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing", "aoi": lShape}))
	// A concave area is measured as drawn (the square holds 3/4 of the L),
	// not by its bounding box.
	if out.ClippedBytes < 749 || out.ClippedBytes > 751 || strings.Contains(strings.Join(out.Notes, " "), "upper bound") {
		t.Errorf("L shape: clipped %d, notes %q; want 750 and no upper-bound note", out.ClippedBytes, out.Notes)
	}
}

func TestEstimateDataSizeStopsProbingBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	host := newAssetHost(t, 10*time.Second)
	url := sizingCatalog(t, sizingItem("slow", nil, []float64{0, 0, 1, 1}, map[string]any{
		"slow":  map[string]any{"href": host.URL + "/sized/100", "type": "image/tiff"},
		"sized": map[string]any{"href": host.URL + "/x.tif", "type": "image/tiff", "file:size": 42},
	}))
	// 3 s: the search and the sized asset must be done before the deadline
	// even on a loaded machine; the probe of the slow one is cut before it.
	policy := testPolicy()
	policy.ToolTimeout, policy.AttemptTimeout = 3*time.Second, 3*time.Second
	cs := newTestSession(t, testSessionOptions{CatalogURL: url, Policy: &policy})
	// The slow asset answers after 10 s with a size (100 bytes): a call that
	// waited for it past its 3 s deadline would count it. So the answer
	// below shows the deadline was kept, without reading a clock.
	out := structured[EstimateDataSizeOut](t, callOK(t, cs, "estimate_data_size", map[string]any{"per_item": true, "collections": "sizing"}))
	if out.TotalBytes != 42 || out.NotSizedCount != 1 || !strings.Contains(out.NotSized[0].Reason, "deadline") {
		t.Errorf("total %d, not sized %+v; want the sized asset counted and the slow one reported at the deadline", out.TotalBytes, out.NotSized)
	}
}
