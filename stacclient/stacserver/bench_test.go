package stacserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// benchStore holds n items on a 100×100 grid of 1° squares with varied
// dates and cloud cover.
func benchStore(b testing.TB, n int) *Store {
	b.Helper()
	s := NewStore()
	mustAdd(b, s.AddCollection, collectionJSON("grid", "Grid", nil, []float64{-50, -50, 50, 50}, "2020-01-01T00:00:00Z", nil))
	for i := 0; i < n; i++ {
		w, south := float64(i%100-50), float64(i/100%100-50)
		mustAdd(b, s.AddItem, itemJSON(fmt.Sprintf("g-%05d", i), "grid", squareGeometry(w, south, w+1, south+1), map[string]any{
			"datetime":       time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour).Format(time.RFC3339),
			"eo:cloud_cover": i % 101,
		}))
	}
	return s
}

// BenchmarkSearchPOST measures one filtered, sorted search page over 10 000
// items, served without a network.
func BenchmarkSearchPOST(b *testing.B) {
	benchSearchPOST(b, New(benchStore(b, 10000), Options{}), `{"bbox":[-20,-20,20,20],"query":{"eo:cloud_cover":{"lt":30}},"sortby":[{"field":"properties.eo:cloud_cover","direction":"asc"}],"limit":100}`)
}

// BenchmarkCQL2Intersects measures a CQL2 s_intersects + t_intersects filter.
func BenchmarkCQL2Intersects(b *testing.B) {
	benchSearchPOST(b, New(benchStore(b, 10000), Options{}), `{"filter-lang":"cql2-json","filter":{"op":"and","args":[`+
		`{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[[[-10,-10],[10,-10],[0,10],[-10,-10]]]}]},`+
		`{"op":"t_intersects","args":[{"property":"datetime"},{"interval":["2020-02-01T00:00:00Z",".."]}]}]},"limit":50}`)
}

// benchSearchPOST times POST /search with body against srv, failing on any
// answer but 200.
func benchSearchPOST(b *testing.B, srv http.Handler, body string) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodPost, "http://bench/search", strings.NewReader(body))
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
