package catalog

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// namedCatalogName is what a configured catalog may be called: short,
// lowercase and safe to type as a catalog_url argument.
var namedCatalogName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// ParseNamed reads STAC_MCP_CATALOGS: name=url or name=path pairs
// separated by commas, semicolons or newlines, e.g.
//
//	internal=https://stac.internal.example/v1;archive=/srv/stac/archive/catalog.json
//
// Names are lowercase letters, digits, '-' and '_' (starting with a
// letter) and may not repeat or shadow a preset or "demo". A URL is http(s)
// with a host and no user:password@ (credentials go in
// STAC_MCP_CATALOG_HEADERS_<NAME>); a local static catalog is an absolute
// path, a path starting with '.', or a file:// URL, of its catalog.json or
// of the directory holding it (checked when the server starts). source
// names the flag or variable in the errors.
func ParseNamed(source, value string) ([]Preset, error) {
	var out []Preset
	seen := map[string]bool{}
	for entry := range strings.FieldsFuncSeq(value, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, target, ok := strings.Cut(entry, "=")
		name, target = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(target)
		if !ok || name == "" || target == "" {
			return nil, fmt.Errorf("%s: entry %q is not name=url or name=path; want e.g. internal=https://stac.internal.example/v1 "+
				"or archive=/srv/stac/catalog.json, several separated by ',', ';' or newlines", source, redact.Secrets(entry))
		}
		if !namedCatalogName.MatchString(name) {
			return nil, fmt.Errorf("%s: catalog name %q: want lowercase letters, digits, '-' or '_', starting with a letter (at most 63)", source, name)
		}
		if _, clash := presetURL(name); clash || name == Demo {
			return nil, fmt.Errorf("%s: catalog name %q is already a built-in catalog (presets: %s, and %q); choose another name",
				source, name, strings.Join(presetNames(), ", "), Demo)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: catalog name %q is given twice", source, name)
		}
		seen[name] = true
		if p, ok, err := namedLocal(source, name, target); ok || err != nil {
			if err != nil {
				return nil, err
			}
			out = append(out, p)
			continue
		}
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: catalog %q: %q is not an http(s) URL with a host (e.g. https://stac.internal.example/v1) "+
				"nor a local path (absolute, starting with '.', or file://)", source, name, redact.Secrets(target))
		}
		if u.User != nil {
			return nil, fmt.Errorf("%s: catalog %q: the URL carries user:password@, which is never sent; "+
				"put credentials in STAC_MCP_CATALOG_HEADERS_%s (e.g. Authorization=Basic ...)", source, name, HeadersEnvSuffix(name))
		}
		out = append(out, Preset{Name: name, URL: strings.TrimRight(target, "/"), Why: "configured with STAC_MCP_CATALOGS"})
	}
	return out, nil
}

// namedLocal reads a name=path entry; ok is false when target is not a
// path (then it should be a URL).
func namedLocal(source, name, target string) (Preset, bool, error) {
	path := target
	switch {
	case strings.HasPrefix(strings.ToLower(target), "file://"):
		path = target[len("file://"):]
	case filepath.IsAbs(target), strings.HasPrefix(target, "."):
	default:
		return Preset{}, false, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Preset{}, true, fmt.Errorf("%s: catalog %q: path %q: %w", source, name, target, err)
	}
	return Preset{Name: name, Path: abs, Why: "local static catalog configured with STAC_MCP_CATALOGS"}, true, nil
}

// HeadersEnvSuffix is how a catalog name appears in its headers variable,
// STAC_MCP_CATALOG_HEADERS_<NAME>: uppercase, '-' as '_'.
func HeadersEnvSuffix(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Named lists the catalogs configured with STAC_MCP_CATALOGS, in the
// order given; list_catalogs shows them next to the presets.
func (c *Registry) Named() []Preset { return append([]Preset(nil), c.opts.Named...) }

// named finds a configured catalog by (lowercased) name.
func (c *Registry) named(name string) (Preset, bool) {
	for _, p := range c.opts.Named {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

func presetNames() []string {
	names := make([]string, 0, len(presets))
	for _, p := range presets {
		names = append(names, p.Name)
	}
	return names
}

func namedNames(named []Preset) []string {
	names := make([]string, 0, len(named))
	for _, p := range named {
		names = append(names, p.Name)
	}
	return names
}
