package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stacmcp/stac-mcp/reliability"
)

// defaultHTTPAddr is loopback: a server reachable from other machines must
// be asked for, and then needs a token.
const defaultHTTPAddr = "127.0.0.1:8080"

// runHTTP serves MCP over Streamable HTTP at /mcp, with /metrics and
// /healthz on the same listener, until SIGINT or SIGTERM.
func runHTTP(ctx context.Context, cfg *config, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	addr := cfg.HTTPAddr
	if addr == "" {
		addr = defaultHTTPAddr
	}
	if err := checkHTTPExposure(addr, cfg.HTTPToken); err != nil {
		return err
	}
	a, err := newApp(cfg, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--addr / STAC_MCP_HTTP_ADDR=%q: %v", addr, err)
	}
	l := cfg.HTTP
	a.logger.Info().Str("version", version()).Str("addr", ln.Addr().String()).
		Str("catalog", a.deps.Catalogs.Default()).Bool("token_required", cfg.HTTPToken != "").
		Int("max_connections", l.MaxConns).Int("max_connections_per_ip", l.MaxConnsPerIP).
		Dur("connection_idle", l.IdleTimeout).Bool("stateless", true).Str("cursor_key", cursorKeySource(cfg, a.keepCursorKey != nil)).
		Msg("stac-mcp serving MCP over Streamable HTTP at /mcp")
	if cursorKeySource(cfg, a.keepCursorKey != nil) == "per-process" {
		a.logger.Info().Str("event", "cursor_key_per_process").
			Msg("cursors are signed with a key of this process: they end when it stops, and other replicas refuse them; " +
				"replicas behind a load balancer need the same " + envCursorKey + " (adr/0009)")
	}
	return serveHTTP(ctx, a, ln, cfg)
}

// minRemoteTokenBytes is the shortest token accepted on a listener other
// machines can reach: 16 random bytes are out of reach of guessing over
// the network.
const minRemoteTokenBytes = 16

// checkHTTPExposure refuses a non-loopback address without a token: the
// tools read whatever catalog a caller names, including ones only this
// machine can reach, so an open listener would be an open proxy.
func checkHTTPExposure(addr, token string) error {
	return checkExposure("--addr / STAC_MCP_HTTP_ADDR", addr, token)
}

// checkExposure applies the one rule of every listener (the http server,
// /metrics in stdio mode): off loopback it needs STAC_MCP_HTTP_TOKEN, at
// least minRemoteTokenBytes long.
func checkExposure(setting, addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("%s=%q: want host:port, e.g. %s (%v)", setting, addr, defaultHTTPAddr, err)
	}
	if isLoopbackHost(host) {
		return nil
	}
	if token == "" {
		return usageError("%s=%q is not a loopback address, so it needs a bearer token: "+
			"set STAC_MCP_HTTP_TOKEN to a long random secret (clients send Authorization: Bearer <token>), "+
			"or bind 127.0.0.1", setting, addr)
	}
	if len(token) < minRemoteTokenBytes {
		return usageError("%s=%q is reachable from other machines, and STAC_MCP_HTTP_TOKEN is only %d bytes long: "+
			"use at least %d random bytes, e.g. STAC_MCP_HTTP_TOKEN=\"$(openssl rand -hex 32)\"", setting, addr, len(token), minRemoteTokenBytes)
	}
	return nil
}

// isLoopbackHost reports whether host (an IP or "localhost") only accepts
// connections from this machine; "" and 0.0.0.0 listen everywhere.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveHTTP serves until ctx ends, then shuts down gracefully: the
// listener closes at once and requests in flight (tool calls) get up to
// the tool timeout to finish. There are no sessions or event streams to
// close: every request is served on its own (adr/0015).
func serveHTTP(ctx context.Context, a *app, ln net.Listener, cfg *config) error {
	inflight := &inflightCalls{}
	m := newHTTPMetrics(a, inflight)
	// Untrusted clients share this server: one must not see another's hosts.
	a.deps.Shared = true
	srv := &http.Server{
		Handler:           newHTTPHandler(a, cfg, inflight, m),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		// Keep-alive connections are closed after this much idleness, so
		// idle clients cannot hold descriptors and connection slots forever.
		IdleTimeout:    cfg.HTTP.IdleTimeout,
		MaxHeaderBytes: httpMaxHeaderBytes,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(limitListener(ln, cfg.HTTP, m.connectionsRefused)) }()
	if a.keepCursorKey != nil {
		keepCtx, stopKeeping := context.WithCancel(ctx)
		defer stopKeeping()
		go a.keepCursorKey(keepCtx)
	}

	select {
	case err := <-served:
		return fmt.Errorf("http server stopped: %w", err)
	case <-ctx.Done():
	}
	grace := a.deps.Layer.Policy().ToolTimeout + time.Second
	a.logger.Info().Int("calls_in_flight", inflight.count()).Dur("grace", grace).
		Msg("signal received: no new connections, finishing calls in flight")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		a.logger.Warn().Int("calls_in_flight", inflight.count()).Msg("calls still running at the deadline; closing them")
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	a.logger.Info().Msg("stac-mcp stopped")
	return nil
}

// newHTTPHandler routes /mcp, /metrics and /healthz. Every request shares
// a.deps (one reliability layer: budgets, breakers, cache, per-host
// bulkheads). Checks run outermost first: bearer token, then Host (DNS
// rebinding) and Origin, then (on /mcp) the body's deadline and size cap.
// The MCP handler is stateless, so it serves every protocol revision from
// 2025-03-26 to 2026-07-28 and any replica can answer any request
// (adr/0015); legacySessions gives the pre-2026 clients their session ids
// and cancellation.
func newHTTPHandler(a *app, cfg *config, inflight *inflightCalls, m *httpMetrics) http.Handler {
	l := cfg.HTTP
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.server },
		&mcp.StreamableHTTPOptions{
			Stateless: true,
			// A 2026-07-28 client cancels a call by closing its request.
			PropagateRequestCancellation: true,
			MaxRequestBodyBytes:          l.MaxBodyBytes,
			Logger:                       reliability.NewSlogLogger(a.logger.With().Str("component", "http").Logger()),
		})
	a.server.AddReceivingMiddleware(cancelOnClientRequest)
	mux := http.NewServeMux()
	mux.Handle("/mcp", inflight.track(rejectForeignHost(rejectForeignOrigin(boundRequestBody(l, m.sessions.wrap(mcpHandler))))))
	mux.Handle("/metrics", metricsHandler(a))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return requireBearerToken(cfg.HTTPToken, mux)
}

// metricsHandler is /metrics with the same Host and Origin checks as /mcp:
// without a token (loopback) a web page could otherwise read it through
// DNS rebinding.
func metricsHandler(a *app) http.Handler {
	return rejectForeignHost(rejectForeignOrigin(a.deps.Layer.MetricsHandler()))
}

// httpMetrics are the http server's own series, on the layer's registry,
// and the legacy sessions, which count requests by protocol revision.
type httpMetrics struct {
	connectionsRefused prometheus.Counter
	sessions           *legacySessions
}

func newHTTPMetrics(a *app, inflight *inflightCalls) *httpMetrics {
	m := &httpMetrics{
		connectionsRefused: prometheus.NewCounter(prometheus.CounterOpts{Name: "http_connections_refused_total",
			Help: "Connections closed at once because their address had STAC_MCP_HTTP_MAX_CONNS_PER_IP open."}),
		sessions: newLegacySessions(a.deps.Layer.Registry()),
	}
	busy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "http_requests_in_flight",
		Help: "MCP requests (tool calls and others) being served."}, func() float64 { return float64(inflight.count()) })
	a.deps.Layer.Registry().MustRegister(m.connectionsRefused, busy)
	return m
}
