package stacclient

import (
	"net/http"
	"time"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// statusKind maps an HTTP status to an ErrorKind.
func statusKind(status int) ErrorKind {
	switch {
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusConflict:
		return KindConflict
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
		Message: upstream.MessageOf(resp, body),
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if ra, ok := upstream.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = ra
	}
	return e
}
