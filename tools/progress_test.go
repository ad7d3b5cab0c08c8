package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (l *progressLog) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, req.Params)
}

func (l *progressLog) all() []*mcp.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), l.notes...)
}

// newClientSession is newTestSession with client options (progress
// handler) and access to the Deps.
func newClientSession(t *testing.T, d *Deps, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectWithOptions(t, NewServer(d, "test"), copts)
}

// callWithProgress calls a tool with a progress token and returns the
// result once every notification sent before it has been received (the
// in-memory transport delivers in order, so they arrive before the result).
func callWithProgress(t *testing.T, cs *mcp.ClientSession, name string, args any, token string) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %s", name, resultText(res))
	}
	return res
}

func TestProgressIsReportedPerPageAndProbeWhenAskedFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool      string
		args      map[string]any
		minNotes  int
		wantInMsg string
	}{
		// limit 1 with max_items 3: three pages of one item.
		{"search_items", map[string]any{"collections": []string{"joplin"}, "limit": 1, "max_items": 3}, 3, "page 3 read, 3 of at most 3"},
		{"search_collections", map[string]any{"limit": 2}, 1, "search_collections:"},
		// force_metadata_only: joplin's assets live on S3 (no HEAD off the machine).
		{"estimate_data_size", map[string]any{"collections": []string{"joplin"}, "limit": 1, "max_items": 3, "force_metadata_only": true}, 3, "search page 3 read"},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			log := &progressLog{}
			d := newTestDeps(t, testSessionOptions{})
			cs := newClientSession(t, d, &mcp.ClientOptions{ProgressNotificationHandler: log.handle})
			callWithProgress(t, cs, tc.tool, tc.args, "tok-"+tc.tool)
			notes := waitForNotes(log, tc.minNotes)
			if len(notes) < tc.minNotes {
				t.Fatalf("%d progress notifications, want at least %d: %+v", len(notes), tc.minNotes, notes)
			}
			var last float64
			found := false
			for _, n := range notes {
				if n.ProgressToken != "tok-"+tc.tool {
					t.Errorf("notification token %v, want %q", n.ProgressToken, "tok-"+tc.tool)
				}
				if n.Progress <= last {
					t.Errorf("progress %v after %v: must increase with every notification", n.Progress, last)
				}
				last = n.Progress
				found = found || strings.Contains(n.Message, tc.wantInMsg)
			}
			if !found {
				t.Errorf("no notification message contains %q: %+v", tc.wantInMsg, messages(notes))
			}
		})
	}
}

func TestNoProgressWithoutAToken(t *testing.T) {
	t.Parallel()
	log := &progressLog{}
	d := newTestDeps(t, testSessionOptions{})
	cs := newClientSession(t, d, &mcp.ClientOptions{ProgressNotificationHandler: log.handle})
	callOK(t, cs, "search_items", map[string]any{"collections": []string{"joplin"}, "limit": 1, "max_items": 3})
	// A ping after the call: anything the server sent before its answer
	// has been delivered by then.
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := log.all(); len(n) != 0 {
		t.Errorf("%d progress notifications without a progress token: %+v", len(n), messages(n))
	}
}

// waitForNotes gives notifications dispatched concurrently with the result
// time to arrive: it returns as soon as atLeast have, and the bound only
// ends a test whose notifications never come.
func waitForNotes(log *progressLog, atLeast int) []*mcp.ProgressNotificationParams {
	deadline := time.Now().Add(eventGuard)
	for {
		n := log.all()
		if len(n) >= atLeast || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func messages(notes []*mcp.ProgressNotificationParams) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.Message
	}
	return out
}

// blockingCatalog serves the demo catalog, except that the routes matched
// by block hang until the request's context ends; it signals when each
// blocked request started and ended.
type blockingCatalog struct {
	next    http.Handler
	block   func(*http.Request) bool
	started chan struct{} // one send per blocked request
	ended   chan struct{}

	mu       sync.Mutex
	requests int
}

// demoCatalogHandler is the demo catalog as a STAC API handler.
func demoCatalogHandler(t *testing.T) http.Handler {
	t.Helper()
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		t.Fatal(err)
	}
	return stacserver.New(store, stacserver.Options{})
}

func newBlockingCatalog(t *testing.T, block func(*http.Request) bool) (*blockingCatalog, string) {
	t.Helper()
	b := &blockingCatalog{next: demoCatalogHandler(t), block: block,
		started: make(chan struct{}, 16), ended: make(chan struct{}, 16)}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, srv.URL
}

func (b *blockingCatalog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !b.block(r) {
		b.next.ServeHTTP(w, r)
		return
	}
	// Read the body as a real server would: net/http notices a closed
	// connection (and cancels r.Context) only once the body is consumed.
	_, _ = io.Copy(io.Discard, r.Body)
	b.mu.Lock()
	b.requests++
	b.mu.Unlock()
	b.started <- struct{}{}
	<-r.Context().Done()
	b.ended <- struct{}{}
}

func (b *blockingCatalog) blockedRequests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests
}

// cancelOnlyPolicy gives attempts and calls an hour: in the cancel tests a
// blocked upstream request can then only end because the client cancelled
// (the test's cleanup closes the server later), so seeing it end proves
// the cancel reached it, without timing how long that took.
func cancelOnlyPolicy() *reliability.Policy {
	p := testPolicy()
	p.ToolTimeout, p.AttemptTimeout = time.Hour, time.Hour
	return &p
}

// eventGuard only ends a test whose awaited event never comes; it bounds
// nothing the test asserts.
const eventGuard = time.Minute

// TestCancelStopsUpstreamAtOnce: a client that cancels a call (the SDK
// sends notifications/cancelled) ends the upstream request, no retry
// follows, and nothing keeps running (TestMain's goleak check).
func TestCancelStopsUpstreamAtOnce(t *testing.T) {
	t.Parallel()
	isSearch := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/search") }
	cases := []struct {
		tool  string
		block func(*http.Request) bool
		args  map[string]any
	}{
		{"search_items", isSearch, map[string]any{"collections": []string{"joplin"}}},
		{"estimate_data_size", isSearch, map[string]any{"collections": []string{"joplin"}}},
		{"search_collections", func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/collections") }, map[string]any{}},
		{"get_item", func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/items/") }, map[string]any{"collection_id": "joplin", "item_id": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			upstream, url := newBlockingCatalog(t, tc.block)
			d := newTestDeps(t, testSessionOptions{CatalogURL: url, Policy: cancelOnlyPolicy()})
			cs := newClientSession(t, d, nil)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			callErr := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				callErr <- err
			}()
			select {
			case <-upstream.started:
			case <-time.After(eventGuard):
				t.Fatal("the blocked upstream request never arrived")
			}
			cancel()
			if err := <-callErr; !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool after cancel: %v, want context.Canceled", err)
			}
			select {
			case <-upstream.ended: // only the cancel can end it (cancelOnlyPolicy)
			case <-time.After(eventGuard):
				t.Fatalf("the upstream request was still open %v after the client cancelled", eventGuard)
			}
			// The layer lets go of the request once its attempt is over.
			for giveUp := time.Now().Add(eventGuard); inFlight(d) != 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(giveUp) {
					t.Fatalf("%d requests still in flight %v after the cancel", inFlight(d), eventGuard)
				}
			}
			// No retry of the cancelled request: the count stays at one. (A
			// retry would have gone out at once, 1 ms of backoff later; the
			// pause gives it time to show, it bounds nothing.)
			time.Sleep(100 * time.Millisecond)
			if n := upstream.blockedRequests(); n != 1 {
				t.Errorf("%d requests reached the blocked route, want 1 (a cancelled call must not retry)", n)
			}
		})
	}
}

// inFlight is how many requests the layer has in flight to the (single)
// catalog host.
func inFlight(d *Deps) int {
	n := 0
	for _, h := range d.Layer.Health(context.Background()) {
		n += h.InFlight
	}
	return n
}

// newSizingCatalog serves a collection "c" of two items whose one asset
// has no size metadata and lives on assets, so estimate_data_size probes it
// with HEAD.
func newSizingCatalog(t *testing.T, assets http.Handler) (catalogURL, assetsURL string) {
	t.Helper()
	assetSrv := httptest.NewServer(assets)
	t.Cleanup(assetSrv.Close)
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","id":"c","description":"d","license":"other",
		"extent":{"spatial":{"bbox":[[0,0,1,1]]},"temporal":{"interval":[["2020-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"i%d","collection":"c","geometry":null,"properties":{"datetime":"2020-01-0%dT00:00:00Z"},"links":[],
			"assets":{"data":{"href":"%s/i%d.tif","type":"image/tiff"}}}`, i, i, assetSrv.URL, i)
		if err := store.AddItem([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	catalog := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	t.Cleanup(catalog.Close)
	return catalog.URL, assetSrv.URL
}

// TestEstimateReportsEachHEADProbe: assets without size metadata are sized
// by HEAD, and each finished probe is a progress step.
func TestEstimateReportsEachHEADProbe(t *testing.T) {
	t.Parallel()
	catalogURL, assetsURL := newSizingCatalog(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
	}))
	log := &progressLog{}
	d := newTestDeps(t, testSessionOptions{CatalogURL: catalogURL})
	cs := newClientSession(t, d, &mcp.ClientOptions{ProgressNotificationHandler: log.handle})
	res := callWithProgress(t, cs, "estimate_data_size", map[string]any{"collections": []string{"c"}}, "tok-head")
	if out := structured[EstimateDataSizeOut](t, res); out.TotalBytes != 2000 {
		t.Fatalf("total %d bytes, want 2000 from two HEAD probes: %+v", out.TotalBytes, out)
	}
	probes := 0
	for _, n := range waitForNotes(log, 3) {
		if strings.Contains(n.Message, "HEAD probe of "+assetsURL) {
			probes++
		}
	}
	if probes != 2 {
		t.Errorf("%d HEAD probe notifications, want 2: %v", probes, messages(log.all()))
	}
}

// TestCancelStopsHEADProbesAtOnce: cancelling estimate_data_size while its
// HEAD probes hang ends both probes.
func TestCancelStopsHEADProbesAtOnce(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 2), make(chan struct{}, 2)
	catalogURL, _ := newSizingCatalog(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
		ended <- struct{}{}
	}))
	d := newTestDeps(t, testSessionOptions{CatalogURL: catalogURL, Policy: cancelOnlyPolicy()})
	cs := newClientSession(t, d, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "estimate_data_size", Arguments: map[string]any{"collections": []string{"c"}}})
		callErr <- err
	}()
	for range 2 { // both probes run at once (4 in parallel)
		select {
		case <-started:
		case <-time.After(eventGuard):
			t.Fatal("the HEAD probes never arrived")
		}
	}
	cancel()
	if err := <-callErr; !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool after cancel: %v, want context.Canceled", err)
	}
	for range 2 {
		select {
		case <-ended: // only the cancel can end it (cancelOnlyPolicy)
		case <-time.After(eventGuard):
			t.Fatalf("a HEAD probe was still open %v after the client cancelled", eventGuard)
		}
	}
}
