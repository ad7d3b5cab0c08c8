package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// defaultHTTPAddr is loopback: a server reachable from other machines must
// be asked for, and then needs a token.
const defaultHTTPAddr = "127.0.0.1:8080"

// httpSessionIdleTimeout closes sessions whose client went away without
// a DELETE, so abandoned sessions do not pile up in a long-lived server.
const httpSessionIdleTimeout = 30 * time.Minute

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
	a.logger.Info().Str("version", version()).Str("addr", ln.Addr().String()).
		Str("catalog", a.deps.Catalogs.Default()).Bool("token_required", cfg.HTTPToken != "").
		Msg("stac-mcp serving MCP over Streamable HTTP at /mcp")
	return serveHTTP(ctx, a, ln, cfg.HTTPToken)
}

// checkHTTPExposure refuses a non-loopback address without a token: the
// tools read whatever catalog a caller names, including ones only this
// machine can reach, so an open listener would be an open proxy.
func checkHTTPExposure(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("--addr / STAC_MCP_HTTP_ADDR=%q: want host:port, e.g. %s (%v)", addr, defaultHTTPAddr, err)
	}
	if token == "" && !isLoopbackHost(host) {
		return usageError("--addr / STAC_MCP_HTTP_ADDR=%q is not a loopback address, so it needs a bearer token: "+
			"set STAC_MCP_HTTP_TOKEN to a long random secret (clients send Authorization: Bearer <token>), "+
			"or bind 127.0.0.1", addr)
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
// listener closes at once, tool calls in flight get up to the tool
// timeout to finish, and then the MCP sessions (and their open event
// streams) are closed.
func serveHTTP(ctx context.Context, a *app, ln net.Listener, token string) error {
	inflight := &inflightCalls{}
	srv := &http.Server{
		Handler:           newHTTPHandler(a, token, inflight),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("http server stopped: %w", err)
	case <-ctx.Done():
	}
	grace := a.deps.Layer.Policy().ToolTimeout + time.Second
	a.logger.Info().Int("calls_in_flight", inflight.count()).Dur("grace", grace).
		Msg("signal received: no new connections, finishing calls in flight")
	// Shutdown closes the listener now and waits for active connections;
	// open GET event streams never go idle, so it runs alongside the wait
	// for calls and is bounded by the same deadline.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- srv.Shutdown(shutdownCtx) }()
	if !inflight.waitIdle(shutdownCtx) {
		a.logger.Warn().Int("calls_in_flight", inflight.count()).Msg("calls still running at the deadline; closing them")
	}
	for ss := range a.server.Sessions() {
		_ = ss.Close()
	}
	if err := <-shutdownDone; err != nil {
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	a.logger.Info().Msg("stac-mcp stopped")
	return nil
}

// newHTTPHandler routes /mcp, /metrics and /healthz. Every server session
// shares a.deps (one reliability layer: budgets, breakers, cache,
// per-host bulkheads). Checks run outermost first: bearer token, then
// Origin, then the SDK's Host (DNS-rebinding) check.
func newHTTPHandler(a *app, token string, inflight *inflightCalls) http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.server },
		&mcp.StreamableHTTPOptions{SessionTimeout: httpSessionIdleTimeout, Logger: slog.New(zerolog.NewSlogHandler(a.logger.With().Str("component", "http").Logger()))})
	mux := http.NewServeMux()
	mux.Handle("/mcp", inflight.track(rejectForeignOrigin(mcpHandler)))
	mux.Handle("/metrics", a.deps.Layer.MetricsHandler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return requireBearerToken(token, mux)
}
