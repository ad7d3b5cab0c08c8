package stacclient

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/origin"
	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// A catalog's scope is what the client may request while paging or
// continuing from a cursor: GET or POST, on the catalog's origin
// (scheme+host+port), under its root path. A next link, or a cursor's
// request, outside it is refused, never followed: a catalog (or a cursor a
// model hands back) must not steer requests, with the operator's catalog
// headers attached, to another host, another API on the same host, or a
// method that changes something.

// scopeProblem says why u is outside the catalog's scope, or "" when it
// is inside. The landing page's answering URL counts as the catalog too (a
// catalog configured as http:// that redirects to https:// pages there).
func (c *Client) scopeProblem(u *url.URL) string {
	roots := []*url.URL{c.base}
	if answered := c.rootLinkBase(); answered != c.base {
		roots = append(roots, answered)
	}
	for _, root := range roots {
		if origin.Of(u) == origin.Of(root) && underRoot(u.Path, root.Path) {
			return ""
		}
	}
	if origin.Of(u) != c.origin && (len(roots) == 1 || origin.Of(u) != origin.Of(roots[1])) {
		return fmt.Sprintf("it points to another origin (%s) than the catalog's (%s)", originLabel(u), originLabel(c.base))
	}
	return fmt.Sprintf("it points outside the catalog: %s is not under the catalog's root path %s", u.Path, rootDir(c.base.Path))
}

// methodProblem says why a method may not be used by a next link or a
// cursor: only GET and POST, the methods of STAC item search.
func methodProblem(method string) string {
	switch methodOrGet(method) {
	case http.MethodGet, http.MethodPost:
		return ""
	}
	return fmt.Sprintf("it asks for method %s; only GET and POST are followed", upstream.TrimMessage(method))
}

// underRoot reports whether path is the root's directory or below it, with
// no dot segments left that could climb out of it.
func underRoot(path, root string) bool {
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	dir := rootDir(root)
	return dir == "/" || path == strings.TrimSuffix(dir, "/") || strings.HasPrefix(path, dir)
}

// rootDir is the directory of a catalog root path, with a trailing slash:
// "/api/stac/v1" and "/api/stac/v1/" give "/api/stac/v1/"; a root that is a
// file ("/stac/catalog.json") gives its directory.
func rootDir(root string) string {
	if i := strings.LastIndex(root, "/"); i >= 0 && strings.Contains(root[i+1:], ".") {
		root = root[:i]
	}
	return strings.TrimSuffix(root, "/") + "/"
}

// upgradeToCatalogScheme rewrites an http:// link to the https:// of a
// catalog served over https on the same host and default port, which is
// how catalogs behind a TLS-terminating proxy often write their links. It
// never downgrades.
func (c *Client) upgradeToCatalogScheme(u *url.URL) {
	if u.Scheme != "http" || c.base.Scheme != "https" || !strings.EqualFold(u.Hostname(), c.base.Hostname()) {
		return
	}
	if p := u.Port(); p != "" && p != "80" {
		return
	}
	u.Scheme, u.Host = "https", c.base.Host
}

// originLabel is scheme://host[:port] as written.
func originLabel(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + u.Host
}

// checkScope validates a request built from something other than the
// catalog's own landing page (a next link, a cursor).
func (c *Client) checkScope(r Request) (string, *url.URL) {
	if p := methodProblem(r.Method); p != "" {
		return p, nil
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Sprintf("its URL %q is not an absolute http(s) URL", upstream.TrimMessage(r.URL)), nil
	}
	if p := c.scopeProblem(u); p != "" {
		return p, nil
	}
	return "", u
}
