package stacclient

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxUpstreamMessage bounds the upstream text kept in Error.Message: enough
// for a server's explanation, never a whole HTML page in a tool result.
const maxUpstreamMessage = 300

// statusKind maps an HTTP status to an ErrorKind.
func statusKind(status int) ErrorKind {
	switch {
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindUnauthorized
	case status == http.StatusTooManyRequests:
		return KindThrottled
	case status >= 500:
		return KindServer
	default:
		return KindBadRequest
	}
}

// statusError turns a non-2xx answer into a typed error.
func statusError(method, rawURL string, resp *http.Response, body []byte) *Error {
	e := &Error{
		Kind:    statusKind(resp.StatusCode),
		Status:  resp.StatusCode,
		Method:  method,
		URL:     rawURL,
		Message: upstreamMessage(body),
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if ra, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = ra
	}
	return e
}

// parseRetryAfter reads a Retry-After header as delay-seconds or an
// HTTP-date (RFC 9110 §10.2.3). A date in the past gives zero.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// upstreamMessageKeys are the members servers put their explanation in:
// stac-fastapi "detail"/"description", stac-server "description", API
// Gateway "message", RFC 9457 "title"/"detail".
var upstreamMessageKeys = []string{"description", "detail", "message", "title", "error"}

// upstreamMessage extracts a short human explanation from an error body:
// a JSON message member if there is one, else the text with HTML stripped.
func upstreamMessage(body []byte) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		for _, key := range upstreamMessageKeys {
			raw, ok := obj[key]
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				if s = strings.TrimSpace(s); s != "" {
					return trimMessage(s)
				}
				continue
			}
			if string(raw) != "null" { // structured detail, e.g. FastAPI validation errors
				return trimMessage(string(raw))
			}
		}
		return trimMessage(string(body))
	}
	return trimMessage(htmlToText(string(body)))
}

var (
	htmlDropBlocks = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)>|<!--.*?-->|<!doctype[^>]*>`)
	htmlTitle      = regexp.MustCompile(`(?is)<title[^>]*>.*?</title>`)
	htmlTag        = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlHeadingEnd = regexp.MustCompile(`(?i)</h[1-6]\s*>`)
	spaceRun       = regexp.MustCompile(`\s+`)
)

// htmlToText keeps the readable text of an HTML error page. The <title> is
// dropped when the page has a body, because it usually repeats the heading.
func htmlToText(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	s = htmlDropBlocks.ReplaceAllString(s, " ")
	if withoutTitle := htmlTitle.ReplaceAllString(s, " "); strings.TrimSpace(htmlTag.ReplaceAllString(withoutTitle, "")) != "" {
		s = withoutTitle
	}
	s = htmlHeadingEnd.ReplaceAllString(s, ": ") // "Unauthorized: The server could not…"
	s = htmlTag.ReplaceAllString(s, " ")
	s = strings.TrimSpace(spaceRun.ReplaceAllString(html.UnescapeString(s), " "))
	return strings.TrimRight(s, ": ")
}

// trimMessage collapses whitespace and cuts at maxUpstreamMessage
// characters, marking the cut with "…".
func trimMessage(s string) string {
	s = strings.TrimSpace(spaceRun.ReplaceAllString(strings.ToValidUTF8(s, "?"), " "))
	if utf8.RuneCountInString(s) <= maxUpstreamMessage {
		return s
	}
	runes := []rune(s)
	return strings.TrimSpace(string(runes[:maxUpstreamMessage])) + "…"
}
