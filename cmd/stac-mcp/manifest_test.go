package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

// The MCP Bundle manifest (manifest.json at the repository root) is
// generated here from the code: the tools and prompts a client lists, and
// the settings form Claude Desktop shows, from the settings tables. The
// test fails when manifest.json drifts; regenerate it with
//
//	UPDATE_MANIFEST=true go test ./cmd/stac-mcp -run Manifest
//
// scripts/release stamps the release version into a copy and packs the
// bundle (adr/0012-release-packaging.md).

// bundleOption is one field of the bundle's settings form (user_config),
// passed to the server in the environment variable of one setting.
type bundleOption struct {
	key, env, title string
	kind            string  // MCPB user_config type: string or number
	def             any     // never nil: an option without a value is dropped by the host, which would pass "${user_config.key}" literally
	min, max        float64 // number options only
	sensitive       bool    // masked in the form, kept in the OS keychain
}

// bundleOptions are offered by the bundle, in the form's order.
var bundleOptions = []bundleOption{
	{key: "catalog", env: settings.Catalog.Env, title: "Catalog", kind: "string", def: tools.DefaultCatalog},
	{key: "headers", env: settings.Headers.Env, title: "Private catalog headers", kind: "string", def: "", sensitive: true},
	{key: "catalogs", env: settings.Catalogs.Env, title: "Named catalogs", kind: "string", def: ""},
	{key: "tool_timeout_secs", env: "STAC_MCP_TOOL_TIMEOUT_SECS", title: "Tool timeout (seconds)", kind: "number",
		def: reliability.DefaultPolicy().ToolTimeout.Seconds(), min: 1, max: 3600},
	{key: "log_level", env: settings.LogLevel.Env, title: "Log level", kind: "string", def: "info"},
	{key: "toolsets", env: settings.Toolsets.Env, title: "Toolsets", kind: "string", def: "all"},
}

// leftOutOfBundle are the settings the form does not offer, and why. Every
// setting is in exactly one of bundleOptions and leftOutOfBundle, so a new
// setting fails TestEverySettingIsClassifiedForTheBundle until someone
// decides.
var leftOutOfBundle = map[string]string{
	settings.MaxItemsCeiling.Env:      "output shaping for a model's context; the default suits Claude",
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

func allSettings() []settings.Setting { return settings.All() }

func settingByEnv(env string) (settings.Setting, bool) { return settings.ByEnv(env) }

// description is the setting's --help text as a sentence, so the form says
// what --help says; the catalog also lists the preset names.
func (o bundleOption) description() string {
	s, _ := settingByEnv(o.env)
	r, n := utf8.DecodeRuneInString(s.Help)
	d := string(unicode.ToUpper(r)) + s.Help[n:] + "."
	if o.env == settings.Catalog.Env {
		names := make([]string, 0, len(tools.Presets())+1)
		for _, p := range tools.Presets() {
			names = append(names, p.Name)
		}
		d += " Presets: " + strings.Join(append(names, tools.DemoCatalog+" (offline)"), ", ") + "."
	}
	return d
}

// Manifest types, in the field order of the MCPB manifest specification.
type (
	mcpbManifest struct {
		ManifestVersion string             `json:"manifest_version"`
		Name            string             `json:"name"`
		DisplayName     string             `json:"display_name"`
		Version         string             `json:"version"`
		Description     string             `json:"description"`
		LongDescription string             `json:"long_description"`
		Author          mcpbAuthor         `json:"author"`
		Repository      mcpbRepository     `json:"repository"`
		Homepage        string             `json:"homepage"`
		Documentation   string             `json:"documentation"`
		Support         string             `json:"support"`
		Icon            string             `json:"icon"`
		Server          mcpbServer         `json:"server"`
		Tools           []mcpbTool         `json:"tools"`
		Prompts         []mcpbPrompt       `json:"prompts"`
		Keywords        []string           `json:"keywords"`
		Compatibility   mcpbCompatibility  `json:"compatibility"`
		UserConfig      orderedObject[any] `json:"user_config"`
	}
	mcpbAuthor struct {
		Name string `json:"name"`
		URL  string `json:"url"`
	}
	mcpbRepository struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}
	mcpbServer struct {
		Type       string    `json:"type"`
		EntryPoint string    `json:"entry_point"`
		MCPConfig  mcpConfig `json:"mcp_config"`
	}
	mcpConfig struct {
		Command           string                       `json:"command"`
		Args              []string                     `json:"args"`
		Env               orderedObject[string]        `json:"env"`
		PlatformOverrides map[string]map[string]string `json:"platform_overrides"`
	}
	mcpbTool struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	mcpbPrompt struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Arguments   []string `json:"arguments"`
		Text        string   `json:"text"`
	}
	mcpbCompatibility struct {
		ClaudeDesktop string   `json:"claude_desktop"`
		Platforms     []string `json:"platforms"`
	}
	mcpbUserConfig struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Default     any      `json:"default"`
		Required    bool     `json:"required"`
		Sensitive   bool     `json:"sensitive,omitempty"`
		Min         *float64 `json:"min,omitempty"`
		Max         *float64 `json:"max,omitempty"`
	}
)

// orderedObject is a JSON object that keeps its keys in the order given
// (encoding/json sorts map keys; the settings form shows them in file order).
type orderedObject[V any] []struct {
	Key   string
	Value V
}

func (o *orderedObject[V]) add(k string, v V) {
	*o = append(*o, struct {
		Key   string
		Value V
	}{k, v})
}

func (o orderedObject[V]) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Bundle layout, shared with scripts/release: a launcher script for macOS
// and Linux that starts the binary for the machine's architecture
// (MCPB platform_overrides select by OS only), and the Windows binary
// directly.
const (
	bundleLauncher   = "server/stac-mcp"
	bundleWindowsExe = "server/windows-amd64/stac-mcp.exe"
	repoURL          = "https://github.com/stacmcp/stac-mcp"
)

// generateManifest builds manifest.json from the inventory (listed over MCP,
// as a client sees it) and the settings tables.
func generateManifest(t *testing.T) []byte {
	t.Helper()
	cfg, err := loadConfig(nil, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cs, closeSession, err := openInProcessSession(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession()
	ctx := context.Background()

	m := mcpbManifest{
		ManifestVersion: "0.2",
		Name:            "stac-mcp",
		DisplayName:     "STAC catalog explorer",
		// scripts/release writes the release version into the bundle's copy.
		Version:     "0.0.0-dev",
		Description: "Discover and inspect satellite imagery, elevation models and aerial photos in any STAC catalog.",
		LongDescription: "stac-mcp lets Claude search STAC catalogs (Earth Search, Planetary Computer, USGS Landsat, " +
			"Copernicus Data Space, any STAC API or a local catalog.json): collections, items, assets and how much a " +
			"download would weigh. Every tool is read-only, and calls keep working when a catalog is slow or flaky " +
			"(deadlines, bounded retries, a circuit breaker). Ask for the `explore_catalog` or `find_imagery` prompt to start.",
		Author:        mcpbAuthor{Name: "stac-mcp contributors", URL: repoURL},
		Repository:    mcpbRepository{Type: "git", URL: repoURL},
		Homepage:      repoURL,
		Documentation: repoURL + "#readme",
		Support:       repoURL + "/issues",
		Icon:          "icon.png",
		Server: mcpbServer{
			Type:       "binary",
			EntryPoint: bundleLauncher,
			MCPConfig: mcpConfig{
				Command: "${__dirname}/" + bundleLauncher,
				Args:    []string{"stdio"},
				PlatformOverrides: map[string]map[string]string{
					"win32": {"command": "${__dirname}/" + bundleWindowsExe},
				},
			},
		},
		Keywords:      []string{"stac", "geospatial", "satellite imagery", "earth observation", "remote sensing", "sentinel", "landsat"},
		Compatibility: mcpbCompatibility{ClaudeDesktop: ">=0.10.0", Platforms: []string{"darwin", "win32", "linux"}},
	}

	order := map[string]int{}
	for i, tool := range tools.Inventory() {
		order[tool.Def.Name] = i
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		m.Tools = append(m.Tools, mcpbTool{Name: tool.Name, Description: firstSentence(tool.Description)})
	}
	slices.SortStableFunc(m.Tools, func(a, b mcpbTool) int { return order[a.Name] - order[b.Name] })

	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		// MCPB wants a text template; the server writes the real message
		// (prompts/get), so the template restates the request with its
		// arguments, which is also a usable prompt on its own.
		mp := mcpbPrompt{Name: p.Name, Description: p.Description, Arguments: []string{}, Text: p.Description}
		for i, a := range p.Arguments {
			mp.Arguments = append(mp.Arguments, a.Name)
			sep := "\n"
			if i == 0 {
				sep = "\n\n"
			}
			mp.Text += sep + a.Name + ": ${arguments." + a.Name + "}"
		}
		m.Prompts = append(m.Prompts, mp)
	}

	for _, o := range bundleOptions {
		uc := mcpbUserConfig{Type: o.kind, Title: o.title, Description: o.description(), Default: o.def, Sensitive: o.sensitive}
		if o.kind == "number" {
			uc.Min, uc.Max = &o.min, &o.max
		}
		m.UserConfig.add(o.key, uc)
		m.Server.MCPConfig.Env.add(o.env, "${user_config."+o.key+"}")
	}

	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestManifestMatchesInventoryAndSettings fails when manifest.json drifts
// from the code; UPDATE_MANIFEST=true rewrites it.
func TestManifestMatchesInventoryAndSettings(t *testing.T) {
	path := filepath.Join("..", "..", "manifest.json")
	want := generateManifest(t)
	current, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if bytes.Equal(current, want) {
		return
	}
	if os.Getenv("UPDATE_MANIFEST") == "true" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("manifest.json regenerated")
		return
	}
	t.Errorf("manifest.json is out of date with the tools, prompts or settings; run UPDATE_MANIFEST=true go test ./cmd/stac-mcp -run Manifest "+
		"and review the diff.\nwant:\n%s", want)
}

// TestEverySettingIsClassifiedForTheBundle: a setting added to config.go
// must be offered by the bundle or left out with a reason.
func TestEverySettingIsClassifiedForTheBundle(t *testing.T) {
	offered := map[string]bool{}
	for _, o := range bundleOptions {
		if _, ok := settingByEnv(o.env); !ok {
			t.Errorf("bundle option %s maps to %s, which is not a setting", o.key, o.env)
		}
		if o.def == nil {
			t.Errorf("bundle option %s has no default: the host would pass the literal ${user_config.%s} when it is left empty", o.key, o.key)
		}
		if _, dup := leftOutOfBundle[o.env]; dup {
			t.Errorf("%s is both offered by the bundle and left out of it", o.env)
		}
		offered[o.env] = true
	}
	for env := range leftOutOfBundle {
		if _, ok := settingByEnv(env); !ok {
			t.Errorf("leftOutOfBundle names %s, which is not a setting", env)
		}
	}
	for _, s := range allSettings() {
		if _, out := leftOutOfBundle[s.Env]; !offered[s.Env] && !out {
			t.Errorf("setting %s is neither offered by the bundle (bundleOptions) nor left out with a reason (leftOutOfBundle) "+
				"in cmd/stac-mcp/manifest_test.go; decide, then UPDATE_MANIFEST=true go test ./cmd/stac-mcp -run Manifest", s.Env)
		}
	}
}

// TestBundleDefaultsStartTheServer: the environment the host builds from
// the form's defaults (unset optional fields arrive as "") is a
// configuration the server accepts, and each default is what the server
// would use anyway.
func TestBundleDefaultsStartTheServer(t *testing.T) {
	env := map[string]string{}
	for _, o := range bundleOptions {
		env[o.env] = fmt.Sprint(o.def)
	}
	cfg, err := loadConfig([]string{"stdio"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the bundle's default environment %v refuses to start: %v", env, err)
	}
	dflt, err := loadConfig([]string{"stdio"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy != dflt.Policy || cfg.Headers != nil || cfg.NamedCatalogs != nil || cfg.Catalog != tools.DefaultCatalog {
		t.Errorf("the bundle defaults differ from the server's own: %+v vs %+v", cfg, dflt)
	}
}

// TestBundleNumberRangesAreTheServers: the form's min and max are exactly
// the range the server accepts, so the form never offers a value that
// refuses to start (nor forbids one that works).
func TestBundleNumberRangesAreTheServers(t *testing.T) {
	for _, o := range bundleOptions {
		if o.kind != "number" {
			continue
		}
		try := func(v float64) error {
			env := map[string]string{
				o.env: fmt.Sprint(v),
				// Only this variable's own range is under test: keep the
				// attempt timeout within any tool timeout tried.
				"STAC_MCP_ATTEMPT_TIMEOUT_SECS": "1",
			}
			_, err := loadConfig([]string{"stdio"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			return err
		}
		for _, v := range []float64{o.min, o.max} {
			if err := try(v); err != nil {
				t.Errorf("%s=%v (the form's bound) is refused: %v", o.env, v, err)
			}
		}
		for _, v := range []float64{o.min - 0.01, o.max + 0.01} {
			if try(v) == nil {
				t.Errorf("%s=%v (outside the form's %v..%v) is accepted: the form's range is narrower than the server's", o.env, v, o.min, o.max)
			}
		}
	}
}

// TestReadmeInstallListsTheBundleSettings: the README's Claude Desktop
// install steps show every setting the bundle's form asks for.
func TestReadmeInstallListsTheBundleSettings(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "### Claude Desktop: the MCP Bundle")
	end := strings.Index(readme, "### Other MCP clients")
	if start < 0 || end < start {
		t.Fatal("README.md lacks the Claude Desktop install section followed by Other MCP clients")
	}
	for _, o := range bundleOptions {
		if !strings.Contains(readme[start:end], "`"+o.env+"`") {
			t.Errorf("the README's bundle settings table lacks %s (%s)", o.env, o.title)
		}
	}
}
