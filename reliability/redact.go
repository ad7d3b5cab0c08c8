package reliability

import (
	"net/url"
	"regexp"
)

// secretQuery matches a query parameter whose name looks like a credential
// (api_key, access_token, sig, X-Amz-Signature, password, ...) and its value.
var secretQuery = regexp.MustCompile(`(?i)([?&;][^=&;#\s"'<>]*(?:key|token|secret|passw|sig|auth|credential|session)[^=&;#\s"'<>]*=)[^&;#\s"'<>]*`)

// userinfo matches the user:password@ part of a URL in text.
var userinfo = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://)[^/@\s"'<>]*@`)

// RedactSecrets hides credentials that URLs in s may carry: the values of
// query parameters named like keys, tokens or signatures, and user:password@.
// Errors, logs and tool results pass URLs through it, because an operator
// may configure a catalog as https://host/stac?api_key=SECRET.
func RedactSecrets(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}REDACTED@")
	return secretQuery.ReplaceAllString(s, "${1}REDACTED")
}

// RedactURL is RedactSecrets for one URL.
func RedactURL(u *url.URL) string { return RedactSecrets(u.String()) }
