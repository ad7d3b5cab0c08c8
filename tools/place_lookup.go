package tools

import "github.com/stacmcp/stac-mcp/tools/internal/places"

// LookupPlace resolves a place query as an area argument does (the
// embedded gazetteer of tools/internal/places), for the benchmarks: the
// name and kind it resolved to, or the error an area argument would give.
func LookupPlace(query string) (name, kind string, err error) {
	m, err := places.Resolve(query)
	if err != nil {
		return "", "", err
	}
	return m.Place.Name, string(m.Place.Kind), nil
}
