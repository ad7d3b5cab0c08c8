package stacclient

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"
)

// freshLocked reports whether something cached at storedAt is still within
// RootTTL (a negative TTL caches nothing). c.mu must be held.
func (c *Client) freshLocked(storedAt time.Time) bool {
	return c.rootTTL > 0 && time.Since(storedAt) < c.rootTTL
}

// Root fetches the landing page. It is reused for Options.RootTTL so that a
// paged search does not refetch it for every page.
func (c *Client) Root(ctx context.Context) (*Catalog, error) {
	c.mu.Lock()
	cached, fresh := c.root, c.root != nil && c.freshLocked(c.rootAt)
	c.mu.Unlock()
	if fresh {
		return cached, nil
	}

	root, answeredAt, err := c.fetchCatalog(ctx, c.baseRaw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.root, c.rootAt, c.rootURL = root, time.Now(), answeredAt
	c.mu.Unlock()
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

// CatalogAt fetches a STAC Catalog (or landing page) at href, e.g. a child
// link of a static catalog.
func (c *Client) CatalogAt(ctx context.Context, href string) (*Catalog, error) {
	cat, _, err := c.fetchCatalog(ctx, href)
	return cat, err
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
	c.mu.Lock()
	cached, fresh := c.conformsTo, c.conformsTo != nil && c.freshLocked(c.confAt)
	c.mu.Unlock()
	if fresh {
		return cached, nil
	}

	root, err := c.Root(ctx)
	if err != nil {
		return nil, err
	}
	conf, err := c.fetchConformance(ctx, root)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.conformsTo, c.confAt = conf, time.Now()
	c.mu.Unlock()
	return conf, nil
}

func (c *Client) fetchConformance(ctx context.Context, root *Catalog) ([]string, error) {
	href := c.endpoint("conformance")
	if l := FindLink(root.Links, "conformance"); l != nil {
		if resolved, err := resolveHref(c.rootLinkBase(), l.Href); err == nil {
			href = resolved
		}
	}
	var doc conformanceDoc
	_, err := c.getJSON(ctx, Request{Method: "GET", URL: href}, acceptJSON, &doc, "conformance declaration", requireList(&doc.ConformsTo, "conformsTo list"))
	if err == nil {
		return doc.ConformsTo, nil
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
	root, err := c.Root(ctx)
	if err != nil {
		return nil, err
	}
	conf, err := c.Conformance(ctx)
	if err != nil {
		return nil, err
	}
	return DetectCapabilities(conf, root.Links), nil
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }
