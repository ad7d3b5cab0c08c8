package pcsign

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// tokenPath is where the fake endpoint serves tokens, as the real one does.
const tokenPath = "/api/sas/v1/token/"

// testEpoch is the fake clock's start.
var testEpoch = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

// fakeClock is a settable clock shared by a Signer and its fake endpoint.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: testEpoch} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// answer is one response of the fake endpoint.
type answer struct {
	status int
	body   string
}

// fakeEndpoint is the Data Authentication API's token route: it counts the
// requests per collection and answers with whatever respond returns (by
// default a token valid for tokenLifetime from the clock's now, numbered so
// that a refetched token differs from the cached one).
type fakeEndpoint struct {
	clock         *fakeClock
	tokenLifetime time.Duration

	mu       sync.Mutex
	requests map[string]int // by collection id
	headers  []http.Header
	paths    []string
	respond  func(collection string, n int) answer
}

func newFakeEndpoint(clock *fakeClock) *fakeEndpoint {
	return &fakeEndpoint{clock: clock, tokenLifetime: time.Hour, requests: map[string]int{}}
}

// tokenValue is the SAS query string the endpoint issues as the n-th token
// of collection.
func tokenValue(collection string, n int) string {
	return fmt.Sprintf("st=2026-11-21T05%%3A00%%3A00Z&se=2026-11-21T07%%3A00%%3A00Z&sp=rl&sv=2024-05-04&sr=c&skoid=%s&sig=sig%d", collection, n)
}

func (f *fakeEndpoint) validAnswer(collection string, n int) answer {
	expiry := f.clock.Now().Add(f.tokenLifetime).UTC().Format(time.RFC3339)
	return answer{http.StatusOK, fmt.Sprintf(`{"msft:expiry": %q, "token": %q}`, expiry, tokenValue(collection, n))}
}

func (f *fakeEndpoint) setRespond(respond func(collection string, n int) answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.respond = respond
}

func (f *fakeEndpoint) count(collection string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[collection]
}

func (f *fakeEndpoint) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.paths)
}

func (f *fakeEndpoint) lastHeader() http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[len(f.headers)-1]
}

func (f *fakeEndpoint) lastPath() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paths[len(f.paths)-1]
}

func (f *fakeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, tokenPath) {
		http.Error(w, `{"detail":"Not Found"}`, http.StatusNotFound)
		return
	}
	collection := strings.TrimPrefix(r.URL.Path, tokenPath)
	f.mu.Lock()
	f.requests[collection]++
	n := f.requests[collection]
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.EscapedPath())
	respond := f.respond
	f.mu.Unlock()

	a := f.validAnswer(collection, n)
	if respond != nil {
		a = respond(collection, n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	fmt.Fprint(w, a.body)
}

// startSigner serves endpoint on a loopback httptest server and returns a
// Signer using it; both are torn down when the test ends.
func startSigner(t *testing.T, endpoint http.Handler, clock *fakeClock, opts Options) *Signer {
	t.Helper()
	server := httptest.NewServer(endpoint)
	t.Cleanup(server.Close)
	opts.HTTPClient = server.Client()
	opts.TokenURL = server.URL + strings.TrimSuffix(tokenPath, "/")
	if clock != nil {
		opts.Now = clock.Now
	}
	signer, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return signer
}
