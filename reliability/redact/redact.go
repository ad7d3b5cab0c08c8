// Package redact hides the credentials that URLs carry (a user:password@,
// a query parameter named like a key, token or signature) before a URL, or
// a text that may quote one, reaches an error, a log line or a tool result:
// an operator may configure a catalog as https://host/stac?api_key=SECRET,
// or the shared Redis as redis://:password@host. It is the one place that
// decides what a secret looks like and how a hidden one is shown
// ("REDACTED").
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// hidden replaces every secret.
const hidden = "REDACTED"

// secretQuery matches a query parameter whose name looks like a credential
// (api_key, access_token, sig, X-Amz-Signature, password, ...) and its value.
var secretQuery = regexp.MustCompile(`(?i)([?&;][^=&;#\s"'<>]*(?:key|token|secret|passw|sig|auth|credential|session)[^=&;#\s"'<>]*=)[^&;#\s"'<>]*`)

// userinfo matches the user:password@ part of a URL in text.
var userinfo = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://)[^/@\s"'<>]*@`)

// Secrets hides credentials that URLs in s may carry: the values of query
// parameters named like keys, tokens or signatures, and user:password@.
// Errors, logs and tool results pass URLs through it.
func Secrets(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}"+hidden+"@")
	return secretQuery.ReplaceAllString(s, "${1}"+hidden)
}

// URL is rawURL with its credentials hidden, as Secrets hides them. A
// value that does not parse as a URL is not shown at all: where its
// secrets are cannot be known.
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(an unparsable URL, not shown)"
	}
	if u.User != nil {
		// url.Parse accepts passwords with characters (@, quotes) that end
		// Secrets' pattern early; the parsed URL knows where they end.
		u.User = url.User(hidden)
	}
	return Secrets(u.String())
}

// Password is Secrets(s), with the password of rawURL also hidden wherever
// s quotes it on its own: an error about a URL (a parser's, say) may quote
// its parts rather than the whole URL. When rawURL does not parse, its
// password cannot be found, and the caller should not quote s at all.
func Password(s, rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, p, hidden)
		}
	}
	return Secrets(s)
}
