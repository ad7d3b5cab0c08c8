package tools

// Shared in-memory test harness for every tool test: a real MCP server and
// client connected through the SDK's in-memory transports, on a Deps whose
// default catalog is the embedded demo catalog (served in-process on
// loopback) or a given URL (an httptest server). Nothing leaves the machine.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools/advice"
	"github.com/stacmcp/stac-mcp/tools/internal/catalog"
)

// TestMain fails the package if any test leaks a goroutine (sessions,
// in-process catalog servers, HTTP connections).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testSessionOptions configure newTestSession; the zero value serves the
// demo catalog with every Inventory() tool.
type testSessionOptions struct {
	// CatalogURL is the default catalog ("" = "demo"): any reference
	// Catalogs.Resolve accepts, typically an httptest server's URL.
	CatalogURL string
	// Tools to register; nil means Inventory().
	Tools []Tool
	// Limits; zero fields get the server defaults (10 and 100).
	Limits Limits
	// Policy of the reliability layer; nil means testPolicy().
	Policy *reliability.Policy
	// Transport is the layer's base RoundTripper (fault injectors go here).
	Transport http.RoundTripper
	// Headers sent to the catalog's origin.
	Headers http.Header
	// CursorKey signs cursors; nil means a random key.
	CursorKey []byte
	// Silent drops the logs (fuzz targets may not log through testing.F).
	Silent bool
	// UntrustedCallers serves the session as over http (catalog
	// Options.UntrustedCallers).
	UntrustedCallers bool
	// Writes turns the write tools on (and local catalogs writable); nil
	// keeps the server read-only, as without --allow-writes.
	Writes *Writes
	// Groups are catalog groups (STAC_MCP_CATALOG_GROUPS).
	Groups []catalog.Group
	// SeriesPage bounds the dates of one index_time_series call (0: the
	// default).
	SeriesPage int
	// Export sets the export tool's folder and bounds; Shared serves
	// exports as over http (resources in the vault).
	Export ExportSettings
	Shared bool
}

// testPolicy keeps failing tests fast: short deadlines and backoff.
func testPolicy() reliability.Policy {
	p := reliability.DefaultPolicy()
	p.ToolTimeout = 10 * time.Second
	p.AttemptTimeout = 5 * time.Second
	p.BackoffBase = time.Millisecond
	p.RetryAfterCap = 10 * time.Millisecond
	p.CacheTTL = 0
	return p
}

// newTestDeps builds the collaborators a server needs; cleanup is
// registered on t.
func newTestDeps(t testing.TB, opts testSessionOptions) *Deps {
	t.Helper()
	policy := testPolicy()
	if opts.Policy != nil {
		policy = *opts.Policy
	}
	// Logs go to the test's log (shown on failure or with -v), not stderr.
	logger := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	if opts.Silent {
		logger = zerolog.Nop()
	}
	layer := reliability.New(policy, reliability.Options{Transport: opts.Transport, Logger: &logger, Advice: advice.Next})
	ref := opts.CatalogURL
	if ref == "" {
		ref = DemoCatalog
	}
	catOpts := CatalogsOptions{Default: ref, HTTPClient: layer.HTTPClient(), Headers: opts.Headers, WritableLocal: opts.Writes != nil, UntrustedCallers: opts.UntrustedCallers,
		Groups: opts.Groups}
	if w, ok := opts.Transport.(interface {
		wrapDemo(http.Handler) http.Handler
	}); ok {
		// The demo is served in memory above the base transport (adr/0025):
		// a transport that records requests sees the demo's at its handler.
		catOpts.WrapDemo = w.wrapDemo
	}
	cats := NewCatalogs(catOpts)
	t.Cleanup(func() {
		if err := cats.Close(); err != nil {
			t.Errorf("closing catalogs: %v", err)
		}
	})
	limits := opts.Limits
	if limits.MaxItemsDefault == 0 {
		limits.MaxItemsDefault = 10
	}
	if limits.MaxItemsCeiling == 0 {
		limits.MaxItemsCeiling = 100
	}
	if opts.Export.Dir == "" {
		opts.Export.Dir = t.TempDir() // never the user's Downloads folder
	}
	d := &Deps{Layer: layer, Catalogs: cats, Limits: limits, Logger: logger, CursorKey: opts.CursorKey, Writes: opts.Writes,
		Export: opts.Export, Shared: opts.Shared, seriesPage: opts.SeriesPage}
	t.Cleanup(d.CloseExports)
	return d
}

// newTestSession connects an MCP client to a fresh server over in-memory
// transports and returns the client session; both ends close on cleanup.
func newTestSession(t testing.TB, opts testSessionOptions) *mcp.ClientSession {
	t.Helper()
	d := newTestDeps(t, opts)
	tools := opts.Tools
	if tools == nil {
		tools = Tools(d)
	}
	return connect(t, newServer(d, "test", tools))
}

func connect(t testing.TB, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectWithOptions(t, server, nil)
}

// connectWithOptions is connect with client options (e.g. a progress
// handler); the session is closed when the test ends.
func connectWithOptions(t testing.TB, server *mcp.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "tools-test", Version: "0"}, copts)
	cs, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// callTool calls a tool and fails the test on a protocol error (an isError
// result is returned, not a failure).
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", name, args, err)
	}
	return res
}

// callOK calls a tool and fails the test unless it succeeded.
func callOK(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): isError: %s", name, args, resultText(res))
	}
	return res
}

// callErr calls a tool and fails the test unless it returned isError; it
// returns the error text.
func callErr(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v): want isError, got success: %s", name, args, resultText(res))
	}
	return resultText(res)
}

// structured decodes a result's structuredContent into T.
func structured[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structuredContent: %v", err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode structuredContent %s: %v", raw, err)
	}
	return out
}

// resultText joins a result's text blocks.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// receiptOf decodes the stac-mcp/receipt entry of a result's _meta.
func receiptOf(t testing.TB, res *mcp.CallToolResult) (reliability.Receipt, bool) {
	t.Helper()
	v, ok := res.Meta[MetaReceipt]
	if !ok {
		return reliability.Receipt{}, false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal receipt: %v", err)
	}
	var r reliability.Receipt
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode receipt %s: %v", raw, err)
	}
	return r, true
}
