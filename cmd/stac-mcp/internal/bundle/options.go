// Package bundle is what the MCP Bundle (manifest.json) and the MCP
// Registry entry (server.json) say about stac-mcp: the settings the
// bundle's form offers and those it leaves out, and both files rendered
// from the settings table (internal/settings) and from the tools and
// prompts a client lists. cmd/stac-mcp/internal/gen writes the files (go
// generate); scripts/release stamps the release version into copies and
// packs the bundle (adr/0012-release-packaging.md).
package bundle

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

// Option is one field of the bundle's settings form (user_config), passed
// to the server in the environment variable of one setting.
type Option struct {
	Key, Env, Title string
	Kind            string   // MCPB user_config type: string or number
	Default         any      // never nil: an option without a value is dropped by the host, which would pass "${user_config.key}" literally
	Min, Max        float64  // number options only
	Sensitive       bool     // masked in the form, kept in the OS keychain
	Choices         []string // the values the registry entry offers (server.json only: MCPB has no enumerations)
	// Help replaces the setting's --help text where that names settings
	// the form cannot set (other catalogs' header variables, http mode,
	// the write toolset): a form's help that sends its user to a setting
	// they cannot reach misleads.
	Help string
}

// Options are offered by the bundle, in the form's order.
var Options = []Option{
	{Key: "catalog", Env: settings.Catalog.Env, Title: "Catalog", Kind: "string", Default: tools.DefaultCatalog},
	{Key: "headers", Env: settings.Headers.Env, Title: "Private catalog headers", Kind: "string", Default: "", Sensitive: true,
		Help: "headers sent to the default catalog's own origin only (never to another catalog, never logged): Name=value pairs " +
			`separated by ';' or newlines, e.g. "Authorization=Bearer abc;X-Api-Key=k", or a JSON object {"Authorization":"Bearer abc"}`},
	{Key: "catalogs", Env: settings.Catalogs.Env, Title: "Named catalogs", Kind: "string", Default: "",
		Help: "extra catalogs by name, usable wherever a preset name is: name=url or name=path pairs separated by ',', ';' or newlines, " +
			"e.g. internal=https://stac.internal.example/v1,archive=/srv/stac/catalog.json (a path is absolute, starts with '.', or is file://)"},
	{Key: "catalog_groups", Env: settings.CatalogGroups.Env, Title: "Catalog groups", Kind: "string", Default: "",
		Help: "names that stand for several catalogs searched at once: name=catalog,catalog entries separated by ';' or newlines, " +
			"e.g. public=earth-search,planetary-computer; members are presets, named catalogs, demo or URLs"},
	{Key: "tool_timeout_secs", Env: "STAC_MCP_TOOL_TIMEOUT_SECS", Title: "Tool timeout (seconds)", Kind: "number",
		Default: reliability.DefaultPolicy().ToolTimeout.Seconds(), Min: 1, Max: 3600},
	// The levels reliability.NewLogger accepts.
	{Key: "log_level", Env: settings.LogLevel.Env, Title: "Log level", Kind: "string", Default: "info",
		Choices: []string{"trace", "debug", "info", "warn", "error"}},
	{Key: "toolsets", Env: settings.Toolsets.Env, Title: "Toolsets", Kind: "string", Default: "all",
		Help: "toolsets to list, separated by ',': all (default), discover, search, size, visual, pixels, export, ops; each listed tool costs the model context"},
	{Key: "export_dir", Env: settings.ExportDir.Env, Title: "Export folder", Kind: "string", Default: "",
		Help: "the folder the export tool saves its files in (GeoTIFF, CSV, GeoJSON), made when missing; empty: a stac-mcp folder in your Downloads folder"},
}

// LeftOut are the settings the form does not offer, and why. Every
// setting is in exactly one of Options and LeftOut, so a new setting fails
// TestEverySettingIsClassifiedForTheBundle until someone decides.
var LeftOut = map[string]string{
	settings.MaxItemsCeiling.Env:      "output shaping for a model's context; the default suits Claude",
	settings.MaxCatalogsPerCall.Env:   "a bound for a shared server; the default (8 catalogs a call) is more than one user names",
	settings.LogFormat.Env:            "Claude Desktop stores stderr as text either way",
	settings.MetricsAddr.Env:          "operators' Prometheus endpoint, not a desktop concern",
	settings.HTTPAddr.Env:             "http mode only; the bundle runs stdio",
	settings.EnvHTTPToken:             "http mode only; the bundle runs stdio",
	settings.DemoFaultRate.Env:        "demo catalog fault injection, for watching retries by hand",
	settings.DemoFaultSeed.Env:        "demo catalog fault injection, for watching retries by hand",
	"STAC_MCP_ATTEMPT_TIMEOUT_SECS":   "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_MAX_ATTEMPTS":           "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_BACKOFF_BASE_SECS":      "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_RETRY_AFTER_CAP_SECS":   "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_CACHE_TTL_SECS":         "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_CACHE_MAX_BYTES":        "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_BULKHEAD_MAX":           "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_HEDGE":                  "reliability tuning; the defaults are the documented policy (adr/0002)",
	"STAC_MCP_MAX_HOSTS":              "bounds for a shared server (adr/0010); one desktop user never reaches them",
	"STAC_MCP_BODY_BUDGET_BYTES":      "bounds for a shared server (adr/0010); one desktop user never reaches them",
	settings.DecodeBudgetPixels.Env:   "bounds for a shared server (adr/0010); one desktop user never reaches them",
	settings.ReadPixels.Env:           "the default (1024×1024 per band) reads a 10 km area at 10 m; a coarser or finer read is a hand-configured choice",
	settings.ExportMaxBytes.Env:       "the default (256 MiB) is far above what one read's pixel budget exports; a desktop user never reaches it",
	settings.ExportTTL.Env:            "http only: how long a shared server keeps exports",
	settings.ExportCallerBytes.Env:    "http only: a shared server's per-caller quota",
	settings.ExportTotalBytes.Env:     "http only: a shared server's quota for all exports",
	settings.HTTPMaxConns.Env:         "http mode only; the bundle runs stdio",
	settings.HTTPMaxConnsPerIP.Env:    "http mode only; the bundle runs stdio",
	settings.HTTPIdleTimeout.Env:      "http mode only; the bundle runs stdio",
	settings.HTTPBodyTimeout.Env:      "http mode only; the bundle runs stdio",
	settings.HTTPMaxBody.Env:          "http mode only; the bundle runs stdio",
	"STAC_MCP_HTTP_MAX_SESSIONS":      "retired, no effect (adr/0015)",
	"STAC_MCP_HTTP_SESSION_IDLE_SECS": "retired, no effect (adr/0015)",
	settings.AllowPrivateNetworks.Env: "http mode only: stdio may always reach private addresses",
	settings.AllowedCatalogHosts.Env:  "http mode only: stdio may always reach private addresses",
	settings.AllowWrites.Env:          "the bundle is read-only; write tools are an explicit choice made by hand-configuring the server",
	settings.StateDir.Env:             "the default (the user's state directory) suits a desktop install",
	settings.IdempotencyTTL.Env:       "write tools only, which the bundle does not enable",
	settings.RedisURL.Env:             "state shared by server replicas, not a desktop concern",
	settings.EnvCursorKey:             "stdio keeps its own key in the user's state directory",
	settings.Tools.Env:                "single tools are a finer choice than the form's toolsets; hand-configure the server for them",
	settings.ReadOnly.Env:             "the bundle never enables the write tools, so it is read-only already",
	"STAC_MCP_CATALOG_HEADERS_<NAME>": "one variable per catalog name, which a fixed settings form cannot offer; the form's headers go to the default catalog",
}

// description is the setting's --help text as a sentence, so the form says
// what --help says; the catalog also lists the preset names.
func (o Option) description() string {
	s, _ := settings.ByEnv(o.Env)
	help := s.Help
	if o.Help != "" {
		help = o.Help
	}
	r, n := utf8.DecodeRuneInString(help)
	d := string(unicode.ToUpper(r)) + help[n:] + "."
	if o.Env == settings.Catalog.Env {
		names := make([]string, 0, len(tools.Presets())+1)
		for _, p := range tools.Presets() {
			names = append(names, p.Name)
		}
		d += " Presets: " + strings.Join(append(names, tools.DemoCatalog+" (offline)"), ", ") + "." +
			" A URL with user:password@ is refused: put the credentials in the private catalog headers setting instead."
	}
	return d
}
