package stacclient

import "encoding/json"

// Extra holds the members of a STAC JSON object that the typed fields do not
// name (extension fields, vendor fields). They are written back unchanged, so
// an object read and written again is the same JSON.
type Extra map[string]json.RawMessage

// Link is a STAC/OGC link, including the pagination members of the STAC API
// spec (method, headers, body, merge).
type Link struct {
	Href    string          `json:"href"`
	Rel     string          `json:"rel"`
	Type    string          `json:"type,omitempty"`
	Title   string          `json:"title,omitempty"`
	Method  string          `json:"method,omitempty"`  // empty means GET
	Headers map[string]any  `json:"headers,omitempty"` // values are a string or a list of strings
	Body    json.RawMessage `json:"body,omitempty"`
	Merge   bool            `json:"merge,omitempty"`
	Extra   Extra           `json:"-"`
}

// Asset is one entry of an Item's or Collection's assets (or item_assets).
type Asset struct {
	Href        string   `json:"href,omitempty"` // required in assets, absent in item_assets
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	Extra       Extra    `json:"-"` // file:size, raster:bands, proj:shape, eo:bands, ...
}

// Provider is a Collection provider.
type Provider struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	URL         string   `json:"url,omitempty"`
	Extra       Extra    `json:"-"`
}

// Extent is a Collection's spatial and temporal extent.
type Extent struct {
	Spatial  SpatialExtent  `json:"spatial"`
	Temporal TemporalExtent `json:"temporal"`
	Extra    Extra          `json:"-"`
}

// SpatialExtent holds bounding boxes; the first is the overall one.
type SpatialExtent struct {
	BBox  [][]float64 `json:"bbox"`
	Extra Extra       `json:"-"`
}

// TemporalExtent holds intervals; nil ends are open.
type TemporalExtent struct {
	Interval [][]*string `json:"interval"`
	Extra    Extra       `json:"-"`
}

// Catalog is a STAC Catalog, which is also what a STAC API landing page is.
type Catalog struct {
	Type           string   `json:"type"`
	StacVersion    string   `json:"stac_version,omitempty"`
	StacExtensions []string `json:"stac_extensions,omitempty"`
	ID             string   `json:"id"`
	Title          string   `json:"title,omitempty"`
	Description    string   `json:"description,omitempty"`
	ConformsTo     []string `json:"conformsTo,omitempty"`
	Links          []Link   `json:"links"`
	Extra          Extra    `json:"-"`
}

// Collection is a STAC Collection.
type Collection struct {
	Type           string                     `json:"type"`
	StacVersion    string                     `json:"stac_version,omitempty"`
	StacExtensions []string                   `json:"stac_extensions,omitempty"`
	ID             string                     `json:"id"`
	Title          string                     `json:"title,omitempty"`
	Description    string                     `json:"description,omitempty"`
	Keywords       []string                   `json:"keywords,omitempty"`
	License        string                     `json:"license,omitempty"`
	Providers      []Provider                 `json:"providers,omitempty"`
	Extent         Extent                     `json:"extent"`
	Summaries      map[string]json.RawMessage `json:"summaries,omitempty"`
	Links          []Link                     `json:"links"`
	Assets         map[string]Asset           `json:"assets,omitempty"`
	ItemAssets     map[string]Asset           `json:"item_assets,omitempty"`
	Extra          Extra                      `json:"-"`
}

// Item is a STAC Item (a GeoJSON Feature). Properties keep numbers as
// json.Number so that writing an Item back reproduces its numbers exactly.
type Item struct {
	Type           string           `json:"type"`
	StacVersion    string           `json:"stac_version,omitempty"`
	StacExtensions []string         `json:"stac_extensions,omitempty"`
	ID             string           `json:"id"`
	Geometry       json.RawMessage  `json:"geometry"`
	BBox           []float64        `json:"bbox,omitempty"`
	Properties     map[string]any   `json:"properties"`
	Links          []Link           `json:"links"`
	Assets         map[string]Asset `json:"assets"`
	Collection     string           `json:"collection,omitempty"`
	Extra          Extra            `json:"-"`

	// source is the JSON object the Item was decoded from (see Source).
	source json.RawMessage
}

// SearchContext is the (deprecated but widespread) STAC API context object.
type SearchContext struct {
	Limit    *int  `json:"limit,omitempty"`
	Matched  *int  `json:"matched,omitempty"`
	Returned int   `json:"returned"`
	Extra    Extra `json:"-"`
}

// ItemCollection is one page of search or items results.
type ItemCollection struct {
	Type           string         `json:"type"`
	Features       []Item         `json:"features"`
	Links          []Link         `json:"links,omitempty"`
	NumberMatched  *int           `json:"numberMatched,omitempty"`
	NumberReturned *int           `json:"numberReturned,omitempty"`
	Context        *SearchContext `json:"context,omitempty"`
	Extra          Extra          `json:"-"`
}

// CollectionList is one page of /collections.
type CollectionList struct {
	Collections    []Collection `json:"collections"`
	Links          []Link       `json:"links,omitempty"`
	NumberMatched  *int         `json:"numberMatched,omitempty"`
	NumberReturned *int         `json:"numberReturned,omitempty"`
	Extra          Extra        `json:"-"`
}

// Queryables is a queryables document (a JSON Schema); Properties maps each
// queryable name to its schema.
type Queryables struct {
	Schema      string                     `json:"$schema,omitempty"`
	ID          string                     `json:"$id,omitempty"`
	Type        string                     `json:"type,omitempty"`
	Title       string                     `json:"title,omitempty"`
	Description string                     `json:"description,omitempty"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Extra       Extra                      `json:"-"`
}

// AggregationResult is the answer of the aggregation extension's /aggregate
// (or the list of available aggregations from /aggregations).
type AggregationResult struct {
	Type          string        `json:"type,omitempty"`
	Aggregations  []Aggregation `json:"aggregations"`
	Links         []Link        `json:"links,omitempty"`
	NumberMatched *int          `json:"numberMatched,omitempty"`
	Extra         Extra         `json:"-"`
}

// Aggregation is one named aggregation; Buckets is empty for definitions and
// for single-value aggregations (which use Value).
type Aggregation struct {
	Name     string          `json:"name"`
	DataType string          `json:"data_type,omitempty"`
	Buckets  []Bucket        `json:"buckets,omitempty"`
	Overflow *int            `json:"overflow,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
	Extra    Extra           `json:"-"`
}

// Bucket is one bucket of an aggregation.
type Bucket struct {
	Key       json.RawMessage `json:"key"`
	DataType  string          `json:"data_type,omitempty"`
	Frequency int             `json:"frequency"`
	To        json.RawMessage `json:"to,omitempty"`
	From      json.RawMessage `json:"from,omitempty"`
	Extra     Extra           `json:"-"`
}
