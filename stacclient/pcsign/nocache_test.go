package pcsign

import (
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stacmcp/stac-mcp/reliability"
)

// TestRefetchedTokenIsNotReplayedByTheLayerCache: behind a reliability
// layer whose response cache outlives the token's refresh margin, the
// Signer's refetch still reaches the endpoint (its request says
// Cache-Control: no-cache) and gets a new token, not the cached answer.
func TestRefetchedTokenIsNotReplayedByTheLayerCache(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	server := httptest.NewServer(endpoint)
	t.Cleanup(server.Close)

	policy := reliability.DefaultPolicy()
	policy.CacheTTL = 2 * time.Hour // longer than the token's one-hour life
	logger := zerolog.Nop()
	layer := reliability.New(policy, reliability.Options{
		Transport: server.Client().Transport, Logger: &logger, Rand: rand.New(rand.NewPCG(3, 4)), Now: clock.Now,
	})
	signer, err := New(Options{HTTPClient: layer.HTTPClient(), TokenURL: server.URL + strings.TrimSuffix(tokenPath, "/"), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	token := func() Token {
		t.Helper()
		var tok Token
		if _, err := layer.Run(context.Background(), "get_item", "planetarycomputer.microsoft.com", func(ctx context.Context) error {
			tok, err = signer.Token(ctx, "naip")
			return err
		}); err != nil {
			t.Fatalf("Token: %v", err)
		}
		return tok
	}
	first := token()
	if got := endpoint.lastHeader().Get("Cache-Control"); got != "no-cache" {
		t.Errorf("token request Cache-Control = %q, want no-cache", got)
	}
	clock.Advance(56 * time.Minute) // inside the 5-minute refresh margin of the first token
	second := token()
	if endpoint.count("naip") != 2 {
		t.Fatalf("token requests = %d, want 2: the refetch was answered from the layer's cache", endpoint.count("naip"))
	}
	if second.Value == first.Value || second.Value != tokenValue("naip", 2) {
		t.Errorf("refetched token = %q, want the endpoint's second token %q (first was %q)", second.Value, tokenValue("naip", 2), first.Value)
	}
}
