package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability"
)

// setting is one option that can come from a flag or an environment
// variable; the flag wins. Environment variables exist for every setting
// because MCP hosts (Claude Desktop) pass configuration through "env".
type setting struct {
	flag, env, value, help string
}

// Settings of the server itself.
var (
	setCatalog  = setting{"catalog", "STAC_MCP_CATALOG_URL", "REF", "default catalog: URL, preset name, demo, or path to a catalog.json (default earth-search)"}
	setCeiling  = setting{"max-items-ceiling", "STAC_MCP_MAX_ITEMS_CEILING", "N", "largest max_items a search accepts (default 100)"}
	setHeaders  = setting{"headers", "STAC_MCP_HEADERS", "JSON", `headers sent to the catalog's own origin only, as a JSON object, e.g. {"Authorization":"Bearer …"}`}
	setLogLevel = setting{"log-level", "STAC_MCP_LOG_LEVEL", "LEVEL", "trace, debug, info, warn or error (default info); logs go to stderr"}
	setLogFmt   = setting{"log-format", "STAC_MCP_LOG_FORMAT", "FORMAT", "json (default) or console"}
	setMetrics  = setting{"metrics-addr", "STAC_MCP_METRICS_ADDR", "ADDR", "serve Prometheus /metrics on this address, e.g. 127.0.0.1:9464 (stdio mode; default off)"}
)

// reliabilitySettings are read by reliability.PolicyFromEnv; a flag
// overrides its variable by being looked up first.
var reliabilitySettings = []setting{
	{"tool-timeout-secs", "STAC_MCP_TOOL_TIMEOUT_SECS", "SECS", "deadline of one tool call (default 15)"},
	{"attempt-timeout-secs", "STAC_MCP_ATTEMPT_TIMEOUT_SECS", "SECS", "deadline of one upstream HTTP attempt (default 5)"},
	{"max-attempts", "STAC_MCP_MAX_ATTEMPTS", "N", "attempts per upstream request, first try included (default 3)"},
	{"backoff-base-secs", "STAC_MCP_BACKOFF_BASE_SECS", "SECS", "base of the full-jitter exponential backoff (default 0.4)"},
	{"retry-after-cap-secs", "STAC_MCP_RETRY_AFTER_CAP_SECS", "SECS", "longest Retry-After the server waits for inside a call (default 5)"},
	{"cache-ttl-secs", "STAC_MCP_CACHE_TTL_SECS", "SECS", "how long successful GET answers are reused; 0 disables the cache (default 30)"},
	{"cache-max-bytes", "STAC_MCP_CACHE_MAX_BYTES", "BYTES", "memory bound of the response cache"},
	{"bulkhead-max", "STAC_MCP_BULKHEAD_MAX", "N", "most concurrent upstream requests per catalog host"},
	{"hedge", "STAC_MCP_HEDGE", "MODE", "hedged reads: off (default), on (after the host's p95 latency), or a delay in seconds"},
}

var serverSettings = []setting{setCatalog, setCeiling, setHeaders, setLogLevel, setLogFmt, setMetrics}

// defaultMaxItemsCeiling bounds search_items output for a model's context.
const (
	defaultMaxItems        = 10
	defaultMaxItemsCeiling = 100
	maxItemsCeilingLimit   = 10000
)

// config is the parsed command line and environment.
type config struct {
	Command string   // "", "stdio", "call", "tools", ...
	Args    []string // positional arguments after the command

	Catalog         string
	MaxItemsCeiling int
	Headers         http.Header
	LogLevel        string
	LogFormat       string
	MetricsAddr     string
	Policy          reliability.Policy

	Text, JSON, Help, Version bool
}

// loadConfig parses args (flags may come before or after the command and
// its arguments) and the environment; flags win over variables. Invalid
// values are errors that name the flag or variable, the value and what is
// accepted, so the server refuses to start rather than guess.
func loadConfig(args []string, env func(string) (string, bool)) (*config, error) {
	fs := flag.NewFlagSet("stac-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	values := map[string]*string{}
	for _, s := range append(append([]setting(nil), serverSettings...), reliabilitySettings...) {
		values[s.env] = fs.String(s.flag, "", s.help)
	}
	cfg := &config{}
	fs.BoolVar(&cfg.Text, "text", false, "call: print the text block instead of the structured JSON")
	fs.BoolVar(&cfg.JSON, "json", false, "tools: print the full tool definitions (schemas, annotations) as JSON")
	fs.BoolVar(&cfg.Help, "help", false, "show this help")
	fs.BoolVar(&cfg.Help, "h", false, "show this help")
	fs.BoolVar(&cfg.Version, "version", false, "print the version")

	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError("%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) > 0 {
		cfg.Command, cfg.Args = positional[0], positional[1:]
	}

	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	lookup := func(s setting) (string, string, bool) {
		if set[s.flag] {
			return *values[s.env], "--" + s.flag, true
		}
		v, ok := env(s.env)
		return strings.TrimSpace(v), s.env, ok && strings.TrimSpace(v) != ""
	}

	if v, _, ok := lookup(setCatalog); ok {
		cfg.Catalog = v
	}
	cfg.MaxItemsCeiling = defaultMaxItemsCeiling
	if v, name, ok := lookup(setCeiling); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxItemsCeilingLimit {
			return nil, usageError("%s=%q: want a whole number from 1 to %d", name, v, maxItemsCeilingLimit)
		}
		cfg.MaxItemsCeiling = n
	}
	if v, name, ok := lookup(setHeaders); ok {
		h, err := parseHeaders(v)
		if err != nil {
			return nil, usageError("%s: %v", name, err)
		}
		cfg.Headers = h
	}
	cfg.LogLevel, _, _ = lookup(setLogLevel)
	cfg.LogFormat, _, _ = lookup(setLogFmt)
	if _, err := reliability.NewLogger(cfg.LogLevel, cfg.LogFormat, io.Discard); err != nil {
		return nil, usageError("%v", err)
	}
	cfg.MetricsAddr, _, _ = lookup(setMetrics)

	policy, err := reliability.PolicyFromEnv(func(name string) (string, bool) {
		for _, s := range reliabilitySettings {
			if s.env == name {
				v, _, ok := lookup(s)
				return v, ok
			}
		}
		return env(name)
	})
	if err != nil {
		for _, s := range reliabilitySettings {
			if set[s.flag] && strings.Contains(err.Error(), s.env) {
				return nil, usageError("--%s: %v", s.flag, err)
			}
		}
		return nil, usageError("%v", err)
	}
	cfg.Policy = policy
	return cfg, nil
}

// parseHeaders reads {"Name": "value", ...}.
func parseHeaders(v string) (http.Header, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf(`got %q: want a JSON object of header names to string values, e.g. {"Authorization":"Bearer TOKEN"} (%v)`, truncate(v, 60), err)
	}
	h := http.Header{}
	for k, val := range m {
		if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " :\r\n") || strings.ContainsAny(val, "\r\n") {
			return nil, fmt.Errorf("header %q: names must be non-empty tokens without spaces or colons, values single-line", k)
		}
		h.Set(k, val)
	}
	return h, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
