package pcsign

import (
	"net/url"
	"strings"
)

// Planetary Computer addresses.
const (
	// stacAPIURL is the Planetary Computer STAC API.
	stacAPIURL = "https://planetarycomputer.microsoft.com/api/stac/v1"
	// DefaultTokenURL is the Data Authentication API's per-collection token
	// endpoint; the collection id is appended as one more path segment.
	DefaultTokenURL = "https://planetarycomputer.microsoft.com/api/sas/v1/token"

	planetaryComputerHost = "planetarycomputer.microsoft.com"
	stacAPIPath           = "/api/stac/v1"
)

// IsPlanetaryComputer reports whether catalogURL is the Planetary Computer
// STAC API (host planetarycomputer.microsoft.com, path /api/stac/v1 or below
// it). Planetary Computer tokens grant access only to Planetary Computer
// storage, so tools offer asset signing for this catalog alone and refuse
// the sign_assets flag for any other.
func IsPlanetaryComputer(catalogURL string) bool {
	u, err := url.Parse(strings.TrimSpace(catalogURL))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	if !strings.EqualFold(u.Hostname(), planetaryComputerHost) {
		return false
	}
	path := strings.TrimSuffix(u.Path, "/")
	return path == stacAPIPath || strings.HasPrefix(path, stacAPIPath+"/")
}
