// Package origin decides where the credentials of a request may go: two
// URLs may share them only when their origins (scheme, host and port) are
// equal, and a redirect that leaves the first request's origin keeps only
// headers that cannot be credentials. stacclient follows links and the
// reliability layer follows redirects by these rules.
package origin

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects one request follows.
const maxRedirects = 10

// ErrTooManyRedirects stops a redirect chain longer than maxRedirects.
var ErrTooManyRedirects = errors.New("stopped after 10 redirects")

// redirectSafeHeaders are the request headers a redirect to another origin
// keeps. Everything else (Authorization, Cookie, X-Api-Key, any header the
// operator configured for a catalog, headers a STAC link asked for) is a
// credential as far as the layer can tell, so it is removed: an allow-list
// cannot miss a configured header name the way a deny-list of well-known
// names would.
var redirectSafeHeaders = map[string]bool{
	"Accept":          true,
	"Accept-Encoding": true,
	"Accept-Language": true,
	"Cache-Control":   true,
	"Content-Type":    true,
	"Pragma":          true,
	"User-Agent":      true,
	// The correlation id the reliability layer sends on every attempt
	// (its correlationHeader; its redirect test checks that it survives).
	"X-Correlation-Id": true,
}

// CheckRedirect is the redirect policy of every upstream client: at most
// maxRedirects hops, and once any hop leaves the first request's origin
// (scheme, host and port: a move from https to http, to another port or to
// another host) only redirectSafeHeaders are sent, for the rest of the
// chain. Go's own client strips only Authorization, Cookie and
// WWW-Authenticate, and only on a change of host.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return ErrTooManyRedirects
	}
	if len(via) == 0 {
		return nil
	}
	first := Of(via[0].URL)
	left := Of(req.URL) != first
	for _, v := range via[1:] {
		left = left || Of(v.URL) != first
	}
	if left {
		for name := range req.Header {
			if !redirectSafeHeaders[http.CanonicalHeaderKey(name)] {
				req.Header.Del(name)
			}
		}
	}
	return nil
}

// Of is u's origin: its scheme, host and port ("https://host:443"),
// lowercased, with the scheme's default port filled in.
func Of(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
