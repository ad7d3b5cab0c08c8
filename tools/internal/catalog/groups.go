package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// Group is a name that stands for several catalogs (STAC_MCP_CATALOG_GROUPS):
// a catalog_url of the tools that search several catalogs at once may name
// it instead of listing its members.
type Group struct {
	Name    string
	Members []string // preset names, STAC_MCP_CATALOGS names, "demo" or http(s) URLs, in the order given
}

// DefaultMaxMembers is how many catalogs one call may search at once when
// the operator sets nothing (STAC_MCP_MAX_CATALOGS_PER_CALL).
const DefaultMaxMembers = 8

// MaxMembersLimit bounds STAC_MCP_MAX_CATALOGS_PER_CALL: each member is a
// search in flight, with its own pages held in memory until they merge.
const MaxMembersLimit = 32

// ParseGroups reads STAC_MCP_CATALOG_GROUPS: name=member,member entries
// separated by ';' or newlines, e.g.
//
//	public=earth-search,planetary-computer;s2=earth-search,cdse
//
// A group's name follows the rules of a STAC_MCP_CATALOGS name and may not
// repeat or shadow a preset, "demo" or a named catalog. A member is a
// preset, a STAC_MCP_CATALOGS name, "demo" or an http(s) URL; it may not
// repeat within its group, and a group has at most maxMembers of them.
// source names the flag or variable in the errors.
func ParseGroups(source, value string, named []Preset, maxMembers int) ([]Group, error) {
	if maxMembers <= 0 {
		maxMembers = DefaultMaxMembers
	}
	var out []Group
	seen := map[string]bool{}
	for entry := range strings.FieldsFuncSeq(value, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, list, ok := strings.Cut(entry, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("%s: entry %q is not name=catalog,catalog; want e.g. public=earth-search,planetary-computer, "+
				"several groups separated by ';' or newlines", source, redact.Secrets(entry))
		}
		if !namedCatalogName.MatchString(name) {
			return nil, fmt.Errorf("%s: group name %q: want lowercase letters, digits, '-' or '_', starting with a letter (at most 63)", source, name)
		}
		if _, clash := presetURL(name); clash || name == Demo || slices.ContainsFunc(named, func(p Preset) bool { return p.Name == name }) {
			return nil, fmt.Errorf("%s: group name %q is already the name of a catalog; choose another name", source, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: group %q is given twice", source, name)
		}
		seen[name] = true
		g := Group{Name: name}
		for m := range strings.SplitSeq(list, ",") {
			m = strings.TrimSpace(m)
			if m == "" {
				continue
			}
			lower := strings.ToLower(m)
			known := lower == Demo || slices.ContainsFunc(named, func(p Preset) bool { return p.Name == lower })
			if _, ok := presetURL(lower); ok {
				known = true
			}
			switch {
			case known:
				m = lower
			case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
				m = strings.TrimRight(m, "/")
			default:
				return nil, fmt.Errorf("%s: group %q: member %q is not a preset (%s), a STAC_MCP_CATALOGS name, %q or an http(s) URL",
					source, name, redact.Secrets(m), strings.Join(presetNames(), ", "), Demo)
			}
			if slices.Contains(g.Members, m) {
				return nil, fmt.Errorf("%s: group %q names %q twice", source, name, redact.Secrets(m))
			}
			g.Members = append(g.Members, m)
		}
		if len(g.Members) > maxMembers {
			return nil, fmt.Errorf("%s: group %q has %d members, more than the %d catalogs one call may search (STAC_MCP_MAX_CATALOGS_PER_CALL)",
				source, name, len(g.Members), maxMembers)
		}
		out = append(out, g)
	}
	return out, nil
}

// Groups lists the configured groups, in the order given.
func (c *Registry) Groups() []Group {
	out := make([]Group, len(c.opts.Groups))
	for i, g := range c.opts.Groups {
		out[i] = Group{Name: g.Name, Members: slices.Clone(g.Members)}
	}
	return out
}

// Group returns the group ref names (case-insensitively), if it is one.
func (c *Registry) Group(ref string) (Group, bool) {
	name := strings.ToLower(strings.TrimSpace(ref))
	for _, g := range c.opts.Groups {
		if g.Name == name {
			return Group{Name: g.Name, Members: slices.Clone(g.Members)}, true
		}
	}
	return Group{}, false
}

// GroupsOf lists the groups that name the catalog key (a member's Key or
// name), for finding a scene's other copies among the catalogs an operator
// put together.
func (c *Registry) GroupsOf(cat *Catalog) []Group {
	var out []Group
	for _, g := range c.opts.Groups {
		for _, m := range g.Members {
			if m == cat.Name || rootKey(m) == cat.Key {
				out = append(out, Group{Name: g.Name, Members: slices.Clone(g.Members)})
				break
			}
		}
	}
	return out
}

// groupRefusal is why a tool that reads one catalog refuses a group name.
func groupRefusal(g Group) error {
	return fmt.Errorf("catalog_url %q is a group of catalogs (%s): only the tools that search several catalogs at once take a group "+
		"(search_items, get_aggregations, map_items, check_coverage, estimate_data_size, search_collections, index_time_series, aoi_statistics, render_aoi); name one of its catalogs here",
		g.Name, strings.Join(g.Members, ", "))
}
