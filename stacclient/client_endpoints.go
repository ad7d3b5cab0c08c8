package stacclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// item fetches /collections/{c}/items/{id} when the catalog has the
// Features endpoints (or does not say), and otherwise, or when that path
// answers 404/405, searches GET /search?ids=&collections=.
func (c *Client) item(ctx context.Context, collectionID, itemID string) (*Item, error) {
	if strings.TrimSpace(collectionID) == "" {
		return nil, &ParamError{Param: "collection_id", Got: collectionID, Accepted: "the id of the item's collection, e.g. sentinel-2-l2a", Reason: "empty"}
	}
	if strings.TrimSpace(itemID) == "" {
		return nil, &ParamError{Param: "item_id", Got: itemID, Accepted: "an item id, e.g. S2A_10TFK_20220524_0_L2A", Reason: "empty"}
	}
	caps, err := c.capabilities(ctx)
	if err != nil {
		return nil, err
	}
	declaresNothing := len(caps.ConformsTo) == 0
	canSearch := caps.Has(CapItemSearch) || declaresNothing && FindLink(c.cachedRootLinks(), "search") != nil

	var featuresErr error
	if caps.Has(CapFeatures) || declaresNothing {
		href := c.endpoint("collections", collectionID, "items", itemID)
		it, err := c.ItemAt(ctx, href)
		if err == nil {
			return it, nil
		}
		var se *Error
		fallback := errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed)
		if !fallback || !canSearch {
			return nil, err
		}
		featuresErr = err
	}
	if !canSearch {
		return nil, &Error{Kind: KindUnsupported, Method: "GET", URL: c.baseRaw,
			Message: "the catalog advertises neither the Features endpoints (/collections/{id}/items/{id}) nor item search, so single items cannot be fetched"}
	}
	return c.itemBySearch(ctx, collectionID, itemID, featuresErr)
}

func (c *Client) cachedRootLinks() []Link {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.root == nil {
		return nil
	}
	return c.root.Links
}

// itemBySearch looks the item up with GET /search?ids=…&collections=….
func (c *Client) itemBySearch(ctx context.Context, collectionID, itemID string, featuresErr error) (*Item, error) {
	target, err := c.searchTarget(ctx)
	if err != nil {
		return nil, err
	}
	values := url.Values{}
	values.Set("ids", itemID)
	values.Set("collections", collectionID)
	r := Request{Method: http.MethodGet, URL: withQuery(target.getURL, values.Encode())}
	doc, err := c.fetchItemPage(ctx, r)
	if err != nil {
		return nil, err
	}
	for i := range doc.elems {
		it := &doc.elems[i]
		if it.ID == itemID && (it.Collection == "" || it.Collection == collectionID) {
			return it, nil
		}
	}
	msg := fmt.Sprintf("no item %q in collection %q (searched by id)", itemID, collectionID)
	if featuresErr != nil {
		msg += "; the items endpoint answered: " + featuresErr.Error()
	}
	return nil, &Error{Kind: KindNotFound, Status: http.StatusNotFound, Method: http.MethodGet, URL: r.URL, Message: upstream.TrimMessage(msg)}
}

// queryables fetches the global or per-collection queryables (a JSON Schema,
// often served as application/schema+json).
func (c *Client) queryables(ctx context.Context, collectionID string) (*Queryables, error) {
	href := c.endpoint("queryables")
	if collectionID != "" {
		href = c.endpoint("collections", collectionID, "queryables")
	} else if root, err := c.Root(ctx); err == nil {
		if l := FindLink(root.Links, "http://www.opengis.net/def/rel/ogc/1.0/queryables"); l != nil && strings.TrimSpace(l.Href) != "" {
			if resolved, err := resolveHref(c.rootLinkBase(), l.Href); err == nil {
				href = resolved
			}
		}
	}
	var q Queryables
	if _, err := c.getJSON(ctx, Request{Method: "GET", URL: href}, acceptJSONSchema, &q, "queryables schema", func() string {
		if q.Properties == nil && q.Type == "" && q.Schema == "" {
			return "the JSON has no properties, type or $schema"
		}
		return ""
	}); err != nil {
		return nil, err
	}
	return &q, nil
}

// aggregationLinks finds the aggregation endpoints the landing page names;
// ok is false when the catalog shows no sign of the aggregation extension.
func (c *Client) aggregationSupport(ctx context.Context) (root *Catalog, ok bool, err error) {
	root, err = c.Root(ctx)
	if err != nil {
		return nil, false, err
	}
	if FindLink(root.Links, "aggregate") != nil || FindLink(root.Links, "aggregations") != nil {
		return root, true, nil
	}
	caps, err := c.capabilities(ctx)
	if err != nil {
		return nil, false, err
	}
	return root, caps.Has(CapAggregation), nil
}

func (c *Client) unsupportedAggregation() *Error {
	return &Error{Kind: KindUnsupported, Method: "GET", URL: c.baseRaw,
		Message: "the catalog does not advertise the aggregation extension (no aggregation conformance class, no aggregate link)"}
}

// aggregations lists the available aggregations.
func (c *Client) aggregations(ctx context.Context, collectionID string) (*AggregationResult, error) {
	root, ok, err := c.aggregationSupport(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, c.unsupportedAggregation()
	}
	href := c.endpoint("aggregations")
	if collectionID != "" {
		href = c.endpoint("collections", collectionID, "aggregations")
	} else if l := FindLink(root.Links, "aggregations"); l != nil && strings.TrimSpace(l.Href) != "" {
		if resolved, err := resolveHref(c.rootLinkBase(), l.Href); err == nil {
			href = resolved
		}
	}
	return c.fetchAggregation(ctx, Request{Method: "GET", URL: href})
}

// aggregate runs aggregations over a search: POST when the aggregate link
// says POST, GET with the search query string plus aggregations=a,b
// otherwise.
func (c *Client) aggregate(ctx context.Context, params SearchParams, names []string) (*AggregationResult, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	root, ok, err := c.aggregationSupport(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, c.unsupportedAggregation()
	}
	href, method := c.endpoint("aggregate"), http.MethodGet
	for _, l := range FindLinks(root.Links, "aggregate") {
		resolved, err := resolveHref(c.rootLinkBase(), l.Href)
		if err != nil || strings.TrimSpace(l.Href) == "" {
			continue
		}
		href, method = resolved, l.LinkMethod()
		if method == http.MethodGet {
			break // prefer GET when both are offered: it is cacheable
		}
	}
	if method == http.MethodPost {
		body, err := overlayJSON(params.PostBody(), aggregationsMember(names))
		if err != nil {
			return nil, err
		}
		return c.fetchAggregation(ctx, Request{Method: http.MethodPost, URL: href, Body: body})
	}
	query := params.QueryString()
	if len(names) > 0 {
		query = strings.TrimPrefix(query+"&aggregations="+url.QueryEscape(strings.Join(names, ",")), "&")
	}
	return c.fetchAggregation(ctx, Request{Method: http.MethodGet, URL: withQuery(href, query)})
}

func aggregationsMember(names []string) json.RawMessage {
	if len(names) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string][]string{"aggregations": names})
	return b
}

func (c *Client) fetchAggregation(ctx context.Context, r Request) (*AggregationResult, error) {
	var res AggregationResult
	_, err := c.getJSON(ctx, r, acceptJSON, &res, "aggregation result", requireList(&res.Aggregations, "aggregations array"))
	if err != nil {
		var se *Error
		if errors.As(err, &se) && se.Kind == KindNotFound {
			se.Kind = KindUnsupported
			se.Message = upstream.TrimMessage("the catalog has no such aggregation endpoint (404): " + se.Message)
		}
		return nil, err
	}
	return &res, nil
}

// head sends HEAD href and returns its Content-Length (-1 when the server
// does not say). A non-2xx answer is a typed error: the length of an error
// page is never reported as the asset's size.
func (c *Client) head(ctx context.Context, href string) (int64, error) {
	resolved, err := c.assetURL(href, "probed")
	if err != nil {
		return -1, err
	}
	fb, err := c.send(ctx, Request{Method: http.MethodHead, URL: resolved}, "")
	if err != nil {
		return -1, err
	}
	if fb.contentLength < 0 {
		return -1, nil
	}
	return fb.contentLength, nil
}

// assetURL resolves an asset href against the catalog and accepts only
// http(s); verb says what could not be done otherwise ("probed", "fetched").
func (c *Client) assetURL(href, verb string) (string, error) {
	resolved, err := resolveHref(c.base, href)
	if err != nil || strings.TrimSpace(href) == "" {
		return "", &ParamError{Param: "href", Got: href, Accepted: "an absolute http(s) URL or a path relative to the catalog", Reason: "not a valid URL"}
	}
	u, _ := url.Parse(resolved)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", &ParamError{Param: "href", Got: href, Accepted: "an http:// or https:// URL (s3:// and other schemes cannot be " + verb + " over HTTP)", Reason: "unsupported scheme " + u.Scheme}
	}
	return resolved, nil
}

// AssetBody is an asset fetched by FetchAsset.
type AssetBody struct {
	URL         string // the URL that answered, after redirects
	ContentType string // as the server declared it (may be empty or wrong)
	Body        []byte
}

func (c *Client) fetchAsset(ctx context.Context, href string, maxBytes int64, accept string) (*AssetBody, error) {
	resolved, err := c.assetURL(href, "fetched")
	if err != nil {
		return nil, err
	}
	if maxBytes <= 0 {
		maxBytes = c.maxBody
	}
	fb, err := c.sendCapped(ctx, Request{Method: http.MethodGet, URL: resolved}, accept, maxBytes,
		"the asset is too large to fetch here")
	if err != nil {
		return nil, err
	}
	return &AssetBody{URL: fb.url.String(), ContentType: fb.header.Get("Content-Type"), Body: fb.body}, nil
}

func (c *Client) fetchRange(ctx context.Context, href string, off, n int64) ([]byte, error) {
	if off < 0 || n <= 0 || off > math.MaxInt64-n {
		return nil, &ParamError{Param: "range", Got: fmt.Sprintf("%d+%d", off, n), Accepted: "a non-negative offset and a positive length", Reason: "not a byte range"}
	}
	resolved, err := c.assetURL(href, "fetched")
	if err != nil {
		return nil, err
	}
	ignored := "the server ignored the Range request and answered with the whole file (200, not 206 Partial Content); " +
		"reading pixels needs a server that honours HTTP Range requests"
	// An asset href may reach any service: its error answers are only
	// described, never quoted (unless it is the catalog's own origin).
	ctx = upstream.WithDescribedAnswers(ctx)
	fb, err := c.sendRange(ctx, Request{Method: http.MethodGet, URL: resolved}, "", fmt.Sprintf("bytes=%d-%d", off, off+n-1), n,
		"the answer is longer than the byte range asked for")
	if err != nil {
		var se *Error
		if errors.As(err, &se) && se.Kind == KindTooLarge && se.Status == http.StatusOK {
			se.Kind = KindUnsupported
			se.Message = ignored + fmt.Sprintf(" (it was not read past %d bytes)", n)
		}
		return nil, err
	}
	fail := func(msg string) error {
		return &Error{Kind: KindUnsupported, Status: fb.status, Method: http.MethodGet, URL: resolved, Message: msg}
	}
	switch fb.status {
	case http.StatusPartialContent:
		start, ok := contentRangeStart(fb.header.Get("Content-Range"))
		if !ok {
			// The header is not quoted: it is the host's text.
			return nil, fail(fmt.Sprintf("asked for bytes %d-%d, the server answered 206 without a valid Content-Range", off, off+n-1))
		}
		if start != off {
			return nil, fail(fmt.Sprintf("asked for bytes %d-%d, the server answered a Content-Range starting at byte %d", off, off+n-1, start))
		}
		return fb.body, nil
	case http.StatusOK:
		if off == 0 {
			return fb.body, nil // the whole file, shorter than asked for
		}
		return nil, fail(ignored)
	}
	return nil, fail(fmt.Sprintf("a Range request answered with status %d, not 206 Partial Content", fb.status))
}

// contentRangeStart is the first byte of a "bytes first-last/size" Content-Range.
func contentRangeStart(v string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !ok {
		return 0, false
	}
	first, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	start, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	return start, err == nil && start >= 0
}
