package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/stacclient/freetext"
	"github.com/stacmcp/stac-mcp/tools"
)

// envPrefix starts every variable stac-mcp reads.
const envPrefix = "STAC_MCP_"

// envPrefixFamilies are prefixes of variable families read by name
// pattern rather than from a settings table, and of variables other parts
// of the project read (the SLO benchmark harness): names under them are not
// reported as unknown.
var envPrefixFamilies = []string{"STAC_MCP_SLO_", settings.EnvCatalogHeaders}

// knownEnvNames are the variables the settings tables declare.
func knownEnvNames() []string {
	var names []string
	for _, s := range slices.Concat(settings.WithFlags(), settings.Secrets) {
		names = append(names, s.Env)
	}
	return names
}

// unknownEnvWarnings returns a warning for each STAC_MCP_* variable in
// environ ("NAME=value" entries) that no setting reads, naming the closest
// known variable: a mistyped name is otherwise silently ignored and the
// server runs with a default the operator did not mean.
func unknownEnvWarnings(environ []string) []string {
	known := knownEnvNames()
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || slices.Contains(known, name) ||
			slices.ContainsFunc(envPrefixFamilies, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		w := fmt.Sprintf("%s is not a stac-mcp setting and is ignored", name)
		if closest, d := closestName(name, known); d <= max(3, len(name)/4) {
			w += fmt.Sprintf("; did you mean %s?", closest)
		} else {
			w += "; run stac-mcp --help for the settings"
		}
		warnings = append(warnings, w)
	}
	slices.Sort(warnings)
	return slices.Compact(warnings)
}

// unknownCatalogHeaderWarnings reports STAC_MCP_CATALOG_HEADERS_<NAME>
// variables whose NAME is no preset or configured catalog: credentials
// under a misspelt name would silently never be sent.
func unknownCatalogHeaderWarnings(environ []string, named []tools.Preset) []string {
	var suffixes []string
	for _, p := range slices.Concat(tools.Presets(), named) {
		suffixes = append(suffixes, settings.EnvCatalogHeaders+tools.HeadersEnvSuffix(p.Name))
	}
	var warnings []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, settings.EnvCatalogHeaders) || slices.Contains(suffixes, name) {
			continue
		}
		closest, _ := closestName(name, suffixes)
		warnings = append(warnings, fmt.Sprintf("%s names no preset or STAC_MCP_CATALOGS catalog, so these headers are sent nowhere; did you mean %s?", name, closest))
	}
	slices.Sort(warnings)
	return warnings
}

// closestName is the candidate with the smallest edit distance to name.
func closestName(name string, candidates []string) (string, int) {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := freetext.EditDistance(name, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD
}
