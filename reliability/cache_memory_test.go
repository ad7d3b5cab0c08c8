package reliability

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

// chunkedLandingPage answers every request as most catalogs do: a small
// JSON document of unknown length (chunked), with the headers a CDN adds.
// It keeps nothing per request, so the heap holds only what the layer keeps.
type chunkedLandingPage struct{}

func (chunkedLandingPage) RoundTrip(req *http.Request) (*http.Response, error) {
	h := http.Header{}
	for _, kv := range [][2]string{
		{"Content-Type", "application/json"}, {"Date", "Sat, 05 Dec 2026 03:20:57 GMT"},
		{"Via", "1.1 0123456789abcdef.cloudfront.net (CloudFront)"}, {"X-Cache", "Miss from cloudfront"},
		{"X-Amz-Cf-Id", "Qz9tYcG1xZ1gq7m1o8m1-abcdefghijklmnopqrstuvwxyz12345=="}, {"Access-Control-Allow-Origin", "*"},
	} {
		h.Set(kv[0], kv[1])
	}
	body := `{"type":"Catalog","id":"c","stac_version":"1.0.0","description":"` + strings.Repeat("d", 200) + `","links":[]}`
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: -1, Request: req,
	}, nil
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// The cache's bound is a bound on memory: many distinct URLs answered with
// small bodies of unknown length (a caller naming thousands of catalog
// URLs) hold no more than CacheMaxBytes, give or take the heap's noise. A
// body read in 64 KiB steps used to be cached with its whole buffer while
// the cache counted its length: 1,000 such answers held 64 MiB under a
// 1 MiB bound.
func TestCacheBoundHoldsInMemory(t *testing.T) {
	const (
		urls     = 1000
		maxBytes = 1 << 20
	)
	p := DefaultPolicy()
	p.CacheMaxBytes = maxBytes
	nop := zerolog.Nop()
	l := New(p, Options{Transport: chunkedLandingPage{}, Logger: &nop, Advice: testAdvice})
	tl := &testLayer{Layer: l}
	if _, status, err := tl.get("get_root", "/warm"); err != nil || status != 200 {
		t.Fatalf("warm-up read: %d %v", status, err)
	}
	before := heapInUse()
	for i := range urls {
		if _, _, err := tl.get("get_root", "/v1?x="+itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	grown := heapInUse() - before
	if used := l.cache.bytesUsed(); used > maxBytes || used < maxBytes/2 {
		t.Fatalf("the cache counts %d bytes after %d distinct URLs; want it full, under its %d-byte bound", used, urls, maxBytes)
	}
	if grown > 3*maxBytes {
		t.Errorf("%d distinct URLs grew the heap by %.1f MiB with the cache bounded at %.1f MiB: something per URL is not counted",
			urls, float64(grown)/(1<<20), float64(maxBytes)/(1<<20))
	}
	runtime.KeepAlive(l)
}

// What the cache counts per entry is at least what the entry holds: the
// body's capacity, not only its length, plus the bookkeeping.
func TestCacheCountsWhatItsEntriesHold(t *testing.T) {
	p := DefaultPolicy()
	nop := zerolog.Nop()
	l := New(p, Options{Transport: chunkedLandingPage{}, Logger: &nop, Advice: testAdvice})
	tl := &testLayer{Layer: l}
	const urls = 2000
	before := heapInUse()
	for i := range urls {
		if _, _, err := tl.get("get_root", "/v1?x="+itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	grown := heapInUse() - before
	l.cache.mu.Lock()
	entries := len(l.cache.entries)
	for _, el := range l.cache.entries {
		e := el.Value.(*cacheEntry)
		if n, c := len(e.snap.body), cap(e.snap.body); c > n+n/8 {
			t.Errorf("a cached %d-byte body keeps a %d-byte buffer", n, c)
			break
		}
		if e.size < int64(cap(e.snap.body)) {
			t.Errorf("an entry holding a %d-byte buffer is counted as %d bytes", cap(e.snap.body), e.size)
			break
		}
	}
	l.cache.mu.Unlock()
	if entries != urls {
		t.Fatalf("%d entries cached, want %d", entries, urls)
	}
	if counted := l.cache.bytesUsed(); grown > counted {
		t.Errorf("%d entries hold %d bytes of heap (%d each) and are counted as %d (%d each)",
			entries, grown, grown/urls, counted, counted/urls)
	}
	runtime.KeepAlive(l)
}

// An answer nobody asks for again leaves the cache within a TTL of puts,
// not only when the byte bound pushes it out.
func TestExpiredEntriesAreSwept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = 10 * time.Second
		nop := zerolog.Nop()
		l := New(p, Options{Transport: chunkedLandingPage{}, Logger: &nop, Advice: testAdvice})
		tl := &testLayer{Layer: l}
		for i := range 100 {
			_, _, _ = tl.get("get_root", "/v1?x="+itoa(i))
		}
		full := l.cache.bytesUsed()
		time.Sleep(11 * time.Second)
		_, _, _ = tl.get("get_root", "/v1?fresh")
		l.cache.mu.Lock()
		entries := len(l.cache.entries)
		l.cache.mu.Unlock()
		if entries != 1 || l.cache.bytesUsed() >= full/50 {
			t.Errorf("after the TTL and one more read the cache keeps %d entries, %d bytes (%d before); want the new one only",
				entries, l.cache.bytesUsed(), full)
		}
	})
}
