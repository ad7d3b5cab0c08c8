package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Toolsets group the tools so an operator can list fewer of them (each
// listed tool costs the model context before any work), as
// github-mcp-server does: --toolsets names groups, --tools single tools,
// --read-only drops every tool that changes a catalog. The inventory is the
// one source: every Tool carries its Toolset, and the server, the README
// tables and the snapshot tests all select through Surface.

// Toolset names.
const (
	ToolsetDiscover = "discover"
	ToolsetSearch   = "search"
	ToolsetSize     = "size"
	ToolsetVisual   = "visual"
	ToolsetPixels   = "pixels"
	ToolsetExport   = "export"
	ToolsetOps      = "ops"
	ToolsetWrite    = "write"
	// ToolsetAll names every toolset (the default); the write toolset is
	// included only when writes are allowed.
	ToolsetAll = "all"
)

// ToolsetInfo documents one toolset.
type ToolsetInfo struct {
	Name        string
	Description string
}

// Toolsets lists the toolsets in inventory order, documented.
func Toolsets() []ToolsetInfo {
	return []ToolsetInfo{
		{ToolsetDiscover, "catalogs and collections: what a catalog is, supports and holds"},
		{ToolsetSearch, "items: search, fetch one, aggregate"},
		{ToolsetSize, "how many bytes a search's assets hold"},
		{ToolsetVisual, "pictures and areas: item previews, footprint maps, coverage of an area"},
		{ToolsetPixels, "what the imagery says over an area, read from its COGs: band statistics, spectral indices, pictures, time series"},
		{ToolsetExport, "files a GIS opens: an area's pixels (Cloud-Optimized GeoTIFF), a series (CSV), a search's items (GeoJSON); over stdio written to the export folder"},
		{ToolsetOps, "the server's view of each catalog's health"},
		{ToolsetWrite, "create, update and delete items and collections (only with --allow-writes, never with --read-only)"},
	}
}

// inToolset marks tools as members of a toolset.
func inToolset(name string, tools ...Tool) []Tool {
	for i := range tools {
		tools[i].Toolset = name
	}
	return tools
}

// SurfaceOptions choose the tools a server lists.
type SurfaceOptions struct {
	// Toolsets to list; empty (or "all") means every toolset.
	Toolsets []string
	// Tools to list besides the toolsets' (by name). When Tools is given
	// and Toolsets is not, only these tools are listed.
	Tools []string
	// ReadOnly drops every write tool, whatever else is asked.
	ReadOnly bool
	// WritesAllowed says the write tools are available (--allow-writes).
	WritesAllowed bool
}

// Surface is a checked choice of tools; the zero Surface lists every
// available tool.
type Surface struct {
	enabled map[string]bool // nil: every tool
}

// NewSurface checks opts against candidates (every tool the server could
// list) and returns the Surface they describe. An unknown toolset or tool
// name is an error that lists the valid ones; so is asking for a write
// tool when writes are not allowed or the server is read-only.
func NewSurface(candidates []Tool, opts SurfaceOptions) (Surface, error) {
	sets := map[string]bool{}
	for _, ts := range Toolsets() {
		sets[ts.Name] = true
	}
	byName := map[string]Tool{}
	var toolNames []string
	for _, t := range candidates {
		byName[t.Def.Name] = t
		toolNames = append(toolNames, t.Def.Name)
	}
	writesOff := func(what string) error {
		if opts.ReadOnly {
			return fmt.Errorf("%s changes catalogs, and the server is read-only (--read-only / STAC_MCP_READ_ONLY)", what)
		}
		return fmt.Errorf("%s changes catalogs: start the server with --allow-writes (STAC_MCP_ALLOW_WRITES=true) to list it", what)
	}
	allSets := len(opts.Toolsets) == 0 && len(opts.Tools) == 0
	wanted := map[string]bool{}
	for _, name := range opts.Toolsets {
		name = strings.ToLower(strings.TrimSpace(name))
		switch {
		case name == "":
		case name == ToolsetAll:
			allSets = true
		case !sets[name]:
			return Surface{}, fmt.Errorf("unknown toolset %q; toolsets: %s, %s", name, ToolsetAll, strings.Join(toolsetNames(), ", "))
		case name == ToolsetWrite && (opts.ReadOnly || !opts.WritesAllowed):
			return Surface{}, writesOff("the write toolset")
		default:
			wanted[name] = true
		}
	}
	enabled := map[string]bool{}
	for _, t := range candidates {
		if t.Toolset == ToolsetWrite && opts.ReadOnly {
			continue
		}
		if allSets || wanted[t.Toolset] {
			enabled[t.Def.Name] = true
		}
	}
	for _, name := range opts.Tools {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		t, ok := byName[name]
		switch {
		case !ok && slices.ContainsFunc(WriteTools(), func(w Tool) bool { return w.Def.Name == name }):
			return Surface{}, writesOff(name)
		case !ok:
			return Surface{}, fmt.Errorf("unknown tool %q; tools: %s", name, strings.Join(toolNames, ", "))
		case t.Toolset == ToolsetWrite && opts.ReadOnly:
			return Surface{}, writesOff(name)
		}
		enabled[name] = true
	}
	if len(enabled) == 0 {
		return Surface{}, fmt.Errorf("the toolsets %v list no tool", opts.Toolsets)
	}
	return Surface{enabled: enabled}, nil
}

// Select keeps the tools of candidates the surface lists, in order.
func (s Surface) Select(candidates []Tool) []Tool {
	if s.enabled == nil {
		return candidates
	}
	var out []Tool
	for _, t := range candidates {
		if s.enabled[t.Def.Name] {
			out = append(out, t)
		}
	}
	return out
}

func toolsetNames() []string {
	var names []string
	for _, ts := range Toolsets() {
		names = append(names, ts.Name)
	}
	return names
}

// PromptBytes is what a host puts in the model's prompt for the listed
// tools before any work: their names, descriptions and input schemas as
// compact JSON. TestToolsListBudget holds the default set to its budget,
// BenchmarkToolsListBytes (bench/) reports it, and go generate writes it
// into docs/configuration.md.
func PromptBytes(listed []*mcp.Tool) int {
	total := 0
	for _, tool := range listed {
		raw, err := json.Marshal(struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			InputSchema any    `json:"inputSchema"`
		}{tool.Name, tool.Description, tool.InputSchema})
		if err != nil {
			panic(err) // a listed tool is JSON already
		}
		total += len(raw)
	}
	return total
}
