package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// ListCatalogsIn takes no arguments beyond the common catalog_url, which
// this tool ignores (it lists catalogs rather than reading one).
type ListCatalogsIn struct {
	CatalogArg
}

// CatalogEntry is one catalog a catalog_url argument can name.
type CatalogEntry struct {
	Name        string   `json:"name" jsonschema:"what to pass as catalog_url"`
	URL         string   `json:"url,omitempty" jsonschema:"the STAC API root URL (empty for the embedded demo catalog)"`
	Description string   `json:"description"`
	Kind        string   `json:"kind" jsonschema:"preset (built in), named (configured with STAC_MCP_CATALOGS: a URL, or a local static catalog without one), demo (embedded, offline) or group (STAC_MCP_CATALOG_GROUPS: several catalogs searched at once)"`
	Members     []string `json:"members,omitempty" jsonschema:"a group's catalogs"`
	Default     bool     `json:"default" jsonschema:"true for the catalog used when catalog_url is omitted"`
}

// ListCatalogsOut lists the catalogs by name.
type ListCatalogsOut struct {
	Default  string         `json:"default" jsonschema:"the catalog used when catalog_url is omitted, as configured (a name, URL or path)"`
	Catalogs []CatalogEntry `json:"catalogs"`
	Notes    []string       `json:"notes"`
}

// ListCatalogs is the list_catalogs tool.
func ListCatalogs() Tool {
	return define(&mcp.Tool{
		Name:  "list_catalogs",
		Title: "List known catalogs",
		Description: "Names catalog_url accepts: presets, configured catalogs, the offline demo, groups; the default marked. " +
			"No upstream request.\n" +
			`Example: {}`,
		Annotations: &mcp.ToolAnnotations{Title: "List known catalogs", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}, false, listCatalogs)
}

func listCatalogs(_ context.Context, c *Call, _ ListCatalogsIn) (ListCatalogsOut, string, error) {
	def := c.Deps.Catalogs.Default()
	out := ListCatalogsOut{Default: redact.Secrets(def), Catalogs: []CatalogEntry{}, Notes: []string{}}
	isDefault := func(name, url string) bool {
		return strings.EqualFold(def, name) || (url != "" && strings.TrimRight(def, "/") == url)
	}
	for _, p := range Presets() {
		out.Catalogs = append(out.Catalogs, CatalogEntry{Name: p.Name, URL: p.URL, Description: p.Why, Kind: "preset", Default: isDefault(p.Name, p.URL)})
	}
	for _, p := range c.Deps.Catalogs.Named() {
		// A configured URL may carry a key (?api_key=...): show it redacted.
		// A local catalog's path is the operator's business: no URL.
		out.Catalogs = append(out.Catalogs, CatalogEntry{Name: p.Name, URL: redact.Secrets(p.URL), Description: p.Why, Kind: "named", Default: isDefault(p.Name, p.URL)})
	}
	out.Catalogs = append(out.Catalogs, CatalogEntry{Name: DemoCatalog, Kind: "demo", Default: isDefault(DemoCatalog, ""),
		Description: "embedded demo catalog served in-process: works offline, small sample collections"})
	for _, g := range c.Deps.Catalogs.Groups() {
		members := make([]string, len(g.Members))
		for i, m := range g.Members {
			members[i] = redact.Secrets(m)
		}
		out.Catalogs = append(out.Catalogs, CatalogEntry{Name: g.Name, Kind: "group", Members: members,
			Description: "searched at once by the tools that take several catalogs (search_items, get_aggregations, map_items, check_coverage, estimate_data_size, search_collections, index_time_series, aoi_statistics, render_aoi)"})
	}
	found := false
	for _, e := range out.Catalogs {
		found = found || e.Default
	}
	if !found {
		out.Notes = append(out.Notes, fmt.Sprintf("the default catalog %q is a URL or path, not one of the names above", out.Default))
	}
	return out, listCatalogsText(out), nil
}

func listCatalogsText(out ListCatalogsOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d catalog(s); pass the name as catalog_url.\n", len(out.Catalogs))
	for _, e := range out.Catalogs {
		mark := ""
		if e.Default {
			mark = " (default)"
		}
		if e.Kind == "group" {
			fmt.Fprintf(&b, "- %s [group] %s: %s\n", e.Name, strings.Join(e.Members, ", "), e.Description)
			continue
		}
		fmt.Fprintf(&b, "- %s%s [%s] %s: %s\n", e.Name, mark, e.Kind, orDash(e.URL), e.Description)
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
