package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
)

// roundTripFunc turns a function into an in-memory upstream.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A tool wraps its work in Run and makes every request with HTTPClient; the
// receipt goes into the result's _meta and a *Denial explains a give-up.
func ExampleLayer_Run() {
	hits := 0
	upstream := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		hits++
		status, body := http.StatusServiceUnavailable, `{"description":"warming up"}`
		if hits == 3 {
			status, body = http.StatusOK, `{"type":"Catalog","id":"demo"}`
		}
		return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	policy := reliability.DefaultPolicy()
	policy.BackoffBase = 0 // no waiting in an example
	quiet := zerolog.Nop()
	layer := reliability.New(policy, reliability.Options{Transport: upstream, Logger: &quiet, Rand: rand.New(rand.NewPCG(1, 2))})

	receipt, err := layer.Run(context.Background(), "get_root", "catalog.example", func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://catalog.example/", nil)
		resp, err := layer.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(body))
		return nil
	})
	var denial *reliability.Denial
	fmt.Println("denied:", errors.As(err, &denial))
	fmt.Println("attempts:", receipt.Attempts, "retries:", receipt.Retries, "requests:", receipt.UpstreamRequests)
	// Output:
	// 200 {"type":"Catalog","id":"demo"}
	// denied: false
	// attempts: 3 retries: 2 requests: 1
}
