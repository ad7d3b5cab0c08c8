package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// chunkedCatalog is a STAC landing page on loopback sent as most catalogs
// send it: chunked, its length unknown until the end.
func chunkedCatalog(t *testing.T) *httptest.Server {
	t.Helper()
	page := `{"type":"Catalog","id":"c","stac_version":"1.0.0","description":"` + strings.Repeat("d", 200) + `","links":[],"conformsTo":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.(http.Flusher).Flush() // headers out first: the body goes chunked
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// An http client naming ever new catalog URLs of a catalog that answers
// must not grow the server without bound: whatever is kept per URL (client
// LRU, response cache, host state) is bounded, and small answers are not
// kept in large read buffers. 1,000 distinct URLs used to grow the heap by
// about 66 MiB; bounded, they cost about 2. Not parallel: the heap is
// measured.
func TestHTTPDistinctCatalogURLsDoNotGrowTheServer(t *testing.T) {
	const urls = 1000
	catalog := chunkedCatalog(t)
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"}, "--catalog", "demo", "--log-level", "error")
	cs := connectHTTP(t, s.url, newTestHTTPClient(t))
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapInuse)
	}
	if text, isErr := callHTTP(t, cs, "get_root", map[string]any{"catalog_url": catalog.URL + "/warm"}); isErr {
		t.Fatalf("get_root: %s", text)
	}
	before := heap()
	for i := range urls {
		if text, isErr := callHTTP(t, cs, "get_root", map[string]any{"catalog_url": catalog.URL + "/v1?x=" + strconv.Itoa(i)}); isErr {
			t.Fatalf("get_root %d: %s", i, text)
		}
	}
	grown := heap() - before
	t.Logf("%d distinct catalog URLs grew the heap by %.1f MiB", urls, float64(grown)/(1<<20))
	if grown > 16<<20 {
		t.Errorf("%d distinct catalog URLs grew the heap by %.1f MiB (want under 16): something per URL is kept unbounded",
			urls, float64(grown)/(1<<20))
	}
}
