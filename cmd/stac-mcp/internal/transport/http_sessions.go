package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// `stac-mcp http` is stateless (adr/0015-mcp-2026-07-28-over-http.md): the
// SDK's handler serves every POST on its own, with a session that lives as
// long as the request, so any replica can answer any request and nothing
// about a client is kept between requests. That is the only way the SDK
// serves revision 2026-07-28, and it serves the earlier revisions too,
// except for two things they relied on a server session for:
//
//   - a session id, which a client sends with every request: the key a
//     notifications/cancelled needs to find the call it cancels among
//     every client's calls (request ids are per client: each counts from
//     0 or 1);
//   - cancellation itself: the notification arrives in a POST of its own,
//     which the stateless handler gives a fresh session that knows no call.
//
// legacySessions supplies both, without state beyond the calls in flight.
// A legacy initialize gets an Mcp-Session-Id: random, unguessable, kept by
// the client and never stored here, so every replica accepts it; no
// replica refuses one it did not issue (there is nothing to look it up
// in). A call that carries it is registered under (session id, request
// id) while its POST is served; a notifications/cancelled with the same
// session id cancels it. One client cannot cancel another's calls without
// its session id. When the notification reaches another replica than the
// call, nothing is cancelled there and the call runs to its end (the tool
// timeout bounds it); the shared-state layer may forward cancellations
// later.
//
// Revision 2026-07-28 needs neither: it has no session id, and a client
// cancels a call by closing its request, which the SDK turns into
// cancellation (StreamableHTTPOptions.PropagateRequestCancellation).

// Header and method names of the protocol.
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	// statelessRevision is the first revision without initialize or
	// sessions (SEP-2575); versions compare as strings (YYYY-MM-DD).
	statelessRevision = "2026-07-28"
	// assumedRevision is the revision the spec says to assume when a
	// request carries no MCP-Protocol-Version header.
	assumedRevision = "2025-03-26"

	methodInitialize = "initialize"
	methodCancelled  = "notifications/cancelled"
)

// peekedMessage is what the http layer reads of a POST body: enough to
// route it, never the arguments.
type peekedMessage struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params struct {
		RequestID       json.RawMessage `json:"requestId"`       // notifications/cancelled
		ProtocolVersion string          `json:"protocolVersion"` // initialize
	} `json:"params"`
}

// isCall reports whether m is a request that expects an answer.
func (m peekedMessage) isCall() bool {
	return m.Method != "" && len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// peekMessage decodes r's body (already read into memory and bounded by
// boundRequestBody) without consuming it. ok is false for a batch, a body
// that is not JSON and any other message the SDK will judge for itself.
func peekMessage(r *http.Request) (msg peekedMessage, ok bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return msg, false
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || json.Unmarshal(body, &msg) != nil {
		return peekedMessage{}, false
	}
	return msg, true
}

// declaredRevision is the protocol revision a POST says it speaks: its
// MCP-Protocol-Version header; for an initialize, the version it asks for;
// otherwise the spec's assumption, 2025-03-26.
func declaredRevision(r *http.Request, msg peekedMessage) string {
	if v := r.Header.Get(protocolVersionHeader); v != "" {
		return v
	}
	if msg.Method == methodInitialize && msg.Params.ProtocolVersion != "" {
		return msg.Params.ProtocolVersion
	}
	return assumedRevision
}

// legacySessions issues session ids to legacy clients and cancels their
// calls on notifications/cancelled (see the top of this file).
type legacySessions struct {
	mu    sync.Mutex
	calls map[legacyCallKey][]*legacyCall // calls being served, by session and request id

	requests *prometheus.CounterVec // POSTs by declared protocol revision
}

type legacyCallKey struct{ session, id string }

type legacyCall struct{ cancel context.CancelCauseFunc }

// errCancelledByClient is the cause of a call the client cancelled.
var errCancelledByClient = errors.New("cancelled by the client (notifications/cancelled)")

func newLegacySessions(reg prometheus.Registerer) *legacySessions {
	l := &legacySessions{
		calls: map[legacyCallKey][]*legacyCall{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_mcp_requests_total",
			Help: "MCP POST requests by the protocol revision they declare (MCP-Protocol-Version, the version an initialize asks for, " +
				"else 2025-03-26); other: a revision this server does not serve."}, []string{"protocol_version"}),
	}
	for _, v := range mcp.SupportedProtocolVersions() {
		l.requests.WithLabelValues(v)
	}
	l.requests.WithLabelValues("other")
	reg.MustRegister(l.requests)
	return l
}

// wrap serves r through next after doing what the stateless handler cannot
// for a legacy client: a session id on initialize, a registered call, or a
// cancellation.
func (l *legacySessions) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		msg, ok := peekMessage(r)
		revision := declaredRevision(r, msg)
		if slices.Contains(mcp.SupportedProtocolVersions(), revision) {
			l.requests.WithLabelValues(revision).Inc()
		} else {
			l.requests.WithLabelValues("other").Inc()
		}
		if !ok || revision >= statelessRevision {
			next.ServeHTTP(w, r)
			return
		}
		session := r.Header.Get(sessionIDHeader)
		switch {
		case msg.Method == methodInitialize && session == "":
			w.Header().Set(sessionIDHeader, rand.Text())
		case session == "":
		case msg.Method == methodCancelled:
			l.cancel(session, msg.Params.RequestID)
		case msg.isCall():
			ctx, done := l.track(r.Context(), session, msg.ID)
			defer done()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// track registers a call until done is called. The returned context
// carries the call's cancellation signal for cancelOnClientRequest, which
// sees it in the handler's context (the SDK derives the session's context
// from the request's).
func (l *legacySessions) track(ctx context.Context, session string, id json.RawMessage) (context.Context, func()) {
	signal, cancel := context.WithCancelCause(context.Background())
	call := &legacyCall{cancel: cancel}
	key := legacyCallKey{session, string(id)}
	l.mu.Lock()
	l.calls[key] = append(l.calls[key], call)
	l.mu.Unlock()
	return context.WithValue(ctx, cancelSignalKey{}, signal), func() {
		l.mu.Lock()
		if rest := slices.DeleteFunc(l.calls[key], func(c *legacyCall) bool { return c == call }); len(rest) > 0 {
			l.calls[key] = rest
		} else {
			delete(l.calls, key)
		}
		l.mu.Unlock()
		cancel(nil)
	}
}

// cancel cancels the session's calls with request id id served by this
// process, and reports whether there was one.
func (l *legacySessions) cancel(session string, id json.RawMessage) bool {
	l.mu.Lock()
	calls := slices.Clone(l.calls[legacyCallKey{session, string(id)}])
	l.mu.Unlock()
	for _, c := range calls {
		c.cancel(errCancelledByClient)
	}
	return len(calls) > 0
}

type cancelSignalKey struct{}

// cancelOnClientRequest is the server middleware that ends a handler's
// context when legacySessions cancels its call.
func cancelOnClientRequest(next mcp.MethodHandler) mcp.MethodHandler {
	//nolint:contextcheck // signal is a context legacySessions cancels, carried in ctx; the handler's context derives from ctx
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		signal, ok := ctx.Value(cancelSignalKey{}).(context.Context)
		if !ok {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(signal, func() { cancel(context.Cause(signal)) })
		defer stop()
		return next(ctx, method, req)
	}
}
