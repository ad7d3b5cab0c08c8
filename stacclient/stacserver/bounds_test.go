package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
