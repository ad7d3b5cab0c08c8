package main

import (
	"context"
	"io"
	"os/signal"
	"syscall"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// runStdio serves MCP over stdin/stdout until the client disconnects or a
// signal arrives. stdout carries only protocol messages.
func runStdio(ctx context.Context, cfg *config, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	a, err := newApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	if cfg.MetricsAddr != "" {
		// The same rule as `stac-mcp http`: off loopback only with the token.
		if err := checkExposure("--metrics-addr / STAC_MCP_METRICS_ADDR", cfg.MetricsAddr, cfg.HTTPToken); err != nil {
			return err
		}
		_, shutdown, err := serveMetrics(cfg.MetricsAddr, a, cfg.HTTPToken)
		if err != nil {
			return usageError("--metrics-addr / STAC_MCP_METRICS_ADDR=%q: %v", cfg.MetricsAddr, err)
		}
		defer shutdown()
	}
	a.logger.Info().Str("version", version()).Str("catalog", redact.Secrets(a.deps.Catalogs.Default())).
		Dur("tool_timeout", cfg.Policy.ToolTimeout).Msg("stac-mcp serving MCP on stdio")
	err = a.server.Run(ctx, transport.NewStdio(stdin, stdout))
	if ctx.Err() != nil {
		a.logger.Info().Msg("stac-mcp stopped by signal")
		return nil
	}
	return err
}

// serveMetrics exposes the reliability layer's Prometheus registry on
// addr, behind token when one is set and the Host and Origin checks of
// /mcp; it returns the bound address and a function that stops it.
func serveMetrics(addr string, a *app, token string) (string, func(), error) {
	return transport.ServeMetrics(addr, a.deps.Layer.MetricsHandler(), token, a.logger)
}
