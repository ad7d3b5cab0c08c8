package stacclient

import "time"

// ErrorKind classifies a failed STAC request.
type ErrorKind string

const (
	KindNotFound     ErrorKind = "not_found"    // 404
	KindBadRequest   ErrorKind = "bad_request"  // 400, 405, 409, 413, 422 and other 4xx
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

func (e *Error) Error() string { panic("unimplemented") }
func (e *Error) Unwrap() error { return e.Err }

// ParamError is a bad search or tool parameter, detected locally; nothing was
// sent.
type ParamError struct {
	Param    string // parameter name, e.g. "bbox"
	Got      string // what was received, trimmed
	Accepted string // the accepted forms, e.g. "4 or 6 numbers [w,s,e,n] ..."
	Reason   string // what is wrong with it
}

func (e *ParamError) Error() string { panic("unimplemented") }
