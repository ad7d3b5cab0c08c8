package stacclient

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// Search is one item search in progress. Iterate it once with Pages or Items.
type Search struct {
	client     *Client
	params     SearchParams
	fromParams bool     // built by Client.Search (else resumed from a Position)
	start      *Request // the first request of a resumed search
	resume     pagerStart
	lim        SearchLimits

	// getFallback is the GET form of the first request, used once if the
	// catalog answers the POST with 405.
	getFallback *Request
	engine      *pager[Item]
}

// Page is one page of results after duplicate ids were dropped.
type Page struct {
	Request Request // the request that produced this page
	Items   []Item  // items not seen on an earlier page, at most what MaxItems still allows
	Skipped int     // items of this page not yielded because MaxItems was reached
	Matched *int    // numberMatched or context.matched, when the server says
	Next    *Request
	Dropped int // duplicates (same collection and id) dropped from this page
	// NextRefused says why the page's next link was not followed (outside
	// the catalog, another method than GET or POST, too long, not a URL).
	NextRefused string

	rawIndex []int // where each of Items is in the page as served
	rawLen   int   // items in the page as served
	offset   int   // items served by the pages before it
}

// PositionBefore is where a search continues so that Items[i] is the
// first item it yields (i == len(Items): what follows the page's last
// item, nil when nothing does). A caller that takes the items of several
// searches one by one (a merge of several catalogs' results) keeps each
// search's place with it, item by item.
func (p *Page) PositionBefore(i int) *Position {
	switch {
	case i < 0:
		i = 0
	case i >= len(p.Items):
		consumed := p.rawLen - p.Skipped
		if consumed < p.rawLen {
			return &Position{Request: p.Request, Skip: consumed, Offset: p.offset}
		}
		if p.Next == nil {
			return nil
		}
		return &Position{Request: *p.Next, Offset: p.offset + p.rawLen}
	}
	return &Position{Request: p.Request, Skip: p.rawIndex[i], Offset: p.offset}
}

// StopReason says why an iteration ended.
type StopReason string

const (
	StopNoNext    StopReason = "no_next_link"
	StopEmptyPage StopReason = "empty_page"
	StopMaxItems  StopReason = "max_items"
	StopMaxPages  StopReason = "max_pages"
	StopCycle     StopReason = "cycle"      // a next link repeated an earlier request
	StopNoNewIDs  StopReason = "no_new_ids" // a page held only items already seen
	// StopNextRefused: the next link may not be followed (see
	// Search.Refusal); more results exist but cannot be reached.
	StopNextRefused StopReason = "next_link_refused"
	StopError       StopReason = "error"
	StopConsumer    StopReason = "caller_stopped" // the range loop over Pages or Items ended early
)

func (s *Search) pager() *pager[Item] {
	if s.engine == nil {
		s.engine = &pager[Item]{client: s.client, lim: s.lim, keyOf: itemKey, fetch: s.fetchPage}
	}
	return s.engine
}

// Pages yields each page; iteration ends at the first error.
func (s *Search) Pages(ctx context.Context) iter.Seq2[*Page, error] {
	engine := s.pager()
	return func(yield func(*Page, error) bool) {
		for pp, err := range engine.run(ctx, s.firstRequest, s.resume) {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(pageOf(pp), nil) {
				return
			}
		}
	}
}

func pageOf(pp *pagerPage[Item]) *Page {
	return &Page{Request: pp.req, Items: pp.elems, Skipped: pp.skipped, Matched: pp.matched, Next: pp.next, Dropped: pp.dropped, NextRefused: pp.refused,
		rawIndex: pp.rawIndex, rawLen: pp.rawLen, offset: pp.offset}
}

// Items yields each item across pages. Breaking out of the loop leaves a
// Position just after the last item received.
func (s *Search) Items(ctx context.Context) iter.Seq2[*Item, error] {
	engine := s.pager()
	return func(yield func(*Item, error) bool) {
		var stoppedAt *Position
		defer func() {
			// Runs after the engine recorded its own position (the next page),
			// so the finer position within the page wins.
			if stoppedAt != nil {
				engine.finish(StopConsumer, stoppedAt)
			}
		}()
		for pp, err := range engine.run(ctx, s.firstRequest, s.resume) {
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range pp.elems {
				if yield(&pp.elems[i], nil) {
					continue
				}
				consumed := pp.rawIndex[i] + 1
				undelivered := make(map[uint32]bool)
				for j := range pp.elems[i+1:] {
					undelivered[keyFingerprint(itemKey(&pp.elems[i+1+j]))] = true
				}
				switch {
				case consumed < pp.rawLen:
					stoppedAt = engine.positionAt(pp.req, consumed, pp.offset, undelivered)
				case pp.next != nil:
					stoppedAt = engine.positionAt(*pp.next, 0, pp.offset+pp.rawLen, undelivered)
				default:
					engine.finish(StopNoNext, nil)
				}
				return
			}
		}
	}
}

// StopReason is why the last iteration ended.
func (s *Search) StopReason() StopReason {
	stop, _, _, _ := s.pager().state()
	return stop
}

// Refusal says why paging stopped at a next link it may not follow, when
// StopReason is StopNextRefused.
func (s *Search) Refusal() string { return s.pager().refusal() }

// Position is where to continue, or nil when the results are exhausted (or
// cannot be reached: StopNextRefused).
func (s *Search) Position() *Position {
	_, cur, _, _ := s.pager().state()
	if cur == nil {
		return nil
	}
	copied := *cur
	return &copied
}

// UnusableMatched is the last match count a page sent that was not a count
// (negative, fractional, not a number) and was ignored, as "numberMatched
// -5"; "" when there was none.
func (s *Search) UnusableMatched() string {
	p := s.pager()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unusable
}

// Matched is the server's total match count from the last page that had one.
func (s *Search) Matched() (int, bool) {
	_, _, matched, _ := s.pager().state()
	if matched == nil {
		return 0, false
	}
	return *matched, true
}

// Method is the HTTP method of the first request (POST when the landing
// page's search link allows it, GET otherwise, GET after a POST 405). It is
// empty until the first request was sent.
func (s *Search) Method() string {
	_, _, _, method := s.pager().state()
	return method
}

// firstRequest builds the first request: the resumed position's, or one
// built from the parameters with the method the landing page allows.
func (s *Search) firstRequest(ctx context.Context) (Request, error) {
	if !s.fromParams {
		if s.start == nil || s.start.URL == "" {
			return Request{}, &ParamError{Param: "cursor", Got: "a cursor without a request URL",
				Accepted: "a cursor returned by a previous search", Reason: "it has no request to continue from"}
		}
		// A position comes back from outside (in a cursor): the same rules as a next link.
		if why, _ := s.client.checkScope(*s.start); why != "" {
			return Request{}, &ParamError{Param: "cursor", Got: upstream.TrimMessage(s.start.URL),
				Accepted: "a cursor returned by a previous search of this catalog", Reason: "its request may not be sent: " + why}
		}
		return *s.start, nil
	}
	if err := s.params.Validate(); err != nil {
		return Request{}, err
	}
	target, err := s.client.searchTarget(ctx)
	if err != nil {
		return Request{}, err
	}
	get := Request{Method: http.MethodGet, URL: withQuery(target.getURL, s.params.QueryString())}
	if target.postURL == "" || s.client.searchGETOnly.Load() {
		return get, nil
	}
	s.getFallback = &get
	return Request{Method: http.MethodPost, URL: target.postURL, Body: s.params.PostBody()}, nil
}

// fetchPage fetches one search page; the first POST of a search built from
// parameters falls back to GET once when the catalog answers 405, and the
// client remembers that for later searches.
func (s *Search) fetchPage(ctx context.Context, r Request, first bool) (pagerDoc[Item], error) {
	doc, err := s.client.fetchItemPage(ctx, r)
	var se *Error
	if err != nil && first && s.getFallback != nil && r.Method == http.MethodPost &&
		errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed {
		s.client.searchGETOnly.Store(true)
		return s.client.fetchItemPage(ctx, *s.getFallback)
	}
	return doc, err
}

// fetchItemPage fetches and decodes one ItemCollection.
func (c *Client) fetchItemPage(ctx context.Context, r Request) (pagerDoc[Item], error) {
	var ic ItemCollection
	fb, err := c.getJSON(ctx, r, acceptGeoJSON, &ic, "ItemCollection (search page)", requireList(&ic.Features, "features array"))
	if err != nil {
		return pagerDoc[Item]{}, err
	}
	doc := pagerDoc[Item]{req: r, url: fb.url, elems: ic.Features, links: ic.Links, unusableMatched: ic.UnusableMatched()}
	if n, ok := ic.Matched(); ok {
		doc.matched = &n
	}
	return doc, nil
}

// searchEndpoints are where the catalog takes searches.
type searchEndpoints struct {
	getURL  string
	postURL string // empty when the landing page does not offer POST
}

// searchTarget reads the landing page's rel=search links: a link without a
// method means GET; POST is used only when a link lists it. Without any
// search link, {base}/search is used with GET if the catalog declares item
// search, and KindUnsupported is returned otherwise.
func (c *Client) searchTarget(ctx context.Context) (searchEndpoints, error) {
	root, err := c.Root(ctx)
	if err != nil {
		return searchEndpoints{}, err
	}
	var t searchEndpoints
	for _, l := range FindLinks(root.Links, "search") {
		href, err := resolveHref(c.rootLinkBase(), l.Href)
		if err != nil || strings.TrimSpace(l.Href) == "" {
			continue
		}
		switch l.LinkMethod() {
		case http.MethodPost:
			if t.postURL == "" {
				t.postURL = href
			}
		case http.MethodGet:
			if t.getURL == "" {
				t.getURL = href
			}
		}
	}
	switch {
	case t.getURL != "":
	case t.postURL != "":
		t.getURL = t.postURL
	default:
		// No search link: only a catalog that declares item search gets
		// {base}/search; a static catalog has nothing to search.
		declared, err := c.declaresItemSearch(ctx, root)
		if err != nil {
			return searchEndpoints{}, err
		}
		if !declared {
			return searchEndpoints{}, &Error{Kind: KindUnsupported, Method: http.MethodGet, URL: c.baseRaw,
				Message: "the catalog offers no item search (no rel=search link, no item-search conformance class); browse its collections and child links instead"}
		}
		t.getURL = c.endpoint("search")
	}
	return t, nil
}

// declaresItemSearch reads the item-search class from the landing page's
// conformsTo, or from /conformance when the landing page links one. A page
// with neither (a static catalog) declares nothing, without a request.
func (c *Client) declaresItemSearch(ctx context.Context, root *Catalog) (bool, error) {
	if len(root.ConformsTo) > 0 {
		return DetectCapabilities(root.ConformsTo, root.Links).Has(CapItemSearch), nil
	}
	if FindLink(root.Links, "conformance") == nil {
		return false, nil
	}
	caps, err := c.capabilities(ctx)
	if err != nil {
		return false, err
	}
	return caps.Has(CapItemSearch), nil
}
