package main

import (
	"context"
	"io"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// runHTTP serves MCP over Streamable HTTP at /mcp, with /metrics and
// /healthz on the same listener, until SIGINT or SIGTERM.
func runHTTP(ctx context.Context, cfg *config, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	addr := cfg.HTTPAddr
	if addr == "" {
		addr = settings.DefaultHTTPAddr
	}
	if err := checkHTTPExposure(addr, cfg.HTTPToken); err != nil {
		return err
	}
	a, err := newApp(ctx, cfg, stderr)
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
		Str("catalog", redact.Secrets(a.deps.Catalogs.Default())).Bool("token_required", cfg.HTTPToken != "").
		Int("max_connections", l.MaxConns).Int("max_connections_per_ip", l.MaxConnsPerIP).
		Dur("connection_idle", l.IdleTimeout).Bool("stateless", true).Str("cursor_key", cursorKeySource(cfg, a.keepCursorKey != nil)).
		Msg("stac-mcp serving MCP over Streamable HTTP at /mcp")
	if cursorKeySource(cfg, a.keepCursorKey != nil) == "per-process" {
		a.logger.Info().Str("event", "cursor_key_per_process").
			Msg("cursors are signed with a key of this process: they end when it stops, and other replicas refuse them; " +
				"replicas behind a load balancer need the same " + settings.EnvCursorKey + " (adr/0009)")
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
		return usageError("%s=%q: want host:port, e.g. %s (%v)", setting, addr, settings.DefaultHTTPAddr, err)
	}
	if transport.IsLoopbackHost(host) {
		return nil
	}
	if len(transport.Tokens(token)) == 0 {
		return usageError("%s=%q is not a loopback address, so it needs a bearer token: "+
			"set STAC_MCP_HTTP_TOKEN to a long random secret (clients send Authorization: Bearer <token>), "+
			"or bind 127.0.0.1", setting, addr)
	}
	for i, t := range transport.Tokens(token) {
		if len(t) < minRemoteTokenBytes {
			return usageError("%s=%q is reachable from other machines, and token %d of STAC_MCP_HTTP_TOKEN is only %d bytes long: "+
				"use at least %d random bytes, e.g. STAC_MCP_HTTP_TOKEN=\"$(openssl rand -hex 32)\"", setting, addr, i+1, len(t), minRemoteTokenBytes)
		}
	}
	return nil
}

// serveHTTP serves a's MCP server on ln until ctx ends (internal/transport
// does the serving), with what http mode adds to the app: the callers are
// untrusted and share the server, and the cursor key the replicas share is
// kept in Redis while it serves.
func serveHTTP(ctx context.Context, a *app, ln net.Listener, cfg *config) error {
	// Untrusted clients share this server: one must not see another's hosts.
	a.deps.Shared = true
	if a.keepCursorKey != nil {
		keepCtx, stopKeeping := context.WithCancel(ctx)
		defer stopKeeping()
		go a.keepCursorKey(keepCtx)
	}
	return transport.ServeHTTP(ctx, ln, transport.HTTPOptions{
		Server:             a.server,
		Token:              cfg.HTTPToken,
		Limits:             cfg.HTTP,
		MaxBodySetting:     settings.HTTPMaxBody.Env,
		BodyTimeoutSetting: settings.HTTPBodyTimeout.Env,
		Metrics:            a.deps.Layer.MetricsHandler(),
		Registry:           a.deps.Layer.Registry(),
		ShutdownGrace:      a.deps.Layer.Policy().ToolTimeout + time.Second,
		Logger:             a.logger,
		SDKLogger:          reliability.NewSlogLogger(a.logger.With().Str("component", "http").Logger()),
	})
}
