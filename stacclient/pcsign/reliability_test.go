package pcsign

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stacmcp/stac-mcp/reliability"
)

// TestTokenFetchGoesThroughReliabilityLayer wires the Signer as production
// does, with the reliability layer's client, and shows that a token request
// is retried like any upstream request: a 503 followed by a token is a
// success after two requests, not a signing failure.
func TestTokenFetchGoesThroughReliabilityLayer(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	endpoint.setRespond(func(collection string, n int) answer {
		if n == 1 {
			return answer{http.StatusServiceUnavailable, `{"detail":"busy"}`}
		}
		return endpoint.validAnswer(collection, n)
	})
	layer, signer := signerBehindLayer(t, endpoint, clock, quickRetryPolicy())

	token, receipt, err := tokenThroughLayer(layer, signer, "naip")
	if err != nil {
		t.Fatalf("Token through the layer: %v (receipt %+v)", err, receipt)
	}
	if token.Value != tokenValue("naip", 2) {
		t.Errorf("token = %q, want the second answer's token", token.Value)
	}
	if n := endpoint.count("naip"); n != 2 {
		t.Errorf("token requests = %d, want 2 (one 503, one retry)", n)
	}
}

// TestTokenFailureBehindReliabilityLayerIsASigningError: when the layer's
// retries are spent the Signer still reports a signing failure that names
// the collection and the last status, so a tool can say why assets are
// unsigned.
func TestTokenFailureBehindReliabilityLayerIsASigningError(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	endpoint.setRespond(func(string, int) answer { return answer{http.StatusServiceUnavailable, `{"detail":"busy"}`} })
	layer, signer := signerBehindLayer(t, endpoint, clock, quickRetryPolicy())

	_, _, tokenErr := tokenThroughLayer(layer, signer, "naip")
	var signErr *Error
	if !errors.As(tokenErr, &signErr) || !errors.Is(tokenErr, ErrSigningFailed) || signErr.Collection != "naip" {
		t.Fatalf("Token error = %v; want a signing *Error for collection naip", tokenErr)
	}
	if !strings.Contains(tokenErr.Error(), "503") {
		t.Errorf("error text does not name the last status 503: %s", tokenErr)
	}
	if n := endpoint.count("naip"); n != reliability.DefaultPolicy().MaxAttempts {
		t.Errorf("token requests = %d, want the policy's %d attempts", n, reliability.DefaultPolicy().MaxAttempts)
	}
}

// quickRetryPolicy is the default policy with a millisecond backoff, so
// that retries do not slow the test, and no response cache.
func quickRetryPolicy() reliability.Policy {
	policy := reliability.DefaultPolicy()
	policy.BackoffBase = time.Millisecond
	policy.CacheTTL = 0
	return policy
}

// tokenThroughLayer asks for a token inside a layer.Run call, as a tool
// does. The error is the Signer's own when it failed (what a tool sees),
// else the layer's.
func tokenThroughLayer(layer *reliability.Layer, signer *Signer, collection string) (Token, reliability.Receipt, error) {
	var token Token
	var tokenErr error
	receipt, err := layer.Run(context.Background(), "get_item", "planetarycomputer.microsoft.com", func(ctx context.Context) error {
		token, tokenErr = signer.Token(ctx, collection)
		return tokenErr
	})
	if tokenErr != nil {
		return token, receipt, tokenErr
	}
	return token, receipt, err
}

// signerBehindLayer builds the production wiring against a loopback
// endpoint: a Signer whose client is a reliability layer's with the given
// policy.
func signerBehindLayer(t *testing.T, endpoint http.Handler, clock *fakeClock, policy reliability.Policy) (*reliability.Layer, *Signer) {
	t.Helper()
	server := httptest.NewServer(endpoint)
	t.Cleanup(server.Close)

	logger := zerolog.Nop()
	layer := reliability.New(policy, reliability.Options{
		Transport: server.Client().Transport,
		Logger:    &logger,
		Rand:      rand.New(rand.NewPCG(1, 2)),
		Now:       clock.Now,
	})
	signer, err := New(Options{
		HTTPClient: layer.HTTPClient(),
		TokenURL:   server.URL + strings.TrimSuffix(tokenPath, "/"),
		Now:        clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return layer, signer
}
