package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// TestLegacyCancellationNeedsTheCallersSessionID: a notifications/cancelled
// cancels only a call of the same session id; request ids are per client
// (every client counts from 0 or 1), so without it one client could cancel
// another's calls. In a synctest bubble: synctest.Wait lets every goroutine
// the cancellations start (context.AfterFunc's) run before the checks.
func TestLegacyCancellationNeedsTheCallersSessionID(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testLegacyCancellation)
}

func testLegacyCancellation(t *testing.T) {
	l := newLegacySessions(prometheus.NewRegistry())
	running := make(chan context.Context, 1)
	finished := make(chan error, 1)
	handler := l.wrap(cancelOnClientRequestHandler(func(ctx context.Context) {
		running <- ctx
		<-ctx.Done()
		finished <- context.Cause(ctx)
	}))
	post := func(session, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set(sessionIDHeader, session)
		r.Header.Set(protocolVersionHeader, "2025-11-25")
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w
	}
	go post("alice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_root"}}`)
	callCtx := <-running
	if l.inFlight() != 1 {
		t.Fatalf("%d calls registered, want 1", l.inFlight())
	}
	post("mallory", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	post("alice", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`)
	synctest.Wait()
	if callCtx.Err() != nil {
		t.Fatal("another session's cancellation, or one of another request id, cancelled alice's call")
	}
	post("alice", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	if err := <-finished; !errors.Is(err, errCancelledByClient) {
		t.Errorf("alice's call ended with %v, want %v", err, errCancelledByClient)
	}
	synctest.Wait() // alice's POST has returned
	if n := l.inFlight(); n != 0 {
		t.Errorf("%d calls still registered after the call ended", n)
	}

	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	l.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	if id := w.Header().Get(sessionIDHeader); len(id) < 20 {
		t.Errorf("a legacy initialize got session id %q; want a random one", id)
	}
}

// inFlight is the number of legacy calls registered .
func (l *legacySessions) inFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, calls := range l.calls {
		n += len(calls)
	}
	return n
}

// cancelOnClientRequestHandler runs fn, for a call legacySessions
// registered, in the context a tool handler would see: the request's,
// through the cancelOnClientRequest middleware. Other messages (the
// notifications) are answered at once.
func cancelOnClientRequestHandler(fn func(ctx context.Context)) http.Handler {
	return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.Context().Value(cancelSignalKey{}) == nil {
			return
		}
		h := cancelOnClientRequest(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
			fn(ctx)
			return nil, nil
		})
		_, _ = h(context.WithoutCancel(r.Context()), "tools/call", nil)
	})
}
