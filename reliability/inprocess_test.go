package reliability

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
)

// An in-process catalog is served in memory under the
// layer's attempt transport: its requests are retried like a remote
// catalog's, and nothing dials (the dedicated transport's dialer refuses
// the reserved name even with no NetworkPolicy at all).
func TestMountedCatalogGoesThroughTheLayerWithoutDialling(t *testing.T) {
	l := guardedLayer(t, NetworkPolicy{}) // stdio's policy: any address
	var hits atomic.Int32
	unmount, err := l.Mount("demo."+inmemory.Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // as STAC_MCP_DEMO_FAULT_RATE would
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := getThrough(t, l, "http://demo."+inmemory.Domain+"/"); err != nil {
		t.Fatalf("mounted catalog: %v", err)
	}
	if hits.Load() != 2 {
		t.Errorf("handler hits = %d, want 2 (a 503, then the retry)", hits.Load())
	}
	unmount()
	err = getThrough(t, l, "http://demo."+inmemory.Domain+"/")
	if !errors.Is(err, inmemory.ErrNotServed) {
		t.Errorf("after unmount: %v, want inmemory.ErrNotServed", err)
	}
	// Below the router, the dialer refuses the reserved names too.
	dial := l.guard.wrap(&net.Dialer{})
	if _, err := dial(context.Background(), "tcp", "demo."+inmemory.Domain+":80"); !errors.As(err, new(*NetworkDeniedError)) {
		t.Errorf("dialling a reserved name: %v, want a NetworkDeniedError", err)
	}
}
