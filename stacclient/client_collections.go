package stacclient

import (
	"context"
	"iter"
	"net/url"
	"strconv"
	"strings"
)

// collectionPages pages through /collections with the same engine as item
// search (next links followed as given, cycles and duplicates stopped).
func (c *Client) collectionPages(ctx context.Context, q CollectionQuery, lim SearchLimits) iter.Seq2[*CollectionPage, error] {
	engine := &pager[Collection]{
		client: c,
		lim:    lim,
		keyOf:  func(col *Collection) string { return col.ID },
		fetch: func(ctx context.Context, r Request, _ bool) (pagerDoc[Collection], error) {
			return c.fetchCollectionPage(ctx, r)
		},
	}
	return func(yield func(*CollectionPage, error) bool) {
		var unsent []string
		first := func(ctx context.Context) (Request, error) {
			r, notSent, err := c.collectionsRequest(ctx, q)
			unsent = notSent
			return r, err
		}
		for pp, err := range engine.run(ctx, first, pagerStart{}) {
			if err != nil {
				yield(nil, err)
				return
			}
			page := &CollectionPage{
				Request: pp.req,
				CollectionList: CollectionList{
					Collections:   pp.elems,
					NumberMatched: pp.matched,
				},
				Next:        pp.next,
				NextRefused: pp.refused,
				Unsent:      unsent,
				Dropped:     pp.dropped,
				Skipped:     pp.skipped,
			}
			if !yield(page, nil) {
				return
			}
		}
	}
}

// collectionsRequest builds GET /collections. The collection-search
// parameters (q, bbox, datetime, limit) are sent only when the catalog
// advertises collection search (free text for q); the names of those left
// out are returned so the caller can say the list is unfiltered.
func (c *Client) collectionsRequest(ctx context.Context, q CollectionQuery) (Request, []string, error) {
	href := c.endpoint("collections")
	wanted := q.Q != "" || len(q.BBox) > 0 || q.Datetime != "" || q.Limit > 0
	var caps *Capabilities
	if wanted {
		// Both the landing page and the conformance classes are needed:
		// side by side, in one round trip.
		var err error
		if caps, err = c.capabilities(ctx); err != nil {
			return Request{}, nil, err
		}
	}
	root, err := c.Root(ctx)
	if err != nil {
		return Request{}, nil, err
	}
	if l := FindLink(root.Links, "data"); l != nil {
		if resolved, err := resolveHref(c.rootLinkBase(), l.Href); err == nil && strings.TrimSpace(l.Href) != "" {
			href = resolved
		}
	}
	if !wanted {
		return Request{Method: "GET", URL: href}, nil, nil
	}
	values := url.Values{}
	var unsent []string
	search := caps.Has(CapCollectionSearch)
	add := func(name, value string, ok bool) {
		if value == "" {
			return
		}
		if ok {
			values.Set(name, value)
		} else {
			unsent = append(unsent, name)
		}
	}
	add("q", q.Q, search && caps.Has(CapFreeText))
	add("bbox", strings.Join(formatCoordinates(q.BBox), ","), search)
	add("datetime", q.Datetime, search)
	if q.Limit > 0 {
		add("limit", strconv.Itoa(q.Limit), search)
	}
	return Request{Method: "GET", URL: withQuery(href, values.Encode())}, unsent, nil
}

// fetchCollectionPage fetches and decodes one page of /collections.
func (c *Client) fetchCollectionPage(ctx context.Context, r Request) (pagerDoc[Collection], error) {
	var cl CollectionList
	fb, err := c.getJSON(ctx, r, acceptJSON, &cl, "collections list", requireList(&cl.Collections, "collections array"))
	if err != nil {
		return pagerDoc[Collection]{}, err
	}
	return pagerDoc[Collection]{req: r, url: fb.url, elems: cl.Collections, links: cl.Links, matched: cl.NumberMatched}, nil
}
