package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/reliability/redact"
	"github.com/stacmcp/stac-mcp/reliability/sharedstate"
	"github.com/stacmcp/stac-mcp/tools"
	"github.com/stacmcp/stac-mcp/tools/advice"
)

// app is the process-wide wiring shared by every command.
type app struct {
	deps   *tools.Deps
	server *mcp.Server
	logger zerolog.Logger
	// shared is the state replicas share (STAC_MCP_REDIS_URL), or nil.
	shared *sharedstate.Store
	// keepCursorKey, when set, runs while http serves: it keeps the cursor
	// key the replicas share in Redis (see sharedCursorKey).
	keepCursorKey func(ctx context.Context)
}

// newApp builds the reliability layer, the catalogs and the MCP server. The
// default catalog reference is checked now (without loading or contacting
// it), so a typo refuses to start instead of failing every tool call.
func newApp(ctx context.Context, cfg *config, stderr io.Writer) (*app, error) {
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
	for _, w := range cfg.Retired {
		warn.Warn().Str("event", "retired_setting").Msg(w)
	}
	// --read-only wins over --allow-writes: no write tool, no idempotency
	// store, no writable local catalog.
	selection := cfg.Surface
	selection.WritesAllowed = cfg.AllowWrites
	surface, err := tools.NewSurface(tools.Candidates(cfg.writes()), selection)
	if err != nil {
		return nil, usageError("--toolsets / --tools: %v", err)
	}
	shared, err := openShared(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	opts := reliability.Options{Logger: &logger, Network: networkPolicy(cfg), Advice: advice.Next}
	if shared != nil {
		opts.Shared = shared
	}
	layer := reliability.New(cfg.Policy, opts)
	// On the layer's registry, so /metrics (http and --metrics-addr) shows
	// which build is answering beside the reliability counters.
	layer.Registry().MustRegister(build().collector())
	catalogs := tools.NewCatalogs(tools.CatalogsOptions{
		Default:          cfg.Catalog,
		HTTPClient:       layer.HTTPClient(),
		Headers:          cfg.Headers,
		CatalogHeaders:   cfg.CatalogHeaders,
		Named:            cfg.NamedCatalogs,
		Groups:           cfg.CatalogGroups,
		UserAgent:        "stac-mcp/" + version(),
		UntrustedCallers: cfg.Command == "http",
		WrapDemo:         demoFaults(cfg.DemoFaultRate, cfg.DemoFaultSeed, &logger),
		WritableLocal:    cfg.writes(),
	})
	closeShared := func() {
		if shared != nil {
			_ = shared.Close()
		}
	}
	if err := catalogs.Check(""); err != nil {
		_ = catalogs.Close()
		closeShared()
		return nil, usageError("--catalog / STAC_MCP_CATALOG_URL: %v", err)
	}
	writes, err := openWrites(ctx, cfg, logger)
	if err != nil {
		_ = catalogs.Close()
		closeShared()
		return nil, err
	}
	// The configured catalogs keep their reliability state and their own
	// metrics label however many other hosts callers name.
	layer.PinHosts(catalogs.OperatorHosts()...)
	var names []string
	for _, t := range tools.Tools(&tools.Deps{Writes: writes}) {
		names = append(names, t.Def.Name)
	}
	layer.DeclareTools(names...)
	if cfg.Command == "" || cfg.Command == "stdio" || cfg.Command == "http" {
		if err := loadConfiguredCatalogs(ctx, catalogs, cfg.Policy.ToolTimeout, &logger); err != nil {
			_ = catalogs.Close()
			closeShared()
			if writes != nil {
				_ = writes.Store.Close()
			}
			return nil, err
		}
	}
	a := &app{logger: logger, shared: shared}
	cursorKey := cursorKeyFor(cfg, logger)
	if cursorKey == nil && cfg.Command == "http" && shared != nil {
		cursorKey, a.keepCursorKey = sharedCursorKey(ctx, shared, logger)
	}
	a.deps = &tools.Deps{
		Surface:  surface,
		Layer:    layer,
		Catalogs: catalogs,
		Limits: tools.Limits{MaxItemsDefault: min(defaultMaxItems, cfg.MaxItemsCeiling), MaxItemsCeiling: cfg.MaxItemsCeiling,
			DecodePixels: cfg.DecodePixels, ReadPixels: cfg.ReadPixels, MaxCatalogs: cfg.MaxCatalogs},
		Logger:    logger,
		CursorKey: cursorKey,
		Writes:    writes,
		Export:    cfg.Export,
	}
	if shared != nil && cfg.Command == "http" {
		// Any replica answers resources/read: the exports live in Redis.
		a.deps.Export.Shared = shared
	}
	a.server = tools.NewServer(a.deps, version())
	return a, nil
}

// openShared connects to the Redis the replicas share their reliability
// state in (STAC_MCP_REDIS_URL); nil without one. A Redis that does not
// answer at startup is not fatal: the layer uses this process's own state
// until it does (adr/0016).
func openShared(ctx context.Context, cfg *config, logger zerolog.Logger) (*sharedstate.Store, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	sharedstate.SetRedisLogger(logger)
	store, err := sharedstate.Open(cfg.RedisURL)
	if err != nil {
		return nil, usageError("--redis-url / STAC_MCP_REDIS_URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ev := logger.Info()
	if err := store.Ping(ctx); err != nil {
		ev = logger.Warn().Err(err)
	}
	ev.Str("event", "shared_state").Str("redis", redact.URL(cfg.RedisURL)).
		Msg("replicas share the response cache, retry budgets and circuit breakers in Redis (each uses its own while Redis does not answer)")
	return store, nil
}

// networkPolicy is the dial policy of the transport: over http, clients
// are not trusted to choose private addresses, so only what the operator
// configured (catalogs, STAC_MCP_ALLOWED_CATALOG_HOSTS) is reachable there,
// unless STAC_MCP_ALLOW_PRIVATE_NETWORKS. stdio and the one-shot commands
// run for the person who started them: anything goes.
func networkPolicy(cfg *config) reliability.NetworkPolicy {
	if cfg.Command != "http" || cfg.AllowPrivate {
		return reliability.NetworkPolicy{}
	}
	hosts := append([]string(nil), cfg.AllowedHosts...)
	configured := []string{cfg.Catalog}
	for _, p := range cfg.NamedCatalogs {
		configured = append(configured, p.URL)
	}
	for _, raw := range configured {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			continue
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		hosts = append(hosts, net.JoinHostPort(strings.ToLower(u.Hostname()), port)) // that port only
	}
	return reliability.NetworkPolicy{DenyPrivate: true, AllowedHosts: hosts}
}

// loadConfiguredCatalogs loads the operator's local static catalogs at
// startup and logs what each skipped; a default catalog that cannot load
// refuses to start, a named one is logged as an error (its calls fail with
// the same message).
func loadConfiguredCatalogs(ctx context.Context, catalogs *tools.Catalogs, timeout time.Duration, logger *zerolog.Logger) error {
	loadCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results := catalogs.LoadConfigured(loadCtx)
	if err := ctx.Err(); err != nil {
		return err // stopped (SIGINT, SIGTERM) while loading: not the catalog's fault
	}
	for _, res := range results {
		if res.Err != nil {
			if res.Default {
				return usageError("--catalog / STAC_MCP_CATALOG_URL: the local catalog cannot be served: %v", res.Err)
			}
			logger.Error().Str("event", "catalog_load_failed").Str("catalog", res.Ref).Err(res.Err).
				Msg("a configured local catalog cannot be loaded; calls naming it will fail until it is fixed")
			continue
		}
		for _, n := range res.Notes {
			logger.Warn().Str("event", "catalog_load_skipped").Str("catalog", res.Ref).Str("note", n).
				Msg("loading a local catalog skipped something")
		}
		logger.Info().Str("event", "catalog_loaded").Str("catalog", res.Ref).Int("skipped", len(res.Notes)).Msg("local catalog loaded")
	}
	return nil
}

// openWrites opens the idempotency store when writes are allowed: Redis
// when STAC_MCP_REDIS_URL is set (replicas share it), else SQLite in the
// state directory. nil without --allow-writes: no write tool is listed.
func openWrites(ctx context.Context, cfg *config, logger zerolog.Logger) (*tools.Writes, error) {
	if !cfg.writes() {
		return nil, nil
	}
	opts := idempotency.Options{TTL: cfg.IdempotencyTTL}
	if cfg.RedisURL != "" {
		store, err := idempotency.OpenRedis(cfg.RedisURL, opts)
		if err != nil {
			return nil, usageError("--redis-url / STAC_MCP_REDIS_URL: %v", err)
		}
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := store.Ping(ctx); err != nil {
			// Reads do not need Redis; writes refuse (nothing sent) until it answers.
			logger.Warn().Str("redis", redact.URL(cfg.RedisURL)).Err(err).
				Msg("the idempotency store (Redis) does not answer: write tools will refuse until it does")
		}
		logger.Info().Str("redis", redact.URL(cfg.RedisURL)).Msg("writes allowed; idempotency records in Redis")
		return &tools.Writes{Store: store}, nil
	}
	if cfg.StateDir == "" {
		return nil, usageError("--allow-writes needs a directory for its idempotency store, and no home directory is known: set --state-dir / STAC_MCP_STATE_DIR")
	}
	store, err := idempotency.OpenSQLite(ctx, cfg.StateDir, opts)
	if err != nil {
		return nil, fmt.Errorf("--state-dir / STAC_MCP_STATE_DIR: %w", err)
	}
	logger.Info().Str("store", store.Path()).Msg("writes allowed; idempotency records in SQLite")
	return &tools.Writes{Store: store}, nil
}

func (a *app) close() {
	a.deps.CloseExports()
	if err := a.deps.Catalogs.Close(); err != nil {
		a.logger.Warn().Err(err).Msg("closing in-process catalogs")
	}
	if a.shared != nil {
		_ = a.shared.Close()
	}
	if w := a.deps.Writes; w != nil {
		if err := w.Store.Close(); err != nil {
			a.logger.Warn().Err(err).Msg("closing the idempotency store")
		}
	}
}

// openInProcessSession builds the app and connects a client to it in
// process: the set-up the one-shot CLI commands (call, tools) share. The
// returned func closes the session, then the app.
func openInProcessSession(ctx context.Context, cfg *config, stderr io.Writer) (*mcp.ClientSession, func(), error) {
	a, err := newApp(ctx, cfg, stderr)
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

// writes reports whether the write tools are on: --allow-writes without
// --read-only.
func (cfg *config) writes() bool { return cfg.AllowWrites && !cfg.Surface.ReadOnly }
