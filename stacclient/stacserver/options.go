package stacserver

import (
	"net/http"
	"os"
)

// NextLinkStyle is how a server words its rel=next links; real catalogs
// differ (see docs in the constants).
type NextLinkStyle int

const (
	// NextDefault: POST searches get POSTMergeFalse links, GET searches GETToken.
	NextDefault NextLinkStyle = iota
	// NextPOSTBodyToken is Planetary Computer (pgstac): POST, no merge, body =
	// the query repeated plus "token": "next:…". GET pages use ?token=next:….
	NextPOSTBodyToken
	// NextPOSTTokenOnly is SAGE (pgstac): POST, no merge, body = only
	// {"token": "next:…"}; the server remembers the query.
	NextPOSTTokenOnly
	// NextPOSTMergeFalse is stac-server (Earth Search): POST, "merge": false,
	// body = the full query plus "next": "<token>". GET pages use ?next=.
	NextPOSTMergeFalse
	// NextPOSTMergeTrue is Astraea: POST, "merge": true, body = {"next": …}
	// only; the client overlays it on its original body.
	NextPOSTMergeTrue
	// NextGETCursor is CMR-STAC: a GET href with every parameter plus
	// cursor=<token>, even after a POST search.
	NextGETCursor
	// NextGETToken: a GET href with every parameter plus next=<token>, also
	// after a POST search.
	NextGETToken
)

// LimitMode is what happens to a limit above MaxLimit.
type LimitMode int

const (
	// LimitClamp silently serves MaxLimit items (stac-server).
	LimitClamp LimitMode = iota
	// LimitReject answers 422 (Planetary Computer: 1..1000).
	LimitReject
)

// Options switches the real-world behaviours of a Server. The zero value is
// a well-behaved STAC API advertising every class it implements.
type Options struct {
	ID, Title, Description string // landing page; defaults "stacserver", …

	// BasePath serves the API under a path, as real catalogs are
	// (https://earth-search.aws.element84.com/v1): requests outside it get
	// 404, and every link the server writes starts with it.
	BasePath string

	NextLinkStyle NextLinkStyle
	DefaultLimit  int // page size when the request has no limit; 0 means 10
	MaxLimit      int // 0 means 10000
	LimitMode     LimitMode

	// RequireCollections answers a search naming no collection (and no
	// {"property":"collection"} in its filter) with 422 "collection is required".
	RequireCollections bool
	// DisablePOSTSearch answers POST /search with 405; the landing page's
	// search link then lists only GET.
	DisablePOSTSearch bool
	// ConformsTo replaces the advertised classes; nil means DefaultConformance.
	// Either way the classes of endpoints turned off below are left out, so
	// a test need not repeat a Disable* option in its override. Collection
	// search parameters are honoured only when a collection-search class is
	// advertised.
	ConformsTo         []string
	DisableFeatures    bool // no /collections/{id}/items endpoints (404)
	DisableAggregation bool // no /aggregate, /aggregations
	DisableQueryables  bool // no /queryables endpoints

	// Pagination faults, for testing clients.
	RepeatNextLink       bool // the next link never advances: a cycle
	DuplicateAcrossPages bool // page n+1 starts with the last item of page n
	TrailingEmptyPage    bool // the last page still links to an empty page
	GrowingNextHref      bool // every next link is longer than the one before

	// OnRequest, if set, is called for every request before it is served.
	OnRequest func(*http.Request)

	// AssetDir is the absolute directory of a static catalog loaded from
	// disk (the directory LoadFS read). When set, a relative asset href of
	// an item with a file in the catalog ("./ortho-2.tif") is served as the
	// absolute path it names on this machine, which a reader can open; the
	// stored document keeps it as written, and a written document that
	// comes back with such a path is written relative again (assets.go), so
	// the catalog's files never hold this machine's paths.
	AssetDir string

	// Writes, when set, turns on the STAC Transaction extensions for items
	// and collections (POST/PUT/PATCH/DELETE, see transactions.go) and
	// advertises their conformance classes. nil: the server is read-only.
	Writes *WriteOptions
}

// WriteOptions configure the Transaction endpoints.
type WriteOptions struct {
	// Dir, when set, is the directory of the static catalog the store was
	// loaded from (LoadFS on Dir.FS()): every change is written to its
	// files, atomically, before it is served. nil keeps changes in memory.
	Dir *os.Root
	// RootFile is the root catalog file in Dir ("catalog.json" when
	// empty); a new collection gets a child link in it.
	RootFile string
	// Limits bound re-reading the catalog when another process changed it
	// (disk.go); the zero value means LoadOptions' defaults.
	Limits LoadOptions
	// OnApplied, if set, is called once per change after it is applied
	// (persisted and visible), before the answer is written; tests count
	// side effects with it.
	OnApplied func(r *http.Request)
}

func (o Options) defaultLimit() int {
	if o.DefaultLimit > 0 {
		return o.DefaultLimit
	}
	return 10
}

func (o Options) maxLimit() int {
	if o.MaxLimit > 0 {
		return o.MaxLimit
	}
	return 10000
}

// DefaultConformance is every class this server implements (v1.0.0 URIs).
func DefaultConformance() []string {
	return append([]string{
		"https://api.stacspec.org/v1.0.0/core",
		"https://api.stacspec.org/v1.0.0/collections",
		"https://api.stacspec.org/v1.0.0/ogcapi-features",
		"https://api.stacspec.org/v1.0.0/item-search",
		"https://api.stacspec.org/v1.0.0/item-search#filter",
		"https://api.stacspec.org/v1.0.0/item-search#query",
		"https://api.stacspec.org/v1.0.0/item-search#sort",
		"https://api.stacspec.org/v1.0.0/item-search#fields",
		"https://api.stacspec.org/v1.0.0/item-search#context",
		"https://api.stacspec.org/v1.0.0/collection-search",
		"https://api.stacspec.org/v1.0.0/collection-search#free-text",
		"https://api.stacspec.org/v0.3.0/aggregation",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
	}, cql2Classes...)
}
