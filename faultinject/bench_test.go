package faultinject

import (
	"io"
	"net/http"
	"strconv"
	"testing"
)

// BenchmarkDecide is the per-attempt cost the injector adds to every request.
func BenchmarkDecide(b *testing.B) {
	in, err := New(Plan{Seed: 1, Rate: 0.2, Mix: EqualMix(AllKinds()...)})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]Key, 1024)
	for i := range keys {
		keys[i] = Key{Tool: "search_items", Invocation: strconv.Itoa(i), Attempt: 1 + i%3}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in.decideKey(keys[i%len(keys)])
	}
}

// BenchmarkOversizedBody reports the throughput and the memory of the
// streamed OversizedBody (B/op stays small whatever the size).
func BenchmarkOversizedBody(b *testing.B) {
	const size = 16 << 20
	in, err := New(Plan{Seed: 1, Rate: 1, Mix: EqualMix(OversizedBody), Timing: Timing{OversizedBytes: size}})
	if err != nil {
		b.Fatal(err)
	}
	rt := in.RoundTripper(okTransport{})
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, "http://catalog.test/search", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
