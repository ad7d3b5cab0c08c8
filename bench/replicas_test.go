package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/redistest"
	"github.com/stacmcp/stac-mcp/reliability/sharedstate"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools"
)

// Several replicas, with and without one shared Redis (adr/0016).
// Each replica is a whole stac-mcp server (its own reliability layer and
// MCP server, an in-memory client session) reading one in-process
// stacserver, which counts the requests that reach it. redis-server is
// the Debian package (reliability/redistest starts it on loopback).
//
//	go test -run '^$' -bench 'Replicas' -benchtime 3x ./bench/

// replicaSetups are the four deployments compared.
var replicaSetups = []struct {
	name     string
	replicas int
	redis    bool
}{
	{"replicas=1/redis=off", 1, false},
	{"replicas=1/redis=on", 1, true},
	{"replicas=3/redis=off", 3, false},
	{"replicas=3/redis=on", 3, true},
}

// countingHandler counts the requests that reach next.
type countingHandler struct {
	n    atomic.Int64
	next http.Handler
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.next.ServeHTTP(w, r)
}

// benchRedis is one redis-server for a benchmark, emptied between runs.
type benchRedis struct {
	url    string
	client *redis.Client
}

func startBenchRedis(b *testing.B) *benchRedis {
	b.Helper()
	srv := redistest.Start(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = client.Close() })
	return &benchRedis{url: srv.URL, client: client}
}

func (r *benchRedis) flush(b *testing.B) {
	b.Helper()
	if err := r.client.FlushDB(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// openShared is one replica's connection to the shared Redis, closed
// with the benchmark.
func openShared(b *testing.B, url string) reliability.SharedStore {
	b.Helper()
	store, err := sharedstate.Open(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

// BenchmarkReplicasSharedCache: 1000 get_item reads over 20 demo items,
// eight at a time, sent to the replicas in turn, with the default policy
// (cache on). Each iteration starts from empty caches (new replicas, an
// emptied Redis). Reported: the catalog requests the 1000 reads cost,
// calls/s and the p50/p99 of a call.
func BenchmarkReplicasSharedCache(b *testing.B) {
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		b.Fatal(err)
	}
	counter := &countingHandler{next: stacserver.New(store, stacserver.Options{})}
	catalog := httptest.NewServer(counter)
	b.Cleanup(catalog.Close)
	items := demoItemRefs(b)[:20]
	rds := startBenchRedis(b)
	const reads, workers = 1000, 8

	for _, setup := range replicaSetups {
		b.Run(setup.name, func(b *testing.B) {
			var upstream, elapsed float64
			var latencies []time.Duration
			for b.Loop() {
				b.StopTimer()
				rds.flush(b)
				sessions := make([]*mcp.ClientSession, setup.replicas)
				for i := range sessions {
					opts := reliability.Options{}
					if setup.redis {
						opts.Shared = openShared(b, rds.url)
					}
					deps := newBenchDepsWith(b, catalog.URL, reliability.DefaultPolicy(), opts, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100})
					sessions[i] = connectInMemory(b, tools.NewServer(deps, "bench"), "bench")
				}
				before := counter.n.Load()
				b.StartTimer()

				start := time.Now()
				var next atomic.Int64
				var mu sync.Mutex
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for {
							i := int(next.Add(1)) - 1
							if i >= reads {
								return
							}
							ref := items[i%len(items)]
							t0 := time.Now()
							res, err := sessions[i%len(sessions)].CallTool(context.Background(), &mcp.CallToolParams{Name: "get_item",
								Arguments: map[string]any{"collection_id": ref.collection, "item_id": ref.id}})
							d := time.Since(t0)
							if err != nil || res.IsError {
								b.Errorf("get_item %s/%s: %v", ref.collection, ref.id, err)
								return
							}
							mu.Lock()
							latencies = append(latencies, d)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				elapsed += time.Since(start).Seconds()
				upstream += float64(counter.n.Load() - before)
			}
			runs := float64(b.N)
			slices.Sort(latencies)
			b.ReportMetric(upstream/runs, "upstream_req/1000_reads")
			b.ReportMetric(reads*runs/elapsed, "calls/s")
			b.ReportMetric(ms(latencies[len(latencies)/2]), "p50_ms")
			b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99_ms")
		})
	}
}

// BenchmarkReplicasRetriesAgainstFailingCatalog: a catalog that answers
// every request 503, read through the replicas in turn (300 calls, each a
// different page, so nothing is cached or coalesced). Reported: the
// retries the catalog saw.
//
// budget_retries: the layer's clock moves a breaker window on between
// calls, so no breaker ever opens and the retry budget alone limits the
// retries (100 per budget: 500 tokens at 5 a retry). Shared, one budget
// serves all replicas; unshared, each replica spends its own.
//
// catalog_requests_real_clock: the same 300 calls on the real clock, so
// the breakers open too: all the requests the catalog got.
func BenchmarkReplicasRetriesAgainstFailingCatalog(b *testing.B) {
	rds := startBenchRedis(b)
	const calls = 300
	for _, setup := range replicaSetups {
		b.Run(setup.name, func(b *testing.B) {
			var budgetRetries, realRequests float64
			for b.Loop() {
				budgetRetries += float64(failingCatalogRun(b, rds, setup.replicas, setup.redis, true, calls).retries)
				realRequests += float64(failingCatalogRun(b, rds, setup.replicas, setup.redis, false, calls).requests)
			}
			b.ReportMetric(budgetRetries/float64(b.N), "budget_retries")
			b.ReportMetric(realRequests/float64(b.N), "catalog_requests_real_clock")
		})
	}
}

type failingRun struct{ retries, requests int }

func failingCatalogRun(b *testing.B, rds *benchRedis, replicas int, shared, movingClock bool, calls int) failingRun {
	b.Helper()
	rds.flush(b)
	var requests atomic.Int64
	up := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		requests.Add(1)
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			_ = req.Body.Close()
		}
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: req}, nil
	})
	var clockNS atomic.Int64
	clockNS.Store(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC).UnixNano())
	p := reliability.DefaultPolicy()
	p.CacheTTL, p.BackoffBase = 0, 0 // no backoff sleeps: the count matters here, not the pace
	logger := zerolog.Nop()
	layers := make([]*reliability.Layer, replicas)
	for i := range layers {
		opts := reliability.Options{Transport: up, Logger: &logger}
		if movingClock {
			opts.Now = func() time.Time { return time.Unix(0, clockNS.Load()) }
		}
		if shared {
			opts.Shared = openShared(b, rds.url)
		}
		layers[i] = reliability.New(p, opts)
	}
	retries := 0
	for call := range calls {
		l := layers[call%replicas]
		rc, err := l.Run(context.Background(), "bench", "catalog.test", func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://catalog.test/search?page=%d", call), nil)
			resp, err := l.HTTPClient().Do(req)
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			return fmt.Errorf("status %d", resp.StatusCode)
		})
		var d *reliability.Denial
		if !errors.As(err, &d) {
			b.Fatalf("call %d: %v, want a denial", call, err)
		}
		retries += rc.Retries
		clockNS.Add(int64(31 * time.Second))
	}
	return failingRun{retries: retries, requests: int(requests.Load())}
}

// BenchmarkWarmReadRedisPath is one get_item answered from a warm cache,
// on one replica: from the in-process cache (redis=off) or from the
// shared cache in Redis on loopback (redis=on). The difference is what
// the Redis path adds to a warm read.
func BenchmarkWarmReadRedisPath(b *testing.B) {
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		b.Fatal(err)
	}
	catalog := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	b.Cleanup(catalog.Close)
	ref := demoItemRefs(b)[0]
	rds := startBenchRedis(b)
	for _, redisOn := range []bool{false, true} {
		b.Run(fmt.Sprintf("redis=%v", map[bool]string{false: "off", true: "on"}[redisOn]), func(b *testing.B) {
			rds.flush(b)
			opts := reliability.Options{}
			if redisOn {
				opts.Shared = openShared(b, rds.url)
			}
			deps := newBenchDepsWith(b, catalog.URL, reliability.DefaultPolicy(), opts, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100})
			srv := &benchServer{session: connectInMemory(b, tools.NewServer(deps, "bench"), "bench")}
			args := map[string]any{"collection_id": ref.collection, "item_id": ref.id}
			srv.call(b, "get_item", args) // warm the cache
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				res := srv.call(b, "get_item", args)
				lat = append(lat, time.Since(t0))
				if n := upstreamRequests(b, res); n != 0 {
					b.Fatalf("a warm read made %d upstream requests", n)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(ms(lat[len(lat)/2]), "p50_ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99_ms")
		})
	}
}
