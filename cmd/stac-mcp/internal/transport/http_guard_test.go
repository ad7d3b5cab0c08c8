package transport

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestIsLoopbackHost: the hosts that only this machine reaches, which the
// Host check and the exposure rule (package main) rely on.
func TestIsLoopbackHost(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "::1", "localhost", "127.0.0.2"} {
		if !IsLoopbackHost(host) {
			t.Errorf("%s should count as loopback", host)
		}
	}
	for _, host := range []string{"", "0.0.0.0", "::", "10.0.0.1", "example.com"} {
		if IsLoopbackHost(host) {
			t.Errorf("%q should not count as loopback", host)
		}
	}
}

// TestSeveralTokensEachAdmitted: STAC_MCP_HTTP_TOKEN may name one token per
// client (comma-separated); each is admitted, anything else is a 401.
func TestSeveralTokensEachAdmitted(t *testing.T) {
	h := requireBearerToken(" token-of-alice-0123456789 , token-of-bob-0123456789,", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	for token, want := range map[string]int{
		"token-of-alice-0123456789":                           http.StatusNoContent,
		"token-of-bob-0123456789":                             http.StatusNoContent,
		"token-of-alice-0123456789 , token-of-bob-0123456789": http.StatusUnauthorized,
		"token-of-eve":                                        http.StatusUnauthorized,
		"":                                                    http.StatusUnauthorized,
	} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("token %q: %d, want %d", token, rec.Code, want)
		}
	}
}

// TestUnconfiguredTokenIsNoIdentity: without STAC_MCP_HTTP_TOKEN, a bearer
// token a client sends is dropped before the MCP handler (the write tools
// would take it as a caller of its own: one client, any number of callers).
func TestUnconfiguredTokenIsNoIdentity(t *testing.T) {
	h := requireBearerToken("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("the Authorization header reached the handler")
		}
	}))
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("Authorization", "Bearer made-up")
	h.ServeHTTP(httptest.NewRecorder(), req)
}
