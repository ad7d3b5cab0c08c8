package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/tools"
)

// booleanSettings are flags without a value (--allow-writes; also
// --allow-writes=false); their variables take true or false.
var booleanSettings = map[string]bool{settings.AllowWrites.Env: true, settings.ReadOnly.Env: true}

// minCursorKeyLen: a STAC_MCP_CURSOR_KEY shorter than 32 characters is
// guessable.
const minCursorKeyLen = 32

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
	DecodePixels    int64                  // STAC_MCP_DECODE_BUDGET_PIXELS; 0: the default
	ReadPixels      int                    // STAC_MCP_READ_PIXELS; 0: the default
	Export          tools.ExportSettings   // STAC_MCP_EXPORT_*; zero fields: the defaults
	Headers         http.Header            // the default catalog's (STAC_MCP_HEADERS)
	CatalogHeaders  map[string]http.Header // by lowercase catalog name (STAC_MCP_CATALOG_HEADERS_<NAME>)
	NamedCatalogs   []tools.Preset
	CatalogGroups   []tools.CatalogGroup // STAC_MCP_CATALOG_GROUPS
	MaxCatalogs     int                  // STAC_MCP_MAX_CATALOGS_PER_CALL; 0: the default
	AllowPrivate    bool                 // http: private addresses reachable (STAC_MCP_ALLOW_PRIVATE_NETWORKS)
	AllowedHosts    []string             // http: hosts reachable even when private
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
		loadDecodeBudget,
		loadReadPixels,
		loadExportSettings,
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
func (src settingSource) lookup(s settings.Setting) (value, name string, ok bool) {
	if src.given[s.Flag] {
		return *src.values[s.Env], "--" + s.Flag, true
	}
	v, ok := src.env(s.Env)
	return strings.TrimSpace(v), s.Env, ok && strings.TrimSpace(v) != ""
}

// parseCommandLine registers a flag for every setting and the command
// flags (--text, --json, …, set on cfg), parses args and sets cfg.Command
// and cfg.Args from the positional arguments. Flags may come before or
// after them: parsing resumes after each positional argument.
func parseCommandLine(cfg *config, args []string, env func(string) (string, bool)) (settingSource, error) {
	fs := flag.NewFlagSet("stac-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	src := settingSource{values: map[string]*string{}, given: map[string]bool{}, env: env}
	for _, s := range settings.WithFlags() {
		if booleanSettings[s.Env] {
			v := new(string)
			src.values[s.Env] = v
			fs.BoolFunc(s.Flag, s.Help, func(arg string) error { *v = arg; return nil })
			continue
		}
		src.values[s.Env] = fs.String(s.Flag, "", s.Help)
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

// Decoded-image budget bounds: under 1 Mpx not even a map fits; 2 Gpx is
// 8 GiB of pixels.
const (
	minDecodePixels = 1_000_000
	maxDecodePixels = 2_000_000_000
)

// loadDecodeBudget reads the decoded-image budget (STAC_MCP_DECODE_BUDGET_PIXELS).
func loadDecodeBudget(cfg *config, src settingSource) error {
	v, name, ok := src.lookup(settings.DecodeBudgetPixels)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < minDecodePixels || n > maxDecodePixels {
		return usageError("%s=%q: want a whole number of pixels from %d to %d", name, v, minDecodePixels, maxDecodePixels)
	}
	cfg.DecodePixels = n
	return nil
}

// Pixel read budget bounds: under 256×256 px an area is a smudge; over
// 2048×2048 a read of four bands (float64, 2 units each) is the whole
// default decode budget.
const (
	minReadPixels = 65_536
	maxReadPixels = 4_194_304
)

// loadReadPixels reads the pixel tools' budget per band read (STAC_MCP_READ_PIXELS).
func loadReadPixels(cfg *config, src settingSource) error {
	v, name, ok := src.lookup(settings.ReadPixels)
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minReadPixels || n > maxReadPixels {
		return usageError("%s=%q: want a whole number of pixels from %d to %d", name, v, minReadPixels, maxReadPixels)
	}
	cfg.ReadPixels = n
	return nil
}

// Export bounds: under 1 MiB not even a small GeoTIFF fits; over 2 GiB an
// export is built in memory longer than any tool timeout allows, and a
// classic TIFF's offsets run out at 4 GiB.
const (
	minExportBytes   = 1 << 20
	maxExportBytes   = 2 << 30
	minExportTTLSecs = 60
	maxExportTTLSecs = 7 * 24 * 3600
	maxExportQuota   = 1 << 40
)

// loadExportSettings reads where the export tool's files go and their
// bounds (STAC_MCP_EXPORT_*).
func loadExportSettings(cfg *config, src settingSource) error {
	if v, _, ok := src.lookup(settings.ExportDir); ok {
		cfg.Export.Dir = v
	}
	bytesSetting := func(s settings.Setting, lo, hi int64, into *int64) error {
		v, name, ok := src.lookup(s)
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return usageError("%s=%q: want a whole number of bytes from %d to %d", name, v, lo, hi)
		}
		*into = n
		return nil
	}
	if err := bytesSetting(settings.ExportMaxBytes, minExportBytes, maxExportBytes, &cfg.Export.MaxBytes); err != nil {
		return err
	}
	if err := bytesSetting(settings.ExportCallerBytes, minExportBytes, maxExportQuota, &cfg.Export.CallerBytes); err != nil {
		return err
	}
	if err := bytesSetting(settings.ExportTotalBytes, minExportBytes, maxExportQuota, &cfg.Export.TotalBytes); err != nil {
		return err
	}
	if v, name, ok := src.lookup(settings.ExportTTL); ok {
		secs, err := strconv.Atoi(v)
		if err != nil || secs < minExportTTLSecs || secs > maxExportTTLSecs {
			return usageError("%s=%q: want a whole number of seconds from %d to %d (7 days)", name, v, minExportTTLSecs, maxExportTTLSecs)
		}
		cfg.Export.TTL = time.Duration(secs) * time.Second
	}
	return nil
}

// refuseCatalogUserinfo refuses a default catalog URL with user:password@
// at start: the client never sends it (credentials go in headers),
// so such a server would start, log the password and fail every call. The
// value is not quoted back, not even redacted: where a password that url.Parse
// cannot read ends is unknown.
func refuseCatalogUserinfo(name, v string) error {
	v = strings.TrimSpace(v)
	lower := strings.ToLower(v)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return nil
	}
	authority := v[strings.Index(v, "//")+2:]
	if end := strings.IndexAny(authority, "/?#"); end >= 0 {
		authority = authority[:end]
	}
	if !strings.Contains(authority, "@") {
		return nil
	}
	return usageError("%s: the catalog URL carries user:password@ (value not shown, never logged), which stac-mcp does not send; "+
		"give the URL without it and put the credentials in STAC_MCP_HEADERS, e.g. Authorization=Basic <base64 of user:password>", name)
}

// loadCatalogSettings reads the default catalog, the search ceiling, the
// default catalog's headers, the named catalogs and their headers, and
// whether http callers may reach private networks.
func loadCatalogSettings(cfg *config, src settingSource) error {
	if v, name, ok := src.lookup(settings.Catalog); ok {
		if err := refuseCatalogUserinfo(name, v); err != nil {
			return err
		}
		cfg.Catalog = v
	}
	cfg.MaxItemsCeiling = defaultMaxItemsCeiling
	if v, name, ok := src.lookup(settings.MaxItemsCeiling); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxItemsCeilingLimit {
			return usageError("%s=%q: want a whole number from 1 to %d", name, v, maxItemsCeilingLimit)
		}
		cfg.MaxItemsCeiling = n
	}
	if v, name, ok := src.lookup(settings.Headers); ok {
		h, err := parseHeaders(v)
		if err != nil {
			return usageError("%s: %v", name, err)
		}
		cfg.Headers = h
	}
	if v, name, ok := src.lookup(settings.Catalogs); ok {
		named, err := tools.ParseNamedCatalogs(name, v)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.NamedCatalogs = named
	}
	if err := loadCatalogHeaders(cfg, src.env); err != nil {
		return err
	}
	if v, name, ok := src.lookup(settings.MaxCatalogsPerCall); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > tools.MaxCatalogsPerCallLimit {
			return usageError("%s=%q: want a whole number from 1 to %d", name, v, tools.MaxCatalogsPerCallLimit)
		}
		cfg.MaxCatalogs = n
	}
	if v, name, ok := src.lookup(settings.CatalogGroups); ok {
		groups, err := tools.ParseCatalogGroups(name, v, cfg.NamedCatalogs, cfg.MaxCatalogs)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.CatalogGroups = groups
	}
	if v, name, ok := src.lookup(settings.AllowPrivateNetworks); ok {
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
	if v, name, ok := src.lookup(settings.AllowedCatalogHosts); ok {
		hosts, err := reliability.ParseAllowedHosts(name, v)
		if err != nil {
			return usageError("%v", err)
		}
		cfg.AllowedHosts = hosts
	}
	cfg.HTTPAddr, _, _ = src.lookup(settings.HTTPAddr)
	limits, err := loadHTTPLimits(src.lookup)
	if err != nil {
		return err
	}
	cfg.HTTP = limits
	cfg.Retired = retiredWarnings(src.lookup)
	if v, ok := src.env(settings.EnvHTTPToken); ok {
		cfg.HTTPToken = strings.TrimSpace(v)
	}
	cfg.MetricsAddr, _, _ = src.lookup(settings.MetricsAddr)
	return nil
}

// loadCursorKey reads STAC_MCP_CURSOR_KEY, refusing a guessable one.
func loadCursorKey(cfg *config, src settingSource) error {
	if v, ok := src.env(settings.EnvCursorKey); ok && strings.TrimSpace(v) != "" {
		cfg.CursorKey = strings.TrimSpace(v)
		if len(cfg.CursorKey) < minCursorKeyLen {
			return usageError("%s is %d characters long (value not shown); want at least %d, e.g. the output of: openssl rand -hex 32",
				settings.EnvCursorKey, len(cfg.CursorKey), minCursorKeyLen)
		}
	}
	return nil
}

// loadLogSettings reads the log level and format, and checks them now by
// building a logger, so a bad one refuses to start.
func loadLogSettings(cfg *config, src settingSource) error {
	cfg.LogLevel, _, _ = src.lookup(settings.LogLevel)
	cfg.LogFormat, _, _ = src.lookup(settings.LogFormat)
	if _, err := reliability.NewLogger(cfg.LogLevel, cfg.LogFormat, io.Discard); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// loadDemoFaultSettings reads the demo catalog's fault rate and seed; a
// rate is refused with any other catalog.
func loadDemoFaultSettings(cfg *config, src settingSource) error {
	if v, name, ok := src.lookup(settings.DemoFaultRate); ok {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil || !(rate >= 0 && rate <= maxDemoFaultRate) {
			return usageError("%s=%q: want a fraction from 0 to %g", name, v, maxDemoFaultRate)
		}
		if rate > 0 && cfg.Catalog != tools.DemoCatalog {
			return usageError("%s is accepted only with --catalog demo (it injects faults into the embedded demo catalog, never into a real one)", name)
		}
		cfg.DemoFaultRate = rate
	}
	if v, name, ok := src.lookup(settings.DemoFaultSeed); ok {
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
		for _, s := range settings.Reliability {
			if s.Env == name {
				v, _, ok := src.lookup(s)
				return v, ok
			}
		}
		return src.env(name)
	})
	if err != nil {
		for _, s := range settings.Reliability {
			if src.given[s.Flag] && strings.Contains(err.Error(), s.Env) {
				return usageError("--%s: %v", s.Flag, err)
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
		variable := settings.EnvCatalogHeaders + tools.HeadersEnvSuffix(name)
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
	if v, name, ok := lookup(settings.AllowWrites); ok {
		allow, err := parseBool(v)
		if err != nil {
			return usageError("%s=%q: want true or false", name, v)
		}
		cfg.AllowWrites = allow
	}
	cfg.IdempotencyTTL = defaultIdempotencyTTL
	if v, name, ok := lookup(settings.IdempotencyTTL); ok {
		secs, err := strconv.Atoi(v)
		if err != nil || secs < minIdempotencyTTLSecs || secs > maxIdempotencyTTLSecs {
			return usageError("%s=%q: want a whole number of seconds from %d to %d (30 days)", name, v, minIdempotencyTTLSecs, maxIdempotencyTTLSecs)
		}
		cfg.IdempotencyTTL = time.Duration(secs) * time.Second
	}
	if v, name, ok := lookup(settings.RedisURL); ok {
		if err := idempotency.CheckRedisURL(v); err != nil {
			return usageError("%s: %v", name, err)
		}
		cfg.RedisURL = v
	}
	cfg.StateDir = stateDir(src.env)
	if v, _, ok := lookup(settings.StateDir); ok {
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
	if v, _, ok := lookup(settings.Toolsets); ok {
		cfg.Surface.Toolsets = split(v)
	}
	if v, _, ok := lookup(settings.Tools); ok {
		cfg.Surface.Tools = split(v)
	}
	if v, name, ok := lookup(settings.ReadOnly); ok {
		readOnly, err := parseBool(v)
		if err != nil {
			return usageError("%s=%q: want true or false", name, v)
		}
		cfg.Surface.ReadOnly = readOnly
	}
	return nil
}
