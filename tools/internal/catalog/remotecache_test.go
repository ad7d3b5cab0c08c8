package catalog

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Distinct catalog URLs beyond the bounds keep the cache
// bounded, by count and by bytes; configured catalogs stay.
func TestRemoteClientCacheIsBounded(t *testing.T) {
	cats := New(Options{HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	ctx := context.Background()
	preset, err := cats.Resolve(ctx, "earth-search")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * maxRemoteClients {
		if _, err := cats.Resolve(ctx, fmt.Sprintf("https://stac%d.example/v1", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := cats.others.len(); n != maxRemoteClients {
		t.Errorf("after %d distinct URLs the cache holds %d clients, want %d", 3*maxRemoteClients, n, maxRemoteClients)
	}
	// Long URLs: the byte bound holds first.
	long := strings.Repeat("a", 3500)
	for i := range 2 * maxRemoteClients {
		if _, err := cats.Resolve(ctx, fmt.Sprintf("https://stac%d.example/%s", i, long)); err != nil {
			t.Fatal(err)
		}
	}
	if cats.others.bytes > maxRemoteBytes || cats.others.len() >= maxRemoteClients {
		t.Errorf("long URLs: %d clients, %d bytes; want at most %d bytes", cats.others.len(), cats.others.bytes, maxRemoteBytes)
	}
	again, err := cats.Resolve(ctx, "earth-search")
	if err != nil || again.Client != preset.Client {
		t.Errorf("the preset's client was evicted by callers' URLs (err %v)", err)
	}
	// The most recently used stays.
	last := fmt.Sprintf("https://stac%d.example/%s", 2*maxRemoteClients-1, long)
	a, _ := cats.Resolve(ctx, last)
	b, _ := cats.Resolve(ctx, last)
	if a.Client != b.Client {
		t.Error("the most recently used URL got a new client")
	}
}

// A URL whose catalog never answered keeps nothing after the failed call.
func TestForgetDropsAClientThatNeverAnswered(t *testing.T) {
	cats := New(Options{HTTPClient: &http.Client{Transport: refuseAll{}}})
	defer func() { _ = cats.Close() }()
	ctx := context.Background()
	cat, err := cats.Resolve(ctx, "http://10.0.0.1/stac")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Client.Root(ctx); err == nil {
		t.Fatal("the refusing transport answered")
	}
	cats.Forget(cat)
	if n := cats.others.len(); n != 0 {
		t.Errorf("a refused URL left %d clients cached", n)
	}
	preset, _ := cats.Resolve(ctx, "earth-search")
	cats.Forget(preset)
	if again, _ := cats.Resolve(ctx, "earth-search"); again.Client != preset.Client {
		t.Error("Forget dropped a configured catalog")
	}
}

type refuseAll struct{}

func (refuseAll) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("not connecting: it is a private-network address")
}

// An oversize reference is refused before any work, with an error that
// says why and does not repeat it.
func TestOversizeCatalogRefRefused(t *testing.T) {
	cats := New(Options{HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	huge := "https://stac.example/" + strings.Repeat("x", 500<<10)
	_, err := cats.Resolve(context.Background(), huge)
	if err == nil || !strings.Contains(err.Error(), "more than the 4096") || len(err.Error()) > 1024 {
		t.Fatalf("oversize catalog_url: %.300v (%d bytes), want a short refusal naming the cap", err, len(fmt.Sprint(err)))
	}
	if n := cats.others.len(); n != 0 {
		t.Errorf("an oversize URL left %d clients", n)
	}
	if _, err := cats.Resolve(context.Background(), "https://stac.example/"+strings.Repeat("x", MaxRefBytes-len("https://stac.example/"))); err != nil {
		t.Errorf("a reference of exactly MaxRefBytes: %v", err)
	}
}
