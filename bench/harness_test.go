package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools"
	"github.com/stacmcp/stac-mcp/tools/advice"
)

// benchServer is stac-mcp over an in-process stacserver: an MCP client
// session (in-memory transport) and the stacserver's URL for direct
// requests to the same data.
type benchServer struct {
	session *mcp.ClientSession
	server  *mcp.Server // for a second session (connectRaw)
	url     string
	direct  *http.Client
}

// newBenchServer serves store over httptest and connects an MCP client to
// a stac-mcp server whose default catalog is that URL. The response cache
// is off so every tool call does its upstream requests, like the direct
// request it is compared with.
func newBenchServer(b *testing.B, store *stacserver.Store, limits tools.Limits) *benchServer {
	policy := reliability.DefaultPolicy()
	policy.CacheTTL = 0
	return newBenchServerWithPolicy(b, store, limits, policy)
}

// newBenchServerWithPolicy is newBenchServer with a given reliability
// policy.
func newBenchServerWithPolicy(b *testing.B, store *stacserver.Store, limits tools.Limits, policy reliability.Policy) *benchServer {
	b.Helper()
	ts := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	b.Cleanup(ts.Close)

	deps := newBenchDeps(b, ts.URL, policy, nil, limits)
	server := tools.NewServer(deps, "bench")
	cs := connectInMemory(b, server, "bench")
	return &benchServer{session: cs, server: server, url: ts.URL, direct: ts.Client()}
}

// newBenchDeps wires what every bench server shares: a reliability layer
// with policy over transport (nil = the default), catalogs whose default is
// catalogURL (closed when the benchmark ends), and a silent logger.
func newBenchDeps(tb testing.TB, catalogURL string, policy reliability.Policy, transport http.RoundTripper, limits tools.Limits) *tools.Deps {
	return newBenchDepsWith(tb, catalogURL, policy, reliability.Options{Transport: transport}, limits)
}

// newBenchDepsWith is newBenchDeps with the layer's options (a shared
// store, say); the logger is always silent.
func newBenchDepsWith(tb testing.TB, catalogURL string, policy reliability.Policy, opts reliability.Options, limits tools.Limits) *tools.Deps {
	tb.Helper()
	logger := zerolog.Nop()
	opts.Logger = &logger
	opts.Advice = advice.Next
	layer := reliability.New(policy, opts)
	catalogs := tools.NewCatalogs(tools.CatalogsOptions{Default: catalogURL, HTTPClient: layer.HTTPClient()})
	tb.Cleanup(func() { _ = catalogs.Close() })
	// The export tool writes to a temporary folder, never the user's Downloads.
	d := &tools.Deps{Layer: layer, Catalogs: catalogs, Limits: limits, Logger: logger, Export: tools.ExportSettings{Dir: tb.TempDir()}}
	tb.Cleanup(d.CloseExports)
	return d
}

// connectInMemory connects an MCP client named clientName to server over
// the SDK's in-memory transport; both are closed when the test ends.
func connectInMemory(tb testing.TB, server *mcp.Server, clientName string) *mcp.ClientSession {
	tb.Helper()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), serverT, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "0"}, nil).Connect(context.Background(), clientT, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

// call makes one tool call and fails the benchmark unless it succeeded.
func (s *benchServer) call(b *testing.B, name string, args map[string]any) *mcp.CallToolResult {
	b.Helper()
	res, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		b.Fatalf("%s: isError: %v", name, textOf(res))
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// upstreamRequests reads the receipt's upstream_requests.
func upstreamRequests(b *testing.B, res *mcp.CallToolResult) int {
	b.Helper()
	raw, err := json.Marshal(res.Meta[tools.MetaReceipt])
	if err != nil {
		b.Fatal(err)
	}
	var r reliability.Receipt
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatalf("receipt %s: %v", raw, err)
	}
	return r.UpstreamRequests
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
