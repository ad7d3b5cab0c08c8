// Package settings is the table of stac-mcp's settings: every flag with its
// environment variable, the variables that have no flag, and the help text
// of each. The command parses them (cmd/stac-mcp/config.go); --help, the
// unknown-variable check and the MCP Bundle's settings form
// (manifest.json, written by cmd/stac-mcp/internal/gen) are built from
// them.
package settings

import "slices"

// Setting is one option that can come from a flag or an environment
// variable; the flag wins. Environment variables exist for every setting
// because MCP hosts (Claude Desktop) pass configuration through "env".
type Setting struct {
	Flag, Env, Value, Help string
}

// DefaultHTTPAddr is loopback: a server reachable from other machines must
// be asked for, and then needs a token.
const DefaultHTTPAddr = "127.0.0.1:8080"

// Settings of the server itself.
var (
	Catalog              = Setting{"catalog", "STAC_MCP_CATALOG_URL", "REF", "default catalog: URL, preset name, demo, or path to a catalog.json (default earth-search)"}
	MaxItemsCeiling      = Setting{"max-items-ceiling", "STAC_MCP_MAX_ITEMS_CEILING", "N", "largest max_items a search accepts (default 100)"}
	Headers              = Setting{"headers", "STAC_MCP_HEADERS", "HEADERS", `headers sent to the default catalog's own origin only (never to another catalog, never logged): Name=value pairs separated by ';' or newlines, e.g. "Authorization=Bearer abc;X-Api-Key=k", or a JSON object {"Authorization":"Bearer abc"}; other catalogs: STAC_MCP_CATALOG_HEADERS_<NAME>`}
	Catalogs             = Setting{"catalogs", "STAC_MCP_CATALOGS", "LIST", "extra catalogs by name, usable wherever a preset name is: name=url or name=path pairs separated by ',', ';' or newlines, e.g. internal=https://stac.internal.example/v1,archive=/srv/stac/catalog.json (a path is absolute, starts with '.', or is file://; over http the only way to serve a local catalog besides --catalog)"}
	CatalogGroups        = Setting{"catalog-groups", "STAC_MCP_CATALOG_GROUPS", "LIST", "names that stand for several catalogs searched at once (search_items, get_aggregations, map_items, check_coverage, estimate_data_size, search_collections): name=catalog,catalog entries separated by ';' or newlines, e.g. public=earth-search,planetary-computer; members are presets, STAC_MCP_CATALOGS names, demo or URLs"}
	MaxCatalogsPerCall   = Setting{"max-catalogs-per-call", "STAC_MCP_MAX_CATALOGS_PER_CALL", "N", "most catalogs one call searches at once, a group counting as its members (default 8; 1 to 32); each one's requests also count against its host's bulkhead"}
	AllowPrivateNetworks = Setting{"allow-private-networks", "STAC_MCP_ALLOW_PRIVATE_NETWORKS", "BOOL", "http: let catalog_url, next links, redirects and asset probes reach loopback, private and link-local addresses (default false; stdio always may)"}
	AllowedCatalogHosts  = Setting{"allowed-catalog-hosts", "STAC_MCP_ALLOWED_CATALOG_HOSTS", "LIST", "http: hosts reachable even when private: host[:port], IP[:port] or CIDR prefixes separated by ',', e.g. stac.internal.example,stac.internal.example:8443,10.20.0.0/16; without a port only 80 and 443 (configured catalogs are always reachable)"}
	HTTPAddr             = Setting{"addr", "STAC_MCP_HTTP_ADDR", "ADDR", "http: listen address (default " + DefaultHTTPAddr + "); a non-loopback address needs STAC_MCP_HTTP_TOKEN"}
	LogLevel             = Setting{"log-level", "STAC_MCP_LOG_LEVEL", "LEVEL", "trace, debug, info, warn or error (default info); logs go to stderr"}
	LogFormat            = Setting{"log-format", "STAC_MCP_LOG_FORMAT", "FORMAT", "json (default) or console"}
	DemoFaultRate        = Setting{"demo-fault-rate", "STAC_MCP_DEMO_FAULT_RATE", "RATE", "demo catalog only: inject transient faults (5xx, resets, 429) into this fraction of upstream attempts, to watch retries happen (0 to 0.9; default off)"}
	DemoFaultSeed        = Setting{"demo-fault-seed", "STAC_MCP_DEMO_FAULT_SEED", "N", "seed of the demo fault schedule, to replay a run (default: from the clock, logged at startup)"}
	Toolsets             = Setting{"toolsets", "STAC_MCP_TOOLSETS", "LIST", "toolsets to list, separated by ',': all (default), discover, search, size, visual, pixels, export, ops, write (write needs --allow-writes); each listed tool costs the model context"}
	Tools                = Setting{"tools", "STAC_MCP_TOOLS", "LIST", "single tools to list besides --toolsets, separated by ',', e.g. search_items,get_item; alone, only these are listed"}
	ReadOnly             = Setting{"read-only", "STAC_MCP_READ_ONLY", "", "list no tool that changes a catalog, even with --allow-writes (default false)"}
	DecodeBudgetPixels   = Setting{"decode-budget-pixels", "STAC_MCP_DECODE_BUDGET_PIXELS", "PIXELS", "memory bound of decoded images held at once across all calls (previews, maps), in pixels of 4 bytes (a 16-bit pixel counts 2); past it decodes wait, then are refused, and an image larger than the whole budget is not decoded (default 32000000, about 128 MiB; 1000000 to 2000000000)"}
	ReadPixels           = Setting{"read-pixels", "STAC_MCP_READ_PIXELS", "PIXELS", "the pixel tools' budget per band read: the finest overview whose window over the aoi holds at most this many pixels is read, and the result says which (default 1048576, 1024×1024; 65536 to 4194304)"}
	ExportDir            = Setting{"export-dir", "STAC_MCP_EXPORT_DIR", "DIR", "stdio and call: the folder the export tool writes its files in, created 0700 when missing (default: a stac-mcp folder in your downloads folder, $XDG_DOWNLOAD_DIR or ~/Downloads); http: where this replica keeps exports until they expire (default: a new private temporary folder; with STAC_MCP_REDIS_URL they live in Redis)"}
	ExportMaxBytes       = Setting{"export-max-bytes", "STAC_MCP_EXPORT_MAX_BYTES", "BYTES", "largest file one export may write; past it the export is refused and nothing is kept (default 268435456, 256 MiB; 1048576 to 2147483648)"}
	ExportTTL            = Setting{"export-ttl-secs", "STAC_MCP_EXPORT_TTL_SECS", "SECS", "http: how long an export stays readable (resources/read, by the caller who made it only), then deleted (default 3600; 60 to 604800)"}
	ExportCallerBytes    = Setting{"export-caller-bytes", "STAC_MCP_EXPORT_CALLER_BYTES", "BYTES", "http: most bytes of live exports one caller holds; past it exports are refused until earlier ones expire (default 536870912, 512 MiB)"}
	ExportTotalBytes     = Setting{"export-total-bytes", "STAC_MCP_EXPORT_TOTAL_BYTES", "BYTES", "http: most bytes of live exports of all callers together, on this replica's disk, or in Redis with STAC_MCP_REDIS_URL (default 2147483648, 2 GiB)"}
	MetricsAddr          = Setting{"metrics-addr", "STAC_MCP_METRICS_ADDR", "ADDR", "serve Prometheus /metrics on this address, e.g. 127.0.0.1:9464 (stdio mode; default off); like --addr, a non-loopback address needs STAC_MCP_HTTP_TOKEN"}

	// Writes (adr/0014-idempotent-writes.md).
	AllowWrites    = Setting{"allow-writes", "STAC_MCP_ALLOW_WRITES", "", "add the write tools (create_item, update_item, delete_item, create_collection, update_collection) for catalogs that declare the STAC Transaction extension and for local catalog.json files; true or false (default false: read-only)"}
	StateDir       = Setting{"state-dir", "STAC_MCP_STATE_DIR", "DIR", "directory of the idempotency store (idempotency.db, with --allow-writes) and of cursor.key (stdio and call); default: the user's state directory, $XDG_STATE_HOME/stac-mcp or ~/.local/state/stac-mcp"}
	IdempotencyTTL = Setting{"idempotency-ttl-secs", "STAC_MCP_IDEMPOTENCY_TTL_SECS", "SECS", "how long a write's outcome answers repeats of its idempotency key (default 86400, 24 h; 60 to 2592000)"}
	RedisURL       = Setting{"redis-url", "STAC_MCP_REDIS_URL", "URL", "Redis shared by replicas, redis://host:6379/0 (rediss:// for TLS): they share the response cache, retry budgets and circuit breakers there (each uses its own while Redis does not answer), http replicas without STAC_MCP_CURSOR_KEY their cursor key, and with --allow-writes the idempotency records. Put a password in the environment variable, not the flag (command lines are visible to every user)"}
)

// Reliability are the settings reliability.PolicyFromEnv reads; a flag
// overrides its variable by being looked up first.
var Reliability = []Setting{
	{"tool-timeout-secs", "STAC_MCP_TOOL_TIMEOUT_SECS", "SECS", "deadline of one tool call, all attempts, waits and pages included: 1 to 3600 (default 15)"},
	{"attempt-timeout-secs", "STAC_MCP_ATTEMPT_TIMEOUT_SECS", "SECS", "how long a read with no known answer time runs before a copy goes out beside it, and the deadline of one attempt of a write (default: 4/15 of the tool timeout, i.e. 4)"},
	{"max-attempts", "STAC_MCP_MAX_ATTEMPTS", "N", "attempts per upstream request, first try included (default 3)"},
	{"backoff-base-secs", "STAC_MCP_BACKOFF_BASE_SECS", "SECS", "base of the full-jitter exponential backoff (default 0.4)"},
	{"retry-after-cap-secs", "STAC_MCP_RETRY_AFTER_CAP_SECS", "SECS", "longest Retry-After the server waits for inside a call (default 5)"},
	{"cache-ttl-secs", "STAC_MCP_CACHE_TTL_SECS", "SECS", "how long successful GET answers are reused; 0 disables the cache (default 30)"},
	{"cache-max-bytes", "STAC_MCP_CACHE_MAX_BYTES", "BYTES", "memory bound of the response cache (default 33554432, i.e. 32 MiB)"},
	{"bulkhead-max", "STAC_MCP_BULKHEAD_MAX", "N", "most concurrent upstream requests per catalog host (default 16)"},
	{"max-hosts", "STAC_MCP_MAX_HOSTS", "N", "most catalog hosts whose reliability state (breaker, retry budget, health) is kept besides the configured catalogs; the least recently used idle one is forgotten past it (default 512)"},
	{"body-budget-bytes", "STAC_MCP_BODY_BUDGET_BYTES", "BYTES", "memory bound of upstream response bodies being read at once, across all calls; past it reads wait, then are refused (default 268435456, 256 MiB)"},
	{"hedge", "STAC_MCP_HEDGE", "MODE", "hedged reads: on (default: reads run to the tool deadline, a copy once a read is slower than the host's p98.5 for that kind of request, sooner when reads hang), off (cut reads at the attempt timeout and retry), or a delay in seconds"},
}

// Server are the settings of the server itself, in --help's order.
var Server = []Setting{Catalog, Catalogs, CatalogGroups, MaxCatalogsPerCall, MaxItemsCeiling, Headers, Toolsets, Tools, ReadOnly, DecodeBudgetPixels, ReadPixels,
	ExportDir, ExportMaxBytes, ExportTTL, ExportCallerBytes, ExportTotalBytes, LogLevel, LogFormat, MetricsAddr, HTTPAddr, AllowPrivateNetworks, AllowedCatalogHosts, DemoFaultRate, DemoFaultSeed, AllowWrites, StateDir, IdempotencyTTL, RedisURL}

// The limits of `stac-mcp http` (adr/0010-http-exposure-limits.md); see
// cmd/stac-mcp/config_http.go.
var (
	HTTPMaxConns      = Setting{"http-max-conns", "STAC_MCP_HTTP_MAX_CONNS", "N", "http: most client connections open at once; past it new connections wait to be accepted (default 512)"}
	HTTPMaxConnsPerIP = Setting{"http-max-conns-per-ip", "STAC_MCP_HTTP_MAX_CONNS_PER_IP", "N", "http: most connections from one non-loopback client address; past it new ones are closed at once; 0 turns the per-address limit off, e.g. behind a proxy on another machine (default 64)"}
	HTTPIdleTimeout   = Setting{"http-idle-timeout-secs", "STAC_MCP_HTTP_IDLE_TIMEOUT_SECS", "SECS", "http: close keep-alive connections idle this long (default 60)"}
	HTTPBodyTimeout   = Setting{"http-body-timeout-secs", "STAC_MCP_HTTP_BODY_TIMEOUT_SECS", "SECS", "http: a request body must arrive within this time (default 30); responses and event streams are not limited"}
	HTTPMaxBody       = Setting{"http-max-body-bytes", "STAC_MCP_HTTP_MAX_BODY_BYTES", "BYTES", "http: largest request body accepted, answered 413 past it (default 1048576, 1 MiB)"}
)

// HTTP are the limits of `stac-mcp http`.
var HTTP = []Setting{HTTPMaxConns, HTTPMaxConnsPerIP, HTTPIdleTimeout, HTTPBodyTimeout, HTTPMaxBody}

// Retired settings are accepted, so that existing command lines and
// environments still start, and do nothing; each is reported at startup.
// The session settings went when the server stopped keeping sessions
// (adr/0015).
var Retired = []Setting{
	{"http-max-sessions", "STAC_MCP_HTTP_MAX_SESSIONS", "N", "retired, no effect: stac-mcp http keeps no sessions (adr/0015); STAC_MCP_HTTP_MAX_CONNS bounds the requests served at once"},
	{"http-session-idle-secs", "STAC_MCP_HTTP_SESSION_IDLE_SECS", "SECS", "retired, no effect: stac-mcp http keeps no sessions (adr/0015), so none idles"},
}

// WithFlags are every setting that has a flag and a variable: the flags
// the command registers and, with Secrets, the variables the unknown
// STAC_MCP_* check knows. A new table of settings goes here.
func WithFlags() []Setting {
	return slices.Concat(Server, HTTP, Reliability, Retired)
}

// EnvHTTPToken and EnvCursorKey are secrets, so they have no flag
// (command lines are visible to every user of the machine) and are never
// logged.
const (
	EnvHTTPToken = "STAC_MCP_HTTP_TOKEN"
	EnvCursorKey = "STAC_MCP_CURSOR_KEY"
)

// EnvCatalogHeaders is the prefix of the per-catalog header variables:
// STAC_MCP_CATALOG_HEADERS_<NAME>, NAME a preset or STAC_MCP_CATALOGS name
// in uppercase with '-' as '_' (tools.HeadersEnvSuffix).
const EnvCatalogHeaders = "STAC_MCP_CATALOG_HEADERS_"

// Secrets are read from the environment only (EnvCatalogHeaders: one
// variable per catalog name).
var Secrets = []Setting{
	{"", EnvHTTPToken, "SECRET", "http and --metrics-addr: bearer token every request must carry (Authorization: Bearer …), or several separated by commas, one per client (each is its own caller for idempotency keys); required for a non-loopback address, then each at least 16 bytes; enforced whenever set"},
	{"", EnvCursorKey, "SECRET", "key that signs cursors (at least 32 characters, e.g. openssl rand -hex 32): replicas sharing it continue each other's cursors (default: http replicas with STAC_MCP_REDIS_URL share one kept in Redis, else a random key per http process; stdio and call keep one in the user's state directory)"},
	{"", EnvCatalogHeaders + "<NAME>", "HEADERS", "headers for one preset or STAC_MCP_CATALOGS catalog, sent to its origin only, same forms as STAC_MCP_HEADERS, e.g. STAC_MCP_CATALOG_HEADERS_INTERNAL=X-Api-Key=k"},
}

// All are every setting: those with a flag, then the secrets.
func All() []Setting {
	return slices.Concat(WithFlags(), Secrets)
}

// ByEnv finds a setting by its environment variable.
func ByEnv(env string) (Setting, bool) {
	for _, s := range All() {
		if s.Env == env {
			return s, true
		}
	}
	return Setting{}, false
}
