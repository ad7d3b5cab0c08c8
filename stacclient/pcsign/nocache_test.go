package pcsign

import (
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
)

// TestRefetchedTokenIsNotReplayedByTheLayerCache: behind a reliability
// layer whose response cache outlives the token's refresh margin, the
// Signer's refetch still reaches the endpoint (its request says
// Cache-Control: no-cache) and gets a new token, not the cached answer.
func TestRefetchedTokenIsNotReplayedByTheLayerCache(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	policy := reliability.DefaultPolicy()
	policy.CacheTTL = 2 * time.Hour // longer than the token's one-hour life
	layer, signer := signerBehindLayer(t, endpoint, clock, policy)
	token := func() Token {
		t.Helper()
		tok, _, err := tokenThroughLayer(layer, signer, "naip")
		if err != nil {
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
