package reliability

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// The layer's inner client follows redirects itself, so it
// must strip credentials on any change of origin: another port on the same
// host included, and headers Go's own list does not know (X-Api-Key, a
// configured X-Custom-Token).
func TestRedirectToAnotherOriginStripsCredentials(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Connection", "close")
		w.Write([]byte(`{}`))
	}))
	defer target.Close()
	var sameOriginSeen http.Header
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, target.URL+"/landing", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/landed", http.StatusFound)
		default:
			mu.Lock()
			sameOriginSeen = r.Header.Clone()
			mu.Unlock()
			w.Write([]byte(`{}`))
		}
	}))
	defer front.Close()

	l := loopbackLayer(t, nil)
	send := func(path string) {
		t.Helper()
		_, err := l.Run(t.Context(), "get_root", "", func(ctx contextLike) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, front.URL+path, nil)
			req.Header.Set("Authorization", "Bearer secret")
			req.Header.Set("X-Api-Key", "k")
			req.Header.Set("X-Custom-Token", "t")
			req.Header.Set("Cookie", "session=s")
			req.Header.Set("Accept", "application/json")
			resp, err := l.HTTPClient().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	send("/away")
	mu.Lock()
	for _, name := range []string{"Authorization", "X-Api-Key", "X-Custom-Token", "Cookie"} {
		if v := seen.Get(name); v != "" {
			t.Errorf("the redirect target on another port received %s: %q", name, v)
		}
	}
	if seen.Get("Accept") != "application/json" || seen.Get(correlationHeader) == "" {
		t.Errorf("safe headers were dropped too: %v", seen)
	}
	mu.Unlock()

	send("/here")
	mu.Lock()
	defer mu.Unlock()
	if sameOriginSeen.Get("Authorization") != "Bearer secret" || sameOriginSeen.Get("X-Custom-Token") != "t" {
		t.Errorf("a same-origin redirect lost the credentials: %v", sameOriginSeen)
	}
}
