package reliability

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	runtimemetrics "runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

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
		br.record(noProbe, true, false)
	}
	b.ReportAllocs()
	for b.Loop() {
		var d *Denial
		if err := benchGet(b, l); !errors.As(err, &d) || d.Code != CodeCircuitOpen {
			b.Fatalf("error %v, want circuit_open", err)
		}
	}
}

// BenchmarkErrorBody10MBRetried3Times is a catalog that answers a 10 MB
// error page to every attempt of a three-attempt read: what one such call
// costs in memory. peak-heap-MiB is the highest heap (objects, garbage not
// yet collected included) sampled during the calls, above the heap before
// them; B/op is everything allocated per call.
func BenchmarkErrorBody10MBRetried3Times(b *testing.B) {
	const size = 10 << 20
	line := []byte("<p>Internal Server Error</p>\n")
	p := noCache()
	p.BackoffBase = 0
	respond := func(int, *http.Request) (*http.Response, error) {
		resp := answer(500, "")
		// Generated as it is read, so the page itself takes no heap.
		resp.Body = io.NopCloser(io.LimitReader(repeatReader(line), size))
		resp.ContentLength = size
		return resp, nil
	}
	runtime.GC()
	peak := sampleHeapPeak()
	b.ReportAllocs()
	for b.Loop() {
		// A fresh layer per call: the breaker and retry budget of one would
		// stop retrying this failing host after a few calls.
		l := benchLayer(b, p, respond)
		var d *Denial
		if err := benchGet(b, l); !errors.As(err, &d) || d.Attempts != 3 {
			b.Fatalf("error %v, want a denial after 3 attempts", err)
		}
	}
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

// repeatReader is an endless reader of line, line, line...
type repeatReader []byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r[i%len(r)]
	}
	return len(p), nil
}

// sampleHeapPeak samples the heap every 100 µs until the returned function
// is called; that returns the peak above the heap at the start.
func sampleHeapPeak() func() uint64 {
	const name = "/memory/classes/heap/objects:bytes"
	read := func() uint64 {
		s := []runtimemetrics.Sample{{Name: name}}
		runtimemetrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); <-done; return peak.Load() }
}
