package tools

import (
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"

	"github.com/stacmcp/stac-mcp/reliability"
)

// upstreamCall is what the layer's base transport saw of one request.
type upstreamCall struct {
	tool, path string
	insideRun  bool
}

// callRecorder is the layer's base transport in tests that check which
// tool call each upstream request belongs to (reliability.CallInfo). It
// forwards to the default transport: the test catalogs are loopback
// servers.
type callRecorder struct {
	mu    sync.Mutex
	calls []upstreamCall
}

func (r *callRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	tool, _, inside := reliability.CallInfo(req.Context())
	r.mu.Lock()
	r.calls = append(r.calls, upstreamCall{tool: tool, path: req.Method + " " + req.URL.Path, insideRun: inside})
	r.mu.Unlock()
	if host := req.URL.Hostname(); host != "127.0.0.1" && host != "localhost" {
		// Tests never touch the internet: a request elsewhere fails here
		// rather than leaving the machine.
		return nil, fmt.Errorf("test transport: refusing non-loopback request to %s", req.URL.Host)
	}
	return loopbackTransport.RoundTrip(req)
}

// wrapDemo records the requests of the demo catalog, which is served in
// memory above the base transport (adr/0025): its handler sees the
// request's context, so the same facts are recorded.
func (r *callRecorder) wrapDemo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tool, _, inside := reliability.CallInfo(req.Context())
		r.mu.Lock()
		r.calls = append(r.calls, upstreamCall{tool: tool, path: req.Method + " " + req.URL.Path, insideRun: inside})
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	})
}

func (r *callRecorder) snapshot() []upstreamCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]upstreamCall(nil), r.calls...)
}

func (r *callRecorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

// loopbackTransport is a transport of the tests' own, so closing idle
// connections at cleanup does not touch http.DefaultTransport.
var loopbackTransport = http.DefaultTransport.(*http.Transport).Clone()

// networkToolArgs are arguments that make each network tool succeed on the
// demo catalog. A network tool missing here fails the test below, so a new
// tool cannot skip the check.
// joplinItemID is an item of the demo catalog's joplin collection.
const joplinItemID = "047ab5f0-dce1-4166-a00d-425a3dbefe02"

var networkToolArgs = map[string]map[string]any{
	"export":             {"kind": "items", "collections": "sentinel-2-l2a"},
	"get_root":           {},
	"get_conformance":    {},
	"get_capabilities":   {},
	"search_collections": {"limit": 3},
	"get_collection":     {"collection_id": "joplin"},
	"get_queryables":     {"collection_id": "joplin"},
	"search_items":       {"collections": []string{"joplin"}, "max_items": 2},
	"get_item":           {"collection_id": "joplin", "item_id": joplinItemID},
	"get_aggregations":   {"aggregations": []string{"total_count"}, "collections": []string{"joplin"}},
	// Metadata only: joplin's assets live on S3 and would be HEAD-probed.
	"estimate_data_size": {"collections": []string{"joplin"}, "max_items": 1, "force_metadata_only": true},
	// The demo's asset hosts are not contacted (offline by design); the
	// preview tests fetch real images through the layer from a loopback host.
	"get_item_preview": {"collection_id": "sentinel-2-l2a", "item_id": "S2B_24MUA_20250731_0_L2A"},
	"map_items":        {"collections": []string{"joplin"}, "max_items": 5},
	"check_coverage":   {"collections": []string{"joplin"}, "bbox": []float64{-94.7, 37.0, -94.4, 37.2}},
}

// pixelToolArgs are the pixel tools' arguments on the synthetic scene
// (newPixelScene), its aoi added.
var pixelToolArgs = map[string]map[string]any{
	"aoi_statistics":    {"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1"},
	"render_aoi":        {"collection_id": "s2-synthetic", "item_id": "S2-synthetic-1", "view": "ndvi"},
	"index_time_series": {"collections": "s2-synthetic"},
}

// TestNoToolBypassesTheReliabilityLayer: every upstream request
// a network tool makes reaches the base transport inside Run, under the
// calling tool's name, and every network tool makes at least one.
func TestNoToolBypassesTheReliabilityLayer(t *testing.T) {
	t.Parallel()
	for _, tool := range Inventory() {
		if !tool.Network {
			continue
		}
		name := tool.Def.Name
		t.Run(name, func(t *testing.T) {
			args, ok := networkToolArgs[name]
			opts := testSessionOptions{}
			if sceneArgs, isPixel := pixelToolArgs[name]; isPixel {
				// The pixel tools read COGs: the synthetic scene's, served
				// from loopback (the range requests are recorded too).
				scene := newPixelScene(t)
				args, ok = maps.Clone(sceneArgs), true
				args["aoi"] = scene.aoi
				opts.CatalogURL = scene.catalog
			}
			if !ok {
				t.Fatalf("network tool %s has no entry in networkToolArgs: add arguments that succeed on the demo catalog", name)
			}
			rec := &callRecorder{}
			opts.Transport = rec
			// A fresh session per tool: a client shared across tools would
			// answer from its cached landing page and hide requests.
			cs := newTestSession(t, opts)
			callOK(t, cs, name, args)
			calls := rec.snapshot()
			if len(calls) == 0 {
				t.Fatalf("%s made no upstream request", name)
			}
			for _, c := range calls {
				if !c.insideRun || c.tool != name {
					t.Errorf("%s: upstream %s was made as tool %q (inside Run: %v), want %q inside Run", name, c.path, c.tool, c.insideRun, name)
				}
			}
		})
	}
}
