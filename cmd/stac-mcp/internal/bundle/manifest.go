package bundle

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools"
)

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
		License         string             `json:"license"`
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

// License is the SPDX identifier of the repository's LICENSE (adr/0036),
// which the bundle's manifest and the registry entry state.
const License = "Apache-2.0"

// What both the bundle and the registry entry call the server.
const (
	displayName = "STAC catalog explorer"
	description = "Discover and inspect satellite imagery, elevation models and aerial photos in any STAC catalog."
)

// Manifest renders manifest.json from the tools and prompts a client of a
// server with the defaults lists (Surface), and from the settings table.
func Manifest(listed []*mcp.Tool, prompts []*mcp.Prompt) ([]byte, error) {
	m := mcpbManifest{
		ManifestVersion: "0.2",
		Name:            "stac-mcp",
		DisplayName:     displayName,
		// scripts/release writes the release version into the bundle's copy.
		Version:     "0.0.0-dev",
		Description: description,
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
		License:       License,
		Compatibility: mcpbCompatibility{ClaudeDesktop: ">=0.10.0", Platforms: []string{"darwin", "win32", "linux"}},
	}

	order := map[string]int{}
	for i, tool := range tools.Inventory() {
		order[tool.Def.Name] = i
	}
	for _, tool := range listed {
		m.Tools = append(m.Tools, mcpbTool{Name: tool.Name, Description: firstSentence(tool.Description)})
	}
	slices.SortStableFunc(m.Tools, func(a, b mcpbTool) int { return order[a.Name] - order[b.Name] })

	for _, p := range prompts {
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

	for _, o := range Options {
		uc := mcpbUserConfig{Type: o.Kind, Title: o.Title, Description: o.description(), Default: o.Default, Sensitive: o.Sensitive}
		if o.Kind == "number" {
			uc.Min, uc.Max = &o.Min, &o.Max
		}
		m.UserConfig.add(o.Key, uc)
		m.Server.MCPConfig.Env.add(o.Env, "${user_config."+o.Key+"}")
	}
	return encode(m)
}

// encode writes v as the committed files are: indented by two spaces,
// '<', '>' and '&' as themselves, a final newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// firstSentence is a tool description up to the first ". " or line end,
// as `stac-mcp tools` prints it.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
