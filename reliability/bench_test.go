package reliability

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/rs/zerolog"
)

func benchLayer(b *testing.B, p Policy, respond func(int, *http.Request) (*http.Response, error)) *Layer {
	log := zerolog.Nop()
	return New(p, Options{Transport: &fakeUpstream{respond: respond}, Logger: &log, Rand: rand.New(rand.NewPCG(1, 1))})
}

func benchGet(b *testing.B, l *Layer) error {
	_, err := l.Run(context.Background(), "bench", testHost, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/v1/collections/c", nil)
		resp, err := l.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	})
	return err
}

// BenchmarkLayerOverhead is one successful call through Run and the retry
// transport against an in-memory upstream: the layer's own cost per call.
func BenchmarkLayerOverhead(b *testing.B) {
	l := benchLayer(b, noCache(), always(200, `{"id":"c"}`))
	b.ReportAllocs()
	for b.Loop() {
		if err := benchGet(b, l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHit is a call answered from the response cache.
func BenchmarkCacheHit(b *testing.B) {
	l := benchLayer(b, DefaultPolicy(), always(200, `{"id":"c"}`))
	b.ReportAllocs()
	for b.Loop() {
		if err := benchGet(b, l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCircuitOpenDenial is a call refused by an open breaker; the
// target is well under a millisecond per call (ns/op < 1e6).
func BenchmarkCircuitOpenDenial(b *testing.B) {
	l := benchLayer(b, noCache(), always(503, ""))
	br := l.host(testHost).breaker
	for range breakerMinCalls {
		br.allow()
		br.record(false, true, false)
	}
	b.ReportAllocs()
	for b.Loop() {
		var d *Denial
		if err := benchGet(b, l); !errors.As(err, &d) || d.Code != CodeCircuitOpen {
			b.Fatalf("error %v, want circuit_open", err)
		}
	}
}
