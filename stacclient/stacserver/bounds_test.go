package stacserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serveDirect answers one request without a network.
func serveDirect(t *testing.T, s *Server, method, target string, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, "http://direct"+target, bytes.NewReader([]byte(body)))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	return rec.Code, m
}

// The token-only query memory is bounded: the oldest query is forgotten
// once maxRememberedQueries newer ones were seen, and its token then gets a
// clear 400 rather than a wrong page.
func TestTokenOnlyMemoryIsBounded(t *testing.T) {
	s := New(newTestStore(t), Options{NextLinkStyle: NextPOSTTokenOnly})
	_, first := serveDirect(t, s, http.MethodPost, "/search", `{"limit":1,"ids":["s-00","s-01"]}`)
	token := linkByRel(first, "next")["body"].(map[string]any)["token"].(string)
	tokenBody := fmt.Sprintf(`{"token":%q}`, token)
	if code, _ := serveDirect(t, s, http.MethodPost, "/search", tokenBody); code != http.StatusOK {
		t.Fatalf("token-only continuation failed before eviction: %d", code)
	}
	for i := 0; i < maxRememberedQueries; i++ {
		serveDirect(t, s, http.MethodPost, "/search", fmt.Sprintf(`{"limit":1,"ids":["x-%d"]}`, i))
	}
	if n := len(s.queries); n != maxRememberedQueries {
		t.Errorf("remembers %d queries, want the cap %d", n, maxRememberedQueries)
	}
	code, body := serveDirect(t, s, http.MethodPost, "/search", tokenBody)
	if code != http.StatusBadRequest || body["code"] != "BadRequest" {
		t.Errorf("evicted token: status %d body %v, want 400", code, body)
	}
}

func TestRequestCounterIsBounded(t *testing.T) {
	s := New(NewStore(), Options{})
	for i := 0; i < maxCountedPaths+5; i++ {
		serveDirect(t, s, http.MethodGet, fmt.Sprintf("/nowhere/%d", i), "")
	}
	counts := s.requestCounts()
	if len(counts) != maxCountedPaths+1 || counts[otherPaths] != 5 {
		t.Errorf("%d keys, OTHER=%d; want %d keys and OTHER=5", len(counts), counts[otherPaths], maxCountedPaths+1)
	}
}

// A search whose caller has gone (the tool call's context ended) stops
// scanning and answers 503 instead of evaluating its filter on every item:
// served in memory, the scan would otherwise run on after the call returned.
func TestSearchStopsWhenTheCallerHasGone(t *testing.T) {
	s := New(benchStore(t, 2000), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodPost, "http://direct/search",
		strings.NewReader(`{"filter-lang":"cql2-json","filter":{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[[[-10,-10],[10,-10],[0,10],[-10,-10]]]}]}}`)).WithContext(ctx)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "cancelled") {
		t.Errorf("search after its caller left: %d %s, want 503 saying it was cancelled", rec.Code, rec.Body.String())
	}
}
