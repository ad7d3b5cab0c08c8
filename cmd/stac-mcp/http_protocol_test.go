package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
)

// Header names and the first stateless revision of the protocol, as
// clients send them.
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	statelessRevision     = "2026-07-28"
)

// The protocol revisions `stac-mcp http` serves (adr/0015), newest first.
var (
	legacyRevisions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}
	allRevisions    = append([]string{statelessRevision}, legacyRevisions...)
)

// connectHTTPAt opens a session with the go-sdk client at a given protocol
// revision (it negotiates 2026-07-28 by itself; an earlier one makes it use
// initialize) and checks that the server agreed to it.
func connectHTTPAt(t *testing.T, url string, hc *http.Client, revision string, opts ...*mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, append(opts, nil)[0])
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: revision})
	if err != nil {
		t.Fatalf("connecting over Streamable HTTP at %s: %v", revision, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != revision {
		t.Fatalf("asked for protocol %s, negotiated %s", revision, got)
	}
	return cs
}

// roundRobin is a reverse proxy on loopback that sends each request to the
// next replica in turn, as a load balancer without sticky sessions does,
// and records what it forwarded.
type roundRobin struct {
	url string

	mu        sync.Mutex
	next      int
	forwarded []forwardedRequest
}

type forwardedRequest struct {
	replica                   int
	method, session, revision string
}

func newRoundRobin(t *testing.T, replicas ...*httpServerForTest) *roundRobin {
	t.Helper()
	targets := make([]*url.URL, len(replicas))
	for i, r := range replicas {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		targets[i] = u
	}
	rr := &roundRobin{}
	transport := &http.Transport{}
	proxy := &httputil.ReverseProxy{Transport: transport, Rewrite: func(pr *httputil.ProxyRequest) {
		rr.mu.Lock()
		i := rr.next % len(targets)
		rr.next++
		rr.forwarded = append(rr.forwarded, forwardedRequest{replica: i, method: pr.In.Method,
			session: pr.In.Header.Get(sessionIDHeader), revision: pr.In.Header.Get(protocolVersionHeader)})
		rr.mu.Unlock()
		pr.SetURL(targets[i])
	}}
	srv := httptest.NewServer(proxy)
	t.Cleanup(func() { srv.Close(); transport.CloseIdleConnections() })
	rr.url = srv.URL
	return rr
}

// requests returns what the proxy forwarded so far.
func (rr *roundRobin) requests() []forwardedRequest {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Clone(rr.forwarded)
}

// startReplicas starts n in-process servers that share a cursor key, as
// replicas behind a load balancer must.
func startReplicas(t *testing.T, n int, env map[string]string, args ...string) []*httpServerForTest {
	t.Helper()
	env = mapsWith(env, settings.EnvCursorKey, "replicas-share-this-cursor-key-0123456789")
	var replicas []*httpServerForTest
	for range n {
		replicas = append(replicas, startHTTPForTest(t, env, args...))
	}
	return replicas
}

func mapsWith(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range m {
		out[key] = val
	}
	return out
}

// TestHTTPServesRevision20260728: a 2026-07-28 tools/call used to
// get -32022 ("protocol version not supported") over http, and the go-sdk
// client fell back to 2025-11-25. Now the raw request is answered, the
// client negotiates 2026-07-28, and no response carries a session id.
func TestHTTPServesRevision20260728(t *testing.T) {
	t.Parallel()
	s := startHTTPForTest(t, nil, "--catalog", "demo", "--log-level", "error")
	hc := newTestHTTPClient(t)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"}}`
	headers := map[string]string{protocolVersionHeader: "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_catalogs"}
	code, header, body := postJSON(t, hc, s.url+"/mcp",
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_catalogs","arguments":{},`+meta+`}}`, headers)
	if code != http.StatusOK || !strings.Contains(body, `"structuredContent"`) || strings.Contains(body, "-32022") {
		t.Fatalf("2026-07-28 tools/call: %d %.600s; want 200 with the tool's result", code, body)
	}
	if id := header.Get(sessionIDHeader); id != "" {
		t.Errorf("a 2026-07-28 answer carries Mcp-Session-Id %q; the revision has no sessions", id)
	}

	headers = map[string]string{protocolVersionHeader: "2026-07-28", "Mcp-Method": "server/discover"}
	code, _, body = postJSON(t, hc, s.url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`, headers)
	for _, v := range allRevisions {
		if code != http.StatusOK || !strings.Contains(body, `"`+v+`"`) {
			t.Errorf("server/discover: %d %.600s; want 200 listing %s", code, body, v)
		}
	}

	rec := &headerRecorder{base: hc.Transport}
	cs := connectHTTPAt(t, s.url, &http.Client{Transport: rec}, statelessRevision)
	if cs.ID() != "" {
		t.Errorf("session id %q at 2026-07-28", cs.ID())
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_items", Arguments: map[string]any{"collections": []string{"naip"}, "max_items": 1}})
	if err != nil || res.IsError {
		t.Fatalf("search_items at 2026-07-28: %v %+v", err, res)
	}
	if ids := rec.sessionIDs(); len(ids) != 0 {
		t.Errorf("responses carried session ids %q at 2026-07-28", ids)
	}
}

// headerRecorder remembers the session ids responses carried.
type headerRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ids  []string
}

func (h *headerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(r)
	if err == nil && resp.Header.Get(sessionIDHeader) != "" {
		h.mu.Lock()
		h.ids = append(h.ids, resp.Header.Get(sessionIDHeader))
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headerRecorder) sessionIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ids)
}

// TestHTTPReplicasNeedNoStickySessions: two replicas behind a
// round-robin proxy serve clients of every revision, each client's
// requests alternating between them: the tools, a cursor issued by one
// replica and continued on the other, and progress notifications. A
// legacy client gets a session id the other replica accepts too. Before,
// the server was stateful: the second request of a legacy client reached
// a replica that did not know its session (404), and a 2026-07-28 client
// was refused.
func TestHTTPReplicasNeedNoStickySessions(t *testing.T) {
	t.Parallel()
	replicas := startReplicas(t, 2, nil, "--catalog", "demo", "--log-level", "error")
	rr := newRoundRobin(t, replicas...)
	hc := newTestHTTPClient(t)

	for _, revision := range allRevisions {
		t.Run(revision, func(t *testing.T) {
			progress := &progressNotes{}
			before := len(rr.requests())
			cs := connectHTTPAt(t, rr.url, hc, revision, &mcp.ClientOptions{ProgressNotificationHandler: progress.add})
			if (cs.ID() != "") != (revision != statelessRevision) {
				t.Errorf("session id %q; want one for a legacy revision only", cs.ID())
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) < 10 {
				t.Fatalf("tools/list: %v", err)
			}
			params := &mcp.CallToolParams{Name: "search_items", Arguments: map[string]any{"collections": []string{"joplin"}, "limit": 1, "max_items": 2}}
			params.SetProgressToken("p-" + revision)
			page := firstSearchPage(t, cs, params)
			// The continuation goes to whichever replica is next.
			next := callHTTPTool(t, cs, &mcp.CallToolParams{Name: "search_items", Arguments: map[string]any{"cursor": page.Cursor, "max_items": 2}})
			var more struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			decodeStructured(t, next, &more)
			if len(more.Items) == 0 || more.Items[0].ID == page.Items[0].ID || more.Items[0].ID == page.Items[1].ID {
				t.Errorf("the cursor continued with %+v after %+v", more.Items, page.Items)
			}
			// Progress came on the call's own response stream (the client
			// may still be handing the notifications over).
			deadline := time.Now().Add(patience)
			for progress.count("p-"+revision) < 2 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := progress.count("p-" + revision); n < 2 {
				t.Errorf("%d progress notifications for a two-page search, want at least 2", n)
			}
			_ = cs.Close()

			seen := map[int]bool{}
			for _, f := range rr.requests()[before:] {
				seen[f.replica] = true
				if f.method == http.MethodPost && f.revision != "" && f.revision != revision {
					t.Errorf("a request declared revision %q in a %s session", f.revision, revision)
				}
			}
			if len(seen) != 2 {
				t.Errorf("the client's requests reached replicas %v; want both", seen)
			}
		})
	}
}

// progressNotes counts progress notifications per token.
type progressNotes struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *progressNotes) add(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[fmt.Sprint(req.Params.ProgressToken)]++
}

func (p *progressNotes) count(token string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[token]
}

func callHTTPTool(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %+v", params.Name, res.Content)
	}
	return res
}

// searchPage is what the replica tests read of search_items' output.
type searchPage struct {
	Items []struct {
		ID string `json:"id"`
	} `json:"items"`
	Cursor string `json:"cursor"`
}

// firstSearchPage runs a search that asks for two items (max_items 2) and
// checks that it got them and a cursor to continue.
func firstSearchPage(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) searchPage {
	t.Helper()
	var page searchPage
	decodeStructured(t, callHTTPTool(t, cs, params), &page)
	if len(page.Items) != 2 || page.Cursor == "" {
		t.Fatalf("first page: %d items, cursor %q", len(page.Items), page.Cursor)
	}
	return page
}

func decodeStructured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatalf("structuredContent: %v", err)
	}
}

// TestHTTPCancellationReachesTheCatalogRequest: a client that
// cancels a call stops the server's work on it, the upstream request
// included. At 2026-07-28 the client closes the call's request; earlier
// revisions send notifications/cancelled in a POST of their own, which the
// stateless handler alone would give a fresh session that knows no call.
func TestHTTPCancellationReachesTheCatalogRequest(t *testing.T) {
	t.Parallel()
	for _, revision := range allRevisions {
		t.Run(revision, func(t *testing.T) {
			catalog, entered, cancelled, release := cancellableCatalog(t)
			s := startHTTPForTest(t, map[string]string{"STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"},
				"--catalog", "demo", "--log-level", "error", "--tool-timeout-secs", "30", "--attempt-timeout-secs", "30")
			defer release()
			cs := connectHTTPAt(t, s.url, newTestHTTPClient(t), revision)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{"catalog_url": catalog.URL}})
				done <- err
			}()
			<-entered
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call returned %v, want context.Canceled", err)
			}
			select {
			case <-cancelled:
			case <-time.After(patience):
				t.Fatalf("the catalog request was still running %v after the client cancelled the call", patience)
			}
		})
	}
}

// TestHTTPRequestsAreBoundedByTheConnectionCap: without
// sessions, what bounds the requests served at once is the connection cap:
// a connection carries one request at a time, so with
// STAC_MCP_HTTP_MAX_CONNS=2 a third concurrent call waits until a
// connection closes. (The client here closes each connection after its
// request; a kept-alive one holds its slot until STAC_MCP_HTTP_IDLE_TIMEOUT_SECS.)
func TestHTTPRequestsAreBoundedByTheConnectionCap(t *testing.T) {
	t.Parallel()
	catalog, _, release := slowCatalog(t)
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_HTTP_MAX_CONNS": "2", "STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"},
		"--catalog", "demo", "--log-level", "error", "--tool-timeout-secs", "30", "--attempt-timeout-secs", "30")
	defer release()
	transport := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(transport.CloseIdleConnections)
	cs := connectHTTP(t, s.url, &http.Client{Transport: transport})
	done := make(chan error, 3)
	for i := range 3 {
		go func() {
			// Distinct paths: the layer would coalesce identical requests.
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root",
				Arguments: map[string]any{"catalog_url": fmt.Sprintf("%s/c%d", catalog.URL, i)}})
			done <- err
		}()
	}
	deadline := time.Now().Add(patience)
	for s.metricValue(t, "http_requests_in_flight") < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The third call has had time to arrive, were it let in: a check that a
	// busy machine can only make pass when it should not, never fail.
	time.Sleep(time.Second)
	if n := s.metricValue(t, "http_requests_in_flight"); n != 2 {
		t.Errorf("http_requests_in_flight %v with three calls running and --http-max-conns 2, want 2", n)
	}
	select {
	case err := <-done:
		t.Fatalf("a call ended before the catalog answered: %v", err)
	default:
	}
	release()
	for range 3 {
		if err := <-done; err != nil {
			t.Errorf("a call failed: %v", err)
		}
	}
}

// TestEndToEndWithTypeScriptSDKOverHTTP: the TypeScript SDK
// (1.32.2, which speaks 2025-11-25) through a round-robin proxy in front of
// two replicas: every check of e2e/client.mjs passes (calls.json, progress,
// a cursor continued on the other replica), and its requests carry one
// session id to both replicas.
func TestEndToEndWithTypeScriptSDKOverHTTP(t *testing.T) {
	t.Parallel()
	node := typeScriptClient(t)
	replicas := startReplicas(t, 2, nil, "--catalog", "demo", "--log-level", "warn")
	rr := newRoundRobin(t, replicas...)
	out := runTypeScriptClient(t, node, nil, rr.url+"/mcp")
	if !strings.Contains(out, "protocol version: 2025-11-25 over http") {
		t.Errorf("the TypeScript SDK did not negotiate 2025-11-25 over http:\n%s", out)
	}
	sessions, replicasSeen := map[string]bool{}, map[int]bool{}
	for _, f := range rr.requests() {
		replicasSeen[f.replica] = true
		if f.session != "" {
			sessions[f.session] = true
		}
		if f.method == http.MethodPost && f.revision != "" && f.revision != "2025-11-25" {
			t.Errorf("a request declared revision %q", f.revision)
		}
	}
	if len(sessions) != 1 || len(replicasSeen) != 2 {
		t.Errorf("the client's requests carried session ids %v and reached replicas %v; want one id, both replicas", sessions, replicasSeen)
	}
}

// TestTypeScriptSDKCancelsOverHTTP: aborting a call in the
// TypeScript SDK sends notifications/cancelled in a POST of its own; the
// server finds the call by session and request id and cancels its request
// to the catalog. (Behind a load balancer that POST may reach another
// replica, which runs no such call: then the call runs to its end; see
// adr/0015.)
func TestTypeScriptSDKCancelsOverHTTP(t *testing.T) {
	t.Parallel()
	node := typeScriptClient(t)
	slow, _, cancelled, release := cancellableCatalog(t)
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"},
		"--catalog", "demo", "--log-level", "warn", "--tool-timeout-secs", "30", "--attempt-timeout-secs", "30")
	defer release()
	runTypeScriptClient(t, node, []string{"STAC_MCP_E2E_SLOW_CATALOG=" + slow.URL}, s.url+"/mcp")
	select {
	case <-cancelled:
	case <-time.After(patience):
		t.Error("the aborted call's request to the catalog was not cancelled")
	}
}

// TestInspectorCLIOverHTTP: the MCP Inspector CLI 2.12 (a client
// we did not write) with --protocol-era modern takes the 2026-07-28 path
// over http, through a round-robin proxy in front of two replicas:
// tools/list passes --strict, a tool call returns structuredContent and
// the per-response serverInfo of 2026-07-28, a bad call is a tool error,
// resources and prompts list. Every request it sent declared 2026-07-28
// and carried no session id. Its default (legacy) era still gets 2025-11-25.
func TestInspectorCLIOverHTTP(t *testing.T) {
	t.Parallel()
	inspector, env := nodeTool(t, "mcp-inspector")
	replicas := startReplicas(t, 2, nil, "--catalog", "demo", "--log-level", "warn")
	rr := newRoundRobin(t, replicas...)
	modern := func(args ...string) (int, string, string) {
		return runInspector(t, inspector, env, append([]string{rr.url + "/mcp", "--protocol-era", "modern"}, args...)...)
	}

	if code, _, stderr := modern("--method", "tools/list", "--strict"); code != 0 {
		t.Errorf("tools/list --strict at 2026-07-28: exit %d\n%.2000s", code, stderr)
	}
	code, stdout, stderr := modern("--method", "tools/call", "--tool-name", "search_items", "--tool-args-json", `{"collections":["joplin"],"max_items":2}`)
	res := decodeResult[struct {
		Meta              map[string]json.RawMessage `json:"_meta"`
		IsError           bool                       `json:"isError"`
		StructuredContent struct {
			Items []json.RawMessage `json:"items"`
		} `json:"structuredContent"`
	}](t, "tools/call", stdout)
	if code != 0 || res.IsError || len(res.StructuredContent.Items) != 2 || res.Meta["io.modelcontextprotocol/serverInfo"] == nil {
		t.Errorf("search_items at 2026-07-28: exit %d, isError %v, %d items, _meta %v; want 2 items and serverInfo in _meta\n%s",
			code, res.IsError, len(res.StructuredContent.Items), res.Meta, stderr)
	}
	if code, _, stderr := modern("--method", "tools/call", "--tool-name", "search_items", "--tool-args-json", `{"bbox":"not a bbox"}`); code != 5 ||
		!strings.Contains(stderr, "tool_is_error") {
		t.Errorf("a bad search at 2026-07-28: exit %d, want 5 (tool error)\n%s", code, stderr)
	}
	for _, method := range []string{"resources/list", "prompts/list"} {
		if code, stdout, stderr := modern("--method", method); code != 0 || !strings.Contains(stdout, `"result"`) {
			t.Errorf("%s at 2026-07-28: exit %d\n%s", method, code, stderr)
		}
	}
	modernRequests := rr.requests()
	replicasSeen := map[int]bool{}
	for _, f := range modernRequests {
		replicasSeen[f.replica] = true
		if f.method != http.MethodPost || f.revision != statelessRevision || f.session != "" {
			t.Errorf("the modern Inspector sent %s with revision %q and session %q; want POSTs at 2026-07-28 without a session",
				f.method, f.revision, f.session)
		}
	}
	if len(replicasSeen) != 2 {
		t.Errorf("the Inspector's requests reached replicas %v, want both", replicasSeen)
	}

	code, _, stderr = runInspector(t, inspector, env, rr.url+"/mcp", "--method", "tools/call", "--tool-name", "list_catalogs")
	if code != 0 {
		t.Fatalf("list_catalogs with the Inspector's default era: exit %d\n%s", code, stderr)
	}
	legacy := map[string]bool{}
	for _, f := range rr.requests()[len(modernRequests):] {
		if f.session != "" {
			legacy[f.revision] = true
		}
	}
	if !legacy["2025-11-25"] || len(legacy) != 1 {
		t.Errorf("the Inspector's default era sent session requests at %v; want 2025-11-25", legacy)
	}
}
