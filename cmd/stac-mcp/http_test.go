package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
)

// httpServerForTest is `stac-mcp http` in-process on a free loopback port.
type httpServerForTest struct {
	url    string // http://127.0.0.1:PORT
	app    *app
	logs   *syncBuffer
	stop   context.CancelFunc // what SIGINT/SIGTERM does
	served chan error         // serveHTTP's result
}

// startHTTPForTest loads the configuration from args and env exactly as the
// command does, then serves it; cleanup stops it and waits.
func startHTTPForTest(t *testing.T, env map[string]string, args ...string) *httpServerForTest {
	t.Helper()
	cfg, err := loadConfig(append([]string{"http"}, args...), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	a, err := newApp(t.Context(), cfg, logs)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &httpServerForTest{url: "http://" + ln.Addr().String(), app: a, logs: logs, stop: stop, served: make(chan error, 1)}
	go func() { s.served <- serveHTTP(ctx, a, ln, cfg) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-s.served:
			if err != nil {
				t.Errorf("serveHTTP: %v", err)
			}
		case <-time.After(patience):
			t.Error("serveHTTP did not return after the stop")
		}
		a.close()
	})
	return s
}

// syncBuffer is a sink written by other goroutines (server logs, a child
// process's stderr copied by exec) and read by the test meanwhile.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// connectHTTP opens an MCP session over Streamable HTTP with the SDK client.
func connectHTTP(t *testing.T, url string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting over Streamable HTTP: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// newTestHTTPClient is a client whose idle connections are closed at the
// end of the test (goleak checks for them).
func newTestHTTPClient(t *testing.T) *http.Client {
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// post sends the initialize request as a raw POST to url with extra
// headers and returns the status and body.
func post(t *testing.T, hc *http.Client, url string, headers map[string]string) (int, string) {
	t.Helper()
	code, _, body := postJSON(t, hc, url, initializeBody, headers)
	return code, body
}

// postJSON sends one raw JSON-RPC POST to url (Host among the headers sets
// the Host line) and returns the status, the headers and the body.
func postJSON(t *testing.T, hc *http.Client, url, body string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Header, string(got)
}

func get(t *testing.T, hc *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestHTTPRejectsForeignOriginAndHost(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, nil, "--catalog", "demo", "--log-level", "error")
	hc := newTestHTTPClient(t)
	if code, body := post(t, hc, s.url+"/mcp", nil); code != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
		t.Fatalf("plain initialize: %d %q; want 200 with the initialize result", code, body)
	}
	if code, body := post(t, hc, s.url+"/mcp", map[string]string{"Origin": s.url}); code != http.StatusOK {
		t.Errorf("same-origin initialize: %d %q; want 200", code, body)
	}
	if code, _ := post(t, hc, s.url+"/mcp", map[string]string{"Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Errorf("foreign Origin on POST: %d, want 403", code)
	}
	if code, _ := post(t, hc, s.url+"/mcp", map[string]string{"Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Errorf("Sec-Fetch-Site cross-site: %d, want 403", code)
	}
	// The spec asks for every request, so the GET event stream too.
	req, _ := http.NewRequest(http.MethodGet, s.url+"/mcp", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin on GET: %d, want 403", resp.StatusCode)
	}
	// DNS rebinding: a loopback connection naming another host.
	if code, body := post(t, hc, s.url+"/mcp", map[string]string{"Host": "evil.example"}); code != http.StatusForbidden || !strings.Contains(body, "Host") {
		t.Errorf("foreign Host: %d %q, want 403 naming the Host header", code, body)
	}
	if code, body := get(t, hc, s.url+"/healthz", ""); code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, hc, s.url+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "# TYPE") {
		t.Errorf("/metrics without a token configured: %d %.200q", code, body)
	}
}

func TestHTTPTokenIsRequiredAndLeaksNothing(t *testing.T) {
	t.Parallel()
	const token = "tok-3f9a2c77d1e04b6b"
	s := startHTTPForTest(t, map[string]string{settings.EnvHTTPToken: token}, "--catalog", "demo", "--log-level", "debug")
	hc := newTestHTTPClient(t)
	for name, headers := range map[string]map[string]string{
		"missing":      nil,
		"wrong":        {"Authorization": "Bearer nope"},
		"prefix only":  {"Authorization": "Bearer " + token[:5]},
		"wrong scheme": {"Authorization": "Basic " + token},
		"no scheme":    {"Authorization": token},
	} {
		code, body := post(t, hc, s.url+"/mcp", headers)
		if code != http.StatusUnauthorized || body != "" {
			t.Errorf("%s token: %d %q, want 401 with an empty body", name, code, body)
		}
	}
	if code, body := post(t, hc, s.url+"/mcp", map[string]string{"Authorization": "Bearer " + token}); code != http.StatusOK || !strings.Contains(body, "protocolVersion") {
		t.Errorf("right token: %d %q, want 200", code, body)
	}
	if code, _ := get(t, hc, s.url+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401 (it names the catalogs contacted)", code)
	}
	if code, _ := get(t, hc, s.url+"/metrics", token); code != http.StatusOK {
		t.Errorf("/metrics with the token: %d, want 200", code)
	}
	if code, body := get(t, hc, s.url+"/healthz", ""); code != http.StatusOK || body != "{\"status\":\"ok\"}\n" {
		t.Errorf("/healthz stays open for probes with nothing but ok: %d %q", code, body)
	}
	// A full session with the SDK client and the token.
	authed := &http.Client{Transport: bearerTransport{token: token, base: hc.Transport}}
	cs := connectHTTP(t, s.url, authed)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_root with the token: %v %+v", err, res)
	}
	if strings.Contains(s.logs.String(), token) {
		t.Errorf("the token appears in the debug log:\n%s", s.logs.String())
	}
}

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestHTTPRefusesNonLoopbackWithoutToken(t *testing.T) {
	// Not parallel: runHTTP takes the process's SIGINT and SIGTERM.
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.10:8080"} {
		code, _, stderr := runForTest(t, nil, "http", "--addr", addr)
		if code != 2 || !strings.Contains(stderr, "STAC_MCP_HTTP_TOKEN") || !strings.Contains(stderr, addr) {
			t.Errorf("--addr %s without a token: exit %d, stderr %q; want 2 naming the address and STAC_MCP_HTTP_TOKEN", addr, code, stderr)
		}
	}
	code, _, stderr := runForTest(t, nil, "http", "--addr", "no-port")
	if code != 2 || !strings.Contains(stderr, "host:port") {
		t.Errorf("--addr no-port: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runForTest(t, nil, "http", "extra")
	if code != 2 || !strings.Contains(stderr, "--addr") {
		t.Errorf("http extra: exit %d, stderr %q", code, stderr)
	}
	for _, addr := range []string{"0.0.0.0:8080", "[::]:8080", "10.1.2.3:80"} {
		if err := checkHTTPExposure(addr, "a-token-of-16-bytes"); err != nil {
			t.Errorf("%s with a token: %v, want it allowed", addr, err)
		}
	}
	// Which hosts are loopback: internal/transport's TestIsLoopbackHost.
}

// slowCatalog is a minimal STAC API whose every answer waits until
// release is closed; entered receives once per request.
func slowCatalog(t *testing.T) (srv *httptest.Server, entered chan struct{}, release func()) {
	srv, entered, _, release = cancellableCatalog(t)
	return srv, entered, release
}

// cancellableCatalog is slowCatalog that also reports, on cancelled, each
// request abandoned by its client (the server's request to it was
// cancelled) before release.
func cancellableCatalog(t *testing.T) (srv *httptest.Server, entered, cancelled chan struct{}, release func()) {
	entered, cancelled = make(chan struct{}, 64), make(chan struct{}, 64)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-gate:
		case <-r.Context().Done():
			select {
			case cancelled <- struct{}{}:
			default:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"Catalog","id":"slow","stac_version":"1.0.0","description":"a slow catalog","links":[],"conformsTo":[]}`)
	}))
	t.Cleanup(func() { release(); srv.Close() })
	return srv, entered, cancelled, release
}

func TestHTTPGracefulShutdownFinishesTheCallInFlight(t *testing.T) {
	t.Parallel()
	catalog, entered, release := slowCatalog(t)
	s := startHTTPForTest(t, nil, "--catalog", catalog.URL, "--log-level", "error", "--tool-timeout-secs", "20")
	defer release() // before the server's cleanup, which waits for calls in flight
	hc := newTestHTTPClient(t)
	cs := connectHTTP(t, s.url, hc)

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{}})
		done <- result{res, err}
	}()
	<-entered // the call is upstream now
	s.stop()  // what SIGTERM does
	// The listener closes at once; the call is still running.
	deadline := time.Now().Add(patience)
	for {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), time.Second)
		if err != nil {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts connections after the stop")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("the call ended before its upstream answered: %+v %v", r.res, r.err)
	case err := <-s.served:
		t.Fatalf("the server exited with a call in flight: %v", err)
	default:
	}
	release()
	r := <-done
	if r.err != nil || r.res.IsError {
		t.Fatalf("the call in flight did not complete: %v %+v", r.err, r.res)
	}
	if err := <-s.served; err != nil {
		t.Fatalf("serveHTTP after the call: %v", err)
	}
	s.served <- nil // for the cleanup, which waits for it again
}

func TestHTTPOneSessionsHangingCatalogDoesNotStarveAnother(t *testing.T) {
	t.Parallel()
	hanging, entered, release := slowCatalog(t)
	// The hanging catalog is a loopback server named by catalog_url, which
	// http mode refuses unless private networks are allowed.
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_BULKHEAD_MAX": "2", "STAC_MCP_MAX_ATTEMPTS": "1", "STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"},
		"--catalog", "demo", "--log-level", "error", "--tool-timeout-secs", "30", "--attempt-timeout-secs", "30")
	hc := newTestHTTPClient(t)
	stuck, healthy := connectHTTP(t, s.url, hc), connectHTTP(t, s.url, hc)

	defer release() // before the server's cleanup, which waits for calls in flight

	// More calls to the hanging host than its bulkhead admits. Each names
	// its own catalog path on that host, because the layer would coalesce
	// identical requests into one.
	const hangingCalls = 3
	stuckDone := make(chan struct{}, hangingCalls)
	for i := range hangingCalls {
		go func() {
			_, _ = stuck.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root",
				Arguments: map[string]any{"catalog_url": fmt.Sprintf("%s/c%d", hanging.URL, i)}})
			stuckDone <- struct{}{}
		}()
	}
	<-entered
	<-entered // the bulkhead (2) is full; the third call waits for a slot
	hangingHost := strings.TrimPrefix(hanging.URL, "http://")
	for _, h := range s.app.deps.Layer.Health(t.Context()) {
		if h.Host == hangingHost && h.InFlight != 2 {
			t.Errorf("the hanging host has %d requests in flight, want its bulkhead's 2", h.InFlight)
		}
	}

	// The other session, on another catalog, is served while those hang.
	for i := range 3 {
		res, err := healthy.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_items",
			Arguments: map[string]any{"collections": []string{"naip"}, "max_items": 1}})
		if err != nil || res.IsError {
			t.Fatalf("healthy session call %d: %v %+v", i, err, res)
		}
	}
	select {
	case <-stuckDone:
		t.Fatal("a call to the hanging catalog returned before it was released; the test proves nothing")
	default:
	}
	// Both sessions share one layer: it saw both hosts.
	hosts := map[string]bool{}
	for _, h := range s.app.deps.Layer.Health(t.Context()) {
		hosts[h.Host] = true
	}
	if !hosts[hangingHost] || len(hosts) < 2 {
		t.Errorf("the shared layer knows hosts %v; want the hanging one and the demo one", hosts)
	}
	release()
	for range hangingCalls {
		<-stuckDone
	}
}
