package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stacmcp/stac-mcp/reliability/redistest"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// countingCatalog serves the demo catalog on loopback and counts the
// requests that reach it, by path.
type countingCatalog struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newCountingCatalog(t *testing.T) *countingCatalog {
	t.Helper()
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingCatalog{hits: map[string]int{}}
	api := stacserver.New(store, stacserver.Options{})
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.hits[r.URL.Path]++
		c.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *countingCatalog) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[path]
}

// sharedErrorsOf sums a replica's shared_state_errors_total.
func sharedErrorsOf(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() == "shared_state_errors_total" {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestHTTPReplicasShareStateThroughRedis: three `stac-mcp http`
// replicas with one STAC_MCP_REDIS_URL (a real redis-server) and no
// STAC_MCP_CURSOR_KEY, behind a round-robin proxy. A cursor issued by one
// replica continues on the next (the cursor key is shared through Redis),
// the same read through the three replicas reaches the catalog once (the
// response cache is shared), and when Redis is killed the replicas keep
// answering from their own state. Without the shared state, the cursor
// is refused (each replica signs with a key of its own) and the catalog
// gets the read three times.
func TestHTTPReplicasShareStateThroughRedis(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	catalog := newCountingCatalog(t)
	env := map[string]string{"STAC_MCP_REDIS_URL": redis.URL, "STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"}
	var replicas []*httpServerForTest
	for range 3 {
		replicas = append(replicas, startHTTPForTest(t, env, "--catalog", catalog.URL))
	}
	for i, r := range replicas {
		if !strings.Contains(r.logs.String(), `"event":"cursor_key_shared"`) || !strings.Contains(r.logs.String(), `"event":"shared_state"`) {
			t.Errorf("replica %d: startup log does not say it shares state and the cursor key through Redis:\n%s", i, r.logs.String())
		}
	}
	rr := newRoundRobin(t, replicas...)
	cs := connectHTTPAt(t, rr.url, newTestHTTPClient(t), statelessRevision)

	// A cursor from one replica continues on the next.
	page := firstSearchPage(t, cs, &mcp.CallToolParams{Name: "search_items",
		Arguments: map[string]any{"collections": []string{"joplin"}, "limit": 1, "max_items": 2}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_items", Arguments: map[string]any{"cursor": page.Cursor, "max_items": 2}})
	if err != nil || res.IsError {
		t.Fatalf("the cursor did not continue on the next replica: %v %+v", err, res)
	}

	// The same read through each replica in turn reaches the catalog once.
	before := len(rr.requests())
	for range 3 {
		callHTTPTool(t, cs, &mcp.CallToolParams{Name: "get_collection", Arguments: map[string]any{"collection_id": "naip"}})
	}
	seen := map[int]bool{}
	for _, f := range rr.requests()[before:] {
		seen[f.replica] = true
	}
	if len(seen) != 3 {
		t.Fatalf("the three reads reached replicas %v; the test needs all three", seen)
	}
	if n := catalog.count("/collections/naip"); n != 1 {
		t.Errorf("one collection read through three replicas reached the catalog %d times, want 1 (shared cache)", n)
	}

	// Redis killed: every replica keeps answering, on its own state.
	redis.Stop()
	for range 3 {
		callHTTPTool(t, cs, &mcp.CallToolParams{Name: "get_collection", Arguments: map[string]any{"collection_id": "joplin"}})
	}
	failedOver := 0
	for _, r := range replicas {
		if sharedErrorsOf(t, r.app.deps.Layer.Registry()) > 0 {
			failedOver++
		}
	}
	if failedOver == 0 {
		t.Error("Redis was killed and no replica counted shared_state_errors_total")
	}
}
