package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/tools"
)

const helpIntro = `stac-mcp: an MCP server to discover and inspect geospatial data in STAC catalogs.

Usage:
  stac-mcp [flags] [stdio]                      serve MCP over stdio (what Claude Desktop runs)
  stac-mcp [flags] http [--addr 127.0.0.1:8080] serve MCP over Streamable HTTP at /mcp, with /metrics and
                                                /healthz; a non-loopback address needs STAC_MCP_HTTP_TOKEN
  stac-mcp [flags] call [--text] [--image-dir DIR] TOOL ['{"json":"args"}']
                                                run one tool in-process through the MCP server and
                                                print its structuredContent as JSON (--text: the text
                                                block; --image-dir: also save its images); a tool
                                                error goes to stderr with exit code 1
  stac-mcp [flags] tools [--json]               list the tools (--json: full definitions with schemas)
  stac-mcp --version | --help

Examples:
  stac-mcp call --catalog demo search_items '{"collections":["naip"],"max_items":2}'
  stac-mcp call --catalog earth-search --text get_collection '{"collection_id":"sentinel-2-l2a"}'
  STAC_MCP_CATALOG_URL=planetary-computer stac-mcp tools
`

// writeHelp prints the commands, every flag with its environment variable,
// and the catalog presets.
func writeHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString(helpIntro)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	section := func(title string, table []settings.Setting) {
		fmt.Fprintf(tw, "\n%s (flag / environment variable; the flag wins):\n", title)
		for _, s := range table {
			fmt.Fprintf(tw, "  --%s %s\t%s\t%s\n", s.Flag, s.Value, s.Env, s.Help)
		}
	}
	section("Server settings", settings.Server)
	section("HTTP server limits (stac-mcp http)", settings.HTTP)
	section("Reliability settings", settings.Reliability)
	section("Retired settings (accepted, no effect)", settings.Retired)
	fmt.Fprintf(tw, "\nSecrets (environment only, never logged):\n")
	for _, s := range settings.Secrets {
		fmt.Fprintf(tw, "  %s=%s\t%s\n", s.Env, s.Value, s.Help)
	}
	fmt.Fprintf(tw, "\nCommand flags:\n")
	fmt.Fprintf(tw, "  --text\tcall: print the text block instead of the structured JSON\n")
	fmt.Fprintf(tw, "  --image-dir DIR\tcall: also write each image the result carries (map_items, get_item_preview) into DIR\n")
	fmt.Fprintf(tw, "  --json\ttools: print full tool definitions as JSON\n")
	fmt.Fprintf(tw, "  --version\tprint the version, commit, build date and Go version\n")
	fmt.Fprintf(tw, "  --help, -h\tshow this help\n")
	fmt.Fprintf(tw, "\nCatalogs (--catalog, STAC_MCP_CATALOG_URL, and every tool's catalog_url argument):\n")
	for _, p := range tools.Presets() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Name, p.URL, p.Why)
	}
	fmt.Fprintf(tw, "  NAME\t\ta catalog configured with --catalogs / STAC_MCP_CATALOGS (a URL or a local path)\n")
	fmt.Fprintf(tw, "  %s\t(in-process)\tthe embedded demo catalog, no network needed\n", tools.DemoCatalog)
	fmt.Fprintf(tw, "  PATH\t\ta local static catalog.json (or its directory), served in-process and searchable (http: --catalog and STAC_MCP_CATALOGS only)\n")
	fmt.Fprintf(tw, "  URL\t\tany STAC API root, e.g. https://example.com/stac/v1\n")
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
