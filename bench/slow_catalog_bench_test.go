package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools"
)

// BenchmarkSlowCatalog is the slow catalog of reliability/slow_catalog_test.go on a real clock: the demo
// catalog whose /search answers d after each request arrives (its landing
// page, conformance and everything else at once), d = 1, 3, 7, 10 and 13 s,
// called through the MCP server with the default policy (15 s per call,
// hedging as by default; the cache off, so that every call reaches the
// catalog). Each iteration is one search_items call of one page; each d
// gets a catalog of its own (a new host, whose answer times are unknown).
// It reports:
//
//	success_ratio         calls that answered
//	max_over_d_ms         the slowest call minus d (target: at most 1000)
//	search_copies/call    copies of the search the catalog received per call
//	max_search_copies     the most one call sent (target: at most 2 for d <= 10 s)
//
// Run it with a few iterations per d (the first call is cold, the later
// ones have the search's answer times):
//
//	go test -run '^$' -bench SlowCatalog -benchtime 3x ./bench/
func BenchmarkSlowCatalog(b *testing.B) {
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []time.Duration{time.Second, 3 * time.Second, 7 * time.Second, 10 * time.Second, 13 * time.Second} {
		b.Run(d.String(), func(b *testing.B) {
			var copies atomic.Int64
			catalog := stacserver.New(store, stacserver.Options{})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/search") {
					copies.Add(1)
					// Buffer the body: net/http notices that a cancelled
					// copy's connection closed only once the body is read.
					body, err := io.ReadAll(r.Body)
					if err != nil {
						return
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
					select {
					case <-time.After(d):
					case <-r.Context().Done():
						return
					}
				}
				catalog.ServeHTTP(w, r)
			}))
			b.Cleanup(ts.Close)
			policy := reliability.DefaultPolicy()
			policy.CacheTTL = 0
			limits := tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100}
			session := connectInMemory(b, tools.NewServer(newBenchDeps(b, ts.URL, policy, nil, limits), "bench"), "bench")
			var slowest time.Duration
			calls, ok, mostCopies := 0, 0, int64(0)
			for b.Loop() {
				before := copies.Load()
				start := time.Now()
				res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_items", Arguments: map[string]any{"collections": []string{"naip"}, "max_items": 10, "limit": 10}})
				slowest = max(slowest, time.Since(start))
				calls++
				if err == nil && !res.IsError {
					ok++
				}
				mostCopies = max(mostCopies, copies.Load()-before)
			}
			b.ReportMetric(float64(ok)/float64(calls), "success_ratio")
			b.ReportMetric(ms(slowest-d), "max_over_d_ms")
			b.ReportMetric(float64(copies.Load())/float64(calls), "search_copies/call")
			b.ReportMetric(float64(mostCopies), "max_search_copies")
		})
	}
}
