package stacclient

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// ErrorKind classifies a failed STAC request.
type ErrorKind string

const (
	KindNotFound     ErrorKind = "not_found"    // 404
	KindBadRequest   ErrorKind = "bad_request"  // 400, 405, 413, 422 and other 4xx
	KindConflict     ErrorKind = "conflict"     // 409: the resource already exists (a create) or changed under a write
	KindUnauthorized ErrorKind = "unauthorized" // 401, 403
	KindThrottled    ErrorKind = "throttled"    // 429
	KindServer       ErrorKind = "server_error" // 5xx
	KindTransport    ErrorKind = "transport"    // no HTTP answer: refused, reset, timeout, TLS
	KindInvalidSTAC  ErrorKind = "invalid_stac" // unparseable JSON or not the STAC object expected
	KindTooLarge     ErrorKind = "too_large"    // body over Options.MaxBodyBytes
	KindUnsupported  ErrorKind = "unsupported"  // the catalog lacks the endpoint/capability
)

// Error is a failed STAC request: what was asked, what came back, and a
// trimmed upstream message (JSON description/detail/message, or text).
type Error struct {
	Kind       ErrorKind
	Status     int // 0 when there was no HTTP answer
	Method     string
	URL        string
	Message    string        // upstream message, trimmed to ~300 characters
	RetryAfter time.Duration // from a Retry-After header, if any
	Err        error         // underlying cause (transport or decode error)
}

// Error reads "GET https://x/v1/collections/foo: 404 not_found: Not Found":
// the request, the status (when there was an answer), the kind, then the
// upstream message, the cause and any Retry-After, each only when present.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Method != "" || e.URL != "" {
		b.WriteString(strings.TrimSpace(e.Method + " " + e.URL))
		b.WriteString(": ")
	}
	if e.Status != 0 {
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteByte(' ')
	}
	kind := e.Kind
	if kind == "" {
		kind = "error"
	}
	b.WriteString(string(kind))
	if message := strings.TrimSpace(e.Message); message != "" {
		b.WriteString(": ")
		b.WriteString(message)
	}
	if e.Err != nil {
		if e.Message == "" {
			b.WriteString(": ")
		} else {
			b.WriteString(" (cause: ")
		}
		b.WriteString(e.Err.Error())
		if e.Message != "" {
			b.WriteByte(')')
		}
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	// The URL may carry a configured catalog's key (?api_key=...).
	return redact.Secrets(b.String())
}

func (e *Error) Unwrap() error { return e.Err }

// ParamError is a bad search or tool parameter, detected locally; nothing was
// sent.
type ParamError struct {
	Param    string // parameter name, e.g. "bbox"
	Got      string // what was received, trimmed
	Accepted string // the accepted forms, e.g. "4 or 6 numbers [w,s,e,n] ..."
	Reason   string // what is wrong with it
}

// Error reads `invalid bbox: got "[1,2,3]" (3 numbers); accepted: 4 numbers
// [west,south,east,north] or ...`, leaving out the parts that are empty.
func (e *ParamError) Error() string {
	var b strings.Builder
	b.WriteString("invalid ")
	b.WriteString(e.Param)
	b.WriteString(": got ")
	b.WriteString(strconv.Quote(e.Got))
	if e.Reason != "" {
		b.WriteString(" (")
		b.WriteString(e.Reason)
		b.WriteByte(')')
	}
	if e.Accepted != "" {
		b.WriteString("; accepted: ")
		b.WriteString(e.Accepted)
	}
	return b.String()
}
