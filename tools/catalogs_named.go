package tools

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// namedCatalogName is what a configured catalog may be called: short,
// lowercase and safe to type as a catalog_url argument.
var namedCatalogName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)

// ParseNamedCatalogs reads STAC_MCP_CATALOGS: name=url pairs separated by
// commas, semicolons or newlines, e.g.
//
//	internal=https://stac.internal.example/v1;archive=https://archive.example/stac
//
// Names are lowercase letters, digits, '-' and '_' (starting with a
// letter) and may not repeat or shadow a preset or "demo"; URLs are http(s)
// with a host. source names the flag or variable in the errors.
func ParseNamedCatalogs(source, value string) ([]Preset, error) {
	var out []Preset
	seen := map[string]bool{}
	for entry := range strings.FieldsFuncSeq(value, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, rawURL, ok := strings.Cut(entry, "=")
		name, rawURL = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(rawURL)
		if !ok || name == "" || rawURL == "" {
			return nil, fmt.Errorf("%s: entry %q is not name=url; want e.g. internal=https://stac.internal.example/v1, "+
				"several separated by ',', ';' or newlines", source, entry)
		}
		if !namedCatalogName.MatchString(name) {
			return nil, fmt.Errorf("%s: catalog name %q: want lowercase letters, digits, '-' or '_', starting with a letter (at most 63)", source, name)
		}
		if _, clash := presetURL(name); clash || name == DemoCatalog {
			return nil, fmt.Errorf("%s: catalog name %q is already a built-in catalog (presets: %s, and %q); choose another name",
				source, name, strings.Join(presetNames(), ", "), DemoCatalog)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: catalog name %q is given twice", source, name)
		}
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: catalog %q: URL %q is not an http(s) URL with a host, e.g. https://stac.internal.example/v1", source, name, rawURL)
		}
		seen[name] = true
		out = append(out, Preset{Name: name, URL: strings.TrimRight(rawURL, "/"), Why: "configured with STAC_MCP_CATALOGS"})
	}
	return out, nil
}

// Named lists the catalogs configured with STAC_MCP_CATALOGS, in the
// order given; list_catalogs shows them next to the presets.
func (c *Catalogs) Named() []Preset { return append([]Preset(nil), c.opts.Named...) }

// namedURL finds a configured catalog by (lowercased) name.
func (c *Catalogs) namedURL(name string) (string, bool) {
	for _, p := range c.opts.Named {
		if p.Name == name {
			return p.URL, true
		}
	}
	return "", false
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
