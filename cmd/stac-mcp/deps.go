package main

import (
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

// app is the process-wide wiring shared by every command.
type app struct {
	deps   *tools.Deps
	server *mcp.Server
	logger zerolog.Logger
}

// newApp builds the reliability layer, the catalogs and the MCP server. The
// default catalog reference is checked now (without loading or contacting
// it), so a typo refuses to start instead of failing every tool call.
func newApp(cfg *config, stderr io.Writer) (*app, error) {
	level := cfg.LogLevel
	if level == "" && cfg.Command != "" && cfg.Command != "stdio" && cfg.Command != "http" {
		// A person running call or tools wants the answer, not logs; a tool
		// error is printed on stderr anyway.
		level = "error"
	}
	logger, err := reliability.NewLogger(level, cfg.LogFormat, stderr)
	if err != nil {
		return nil, usageError("%v", err)
	}
	warn := logger
	if cfg.LogLevel == "" && logger.GetLevel() > zerolog.WarnLevel {
		warn = logger.Level(zerolog.WarnLevel) // call and tools still show these
	}
	for _, w := range cfg.UnknownEnv {
		warn.Warn().Str("event", "unknown_setting").Msg(w)
	}
	layer := reliability.New(cfg.Policy, reliability.Options{Logger: &logger})
	catalogs := tools.NewCatalogs(tools.CatalogsOptions{
		Default:    cfg.Catalog,
		HTTPClient: layer.HTTPClient(),
		Headers:    cfg.Headers,
		Named:      cfg.NamedCatalogs,
		UserAgent:  "stac-mcp/" + version(),
		WrapDemo:   demoFaults(cfg.DemoFaultRate, cfg.DemoFaultSeed, &logger),
	})
	if err := catalogs.Check(""); err != nil {
		_ = catalogs.Close()
		return nil, usageError("--catalog / STAC_MCP_CATALOG_URL: %v", err)
	}
	// The configured catalogs keep their reliability state and their own
	// metrics label however many other hosts callers name.
	layer.PinHosts(tools.OperatorHosts(catalogs)...)
	var names []string
	for _, t := range tools.Inventory() {
		names = append(names, t.Def.Name)
	}
	layer.DeclareTools(names...)
	deps := &tools.Deps{
		Layer:     layer,
		Catalogs:  catalogs,
		Limits:    tools.Limits{MaxItemsDefault: min(defaultMaxItems, cfg.MaxItemsCeiling), MaxItemsCeiling: cfg.MaxItemsCeiling},
		Logger:    logger,
		CursorKey: cursorKeyFor(cfg, logger),
	}
	return &app{deps: deps, server: tools.NewServer(deps, version()), logger: logger}, nil
}

func (a *app) close() {
	if err := a.deps.Catalogs.Close(); err != nil {
		a.logger.Warn().Err(err).Msg("closing in-process catalogs")
	}
}

// openInProcessSession builds the app and connects a client to it in
// process: the set-up the one-shot CLI commands (call, tools) share. The
// returned func closes the session, then the app.
func openInProcessSession(ctx context.Context, cfg *config, stderr io.Writer) (*mcp.ClientSession, func(), error) {
	a, err := newApp(cfg, stderr)
	if err != nil {
		return nil, nil, err
	}
	cs, closeSession, err := a.connectInProcess(ctx)
	if err != nil {
		a.close()
		return nil, nil, err
	}
	return cs, func() {
		closeSession()
		a.close()
	}, nil
}

// connectInProcess connects a client to the server over the SDK's in-memory
// transport, so `call` and `tools` see exactly what an MCP client sees
// (schema validation, structuredContent, isError, _meta).
func (a *app) connectInProcess(ctx context.Context) (*mcp.ClientSession, func(), error) {
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := a.server.Connect(ctx, serverT, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("starting the in-process server: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "stac-mcp-cli", Version: version()}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		_ = ss.Close()
		return nil, nil, fmt.Errorf("connecting to the in-process server: %w", err)
	}
	return cs, func() {
		_ = cs.Close()
		_ = ss.Wait()
	}, nil
}
