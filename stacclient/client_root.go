package stacclient

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/reliability"
)

// freshLocked reports whether something cached at storedAt is still within
// RootTTL (a negative TTL caches nothing). c.mu must be held.
func (c *Client) freshLocked(storedAt time.Time) bool {
	return c.rootTTL > 0 && time.Since(storedAt) < c.rootTTL
}

// Root fetches the landing page. It is reused for Options.RootTTL so that a
// paged search does not refetch it for every page.
func (c *Client) Root(ctx context.Context) (*Catalog, error) {
	if root := c.cachedRoot(); root != nil {
		return root, nil
	}
	return c.fetchRoot(ctx)
}

// cachedRoot is the landing page if it is still fresh, else nil.
func (c *Client) cachedRoot() *Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.root != nil && c.freshLocked(c.rootAt) {
		return c.root
	}
	return nil
}

// fetchRoot fetches the landing page and keeps it.
func (c *Client) fetchRoot(ctx context.Context) (*Catalog, error) {
	root, answeredAt, err := c.fetchCatalog(ctx, c.baseRaw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.root, c.rootAt, c.rootURL = root, time.Now(), answeredAt
	c.mu.Unlock()
	if root.StacVersion != "" || len(root.ConformsTo) > 0 {
		c.answeredAsCatalog.Store(true)
	}
	return root, nil
}

// rootLinkBase is what the landing page's relative links resolve against:
// the URL that answered it (after redirects), else the base URL.
func (c *Client) rootLinkBase() *url.URL {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rootURL != nil {
		return c.rootURL
	}
	return c.base
}

func (c *Client) fetchCatalog(ctx context.Context, href string) (*Catalog, *url.URL, error) {
	var cat Catalog
	fb, err := c.getJSON(ctx, Request{Method: "GET", URL: href}, acceptJSON, &cat, "catalog (landing page)", func() string {
		if cat.ID == "" && cat.Links == nil {
			return "the JSON has neither an id nor links"
		}
		return ""
	})
	if err != nil {
		return nil, nil, err
	}
	return &cat, fb.url, nil
}

// CollectionAt fetches a STAC Collection at href (a child link, or
// /collections/{id}).
func (c *Client) CollectionAt(ctx context.Context, href string) (*Collection, error) {
	var col Collection
	_, err := c.getJSON(ctx, Request{Method: "GET", URL: href}, acceptJSON, &col, "collection", func() string {
		if col.ID == "" {
			return "the JSON has no id"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	return &col, nil
}

// ItemAt fetches a STAC Item at href (an item link, or a self link).
func (c *Client) ItemAt(ctx context.Context, href string) (*Item, error) {
	var it Item
	_, err := c.getJSON(ctx, Request{Method: "GET", URL: href}, acceptGeoJSON, &it, "item", func() string {
		if it.ID == "" {
			return "the JSON has no id"
		}
		if it.Type != "" && it.Type != "Feature" {
			return "its type is " + strconv.Quote(it.Type) + ", not \"Feature\""
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// conformanceDoc is the body of /conformance.
type conformanceDoc struct {
	ConformsTo []string `json:"conformsTo"`
}

// Conformance returns the conformance classes from /conformance, falling back
// to the landing page's conformsTo.
func (c *Client) Conformance(ctx context.Context) ([]string, error) {
	_, conf, err := c.rootAndConformance(ctx)
	return conf, err
}

// rootAndConformance returns the landing page and the conformance classes,
// from the cache where they are fresh. A cold client needs both, and
// /conformance does not depend on the landing page unless the page links
// it somewhere else, so the two are fetched side by side: one round trip
// instead of two. The speculative request is for {base}/conformance, the
// request the landing page's link almost always names (and the one a page
// without a link gets anyway); a link to another URL is followed after the
// landing page arrived, and the speculative answer is dropped.
func (c *Client) rootAndConformance(ctx context.Context) (*Catalog, []string, error) {
	c.mu.Lock()
	conf, confFresh := c.conformsTo, c.conformsTo != nil && c.freshLocked(c.confAt)
	c.mu.Unlock()
	root := c.cachedRoot()
	switch {
	case root != nil && confFresh:
		return root, conf, nil
	case confFresh:
		root, err := c.fetchRoot(ctx)
		if err != nil {
			return nil, nil, &LandingPageError{Err: err}
		}
		return root, conf, nil
	}

	var spec *conformanceAnswer // the side-by-side /conformance, for a cold client
	if root == nil {
		g, gctx := errgroup.WithContext(ctx)
		specHref := c.endpoint("conformance")
		g.Go(func() error {
			var err error
			root, err = c.fetchRoot(gctx)
			return err // a failed landing page cancels the speculative request
		})
		g.Go(func() error {
			// A side request: should the call time out while both wait, its
			// advice is about the landing page.
			spec = c.getConformance(reliability.SideRequest(gctx), specHref)
			return nil
		})
		if err := g.Wait(); err != nil {
			return nil, nil, &LandingPageError{Err: err}
		}
		if spec.href != c.conformanceHref(root) {
			spec = nil // the landing page links another conformance URL
		}
	}
	if spec == nil {
		spec = c.getConformance(ctx, c.conformanceHref(root))
	}
	conf, err := spec.classes(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	c.conformsTo, c.confAt = conf, time.Now()
	c.mu.Unlock()
	return root, conf, nil
}

// LandingPageError is the landing page's failure in a call that also asked
// for the conformance classes (Capabilities, Conformance): the catalog
// cannot be used at all, while a failed /conformance alone may leave a
// search that can still be sent unchecked. It reads and unwraps as the
// landing page's own error.
type LandingPageError struct{ Err error }

func (e *LandingPageError) Error() string { return e.Err.Error() }
func (e *LandingPageError) Unwrap() error { return e.Err }

// conformanceHref is where the landing page says its conformance classes
// are: its rel=conformance link, else {base}/conformance.
func (c *Client) conformanceHref(root *Catalog) string {
	if l := FindLink(root.Links, "conformance"); l != nil {
		if resolved, err := resolveHref(c.rootLinkBase(), l.Href); err == nil {
			return resolved
		}
	}
	return c.endpoint("conformance")
}

// conformanceAnswer is what one conformance request returned.
type conformanceAnswer struct {
	href       string
	conformsTo []string
	err        error
}

func (c *Client) getConformance(ctx context.Context, href string) *conformanceAnswer {
	var doc conformanceDoc
	_, err := c.getJSON(ctx, Request{Method: "GET", URL: href}, acceptJSON, &doc, "conformance declaration", requireList(&doc.ConformsTo, "conformsTo list"))
	return &conformanceAnswer{href: href, conformsTo: doc.ConformsTo, err: err}
}

// classes is the conformance list the answer gives, with the landing page
// as the fallback.
func (a *conformanceAnswer) classes(ctx context.Context, root *Catalog) ([]string, error) {
	err := a.err
	if err == nil {
		return a.conformsTo, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, err
	}
	var se *Error
	if !errors.As(err, &se) {
		return nil, err
	}
	// A catalog without /conformance (404, or anything that is not a
	// conformance document) declares its classes on the landing page, if
	// anywhere. Static catalogs declare none: that is an empty list, not an
	// error.
	if len(root.ConformsTo) > 0 || se.Kind == KindNotFound || se.Kind == KindInvalidSTAC {
		return nonNil(root.ConformsTo), nil
	}
	return nil, err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Capabilities detects what the catalog supports (landing page + conformance).
func (c *Client) Capabilities(ctx context.Context) (*Capabilities, error) {
	root, conf, err := c.rootAndConformance(ctx)
	if err != nil {
		return nil, err
	}
	return DetectCapabilities(conf, root.Links), nil
}

// capabilitiesMemo is the Capabilities derived from one landing page and
// conformance list, kept while both are the ones cached.
type capabilitiesMemo struct {
	root *Catalog
	conf []string
	caps *Capabilities
}

// capabilities is Capabilities for this package's own use, which only
// reads them: derived again only when the landing page or conformance list
// changed. Matching every conformance class against the rules' regular
// expressions on every request was about 2 % of a get_item call's CPU.
// Capabilities itself still returns a value of the caller's own.
func (c *Client) capabilities(ctx context.Context) (*Capabilities, error) {
	root, conf, err := c.rootAndConformance(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	m := c.capsMemo
	c.mu.Unlock()
	if m.caps != nil && m.root == root && sameSlice(m.conf, conf) {
		return m.caps, nil
	}
	caps := DetectCapabilities(conf, root.Links)
	c.mu.Lock()
	c.capsMemo = capabilitiesMemo{root: root, conf: conf, caps: caps}
	c.mu.Unlock()
	return caps, nil
}

// sameSlice reports whether a and b are the same slice (not merely equal):
// the cached list is replaced, never changed in place.
func sameSlice(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
