package stacclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stacmcp/stac-mcp/reliability/origin"
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
	// RootTTL is how long the landing page and conformance classes are
	// reused; 0 means DefaultRootTTL, a negative value disables the cache.
	RootTTL time.Duration
	// KnownCatalog says the operator configured this catalog (a preset, a
	// named or default catalog, the demo): a short plain-text error answer
	// from its origin is shown as the catalog's message from the first
	// request. Any other catalog's text is shown only once its landing page
	// answered as a STAC catalog, so that a URL a client named cannot make
	// the server read back a service that is not a catalog.
	KnownCatalog bool
}

// DefaultMaxBodyBytes is the response size cap when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 32 << 20

// DefaultRootTTL is how long a landing page is reused when Options.RootTTL
// is 0: long enough that a paged search does not refetch it per page, short
// enough that a catalog's changed capabilities are seen within a minute.
const DefaultRootTTL = 60 * time.Second

// Version is the client version sent in the default User-Agent.
const Version = "0.1.0"

// DefaultUserAgent is sent when Options.UserAgent is empty (some catalogs
// answer 403 to requests without one).
const DefaultUserAgent = "stac-mcp/" + Version

// defaultHTTPTimeout bounds a whole request when no HTTPClient is given.
const defaultHTTPTimeout = 30 * time.Second

// Accept headers: JSON first; GeoJSON and JSON Schema are what search pages
// and queryables are served as.
const (
	acceptJSON       = "application/json, application/geo+json;q=0.9, */*;q=0.1"
	acceptGeoJSON    = "application/geo+json, application/json;q=0.9, */*;q=0.1"
	acceptJSONSchema = "application/schema+json, application/json;q=0.9, */*;q=0.1"
)

// Client talks to one STAC API. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	baseRaw   string
	origin    string
	http      *http.Client
	headers   http.Header
	userAgent string
	maxBody   int64
	rootTTL   time.Duration

	mu         sync.Mutex
	root       *Catalog
	rootAt     time.Time
	rootURL    *url.URL // where the landing page was answered from
	conformsTo []string
	confAt     time.Time
	// capsMemo is what capabilities last derived, and from which landing
	// page and conformance list (see capabilities).
	capsMemo capabilitiesMemo

	// knownCatalog is Options.KnownCatalog; answeredAsCatalog is set once
	// the landing page was STAC (showsCatalogText).
	knownCatalog      bool
	answeredAsCatalog atomic.Bool

	// searchGETOnly is set after a POST search was answered 405: later
	// searches of this client go straight to GET.
	searchGETOnly atomic.Bool
	// answered is set by the first 2xx answer: the catalog registry keeps
	// no client for a URL that never answered (Answered).
	answered atomic.Bool
}

// Answered reports whether the catalog has given this client at least one
// successful (2xx) answer.
func (c *Client) Answered() bool { return c.answered.Load() }

// New returns a client for the STAC API (or static catalog) at baseURL.
func New(baseURL string, opts Options) (*Client, error) {
	const accepted = "an absolute http:// or https:// URL of a STAC API landing page or catalog, e.g. https://earth-search.aws.element84.com/v1"
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, &ParamError{Param: "catalog_url", Got: baseURL, Accepted: accepted, Reason: "it does not parse as a URL: " + err.Error()}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &ParamError{Param: "catalog_url", Got: baseURL, Accepted: accepted, Reason: "the scheme must be http or https"}
	}
	if u.Host == "" {
		return nil, &ParamError{Param: "catalog_url", Got: baseURL, Accepted: accepted, Reason: "the URL has no host"}
	}
	if u.User != nil {
		return nil, &ParamError{Param: "catalog_url", Got: "(a URL with user info, not echoed)", Accepted: accepted,
			Reason: "credentials in the URL are not supported; pass them as headers"}
	}
	if opts.MaxBodyBytes < 0 {
		return nil, &ParamError{Param: "MaxBodyBytes", Got: formatInt(opts.MaxBodyBytes), Accepted: "0 (the default cap) or a positive number of bytes", Reason: "negative"}
	}
	u.Fragment = ""
	c := &Client{
		base:      u,
		baseRaw:   u.String(),
		origin:    origin.Of(u),
		headers:   opts.Headers.Clone(),
		userAgent: opts.UserAgent,
		maxBody:   opts.MaxBodyBytes,
		rootTTL:   opts.RootTTL,

		knownCatalog: opts.KnownCatalog,
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.maxBody == 0 {
		c.maxBody = DefaultMaxBodyBytes
	}
	if c.rootTTL == 0 {
		c.rootTTL = DefaultRootTTL
	}
	// A shallow copy of the caller's client, so that our redirect policy
	// (strip catalog headers when leaving the origin) does not change theirs.
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultHTTPTimeout}
	}
	c.http = &http.Client{Transport: hc.Transport, Jar: hc.Jar, Timeout: hc.Timeout}
	c.http.CheckRedirect = c.checkRedirect(hc.CheckRedirect)
	return c, nil
}

// baseURL is the catalog root URL as configured.
func (c *Client) baseURL() string { return c.baseRaw }

// endpoint resolves path segments below the base URL: "/stac" and "/stac/"
// both give "/stac/conformance". Segments are path-escaped, so an id with a
// slash stays one segment. The base URL's query (an API key, say) is kept.
func (c *Client) endpoint(segments ...string) string {
	u := *c.base
	escaped := strings.TrimSuffix(u.EscapedPath(), "/")
	plain := strings.TrimSuffix(u.Path, "/")
	for _, s := range segments {
		escaped += "/" + url.PathEscape(s)
		plain += "/" + s
	}
	u.Path, u.RawPath = plain, escaped
	return u.String()
}

// withQuery appends an encoded query string to rawURL, after any query it
// already has.
func withQuery(rawURL, query string) string {
	if query == "" {
		return rawURL
	}
	if strings.Contains(rawURL, "?") {
		return rawURL + "&" + query
	}
	return rawURL + "?" + query
}

// resolveHref resolves a link href against the URL of the document it came from.
func resolveHref(docURL *url.URL, href string) (string, error) {
	ref, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return "", err
	}
	if docURL == nil {
		return ref.String(), nil
	}
	return docURL.ResolveReference(ref).String(), nil
}

// CollectionQuery narrows /collections (collection-search parameters are
// sent only when the catalog advertises collection search).
type CollectionQuery struct {
	Q        string
	BBox     []float64
	Datetime string
	Limit    int // page size hint
}

// CollectionPage is one page of /collections with the request that produced it.
type CollectionPage struct {
	Request Request
	CollectionList
	Next *Request // nil on the last page
	// Unsent names the CollectionQuery fields that were not sent because the
	// catalog does not advertise collection search (so the list is not
	// filtered by them).
	Unsent []string
	// Dropped counts collections whose id repeated one already yielded.
	Dropped int
	// Skipped counts collections of this page not yielded because
	// SearchLimits.MaxItems was reached.
	Skipped int
	// NextRefused says why this page's next link was not followed (see
	// Page.NextRefused); the list continues beyond it.
	NextRefused string
}

// CollectionPages iterates /collections page by page, following next links.
func (c *Client) CollectionPages(ctx context.Context, q CollectionQuery, lim SearchLimits) iter.Seq2[*CollectionPage, error] {
	return c.collectionPages(ctx, q, lim)
}

// Collection fetches one collection; a 404 is an *Error of KindNotFound.
func (c *Client) Collection(ctx context.Context, id string) (*Collection, error) {
	if strings.TrimSpace(id) == "" {
		return nil, &ParamError{Param: "collection_id", Got: id, Accepted: "a collection id, e.g. sentinel-2-l2a", Reason: "empty"}
	}
	return c.CollectionAt(ctx, c.endpoint("collections", id))
}

// Item fetches one item from /collections/{c}/items/{id}, falling back to a
// search by ids when the catalog lacks the Features endpoints.
func (c *Client) Item(ctx context.Context, collectionID, itemID string) (*Item, error) {
	return c.item(ctx, collectionID, itemID)
}

// Search starts an item search. Nothing is sent until the result is iterated.
func (c *Client) Search(params SearchParams, lim SearchLimits) *Search {
	s := &Search{client: c, params: params, fromParams: true, lim: lim}
	s.pager() // created now, so that the getters are safe from any goroutine
	return s
}

// Queryables fetches /queryables, or /collections/{id}/queryables when
// collectionID is not empty.
func (c *Client) Queryables(ctx context.Context, collectionID string) (*Queryables, error) {
	return c.queryables(ctx, collectionID)
}

// Aggregations lists the aggregations the catalog offers (GET /aggregations,
// or /collections/{id}/aggregations).
func (c *Client) Aggregations(ctx context.Context, collectionID string) (*AggregationResult, error) {
	return c.aggregations(ctx, collectionID)
}

// Aggregate runs the named aggregations over a search (GET or POST /aggregate).
func (c *Client) Aggregate(ctx context.Context, params SearchParams, aggregations []string) (*AggregationResult, error) {
	return c.aggregate(ctx, params, aggregations)
}

// Head returns the Content-Length of href (status-checked; -1 if unknown).
// Catalog headers are sent only when href is on the catalog's origin.
func (c *Client) Head(ctx context.Context, href string) (int64, error) {
	return c.head(ctx, href)
}

// FetchAsset GETs an asset (a thumbnail, say) through the client's HTTP
// client, so the reliability layer's retries, timeouts and address rules
// apply. The body is capped at maxBytes (and never more than the client's
// MaxBodyBytes): a larger answer is a KindTooLarge error, never a truncated
// body. Catalog headers go only to the catalog's origin, as for every request.
func (c *Client) FetchAsset(ctx context.Context, href string, maxBytes int64, accept string) (*AssetBody, error) {
	return c.fetchAsset(ctx, href, maxBytes, accept)
}

// FetchRange GETs n bytes of an asset from offset off with an HTTP Range
// request, on FetchAsset's path (the reliability layer's retries, budgets,
// breaker, hedging and address rules; catalog headers only to the
// catalog's origin). The answer must be 206 Partial Content for that
// range. A server that ignores Range and sends the whole file (200) is
// refused after at most n+1 bytes were read (KindUnsupported), except when
// off is 0 and the whole file is at most n bytes: then it is what was asked
// for. The result is shorter than n only when the file ends before off+n.
func (c *Client) FetchRange(ctx context.Context, href string, off, n int64) ([]byte, error) {
	return c.fetchRange(ctx, href, off, n)
}
