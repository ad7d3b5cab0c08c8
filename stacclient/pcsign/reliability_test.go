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
	layer, signer := signerBehindLayer(t, endpoint, clock)

	var token Token
	receipt, err := layer.Run(context.Background(), "get_item", "planetarycomputer.microsoft.com", func(ctx context.Context) error {
		var err error
		token, err = signer.Token(ctx, "naip")
		return err
	})
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
	layer, signer := signerBehindLayer(t, endpoint, clock)

	var tokenErr error
	_, _ = layer.Run(context.Background(), "get_item", "planetarycomputer.microsoft.com", func(ctx context.Context) error {
		_, tokenErr = signer.Token(ctx, "naip")
		return tokenErr
	})
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

// signerBehindLayer builds the production wiring against a loopback
// endpoint: a Signer whose client is a reliability layer's, with a
// millisecond backoff so retries do not slow the test.
func signerBehindLayer(t *testing.T, endpoint http.Handler, clock *fakeClock) (*reliability.Layer, *Signer) {
	t.Helper()
	server := httptest.NewServer(endpoint)
	t.Cleanup(server.Close)

	policy := reliability.DefaultPolicy()
	policy.BackoffBase = time.Millisecond // keep the retry wait short
	policy.CacheTTL = 0
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
