package tools

import (
	"fmt"

	"github.com/stacmcp/stac-mcp/tools/internal/catalog"
)

// The catalog registry lives in tools/internal/catalog. These are the names
// cmd and bench configure it with (cmd reads STAC_MCP_CATALOGS and the
// header variables, bench builds catalogs for its harness); the tools use
// the same types through Deps.Catalogs.
type (
	// Catalogs resolves catalog references and serves the demo and local
	// static catalogs in-process; see catalog.Registry.
	Catalogs = catalog.Registry
	// CatalogsOptions configure how references become clients.
	CatalogsOptions = catalog.Options
	// Catalog is a resolved catalog reference.
	Catalog = catalog.Catalog
	// Preset is a catalog known by name: a built-in preset or a
	// STAC_MCP_CATALOGS entry.
	Preset = catalog.Preset
	// CatalogGroup is a name that stands for several catalogs
	// (STAC_MCP_CATALOG_GROUPS).
	CatalogGroup = catalog.Group
)

// MaxCatalogsPerCallLimit bounds STAC_MCP_MAX_CATALOGS_PER_CALL.
const MaxCatalogsPerCallLimit = catalog.MaxMembersLimit

// ParseCatalogGroups reads STAC_MCP_CATALOG_GROUPS (see
// catalog.ParseGroups); maxMembers is STAC_MCP_MAX_CATALOGS_PER_CALL (0:
// the default).
func ParseCatalogGroups(source, value string, named []Preset, maxMembers int) ([]CatalogGroup, error) {
	return catalog.ParseGroups(source, value, named, maxMembers)
}

const (
	// DefaultCatalog is the reference used when neither --catalog,
	// STAC_MCP_CATALOG_URL nor a tool's catalog_url names one.
	DefaultCatalog = catalog.DefaultPreset
	// DemoCatalog names the embedded demo catalog, served in-process.
	DemoCatalog = catalog.Demo
)

// NewCatalogs returns a catalog registry; call Close when done to stop its
// in-process servers.
func NewCatalogs(opts CatalogsOptions) *Catalogs { return catalog.New(opts) }

// Presets lists the preset catalogs, in the order --help shows them.
func Presets() []Preset { return catalog.Presets() }

// ParseNamedCatalogs reads STAC_MCP_CATALOGS (see catalog.ParseNamed);
// source names the flag or variable in the errors.
func ParseNamedCatalogs(source, value string) ([]Preset, error) {
	return catalog.ParseNamed(source, value)
}

// HeadersEnvSuffix is how a catalog name appears in its headers variable,
// STAC_MCP_CATALOG_HEADERS_<NAME>: uppercase, '-' as '_'.
func HeadersEnvSuffix(name string) string { return catalog.HeadersEnvSuffix(name) }

// KnowsCatalogName reports whether name is a preset or one of named, i.e.
// a catalog STAC_MCP_CATALOG_HEADERS_<NAME> may configure headers for.
func KnowsCatalogName(name string, named []Preset) (remote, ok bool) {
	return catalog.KnowsName(name, named)
}

// maxLoadNotes bounds how many loader notes a tool result repeats.
const maxLoadNotes = 10

// loadNotes are the loader's notes as a tool result shows them: what a
// static catalog skipped, at most maxLoadNotes and a count of the rest
// (the startup log has them all).
func loadNotes(c *Catalog) []string {
	notes := []string{}
	for i, n := range c.Notes {
		if i == maxLoadNotes {
			notes = append(notes, fmt.Sprintf("loading the static catalog skipped %d more file(s) or item(s); the server log lists them all", len(c.Notes)-i))
			break
		}
		notes = append(notes, "loading the static catalog "+n)
	}
	return notes
}
