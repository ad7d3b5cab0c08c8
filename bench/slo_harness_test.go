package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools"
)

// The SLO harness: stac-mcp's real MCP server (tools.NewServer over the
// SDK's in-memory transport) in front of the real reliability layer, whose
// upstream is stacserver behind faultinject.Middleware on loopback sockets.
//
// Reproducibility. Every tool call gets a correlation id "<tool>/<n>" that
// the test client sends in the tools/call _meta (sloKeyMeta); a receiving
// middleware hands it to reliability.WithCorrelationID, the layer sends it
// upstream as X-Correlation-ID, and the injector keys each attempt on (that
// id, the request's method, URI and body). So the fault schedule is a pure
// function of the seed, whatever the interleaving.
//
// Independence. Each invocation n talks to its own copy of the catalog,
// mounted at /inv-<tool>-<n> on the same host (same breaker, budget and
// bulkhead): its catalog client starts cold (run warms it first unless the
// call is marked cold), and no two invocations ever send identical
// requests, so the layer's request coalescing never merges two calls into
// one trial.

// sloKeyMeta is the tools/call _meta key carrying the correlation id.
const sloKeyMeta = "slo/key"

// sloConfig is one run's setup.
type sloConfig struct {
	plan   faultinject.Plan
	policy reliability.Policy
	// latency is the upstream's answer time. Faults are drawn first, so
	// injected answers are instant ("fast") unless slowFaults puts the
	// latency in front of the injector ("slow 5xx").
	latency    latencyModel
	slowFaults bool
	// keepAlive reuses connections as production does. Off, every attempt
	// has its own connection, so net/http never replays a request behind
	// the layer's back and the journal is exactly reproducible.
	keepAlive bool
	// clientSide injects the faults in the client's transport instead of
	// the servers (faultinject's RoundTripper form): the only way to get a
	// true ECONNREFUSED, the failure the layer retries without a wait.
	clientSide bool
}

// sloHarness is one running setup.
type sloHarness struct {
	injector *faultinject.Injector
	// served counts the measured requests (warm-ups aside) that reached
	// the catalog and asset handlers behind the injector: the journal's
	// unharmed attempts, plus any delayed one that was waited out.
	served *atomic.Int64
	// requests times the measured calls' upstream requests above the
	// layer (requestTimer).
	requests *requestTimer
	layer    *reliability.Layer
	catalogs *tools.Catalogs
	session  *mcp.ClientSession
	catalog  string // base URL of the catalog server
	// upstreams are the catalog and asset servers, closed by settle.
	upstreams []*httptest.Server
}

// settle closes the upstream servers, which waits for the requests they
// are still handling, so that the journal and served are final when a
// test compares them. A call can end before its last request arrives: a
// hedged copy or an attempt cut by its timeout may already be on the wire,
// and on a loaded machine the server reads it later, journals it and
// serves it. Counted between those two steps it shows as a served request
// the journal never let through. The harness takes no calls afterwards.
func (h *sloHarness) settle() {
	for _, s := range h.upstreams {
		s.Close()
	}
}

// newSLOHarness starts the catalog and asset servers and the MCP server.
func newSLOHarness(tb testing.TB, cfg sloConfig) *sloHarness {
	tb.Helper()
	injector, err := faultinject.New(cfg.plan, faultinject.WithKeyFunc(sloFaultKey))
	if err != nil {
		tb.Fatal(err)
	}
	assets := httptest.NewUnstartedServer(nil)
	catalog := httptest.NewUnstartedServer(nil)
	assetBase := "http://" + assets.Listener.Addr().String()
	store := sloStore(tb)
	served := new(atomic.Int64)
	catalog.Config.Handler = wrapUpstream(cfg, injector, countServed(served, perInvocation(stacserver.New(store, stacserver.Options{MaxLimit: 10}), assetBase)))
	assets.Config.Handler = wrapUpstream(cfg, injector, countServed(served, http.HandlerFunc(serveAsset)))
	assets.Start()
	catalog.Start()
	tb.Cleanup(catalog.Close)
	tb.Cleanup(assets.Close)

	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DisableKeepAlives = !cfg.keepAlive
	transport.MaxIdleConnsPerHost = 64
	tb.Cleanup(transport.CloseIdleConnections)
	var base http.RoundTripper = transport
	if cfg.clientSide {
		base = bypassForWarmUp(injector.RoundTripper(transport), transport)
	}
	// CPU slots as many as the calls at once: these runs count what the
	// reliability layer makes of upstream faults, and with one slot per core
	// a race-built map drawing of 20 footprints kept 16 parallel map_items
	// calls waiting past half their 1 s tool timeout for a slot ("the
	// server is busy"), which says how many cores the machine has, not how
	// faults were handled. The slots are tested in tools (work_budget_test.go).
	deps := newBenchDeps(tb, catalog.URL, cfg.policy, base, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100, CPUSlots: 64})
	// The catalogs reach the layer through a requestTimer, which times each
	// upstream request of a measured call as the tool sees it: the per-page
	// figure of the paging tools.
	timer := &requestTimer{next: deps.Layer.HTTPClient().Transport}
	deps.Catalogs = tools.NewCatalogs(tools.CatalogsOptions{Default: catalog.URL, HTTPClient: &http.Client{Transport: timer}})
	tb.Cleanup(func() { _ = deps.Catalogs.Close() })

	server := tools.NewServer(deps, "slo")
	server.AddReceivingMiddleware(correlationFromMeta)
	cs := connectInMemory(tb, server, "slo")
	return &sloHarness{injector: injector, served: served, requests: timer, layer: deps.Layer, catalogs: deps.Catalogs, session: cs, catalog: catalog.URL,
		upstreams: []*httptest.Server{catalog, assets}}
}

// wrapUpstream puts the injector and the latency model around h in the
// order the config asks for. Warm-up calls (see sloHarness.warm) bypass
// the injector: they only prepare the catalog client and are not measured.
func wrapUpstream(cfg sloConfig, in *faultinject.Injector, h http.Handler) http.Handler {
	key := func(r *http.Request) string {
		k, _ := sloFaultKey(r)
		return k.Tool + " " + k.Invocation
	}
	slow := newLatencyHandler(cfg.latency, cfg.plan.Seed, key, h)
	var measured http.Handler
	switch {
	case cfg.clientSide:
		measured = slow
	case cfg.slowFaults:
		measured = newLatencyHandler(cfg.latency, cfg.plan.Seed, key, in.Middleware(h))
	default:
		measured = in.Middleware(slow)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWarmUp(r) {
			// No faults, but the same latency: the layer's rolling p95
			// (the hedge delay) must see the catalog as it is.
			slow.ServeHTTP(w, r)
			return
		}
		measured.ServeHTTP(w, r)
	})
}

// countServed counts the measured requests h serves.
func countServed(n *atomic.Int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isWarmUp(r) {
			n.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// warmUpTool is the key of warm-up calls.
const warmUpTool = "warmup"

func isWarmUp(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get(faultinject.HeaderCorrelationID), warmUpTool+"/")
}

// bypassForWarmUp sends warm-up requests around the client-side injector.
func bypassForWarmUp(faulty, clean http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if isWarmUp(r) {
			return clean.RoundTrip(r)
		}
		return faulty.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sloFaultKey keys an attempt on the call's correlation id and on the
// request itself, so each request of a call (landing page, pages, HEADs)
// has its own attempt numbers, whatever order concurrent HEADs arrive in.
func sloFaultKey(r *http.Request) (faultinject.Key, bool) {
	id := r.Header.Get(faultinject.HeaderCorrelationID)
	byRequest, ok := faultinject.KeyByRequest(r)
	if id == "" || !ok {
		return faultinject.Key{}, false
	}
	tool, invocation, _ := strings.Cut(id, "/")
	// Two ranges of one file are two requests (the pixel tools read a
	// file in several), not attempts of one.
	if rg := r.Header.Get("Range"); rg != "" {
		byRequest.Invocation += " range:" + rg
	}
	return faultinject.Key{Tool: tool, Invocation: invocation + " " + byRequest.Invocation}, true
}

// correlationFromMeta is the test-only receiving middleware that gives a
// tools/call the correlation id its _meta names.
func correlationFromMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
			if id, ok := p.Meta[sloKeyMeta].(string); ok {
				ctx = reliability.WithCorrelationID(ctx, id)
				ctx = context.WithValue(ctx, sloCallKey{}, id)
			}
		}
		return next(ctx, method, req)
	}
}

var invocationPrefix = regexp.MustCompile(`^/inv-[a-z_]+-[0-9]+`)

// perInvocation serves the catalog under /inv-<tool>-<n>/: the prefix is moved
// into the Host the server builds its absolute links from, so every link
// of an invocation stays under its prefix, and asset hrefs (written with the
// placeholder assetHostPlaceholder) point at the asset server under the
// same prefix.
func perInvocation(catalog http.Handler, assetBase string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := invocationPrefix.FindString(r.URL.Path)
		if prefix == "" {
			http.Error(w, "SLO harness: every catalog path starts with /inv-<tool>-<n>", http.StatusNotFound)
			return
		}
		inner := r.Clone(r.Context())
		inner.Host = r.Host + prefix
		inner.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
		if inner.URL.Path == "" {
			inner.URL.Path = "/"
		}
		inner.URL.RawPath = ""
		rec := httptest.NewRecorder()
		catalog.ServeHTTP(rec, inner)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(assetHostPlaceholder), []byte(assetBase+prefix))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// serveAsset answers HEAD (and GET) for any asset with a Content-Length,
// which is what estimate_data_size sizes an asset by; a .png path gets a
// real (small) PNG, the thumbnail get_item_preview decodes; the pixel
// items' band files are served with ranges (servePixelFile).
func serveAsset(w http.ResponseWriter, r *http.Request) {
	if !invocationPrefix.MatchString(r.URL.Path) {
		http.Error(w, "SLO harness: asset paths start with /inv-<tool>-<n>", http.StatusNotFound)
		return
	}
	if servePixelFile(w, r) {
		return
	}
	if strings.HasSuffix(r.URL.Path, ".png") {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.Itoa(len(sloThumbnail)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(sloThumbnail)
		}
		return
	}
	w.Header().Set("Content-Type", "image/tiff; application=geotiff; profile=cloud-optimized")
	w.Header().Set("Content-Length", strconv.Itoa(sloAssetBytes))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(make([]byte, sloAssetBytes))
	}
}

const sloAssetBytes = 4096

// sloThumbnail is a 64×64 PNG gradient.
var sloThumbnail = func() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return buf.Bytes()
}()

// callOutcome is one tool call as the client saw it.
type callOutcome struct {
	ok      bool
	elapsed time.Duration
	receipt reliability.Receipt
	denial  string // denial code of a failed call, if the layer gave up
	text    string // the error text of a failed call
}

// call makes invocation n of tool with args, keyed "<tool>/<n>", against
// the catalog copy /inv-<tool>-<n>. It may run on any goroutine, so it
// returns errors instead of failing the test.
func (h *sloHarness) call(tool string, n int, args map[string]any) (callOutcome, error) {
	return h.callAs(fmt.Sprintf("%s/%d", tool, n), tool, fmt.Sprintf("/inv-%s-%d", tool, n), args)
}

// warm fetches, without faults, the capabilities of invocation n's catalog
// copy through the server's own catalog resolver, so that the call measured
// next finds the landing page and the conformance classes in its client's
// cache (stacclient keeps them for a minute), as every call after the first
// of a session does. It skips the MCP round trip: it prepares, it is not
// measured.
func (h *sloHarness) warm(tool string, n int) error {
	ctx := reliability.WithCorrelationID(context.Background(), fmt.Sprintf("%s/%s-%d", warmUpTool, tool, n))
	cat, err := h.catalogs.Resolve(ctx, fmt.Sprintf("%s/inv-%s-%d", h.catalog, tool, n))
	if err != nil {
		return err
	}
	// Warm-up requests meet no fault, but they run under the policy being
	// tested, whose tool timeout is as short as 1 s: on a 2-core machine
	// running every package's -race tests beside a CPU hog, a starved
	// warm-up can run out of time, several times in a row. It prepares and
	// is not measured, so it tries again until it succeeds; the bound only
	// ends a run whose catalog is broken.
	giveUp := time.Now().Add(warmUpPatience)
	for try := 1; ; try++ {
		_, err = h.layer.Run(ctx, warmUpTool, cat.Host, func(ctx context.Context) error {
			_, err := cat.Client.Capabilities(ctx)
			return err
		})
		if err == nil {
			return nil
		}
		if time.Now().After(giveUp) {
			return fmt.Errorf("warm-up for %s #%d (%d tries in %v): %w", tool, n, try, warmUpPatience, err)
		}
	}
}

// warmUpPatience bounds the warm-up of one invocation: far beyond what a
// loaded machine needs, it only fails a run whose catalog never answers.
const warmUpPatience = 2 * time.Minute

func (h *sloHarness) callAs(key, tool, prefix string, args map[string]any) (callOutcome, error) {
	withCatalog := map[string]any{"catalog_url": h.catalog + prefix}
	for k, v := range args {
		withCatalog[k] = v
	}
	params := &mcp.CallToolParams{
		Meta:      mcp.Meta{sloKeyMeta: key},
		Name:      tool,
		Arguments: withCatalog,
	}
	start := time.Now()
	res, err := h.session.CallTool(context.Background(), params)
	elapsed := time.Since(start)
	if err != nil {
		return callOutcome{}, fmt.Errorf("%s: protocol error %w", key, err)
	}
	out := callOutcome{ok: !res.IsError, elapsed: elapsed}
	raw, ok := res.Meta[tools.MetaReceipt]
	if !ok {
		return out, fmt.Errorf("%s: result without %s in _meta: %s", key, tools.MetaReceipt, textOf(res))
	}
	if err := decodeVia(raw, &out.receipt); err != nil {
		return out, err
	}
	if raw, ok := res.Meta[tools.MetaDenial]; ok {
		var d struct {
			Code string `json:"code"`
		}
		if err := decodeVia(raw, &d); err != nil {
			return out, err
		}
		out.denial = d.Code
	}
	if res.IsError {
		out.text = textOf(res)
	}
	return out, nil
}

func decodeVia(v any, into any) error {
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		return fmt.Errorf("decoding %T from %v: %w", into, v, err)
	}
	return nil
}

// run makes invocations 1..n of one tool, at most parallel at a time, and
// returns the outcomes in invocation order. Unless the call is cold, each
// invocation is warmed up first (see warm).
func (h *sloHarness) run(tb testing.TB, c sloCall, n, parallel int) []callOutcome {
	tb.Helper()
	out := make([]callOutcome, n)
	errs := make([]error, n)
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if !c.cold {
				if errs[i] = h.warm(c.tool, i+1); errs[i] != nil {
					return
				}
			}
			out[i], errs[i] = h.call(c.tool, i+1, c.args)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}
