//go:build places_beside

package places

// The MCP bundle's five binaries share one copy of the gazetteer, beside
// them (adr/0033): built with -tags places_beside, a binary reads it from
// there on first use instead of embedding 3.4 MB of it each.
func placesData() ([]byte, error) { return readPlacesBeside() }
