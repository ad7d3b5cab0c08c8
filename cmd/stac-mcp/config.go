package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/tools"
)

// setting is one option that can come from a flag or an environment
// variable; the flag wins. Environment variables exist for every setting
// because MCP hosts (Claude Desktop) pass configuration through "env".
type setting struct {
	flag, env, value, help string
}

// booleanSettings are flags without a value (--allow-writes; also
// --allow-writes=false); their variables take true or false.
var booleanSettings = map[string]bool{setAllowWrites.env: true, setReadOnly.env: true}

// Settings of the server itself.
var (
	setCatalog    = setting{"catalog", "STAC_MCP_CATALOG_URL", "REF", "default catalog: URL, preset name, demo, or path to a catalog.json (default earth-search)"}
	setCeiling    = setting{"max-items-ceiling", "STAC_MCP_MAX_ITEMS_CEILING", "N", "largest max_items a search accepts (default 100)"}
	setHeaders    = setting{"headers", "STAC_MCP_HEADERS", "HEADERS", `headers sent to the default catalog's own origin only (never to another catalog, never logged): Name=value pairs separated by ';' or newlines, e.g. "Authorization=Bearer abc;X-Api-Key=k", or a JSON object {"Authorization":"Bearer abc"}; other catalogs: STAC_MCP_CATALOG_HEADERS_<NAME>`}
	setCatalogs   = setting{"catalogs", "STAC_MCP_CATALOGS", "LIST", "extra catalogs by name, usable wherever a preset name is: name=url or name=path pairs separated by ',', ';' or newlines, e.g. internal=https://stac.internal.example/v1,archive=/srv/stac/catalog.json (a path is absolute, starts with '.', or is file://; over http the only way to serve a local catalog besides --catalog)"}
	setAllowPriv  = setting{"allow-private-networks", "STAC_MCP_ALLOW_PRIVATE_NETWORKS", "BOOL", "http: let catalog_url, next links, redirects and asset probes reach loopback, private and link-local addresses (default false; stdio always may)"}
	setAllowHosts = setting{"allowed-catalog-hosts", "STAC_MCP_ALLOWED_CATALOG_HOSTS", "LIST", "http: hosts reachable even when private: names, IPs or CIDR prefixes separated by ',', e.g. stac.internal.example,10.20.0.0/16 (configured catalogs are always reachable)"}
	setHTTPAddr   = setting{"addr", "STAC_MCP_HTTP_ADDR", "ADDR", "http: listen address (default " + defaultHTTPAddr + "); a non-loopback address needs STAC_MCP_HTTP_TOKEN"}
	setLogLevel   = setting{"log-level", "STAC_MCP_LOG_LEVEL", "LEVEL", "trace, debug, info, warn or error (default info); logs go to stderr"}
	setLogFmt     = setting{"log-format", "STAC_MCP_LOG_FORMAT", "FORMAT", "json (default) or console"}
	setDemoFaults = setting{"demo-fault-rate", "STAC_MCP_DEMO_FAULT_RATE", "RATE", "demo catalog only: inject transient faults (5xx, resets, 429) into this fraction of upstream attempts, to watch retries happen (0 to 0.9; default off)"}
	setDemoSeed   = setting{"demo-fault-seed", "STAC_MCP_DEMO_FAULT_SEED", "N", "seed of the demo fault schedule, to replay a run (default: from the clock, logged at startup)"}
	setToolsets   = setting{"toolsets", "STAC_MCP_TOOLSETS", "LIST", "toolsets to list, separated by ',': all (default), discover, search, size, visual, ops, write (write needs --allow-writes); each listed tool costs the model context"}
	setTools      = setting{"tools", "STAC_MCP_TOOLS", "LIST", "single tools to list besides --toolsets, separated by ',', e.g. search_items,get_item; alone, only these are listed"}
	setReadOnly   = setting{"read-only", "STAC_MCP_READ_ONLY", "", "list no tool that changes a catalog, even with --allow-writes (default false)"}
	setMetrics    = setting{"metrics-addr", "STAC_MCP_METRICS_ADDR", "ADDR", "serve Prometheus /metrics on this address, e.g. 127.0.0.1:9464 (stdio mode; default off); like --addr, a non-loopback address needs STAC_MCP_HTTP_TOKEN"}

	// Writes (adr/0014-idempotent-writes.md).
	setAllowWrites = setting{"allow-writes", "STAC_MCP_ALLOW_WRITES", "", "add the write tools (create_item, update_item, delete_item, create_collection, update_collection) for catalogs that declare the STAC Transaction extension and for local catalog.json files; true or false (default false: read-only)"}
	setStateDir    = setting{"state-dir", "STAC_MCP_STATE_DIR", "DIR", "directory of the idempotency store (idempotency.db, with --allow-writes) and of cursor.key (stdio and call); default: the user's state directory, $XDG_STATE_HOME/stac-mcp or ~/.local/state/stac-mcp"}
	setIdemTTL     = setting{"idempotency-ttl-secs", "STAC_MCP_IDEMPOTENCY_TTL_SECS", "SECS", "how long a write's outcome answers repeats of its idempotency key (default 86400, 24 h; 60 to 2592000)"}
	setRedisURL    = setting{"redis-url", "STAC_MCP_REDIS_URL", "URL", "Redis shared by replicas, redis://host:6379/0 (rediss:// for TLS): they share the response cache, retry budgets and circuit breakers there (each uses its own while Redis does not answer), http replicas without STAC_MCP_CURSOR_KEY their cursor key, and with --allow-writes the idempotency records. Put a password in the environment variable, not the flag (command lines are visible to every user)"}
)

// reliabilitySettings are read by reliability.PolicyFromEnv; a flag
// overrides its variable by being looked up first.
var reliabilitySettings = []setting{
	{"tool-timeout-secs", "STAC_MCP_TOOL_TIMEOUT_SECS", "SECS", "deadline of one tool call, all attempts, waits and pages included: 1 to 3600 (default 15)"},
	{"attempt-timeout-secs", "STAC_MCP_ATTEMPT_TIMEOUT_SECS", "SECS", "deadline of one upstream HTTP attempt but the last of a read, which gets the rest of the call (default: 4/15 of the tool timeout, i.e. 4)"},
	{"max-attempts", "STAC_MCP_MAX_ATTEMPTS", "N", "attempts per upstream request, first try included (default 3)"},
	{"backoff-base-secs", "STAC_MCP_BACKOFF_BASE_SECS", "SECS", "base of the full-jitter exponential backoff (default 0.4)"},
	{"retry-after-cap-secs", "STAC_MCP_RETRY_AFTER_CAP_SECS", "SECS", "longest Retry-After the server waits for inside a call (default 5)"},
	{"cache-ttl-secs", "STAC_MCP_CACHE_TTL_SECS", "SECS", "how long successful GET answers are reused; 0 disables the cache (default 30)"},
	{"cache-max-bytes", "STAC_MCP_CACHE_MAX_BYTES", "BYTES", "memory bound of the response cache (default 33554432, i.e. 32 MiB)"},
	{"bulkhead-max", "STAC_MCP_BULKHEAD_MAX", "N", "most concurrent upstream requests per catalog host (default 16)"},
	{"max-hosts", "STAC_MCP_MAX_HOSTS", "N", "most catalog hosts whose reliability state (breaker, retry budget, health) is kept besides the configured catalogs; the least recently used idle one is forgotten past it (default 512)"},
	{"body-budget-bytes", "STAC_MCP_BODY_BUDGET_BYTES", "BYTES", "memory bound of upstream response bodies being read at once, across all calls; past it reads wait, then are refused (default 268435456, 256 MiB)"},
	{"hedge", "STAC_MCP_HEDGE", "MODE", "hedged reads: off (default), on (after the host's p95 latency), or a delay in seconds"},
}

var serverSettings = []setting{setCatalog, setCatalogs, setCeiling, setHeaders, setToolsets, setTools, setReadOnly, setLogLevel, setLogFmt, setMetrics,
	setHTTPAddr, setAllowPriv, setAllowHosts, setDemoFaults, setDemoSeed, setAllowWrites, setStateDir, setIdemTTL, setRedisURL}

// flagSettings are every setting that has a flag and a variable: the flags
// loadConfig registers and, with secretSettings, the variables the unknown
// STAC_MCP_* check knows. A new table of settings goes here.
func flagSettings() []setting {
	return slices.Concat(serverSettings, httpSettings, reliabilitySettings, retiredSettings)
}

// envHTTPToken and envCursorKey are secrets, so they have no flag
// (command lines are visible to every user of the machine) and are never
// logged.
const (
	envHTTPToken = "STAC_MCP_HTTP_TOKEN"
	envCursorKey = "STAC_MCP_CURSOR_KEY"
	// minCursorKeyLen: a key shorter than 32 characters is guessable.
	minCursorKeyLen = 32
)

// envCatalogHeaders is the prefix of the per-catalog header variables:
// STAC_MCP_CATALOG_HEADERS_<NAME>, NAME a preset or STAC_MCP_CATALOGS name
// in uppercase with '-' as '_' (tools.HeadersEnvSuffix).
const envCatalogHeaders = "STAC_MCP_CATALOG_HEADERS_"

// secretSettings are read from the environment only.
var secretSettings = []setting{
	{"", envHTTPToken, "SECRET", "http and --metrics-addr: bearer token every request must carry (Authorization: Bearer …); required for a non-loopback address, then at least 16 bytes; enforced whenever set"},
	{"", envCursorKey, "SECRET", "key that signs cursors (at least 32 characters, e.g. openssl rand -hex 32): replicas sharing it continue each other's cursors (default: http replicas with STAC_MCP_REDIS_URL share one kept in Redis, else a random key per http process; stdio and call keep one in the user's state directory)"},
	{"", envCatalogHeaders + "<NAME>", "HEADERS", "headers for one preset or STAC_MCP_CATALOGS catalog, sent to its origin only, same forms as STAC_MCP_HEADERS, e.g. STAC_MCP_CATALOG_HEADERS_INTERNAL=X-Api-Key=k"},
}

// defaultMaxItemsCeiling bounds search_items output for a model's context.
const (
	defaultMaxItems        = 10
	defaultMaxItemsCeiling = 100
	maxItemsCeilingLimit   = 10000
	// maxDemoFaultRate: above it hardly any call gets through its three
	// attempts, and the demo would show nothing but give-ups.
	maxDemoFaultRate = 0.9
	// Idempotency record lifetime: 24 h by default; under a minute a
	// record could expire while its write is still being resolved.
	defaultIdempotencyTTL = 24 * time.Hour
	minIdempotencyTTLSecs = 60
	maxIdempotencyTTLSecs = 30 * 24 * 3600
)

// config is the parsed command line and environment.
type config struct {
	Command string   // "", "stdio", "call", "tools", ...
	Args    []string // positional arguments after the command

	Catalog         string
	MaxItemsCeiling int
	Headers         http.Header            // the default catalog's (STAC_MCP_HEADERS)
	CatalogHeaders  map[string]http.Header // by lowercase catalog name (STAC_MCP_CATALOG_HEADERS_<NAME>)
	NamedCatalogs   []tools.Preset
	AllowPrivate    bool     // http: private addresses reachable (STAC_MCP_ALLOW_PRIVATE_NETWORKS)
	AllowedHosts    []string // http: hosts reachable even when private
	Surface         tools.SurfaceOptions
	HTTPAddr        string
	HTTPToken       string
	CursorKey       string // STAC_MCP_CURSOR_KEY; empty: see cursorKeyFor
	StateDir        string // where stdio and call keep their cursor key and the idempotency store; empty: none
	LogLevel        string
	LogFormat       string
	MetricsAddr     string
	DemoFaultRate   float64
	DemoFaultSeed   uint64 // 0: chosen from the clock
	Policy          reliability.Policy
	HTTP            transport.Limits
	// UnknownEnv are warnings about STAC_MCP_* variables no setting reads,
	// logged at startup (see unknownEnvWarnings).
	UnknownEnv []string
	// Retired are warnings about retired settings that are set.
	Retired []string

	AllowWrites    bool
	IdempotencyTTL time.Duration // how long a write's outcome is kept
	// RedisURL is Redis shared by replicas (STAC_MCP_REDIS_URL, --redis-url):
	// the reliability layer's shared state (adr/0016), the http cursor key
	// when none is configured, and the idempotency store with writes.
	// Never logged with its password.
	RedisURL string

	Text, JSON, Help, Version bool
	ImageDir                  string // call: where to write the result's images
}

// loadConfig parses args (flags may come before or after the command and
// its arguments) and the environment; flags win over variables. Invalid
// values are errors that name the flag or variable, the value and what is
// accepted, so the server refuses to start rather than guess. The groups
// of settings are read in this order, so when several are wrong the first
// one's error is the one reported.
func loadConfig(args []string, env func(string) (string, bool)) (*config, error) {
	cfg := &config{}
	src, err := parseCommandLine(cfg, args, env)
	if err != nil {
		return nil, err
	}
	for _, load := range []func(*config, settingSource) error{
		loadCatalogSettings,
		loadSurfaceSettings,
		loadListenerSettings,
		loadCursorKey,
		loadLogSettings,
		loadDemoFaultSettings,
		loadWriteSettings,
		loadPolicy,
	} {
		if err := load(cfg, src); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// settingSource is where settings come from: the command line's flags,
// else the environment.
type settingSource struct {
	values map[string]*string // flag values by the setting's variable name
	given  map[string]bool    // the flags on the command line, by flag name
	env    func(string) (string, bool)
}

// lookup returns a setting's value (trimmed), the name it was given under
// ("--flag" or the variable, for messages) and whether it was given at
// all: the flag when it is on the command line, else a non-blank variable.
func (src settingSource) lookup(s setting) (value, name string, ok bool) {
	if src.given[s.flag] {
		return *src.values[s.env], "--" + s.flag, true
	}
	v, ok := src.env(s.env)
	return strings.TrimSpace(v), s.env, ok && strings.TrimSpace(v) != ""
}

// parseCommandLine registers a flag for every setting and the command
// flags (--text, --json, …, set on cfg), parses args and sets cfg.Command
// and cfg.Args from the positional arguments. Flags may come before or
// after them: parsing resumes after each positional argument.
func parseCommandLine(cfg *config, args []string, env func(string) (string, bool)) (settingSource, error) {
	fs := flag.NewFlagSet("stac-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	src := settingSource{values: map[string]*string{}, given: map[string]bool{}, env: env}
	for _, s := range flagSettings() {
		if booleanSettings[s.env] {
			v := new(string)
			src.values[s.env] = v
			fs.BoolFunc(s.flag, s.help, func(arg string) error { *v = arg; return nil })
			continue
		}
		src.values[s.env] = fs.String(s.flag, "", s.help)
	}
	fs.BoolVar(&cfg.Text, "text", false, "call: print the text block instead of the structured JSON")
	fs.StringVar(&cfg.ImageDir, "image-dir", "", "call: also write each image the result carries (map_items, get_item_preview) into this directory")
	fs.BoolVar(&cfg.JSON, "json", false, "tools: print the full tool definitions (schemas, annotations) as JSON")
	fs.BoolVar(&cfg.Help, "help", false, "show this help")
	fs.BoolVar(&cfg.Help, "h", false, "show this help")
	fs.BoolVar(&cfg.Version, "version", false, "print the version")

	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return src, usageError("%v", err)
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
	fs.Visit(func(f *flag.Flag) { src.given[f.Name] = true })
	return src, nil
}

// loadCatalogSettings reads the default catalog, the search ceiling, the
// default catalog's headers, the named catalogs and their headers, and
// whether http callers may reach private networks.
func loadCatalogSettings(cfg *config, src settingSource) error {
	if v, _, ok := src.lookup(setCatalog); ok {
		cfg.Catalog = v
	}
	cfg.MaxItemsCeiling = defaultMaxItemsCeiling
	if v, name, ok := src.lookup(setCeiling); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxItemsCeilingLimit {
			return usageError("%s=%q: want a whole number from 1 to %d", name, v, maxItemsCeilingLimit)
		}
		cfg.MaxItemsCeiling = n
	}
	if v, name, ok := src.lookup(setHeaders); ok {
		h, err := parseHeaders(v)
		if err != nil {
			return usageError("%s: %v", name, err)
		}
		cfg.Headers = h
	}
	if v, name, ok := src.lookup(setCatalogs); ok {
		named, err := tools.ParseNamedCatalogs(name, v)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.NamedCatalogs = named
	}
	if err := loadCatalogHeaders(cfg, src.env); err != nil {
		return err
	}
	if v, name, ok := src.lookup(setAllowPriv); ok {
		allow, err := strconv.ParseBool(v)
		if err != nil {
			return usageError("%s=%q: want true or false", name, v)
		}
		cfg.AllowPrivate = allow
	}
	return nil
}

// loadListenerSettings reads what the http server and the stdio /metrics
// listener need: the hosts http callers may reach though private, the
// address, the limits, the retired settings still set, the token and the
// metrics address.
func loadListenerSettings(cfg *config, src settingSource) error {
	if v, name, ok := src.lookup(setAllowHosts); ok {
		hosts, err := reliability.ParseAllowedHosts(name, v)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.AllowedHosts = hosts
	}
	cfg.HTTPAddr, _, _ = src.lookup(setHTTPAddr)
	limits, err := loadHTTPLimits(src.lookup)
	if err != nil {
		return err
	}
	cfg.HTTP = limits
	cfg.Retired = retiredWarnings(src.lookup)
	if v, ok := src.env(envHTTPToken); ok {
		cfg.HTTPToken = strings.TrimSpace(v)
	}
	cfg.MetricsAddr, _, _ = src.lookup(setMetrics)
	return nil
}

// loadCursorKey reads STAC_MCP_CURSOR_KEY, refusing a guessable one.
func loadCursorKey(cfg *config, src settingSource) error {
	if v, ok := src.env(envCursorKey); ok && strings.TrimSpace(v) != "" {
		cfg.CursorKey = strings.TrimSpace(v)
		if len(cfg.CursorKey) < minCursorKeyLen {
			return usageError("%s is %d characters long (value not shown); want at least %d, e.g. the output of: openssl rand -hex 32",
				envCursorKey, len(cfg.CursorKey), minCursorKeyLen)
		}
	}
	return nil
}

// loadLogSettings reads the log level and format, and checks them now by
// building a logger, so a bad one refuses to start.
func loadLogSettings(cfg *config, src settingSource) error {
	cfg.LogLevel, _, _ = src.lookup(setLogLevel)
	cfg.LogFormat, _, _ = src.lookup(setLogFmt)
	if _, err := reliability.NewLogger(cfg.LogLevel, cfg.LogFormat, io.Discard); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// loadDemoFaultSettings reads the demo catalog's fault rate and seed; a
// rate is refused with any other catalog.
func loadDemoFaultSettings(cfg *config, src settingSource) error {
	if v, name, ok := src.lookup(setDemoFaults); ok {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil || !(rate >= 0 && rate <= maxDemoFaultRate) {
			return usageError("%s=%q: want a fraction from 0 to %g", name, v, maxDemoFaultRate)
		}
		if rate > 0 && cfg.Catalog != tools.DemoCatalog {
			return usageError("%s is accepted only with --catalog demo (it injects faults into the embedded demo catalog, never into a real one)", name)
		}
		cfg.DemoFaultRate = rate
	}
	if v, name, ok := src.lookup(setDemoSeed); ok {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil || seed == 0 {
			return usageError("%s=%q: want a whole number from 1 to %d", name, v, uint64(math.MaxUint64))
		}
		cfg.DemoFaultSeed = seed
	}
	return nil
}

// loadPolicy reads the reliability settings through
// reliability.PolicyFromEnv, a flag overriding its variable. The policy's
// error names the variable; when the value came from the flag, the
// message names the flag first.
func loadPolicy(cfg *config, src settingSource) error {
	policy, err := reliability.PolicyFromEnv(func(name string) (string, bool) {
		for _, s := range reliabilitySettings {
			if s.env == name {
				v, _, ok := src.lookup(s)
				return v, ok
			}
		}
		return src.env(name)
	})
	if err != nil {
		for _, s := range reliabilitySettings {
			if src.given[s.flag] && strings.Contains(err.Error(), s.env) {
				return usageError("--%s: %v", s.flag, err)
			}
		}
		return usageError("%v", err)
	}
	cfg.Policy = policy
	return nil
}

// loadCatalogHeaders reads STAC_MCP_CATALOG_HEADERS_<NAME> for every
// preset and configured catalog. Headers for a local catalog are refused:
// nothing would send them.
func loadCatalogHeaders(cfg *config, env func(string) (string, bool)) error {
	names := []string{}
	for _, p := range tools.Presets() {
		names = append(names, p.Name)
	}
	for _, p := range cfg.NamedCatalogs {
		names = append(names, p.Name)
	}
	for _, name := range names {
		variable := envCatalogHeaders + tools.HeadersEnvSuffix(name)
		v, ok := env(variable)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if remote, _ := tools.KnowsCatalogName(name, cfg.NamedCatalogs); !remote {
			return usageError("%s: catalog %q is a local static catalog; it is read from files and sends no headers", variable, name)
		}
		h, err := parseHeaders(strings.TrimSpace(v))
		if err != nil {
			return usageError("%s: %v", variable, err)
		}
		if cfg.CatalogHeaders == nil {
			cfg.CatalogHeaders = map[string]http.Header{}
		}
		cfg.CatalogHeaders[name] = h
	}
	return nil
}

// parseHeaders reads STAC_MCP_HEADERS / --headers: either a JSON object
// {"Name": "value", ...} (the original form) or Name=value pairs separated
// by ';' or newlines, which is easier to write in a host's "env" block.
// Values are never echoed in errors: they are usually secrets.
func parseHeaders(v string) (http.Header, error) {
	h := http.Header{}
	add := func(name, val string) error {
		if name == "" || strings.ContainsAny(name, " :\t\r\n") || strings.ContainsAny(val, "\r\n") {
			return fmt.Errorf("header %q: names must be non-empty tokens without spaces or colons, values single-line", name)
		}
		h.Add(name, val)
		return nil
	}
	if strings.HasPrefix(v, "{") {
		var m map[string]string
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf(`not a JSON object of header names to string values (%w); want {"Authorization":"Bearer TOKEN"} or Authorization=Bearer TOKEN;X-Api-Key=KEY`, err)
		}
		for name, val := range m {
			if err := add(strings.TrimSpace(name), val); err != nil {
				return nil, err
			}
		}
		return h, nil
	}
	for i, pair := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, val, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("entry %d (%d characters, value not shown) has no '='; want Name=value pairs separated by ';' or newlines, "+
				`e.g. Authorization=Bearer TOKEN;X-Api-Key=KEY, or a JSON object {"Authorization":"Bearer TOKEN"}`, i+1, len(pair))
		}
		if err := add(strings.TrimSpace(name), strings.TrimSpace(val)); err != nil {
			return nil, err
		}
	}
	if len(h) == 0 {
		return nil, errors.New(`no header given; want Name=value pairs separated by ';' or newlines, e.g. Authorization=Bearer TOKEN`)
	}
	return h, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// loadWriteSettings reads --allow-writes, the idempotency TTL, the Redis
// URL and the state directory (the idempotency store's and the cursor key
// file's).
func loadWriteSettings(cfg *config, src settingSource) error {
	lookup := src.lookup
	if v, name, ok := lookup(setAllowWrites); ok {
		allow, err := parseBool(v)
		if err != nil {
			return usageError("%s=%q: want true or false", name, v)
		}
		cfg.AllowWrites = allow
	}
	cfg.IdempotencyTTL = defaultIdempotencyTTL
	if v, name, ok := lookup(setIdemTTL); ok {
		secs, err := strconv.Atoi(v)
		if err != nil || secs < minIdempotencyTTLSecs || secs > maxIdempotencyTTLSecs {
			return usageError("%s=%q: want a whole number of seconds from %d to %d (30 days)", name, v, minIdempotencyTTLSecs, maxIdempotencyTTLSecs)
		}
		cfg.IdempotencyTTL = time.Duration(secs) * time.Second
	}
	if v, name, ok := lookup(setRedisURL); ok {
		if err := idempotency.CheckRedisURL(v); err != nil {
			return usageError("%s: %v", name, err)
		}
		cfg.RedisURL = v
	}
	cfg.StateDir = stateDir(src.env)
	if v, _, ok := lookup(setStateDir); ok {
		cfg.StateDir = v // else the user's state directory (stateDir)
	}
	return nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

// loadSurfaceSettings reads --toolsets, --tools and --read-only; the names
// are checked against the inventory when the server is built (newApp), so
// an unknown one refuses to start with the list of valid ones.
func loadSurfaceSettings(cfg *config, src settingSource) error {
	lookup := src.lookup
	split := func(v string) []string {
		return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '\n' })
	}
	if v, _, ok := lookup(setToolsets); ok {
		cfg.Surface.Toolsets = split(v)
	}
	if v, _, ok := lookup(setTools); ok {
		cfg.Surface.Tools = split(v)
	}
	if v, name, ok := lookup(setReadOnly); ok {
		readOnly, err := parseBool(v)
		if err != nil {
			return usageError("%s=%q: want true or false", name, v)
		}
		cfg.Surface.ReadOnly = readOnly
	}
	return nil
}
