package pixel

import "fmt"

// ErrorKind is what went wrong in a read, for the adapters to word.
type ErrorKind string

// The kinds of Error.
const (
	ErrNoAsset    ErrorKind = "no-asset"     // the item has no such asset
	ErrNotGeoTIFF ErrorKind = "not-geotiff"  // Detail: the asset's media type
	ErrS3Href     ErrorKind = "s3-href"      // Detail: the href
	ErrLocalFile  ErrorKind = "local-file"   // a local catalog's file that may not or cannot be read; Detail says why
	ErrOpen       ErrorKind = "open"         // the file could not be opened as a GeoTIFF; Err says why
	ErrNoCRS      ErrorKind = "no-crs"       // no EPSG-coded CRS in the GeoKeys
	ErrBadGrid    ErrorKind = "bad-grid"     // the geotransform cannot be used
	ErrPlace      ErrorKind = "place"        // the aoi cannot be placed on the raster
	ErrNoOverlap  ErrorKind = "no-overlap"   // the aoi misses the raster
	ErrTooLarge   ErrorKind = "too-large"    // the window at the coarsest level is over the pixel budget; Detail gives sizes
	ErrTooFine    ErrorKind = "too-fine"     // a band to resample is far finer than the grid and has no level near it
	ErrRequests   ErrorKind = "requests"     // the read would send more range requests than one call may
	ErrRead       ErrorKind = "read"         // a band's pixels could not be read; Err says why
	ErrNoBand     ErrorKind = "no-band"      // the item lacks a band; Detail names it
	ErrNoBandInfo ErrorKind = "no-band-info" // the item has no eo:bands common names at all
)

// Error is a read's failure as facts: what kind, which item, asset and
// band, and the error beneath (a reliability Denial, a cog error).
type Error struct {
	Kind   ErrorKind
	Item   string
	Asset  string
	Band   string
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("item %s", e.Item)
	if e.Asset != "" {
		s += " asset " + e.Asset
	}
	s += ": " + string(e.Kind)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
