// Package transport is how MCP reaches stac-mcp: Streamable HTTP (the
// bearer token, Host and Origin checks, connection and body limits, the
// legacy sessions, JSON-RPC error bodies, /metrics and /healthz) and stdio
// (a filter that answers malformed lines). It serves an *mcp.Server built
// elsewhere and knows nothing of flags or environment variables: package
// main reads the settings and passes plain values.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// HTTPOptions are what ServeHTTP serves and how.
type HTTPOptions struct {
	// Server answers every MCP request, for every client: the handler is
	// stateless (adr/0015). ServeHTTP adds a middleware to it (the legacy
	// clients' cancellation), so it serves one listener.
	Server *mcp.Server
	// Token, when set, is the bearer token every request but /healthz must
	// carry.
	Token  string
	Limits Limits
	// MaxBodySetting and BodyTimeoutSetting name, in the 413 and 408
	// answers, the settings that raise Limits.MaxBodyBytes and
	// Limits.BodyTimeout.
	MaxBodySetting, BodyTimeoutSetting string
	// Metrics serves /metrics (behind the same Host and Origin checks as
	// /mcp); Registry takes the http server's own series.
	Metrics  http.Handler
	Registry prometheus.Registerer
	// ShutdownGrace is how long the requests in flight (tool calls) get
	// to finish once ctx ends.
	ShutdownGrace time.Duration
	// Logger takes the server's own events; SDKLogger, the go-sdk
	// handler's.
	Logger    zerolog.Logger
	SDKLogger *slog.Logger
}

// ServeHTTP serves MCP over Streamable HTTP at /mcp, with /metrics and
// /healthz, on ln until ctx ends, then shuts down gracefully: the listener
// closes at once and requests in flight (tool calls) get up to
// o.ShutdownGrace to finish. There are no sessions or event streams to
// close: every request is served on its own (adr/0015).
func ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	inflight := &inflightCalls{}
	m := newHTTPMetrics(o.Registry, inflight)
	ln2 := limitListener(ln, o.Limits, m.connectionsRefused)
	ln2.evict, ln2.evicted = o.Token != "", m.connectionsEvicted
	srv := &http.Server{
		Handler:           newHTTPHandler(&o, inflight, m),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		// Keep-alive connections are closed after this much idleness, so
		// idle clients cannot hold descriptors and connection slots forever.
		IdleTimeout:    o.Limits.IdleTimeout,
		MaxHeaderBytes: httpMaxHeaderBytes,
		ConnState:      ln2.connState,
		ConnContext:    withConn,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln2) }()

	select {
	case err := <-served:
		return fmt.Errorf("http server stopped: %w", err)
	case <-ctx.Done():
	}
	o.Logger.Info().Int("calls_in_flight", inflight.count()).Dur("grace", o.ShutdownGrace).
		Msg("signal received: no new connections, finishing calls in flight")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		o.Logger.Warn().Int("calls_in_flight", inflight.count()).Msg("calls still running at the deadline; closing them")
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	o.Logger.Info().Msg("stac-mcp stopped")
	return nil
}

// newHTTPHandler routes /mcp, /metrics and /healthz. Every request is
// served by the one o.Server (one reliability layer behind it: budgets,
// breakers, cache, per-host bulkheads). Checks run outermost first: bearer
// token, then Host (DNS rebinding) and Origin, then (on /mcp) the body's
// deadline and size cap. The MCP handler is stateless, so it serves every
// protocol revision from 2025-03-26 to 2026-07-28 and any replica can
// answer any request (adr/0015); legacySessions gives the pre-2026 clients
// their session ids and cancellation.
func newHTTPHandler(o *HTTPOptions, inflight *inflightCalls, m *httpMetrics) http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return o.Server },
		&mcp.StreamableHTTPOptions{
			Stateless: true,
			// A 2026-07-28 client cancels a call by closing its request.
			PropagateRequestCancellation: true,
			MaxRequestBodyBytes:          o.Limits.MaxBodyBytes,
			Logger:                       o.SDKLogger,
		})
	o.Server.AddReceivingMiddleware(cancelOnClientRequest)
	mux := http.NewServeMux()
	mux.Handle("/mcp", inflight.track(rejectForeignHost(rejectForeignOrigin(
		boundRequestBody(o.Limits, o.MaxBodySetting, o.BodyTimeoutSetting, m.sessions.wrap(mcpHandler))))))
	mux.Handle("/metrics", guardMetrics(o.Metrics))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return requireBearerToken(o.Token, mux)
}

// httpMetrics are the http server's own series, on the layer's registry,
// and the legacy sessions, which count requests by protocol revision.
type httpMetrics struct {
	connectionsRefused prometheus.Counter
	connectionsEvicted prometheus.Counter
	sessions           *legacySessions
}

func newHTTPMetrics(reg prometheus.Registerer, inflight *inflightCalls) *httpMetrics {
	m := &httpMetrics{
		connectionsRefused: prometheus.NewCounter(prometheus.CounterOpts{Name: "http_connections_refused_total",
			Help: "Connections closed at once because their address had STAC_MCP_HTTP_MAX_CONNS_PER_IP open."}),
		connectionsEvicted: prometheus.NewCounter(prometheus.CounterOpts{Name: "http_connections_evicted_total",
			Help: "Idle or new connections that had not proven the bearer token, closed to give their slot to a new client at STAC_MCP_HTTP_MAX_CONNS."}),
		sessions: newLegacySessions(reg),
	}
	busy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "http_requests_in_flight",
		Help: "MCP requests (tool calls and others) being served."}, func() float64 { return float64(inflight.count()) })
	reg.MustRegister(m.connectionsRefused, m.connectionsEvicted, busy)
	return m
}

// IsLoopbackHost reports whether host (an IP or "localhost") only accepts
// connections from this machine; "" and 0.0.0.0 listen everywhere.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
