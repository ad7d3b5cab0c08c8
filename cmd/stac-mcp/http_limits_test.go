package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
)

// dialRaw opens a plain TCP connection to the test server, closed at the
// end of the test.
func dialRaw(t *testing.T, s *httpServerForTest) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readResponse reads one HTTP response from c, waiting at most wait.
func readResponse(c net.Conn, br *bufio.Reader, wait time.Duration) (*http.Response, string, error) {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, "", err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp, string(body), err
}

const healthzRequest = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

// TestHTTPClosesIdleKeepAliveConnections: an idle
// keep-alive connection used to stay open forever; it is closed after
// STAC_MCP_HTTP_IDLE_TIMEOUT_SECS.
func TestHTTPClosesIdleKeepAliveConnections(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_HTTP_IDLE_TIMEOUT_SECS": "1"}, "--catalog", "demo", "--log-level", "error")
	c := dialRaw(t, s)
	br := bufio.NewReader(c)
	if _, err := io.WriteString(c, healthzRequest); err != nil {
		t.Fatal(err)
	}
	if resp, _, err := readResponse(c, br, patience); err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	// Now idle: the server must close the connection (EOF) after its 1 s
	// idle timeout; the read's own deadline is only a safety net.
	_ = c.SetReadDeadline(time.Now().Add(patience))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle keep-alive connection: read %v, want EOF (closed by the server)", err)
	}
}

// TestHTTPCapsOpenConnections: past
// STAC_MCP_HTTP_MAX_CONNS the server accepts no more connections (so it
// never runs out of descriptors); a waiting client is served as soon as a
// slot frees.
func TestHTTPCapsOpenConnections(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_HTTP_MAX_CONNS": "2"}, "--catalog", "demo", "--log-level", "error")
	held := []net.Conn{dialRaw(t, s), dialRaw(t, s)} // accepted, silent
	third := dialRaw(t, s)
	br := bufio.NewReader(third)
	if _, err := io.WriteString(third, healthzRequest); err != nil {
		t.Fatal(err)
	}
	// Nothing may answer within a second. A busy machine can only make this
	// pass when it should not, never fail; the listener's waiting is checked
	// as a state by internal/transport's TestConnectionCapMakesAcceptWait.
	var netErr net.Error
	if resp, _, err := readResponse(third, br, time.Second); !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("a third connection was served while two were open with --http-max-conns 2: %v %v", resp, err)
	}
	_ = held[0].Close()
	if resp, _, err := readResponse(third, br, patience); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the waiting connection was not served once a slot freed: %v %v", resp, err)
	}
}

// TestHTTPBodyDeadlineAndSizeCap: a client that starts a
// body and stops used to hold the connection and a goroutine forever; now
// it gets 408 after STAC_MCP_HTTP_BODY_TIMEOUT_SECS. A body over the cap
// gets 413 naming the setting. Neither limit cuts a tool call that runs
// longer than the body deadline.
func TestHTTPBodyDeadlineAndSizeCap(t *testing.T) {
	t.Parallel()
	catalog, entered, release := slowCatalog(t)
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_HTTP_BODY_TIMEOUT_SECS": "1", "STAC_MCP_HTTP_MAX_BODY_BYTES": "65536"},
		"--catalog", catalog.URL, "--log-level", "error", "--tool-timeout-secs", "30", "--attempt-timeout-secs", "30")
	defer release()

	c := dialRaw(t, s)
	br := bufio.NewReader(c)
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\":")
	resp, body, err := readResponse(c, br, patience)
	if err != nil || resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "STAC_MCP_HTTP_BODY_TIMEOUT_SECS") {
		t.Errorf("stalled body: %v %q %v; want 408 naming STAC_MCP_HTTP_BODY_TIMEOUT_SECS", resp, body, err)
	}

	hc := newTestHTTPClient(t)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 70_000) + `"}}`
	code, _, b2 := postJSON(t, hc, s.url+"/mcp", big, nil)
	var rpc struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(b2), &rpc)
	if code != http.StatusRequestEntityTooLarge || rpc.Error.Code != -32600 || !strings.Contains(rpc.Error.Message, "65536 bytes") ||
		!strings.Contains(rpc.Error.Message, "STAC_MCP_HTTP_MAX_BODY_BYTES") {
		t.Errorf("oversized body: %d %s; want 413 with a JSON-RPC error naming the 65536-byte cap and its setting", code, b2)
	}

	// A call that outlives the body deadline (1 s) completes.
	cs := connectHTTP(t, s.url, hc)
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = fmt.Errorf("isError: %v", res.Content)
		}
		done <- err
	}()
	<-entered
	time.Sleep(2500 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Errorf("a call longer than the body deadline failed: %v", err)
	}
}

// metricValue is the value of the single-series counter or gauge name.
func (s *httpServerForTest) metricValue(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := s.app.deps.Layer.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			if m := mf.GetMetric()[0]; m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			} else {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no single-series metric %s", name)
	return 0
}

// TestHTTPMetricsRejectsForeignHost: /metrics without a
// token (loopback) had no Host check, so a DNS-rebinding page could read it.
func TestHTTPMetricsRejectsForeignHost(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, nil, "--catalog", "demo", "--log-level", "error")
	hc := newTestHTTPClient(t)
	for _, c := range []struct {
		header, value string
	}{{"Host", "evil.example"}, {"Host", "evil.example:8080"}, {"Origin", "https://evil.example"}} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/metrics", nil)
		if c.header == "Host" {
			req.Host = c.value
		} else {
			req.Header.Set(c.header, c.value)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), "# TYPE") {
			t.Errorf("/metrics with %s: %s: %d, want 403 and no metrics", c.header, c.value, resp.StatusCode)
		}
	}
	if code, body := get(t, hc, s.url+"/metrics", ""); code != 200 || !strings.Contains(body, "# TYPE") {
		t.Errorf("/metrics from loopback with a loopback Host: %d", code)
	}
}

// TestHTTPTokenRules: the Bearer scheme is case-insensitive
// (RFC 9110), a refused request's connection is closed, and off loopback a
// token shorter than 16 bytes refuses to start.
func TestHTTPTokenRules(t *testing.T) {
	t.Parallel()
	const token = "tok-3f9a2c77d1e04b6b"
	s := startHTTPForTest(t, map[string]string{settings.EnvHTTPToken: token}, "--catalog", "demo", "--log-level", "error")
	hc := newTestHTTPClient(t)
	for _, auth := range []string{"bearer " + token, "BEARER " + token, "Bearer   " + token} {
		if code, _ := post(t, hc, s.url+"/mcp", map[string]string{"Authorization": auth}); code != http.StatusOK {
			t.Errorf("Authorization: %q: %d, want 200", strings.Replace(auth, token, "<token>", 1), code)
		}
	}
	c := dialRaw(t, s)
	br := bufio.NewReader(c)
	_, _ = io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if resp, _, err := readResponse(c, br, patience); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v %v", resp, err)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after a 401 the connection stays open (read: %v); an unauthenticated client could hold it", err)
	}

	for _, addr := range []string{"0.0.0.0:8080", "10.1.2.3:80"} {
		if err := checkHTTPExposure(addr, "x"); err == nil || !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("%s with a 1-byte token: %v; want a refusal asking for at least 16 bytes", addr, err)
		}
	}
	if err := checkHTTPExposure("127.0.0.1:8080", "short"); err != nil {
		t.Errorf("a short token on loopback: %v, want it allowed (only this machine can reach it)", err)
	}
	// One token per client: each must be long enough.
	if err := checkHTTPExposure("0.0.0.0:8080", "token-of-alice-0123456789,short"); err == nil || !strings.Contains(err.Error(), "token 2") {
		t.Errorf("a list with a 5-byte second token: %v; want a refusal naming token 2", err)
	}
	if err := checkHTTPExposure("0.0.0.0:8080", "token-of-alice-0123456789, token-of-bob-0123456789"); err != nil {
		t.Errorf("two long tokens: %v", err)
	}
}

// TestMetricsAddrFollowsTheHTTPExposureRule: in stdio mode
// STAC_MCP_METRICS_ADDR off loopback served /metrics to the network without
// a token; now it refuses to start without one, and with one /metrics
// requires it.
func TestMetricsAddrFollowsTheHTTPExposureRule(t *testing.T) {
	// Not parallel: runStdio takes the process's SIGINT and SIGTERM.
	code, _, stderr := runForTest(t, map[string]string{"STAC_MCP_METRICS_ADDR": "192.0.2.1:9464"}, "--catalog", "demo")
	if code != 2 || !strings.Contains(stderr, "STAC_MCP_METRICS_ADDR") || !strings.Contains(stderr, "STAC_MCP_HTTP_TOKEN") {
		t.Errorf("non-loopback metrics address without a token: exit %d, stderr %q; want 2 naming both settings", code, stderr)
	}

	const token = "tok-3f9a2c77d1e04b6b"
	addr, shutdown, err := serveMetrics("127.0.0.1:0", newDemoApp(t), token)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	hc := newTestHTTPClient(t)
	if code, _ := get(t, hc, "http://"+addr+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get(t, hc, "http://"+addr+"/metrics", token); code != http.StatusOK {
		t.Errorf("/metrics with the token: %d, want 200", code)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := hc.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics with a foreign Host: %v %v, want 403", resp, err)
	} else {
		_ = resp.Body.Close()
	}
}

// TestMetricsAreCompleteBeforeTheFirstCall: every tool's series
// exist at 0 from the start (the ASR counters and each tool_calls_total
// outcome), with the Go and process collectors.
func TestMetricsAreCompleteBeforeTheFirstCall(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, nil, "--catalog", "demo", "--log-level", "error")
	_, body := get(t, newTestHTTPClient(t), s.url+"/metrics", "")
	for _, want := range []string{
		`retries_attempted_total{tool_name="search_items"} 0`,
		`timeouts_total{tool_name="get_root"} 0`,
		`retry_exhausted_total{tool_name="estimate_data_size"} 0`,
		`tool_calls_total{outcome="ok",tool_name="get_item"} 0`,
		`tool_calls_total{outcome="error",tool_name="get_service_health"} 0`,
		`tool_calls_total{outcome="retry_exhausted",tool_name="search_items"} 0`,
		"go_goroutines ", "process_open_fds ", "process_resident_memory_bytes ", "http_requests_in_flight 0",
		`http_mcp_requests_total{protocol_version="2026-07-28"} 0`, `http_mcp_requests_total{protocol_version="2025-03-26"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics before any call lacks %s", want)
		}
	}
}

// TestHTTPNeverLogsSessionIDs: a session id lets
// its holder cancel the session's calls, so it is in no log, not even at
// debug level (the server keeps no session to debug).
func TestHTTPNeverLogsSessionIDs(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, nil, "--catalog", "demo", "--log-level", "debug")
	cs := connectHTTPAt(t, s.url, newTestHTTPClient(t), "2025-11-25")
	id := cs.ID()
	if id == "" {
		t.Fatal("no session id")
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_catalogs", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.logs.String(), id) {
		t.Errorf("the session id appears in the debug log:\n%s", s.logs.String())
	}
	if !strings.Contains(s.logs.String(), `"level":"debug"`) {
		t.Errorf("no debug log at all, so the test proves nothing:\n%s", s.logs.String())
	}
}

// TestHTTPServiceHealthShowsOnlyConfiguredOrNamedHosts: over http,
// get_service_health without catalog_url lists the
// configured catalog and never a catalog_url a client named, whatever
// revision the clients speak; a client sees its own catalog by naming it.
// Nothing about a client is remembered, so this holds on every replica.
func TestHTTPServiceHealthShowsOnlyConfiguredOrNamedHosts(t *testing.T) {
	t.Parallel()
	store := func(name string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"type":"Catalog","id":%q,"stac_version":"1.0.0","description":"d","links":[],"conformsTo":[]}`, name)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	configured, private := store("configured"), store("private")
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"}, "--catalog", configured.URL, "--log-level", "error")
	hc := newTestHTTPClient(t)
	alice, bob := connectHTTPAt(t, s.url, hc, "2025-11-25"), connectHTTP(t, s.url, hc)
	if res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{"catalog_url": private.URL}}); err != nil || res.IsError {
		t.Fatalf("alice get_root: %v %+v", err, res)
	}
	if res, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("bob get_root: %v %+v", err, res)
	}
	privateHost, configuredHost := strings.TrimPrefix(private.URL, "http://"), strings.TrimPrefix(configured.URL, "http://")
	report := func(cs *mcp.ClientSession, args map[string]any) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_service_health", Arguments: args})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		return string(raw)
	}
	for name, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		if raw := report(cs, map[string]any{}); strings.Contains(raw, privateHost) || !strings.Contains(raw, configuredHost) {
			t.Errorf("%s's get_service_health: %s; want the configured catalog %s and not the private %s", name, raw, configuredHost, privateHost)
		}
	}
	if raw := report(alice, map[string]any{"catalog_url": private.URL}); !strings.Contains(raw, privateHost) {
		t.Errorf("alice naming her catalog does not see its host: %s", raw)
	}
}
