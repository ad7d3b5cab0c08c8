package stacclient

import (
	"context"
	"iter"
	"net/http"
)

// Options configures a Client.
type Options struct {
	// HTTPClient makes every request; nil means a client with a 30 s timeout.
	// The reliability package supplies one with the retry policy.
	HTTPClient *http.Client
	// Headers are sent with every request to the catalog's own origin
	// (scheme+host+port of the base URL) and never to any other host.
	Headers http.Header
	// UserAgent defaults to "stac-mcp/<version>".
	UserAgent string
	// MaxBodyBytes caps every response body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// DefaultMaxBodyBytes is the response size cap when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 32 << 20

// Client talks to one STAC API. It is safe for concurrent use.
type Client struct{}

// New returns a client for the STAC API (or static catalog) at baseURL.
func New(baseURL string, opts Options) (*Client, error) { panic("unimplemented") }

// BaseURL is the catalog root URL as configured.
func (c *Client) BaseURL() string { panic("unimplemented") }

// Root fetches the landing page.
func (c *Client) Root(ctx context.Context) (*Catalog, error) { panic("unimplemented") }

// Conformance returns the conformance classes from /conformance, falling back
// to the landing page's conformsTo.
func (c *Client) Conformance(ctx context.Context) ([]string, error) { panic("unimplemented") }

// Capabilities detects what the catalog supports (landing page + conformance).
func (c *Client) Capabilities(ctx context.Context) (*Capabilities, error) { panic("unimplemented") }

// CollectionQuery narrows /collections (collection-search parameters are
// sent only when the catalog advertises collection search).
type CollectionQuery struct {
	Q        string
	BBox     []float64
	Datetime string
	Limit    int // page size hint
}

// CollectionPages iterates /collections page by page, following next links.
func (c *Client) CollectionPages(ctx context.Context, q CollectionQuery, lim SearchLimits) iter.Seq2[*CollectionPage, error] {
	panic("unimplemented")
}

// CollectionPage is one page of /collections with the request that produced it.
type CollectionPage struct {
	Request Request
	CollectionList
	Next *Request // nil on the last page
}

// Collection fetches one collection; a 404 is an *Error of KindNotFound.
func (c *Client) Collection(ctx context.Context, id string) (*Collection, error) {
	panic("unimplemented")
}

// Item fetches one item from /collections/{c}/items/{id}, falling back to a
// search by ids when the catalog lacks the Features endpoints.
func (c *Client) Item(ctx context.Context, collectionID, itemID string) (*Item, error) {
	panic("unimplemented")
}

// Search starts an item search. Nothing is sent until the result is iterated.
func (c *Client) Search(params SearchParams, lim SearchLimits) *Search { panic("unimplemented") }

// ContinueSearch resumes a search from a cursor returned by Search.Cursor.
func (c *Client) ContinueSearch(cur Cursor, lim SearchLimits) *Search { panic("unimplemented") }

// Queryables fetches /queryables, or /collections/{id}/queryables when
// collectionID is not empty.
func (c *Client) Queryables(ctx context.Context, collectionID string) (*Queryables, error) {
	panic("unimplemented")
}

// Aggregations lists the aggregations the catalog offers (GET /aggregations,
// or /collections/{id}/aggregations).
func (c *Client) Aggregations(ctx context.Context, collectionID string) (*AggregationResult, error) {
	panic("unimplemented")
}

// Aggregate runs the named aggregations over a search (GET or POST /aggregate).
func (c *Client) Aggregate(ctx context.Context, params SearchParams, aggregations []string) (*AggregationResult, error) {
	panic("unimplemented")
}

// Head returns the Content-Length of href (status-checked; -1 if unknown).
// Catalog headers are sent only when href is on the catalog's origin.
func (c *Client) Head(ctx context.Context, href string) (int64, error) { panic("unimplemented") }
