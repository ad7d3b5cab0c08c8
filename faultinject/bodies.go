package faultinject

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// canned is a complete synthetic answer: the faults that are "just a
// different response" (status errors and wrong payloads).
type canned struct {
	status      int
	contentType string
	retryAfter  string // empty: no Retry-After header
	body        string
}

// stacError renders the {"code","description"} error body that
// stac-fastapi and stac-server send.
func stacError(code, description string) string {
	return `{"code":"` + code + `","description":"` + description + ` (injected fault)"}`
}

// statusTextFaults are the faults answered with a STAC error body whose
// description is the status text and whose code is that text without
// spaces ("Bad Gateway", "BadGateway"), as stac-fastapi writes them.
var statusTextFaults = map[Kind]int{
	HTTP404: http.StatusNotFound,
	HTTP500: http.StatusInternalServerError,
	HTTP501: http.StatusNotImplemented,
	HTTP502: http.StatusBadGateway,
	HTTP503: http.StatusServiceUnavailable,
	HTTP504: http.StatusGatewayTimeout,
	HTTP505: http.StatusHTTPVersionNotSupported,
}

// applied503 is the answer AppliedThen503 puts in place of the real one.
var applied503 = canned{http.StatusServiceUnavailable, "application/json", "",
	stacError("ServiceUnavailable", "Service Unavailable (after the request was applied)")}

// cannedFor returns the synthetic answer of a kind, or false when the kind
// is not a plain response (connection, timing and streamed-body faults).
func cannedFor(k Kind, t Timing, now time.Time) (canned, bool) {
	const jsonType = "application/json"
	if status, ok := statusTextFaults[k]; ok {
		text := http.StatusText(status)
		return canned{status, jsonType, "", stacError(strings.ReplaceAll(text, " ", ""), text)}, true
	}
	switch k {
	case HTTP429RetryAfterSeconds:
		return canned{http.StatusTooManyRequests, jsonType, wholeSeconds(t.RetryAfter), rateLimitBody}, true
	case HTTP429RetryAfterDate:
		// Rounded up to the next whole second: an HTTP date cannot say less,
		// and rounding down would announce a wait shorter than RetryAfter.
		at := now.Add(t.RetryAfter).Truncate(time.Second).Add(time.Second)
		return canned{http.StatusTooManyRequests, jsonType, at.UTC().Format(http.TimeFormat), rateLimitBody}, true
	case HTTP429RetryAfterInvalid:
		return canned{http.StatusTooManyRequests, jsonType, InvalidRetryAfter, rateLimitBody}, true
	case HTTP429RetryAfterAboveCap:
		return canned{http.StatusTooManyRequests, jsonType, wholeSeconds(t.RetryAfterAboveCap), rateLimitBody}, true
	case HTTP403Throttle:
		return canned{http.StatusForbidden, jsonType, "", ThrottleBody}, true
	case HTTP400:
		return canned{http.StatusBadRequest, jsonType, "", stacError("BadRequest", "Invalid request parameters")}, true
	case HTTP422:
		return canned{http.StatusUnprocessableEntity, jsonType, "", stacError("RequestValidationError", "Unprocessable Entity")}, true
	case MalformedJSON:
		return canned{http.StatusOK, "application/geo+json", "", MalformedJSONBody}, true
	case WrongContentType:
		return canned{http.StatusOK, "text/html; charset=utf-8", "", HTMLBody}, true
	case NotSTACJSON:
		return canned{http.StatusOK, jsonType, "", NotSTACBody}, true
	}
	return canned{}, false
}

// Bodies of the payload faults, exported so tests can assert on them.
const (
	// ThrottleBody is what Earth Search's API Gateway answers with its 403.
	ThrottleBody = `{"message":"Forbidden"}`
	// InvalidRetryAfter is neither delay-seconds nor an HTTP date.
	InvalidRetryAfter = "soon"
	// MalformedJSONBody is a STAC ItemCollection cut off mid-object, sent
	// with a matching Content-Length: the transfer succeeds, parsing fails.
	MalformedJSONBody = `{"type":"FeatureCollection","features":[{"type":"Feature","id":"injected-malformed",`
	// HTMLBody is the kind of page a proxy or login wall sends instead of JSON.
	HTMLBody = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>injected fault: HTML instead of JSON</p></body></html>\n"
	// NotSTACBody is valid JSON that is no STAC document.
	NotSTACBody = `{"hello":"world"}`
	// PartialBody is the declared payload of TruncatedBody, ResetMidBody and
	// EOFAfterHeaders: the Content-Length announces all of it, and only the
	// first half (none for EOFAfterHeaders) is sent.
	PartialBody = `{"type":"FeatureCollection","features":[{"type":"Feature","stac_version":"1.0.0","id":"injected-partial","geometry":null,"properties":{"datetime":"2024-01-01T00:00:00Z"},"links":[],"assets":{}}],"links":[]}`
)

const rateLimitBody = `{"code":"TooManyRequests","description":"Rate limit exceeded (injected fault)"}`

// partialBytes is how much of PartialBody the cut-short faults send.
const partialBytes = len(PartialBody) / 2

func wholeSeconds(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10)
}

// oversizedPrefix and oversizedSuffix wrap the padding of OversizedBody so
// the whole answer is one valid (if useless) ItemCollection.
const (
	oversizedPrefix = `{"type":"FeatureCollection","features":[],"padding":"`
	oversizedSuffix = `"}`
)

const minOversizedBytes = len(oversizedPrefix) + len(oversizedSuffix)

// oversizedReader generates exactly size bytes of valid JSON on demand, so
// a 1 GiB answer costs no memory.
func oversizedReader(size int64) io.Reader {
	padding := size - int64(minOversizedBytes)
	return io.MultiReader(
		strings.NewReader(oversizedPrefix),
		io.LimitReader(repeatByte('x'), padding),
		strings.NewReader(oversizedSuffix),
	)
}

// repeatByte is an endless reader of one byte value.
type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
