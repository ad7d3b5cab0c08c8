package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools"
)

// httpBenchServer is one stac-mcp server (one Deps, one reliability layer)
// behind the SDK's Streamable HTTP handler, stateless as in `stac-mcp http`
// (adr/0015), on a loopback listener, with the same Origin check in front of
// it, searching the demo data on an in-process stacserver.
func newHTTPBenchServer(b *testing.B) (mcpURL string) {
	b.Helper()
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		b.Fatal(err)
	}
	catalog := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	b.Cleanup(catalog.Close)

	policy := reliability.DefaultPolicy()
	policy.CacheTTL = 0 // every call searches upstream
	policy.BulkheadMax = 256
	server := tools.NewServer(newBenchDeps(b, catalog.URL, policy, nil, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100}), "bench")

	handler := http.NewCrossOriginProtection().Handler(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}))
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	front := httptest.NewServer(mux)
	b.Cleanup(front.Close)
	return front.URL + "/mcp"
}

// connectHTTPSessions opens n MCP sessions over Streamable HTTP, each with
// its own HTTP client (as n separate MCP clients would have).
func connectHTTPSessions(b *testing.B, url string, n int) []*mcp.ClientSession {
	b.Helper()
	sessions, closeAll := openHTTPSessions(b, url, n)
	b.Cleanup(closeAll)
	return sessions
}

// openHTTPSessions is connectHTTPSessions with the closing left to the
// caller.
func openHTTPSessions(b *testing.B, url string, n int) ([]*mcp.ClientSession, func()) {
	b.Helper()
	sessions := make([]*mcp.ClientSession, 0, n)
	var clients []*http.Client
	closeAll := func() {
		for _, cs := range sessions {
			_ = cs.Close()
		}
		for _, hc := range clients {
			hc.CloseIdleConnections()
		}
	}
	for i := range n {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		clients = append(clients, hc)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("bench-%d", i), Version: "0"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			closeAll()
			b.Fatalf("session %d: %v", i, err)
		}
		sessions = append(sessions, cs)
	}
	return sessions, closeAll
}

// BenchmarkHTTPConcurrentSessions: N sessions at once, each calling
// search_items in a loop over Streamable HTTP against one server.
// Reports calls/s (all sessions together) and the p99 latency of a call.
//
//	go test -run '^$' -bench HTTPConcurrentSessions -benchtime 400x ./bench/
func BenchmarkHTTPConcurrentSessions(b *testing.B) {
	args := map[string]any{"collections": []string{"sentinel-2-l2a"}, "max_items": 5}
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			url := newHTTPBenchServer(b)
			sessions := connectHTTPSessions(b, url, n)
			// Warm-up: every session's connection and the catalog client.
			for _, cs := range sessions {
				benchSearch(b, cs, args)
			}
			latencies := make([]time.Duration, b.N)
			var next sync.Mutex
			calls := 0
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for _, cs := range sessions {
				wg.Go(func() {
					for {
						next.Lock()
						i := calls
						calls++
						next.Unlock()
						if i >= b.N {
							return
						}
						t0 := time.Now()
						benchSearch(b, cs, args)
						latencies[i] = time.Since(t0)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(latencies)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			b.ReportMetric(ms(latencies[min(len(latencies)-1, len(latencies)*99/100)]), "p99_ms")
		})
	}
}

func benchSearch(b *testing.B, cs *mcp.ClientSession, args map[string]any) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_items", Arguments: args})
	if err != nil {
		b.Error(err)
		return
	}
	if res.IsError {
		b.Errorf("search_items: %s", textOf(res))
	}
}

// BenchmarkHTTPIdleSessionMemory: heap held per idle client session
// (connected, nothing in flight), from the MemStats delta over 100 sessions,
// client and server sides together (both are in this process). The server
// is stateless, so what remains is the clients' and their keep-alive
// connections'; a stateful server held a session and an event stream each.
//
//	go test -run '^$' -bench HTTPIdleSessionMemory -benchtime 1x ./bench/
func BenchmarkHTTPIdleSessionMemory(b *testing.B) {
	const idle = 100
	url := newHTTPBenchServer(b)
	var perSession, goroutines float64
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		goroutinesBefore := runtime.NumGoroutine()
		sessions, closeAll := openHTTPSessions(b, url, idle)
		b.StopTimer()
		time.Sleep(100 * time.Millisecond) // let any event stream a client tries open (the server refuses them)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSession += (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / idle / 1024
		goroutines += float64(runtime.NumGoroutine()-goroutinesBefore) / idle
		runtime.KeepAlive(sessions)
		closeAll()
		time.Sleep(50 * time.Millisecond) // the connections close
		b.StartTimer()
	}
	b.ReportMetric(perSession/float64(b.N), "KiB/idle_session")
	b.ReportMetric(goroutines/float64(b.N), "goroutines/idle_session")
}
