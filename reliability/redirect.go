package reliability

import (
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects one request follows.
const maxRedirects = 10

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
	http.CanonicalHeaderKey(correlationHeader): true,
}

// CheckRedirect is the redirect policy of every upstream client: at most
// maxRedirects hops, and once any hop leaves the first request's origin
// (scheme, host and port: a move from https to http, to another port or to
// another host) only redirectSafeHeaders are sent, for the rest of the
// chain. Go's own client strips only Authorization, Cookie and
// WWW-Authenticate, and only on a change of host.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	if len(via) == 0 {
		return nil
	}
	origin := Origin(via[0].URL)
	left := Origin(req.URL) != origin
	for _, v := range via[1:] {
		left = left || Origin(v.URL) != origin
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

// Origin is u's scheme, host and port ("https://host:443"), lowercased,
// with the scheme's default port filled in: two URLs may share credentials
// only when their origins are equal.
func Origin(u *url.URL) string {
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
