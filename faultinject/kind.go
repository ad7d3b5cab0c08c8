package faultinject

import (
	"fmt"
	"strings"
)

// Kind is one injectable fault. The zero value, None, means "no fault":
// the request passes through untouched.
type Kind uint8

// The fault catalogue. The order is part of the contract: it fixes how a
// Plan's Mix maps a random draw to a kind, so appending is safe but
// reordering changes every seeded schedule.
const (
	None Kind = iota

	// Upstream server errors. 501 and 505 are the two 5xx answers the
	// policy never retries: retrying cannot make them succeed.
	HTTP500
	HTTP502
	HTTP503
	HTTP504
	HTTP501
	HTTP505

	// Rate limiting: 429 with each Retry-After shape a client must parse.
	HTTP429RetryAfterSeconds  // Retry-After: <Timing.RetryAfter in whole seconds>
	HTTP429RetryAfterDate     // Retry-After: <now + Timing.RetryAfter as an HTTP date>
	HTTP429RetryAfterInvalid  // Retry-After: a value that is neither form
	HTTP429RetryAfterAboveCap // Retry-After: <Timing.RetryAfterAboveCap in seconds>

	// Client errors with the bodies real catalogs send.
	HTTP403Throttle // Earth Search's API Gateway throttle: {"message":"Forbidden"}
	HTTP400
	HTTP404
	HTTP422

	// Connection faults.
	ConnectionRefused
	ResetBeforeResponse
	ResetMidBody
	EOFAfterHeaders

	// Timing faults.
	HeadersDelayedWithin // headers after Timing.HeaderDelayWithin, then the real answer
	HeadersDelayedBeyond // headers after Timing.HeaderDelayBeyond, then the real answer
	Hang                 // nothing until the request context ends
	SlowBody             // the real answer, trickled in small chunks

	// Payload faults: the transfer succeeds, the content is wrong.
	TruncatedBody    // Content-Length larger than the bytes sent, then close
	MalformedJSON    // 200, application/json, not parseable
	WrongContentType // 200, text/html with an HTML page
	NotSTACJSON      // 200, valid JSON that is no STAC document
	OversizedBody    // 200, Timing.OversizedBytes of valid JSON, streamed

	// Applied faults: the request reaches the upstream, which acts on it
	// (a write is applied), and then its answer is lost. A read may simply
	// be retried; a write must not be sent again blindly.
	AppliedThenReset // the answer is replaced by a connection reset
	AppliedThenHang  // the answer never comes (until the request context ends)
	AppliedThen503   // the answer is replaced by a 503

	kindCount // sentinel: number of kinds including None
)

var kindNames = [kindCount]string{
	None:                      "none",
	HTTP500:                   "http_500",
	HTTP502:                   "http_502",
	HTTP503:                   "http_503",
	HTTP504:                   "http_504",
	HTTP501:                   "http_501",
	HTTP505:                   "http_505",
	HTTP429RetryAfterSeconds:  "http_429_retry_after_seconds",
	HTTP429RetryAfterDate:     "http_429_retry_after_date",
	HTTP429RetryAfterInvalid:  "http_429_retry_after_invalid",
	HTTP429RetryAfterAboveCap: "http_429_retry_after_above_cap",
	HTTP403Throttle:           "http_403_throttle",
	HTTP400:                   "http_400",
	HTTP404:                   "http_404",
	HTTP422:                   "http_422",
	ConnectionRefused:         "connection_refused",
	ResetBeforeResponse:       "reset_before_response",
	ResetMidBody:              "reset_mid_body",
	EOFAfterHeaders:           "eof_after_headers",
	HeadersDelayedWithin:      "headers_delayed_within_timeout",
	HeadersDelayedBeyond:      "headers_delayed_beyond_timeout",
	Hang:                      "hang",
	SlowBody:                  "slow_body",
	TruncatedBody:             "truncated_body",
	MalformedJSON:             "malformed_json",
	WrongContentType:          "wrong_content_type",
	NotSTACJSON:               "not_stac_json",
	OversizedBody:             "oversized_body",
	AppliedThenReset:          "applied_then_reset",
	AppliedThenHang:           "applied_then_hang",
	AppliedThen503:            "applied_then_503",
}

// Class says how a correct reliability layer must react to a kind, which is
// how the SLO tests group faults.
type Class uint8

const (
	// ClassNone belongs to None only.
	ClassNone Class = iota
	// ClassRetryable faults are transient: retrying the same request can
	// succeed (5xx except 501/505, 429, connection and body-read errors).
	ClassRetryable
	// ClassNonRetryable faults are permanent for this request: a retry
	// would get the same answer (4xx, 501/505, wrong payloads).
	ClassNonRetryable
	// ClassHang faults outlast a timeout: the attempt or the tool deadline
	// has to end them.
	ClassHang
	// ClassSlow faults delay a correct answer but stay within the attempt
	// timeout: the call should succeed without a retry.
	ClassSlow
	// ClassApplied faults let the upstream act on the request and then
	// lose its answer: the test of idempotent writes. A separate class, so
	// that the read-side mixes (retryable, hang) keep their schedules.
	ClassApplied
)

var classNames = [...]string{
	ClassNone:         "none",
	ClassRetryable:    "retryable",
	ClassNonRetryable: "non_retryable",
	ClassHang:         "hang",
	ClassSlow:         "slow",
	ClassApplied:      "applied",
}

var kindClasses = [kindCount]Class{
	None:                      ClassNone,
	HTTP500:                   ClassRetryable,
	HTTP502:                   ClassRetryable,
	HTTP503:                   ClassRetryable,
	HTTP504:                   ClassRetryable,
	HTTP501:                   ClassNonRetryable,
	HTTP505:                   ClassNonRetryable,
	HTTP429RetryAfterSeconds:  ClassRetryable,
	HTTP429RetryAfterDate:     ClassRetryable,
	HTTP429RetryAfterInvalid:  ClassRetryable,
	HTTP429RetryAfterAboveCap: ClassRetryable,
	HTTP403Throttle:           ClassNonRetryable,
	HTTP400:                   ClassNonRetryable,
	HTTP404:                   ClassNonRetryable,
	HTTP422:                   ClassNonRetryable,
	ConnectionRefused:         ClassRetryable,
	ResetBeforeResponse:       ClassRetryable,
	ResetMidBody:              ClassRetryable,
	EOFAfterHeaders:           ClassRetryable,
	HeadersDelayedWithin:      ClassSlow,
	HeadersDelayedBeyond:      ClassHang,
	Hang:                      ClassHang,
	SlowBody:                  ClassSlow,
	TruncatedBody:             ClassRetryable,
	MalformedJSON:             ClassNonRetryable,
	WrongContentType:          ClassNonRetryable,
	NotSTACJSON:               ClassNonRetryable,
	OversizedBody:             ClassNonRetryable,
	AppliedThenReset:          ClassApplied,
	AppliedThenHang:           ClassApplied,
	AppliedThen503:            ClassApplied,
}

// String is the kind's stable snake_case name, as used in journals,
// benchmark names (parseKind reads it back).
func (k Kind) String() string {
	if k >= kindCount {
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// Class is how a reliability layer must treat the kind.
func (k Kind) Class() Class {
	if k >= kindCount {
		return ClassNone
	}
	return kindClasses[k]
}

// bodyOnly reports whether the kind's whole effect is in the response
// body. A HEAD request has no body, so these kinds leave it unharmed
// (both forms then answer with headers only, as a real server would); a
// harness measuring HEAD-heavy tools should leave them out of the mix.
func (k Kind) bodyOnly() bool {
	switch k {
	case ResetMidBody, EOFAfterHeaders, TruncatedBody, SlowBody, MalformedJSON, NotSTACJSON, OversizedBody:
		return true
	}
	return false
}

// Valid reports whether k is one of the declared kinds (None included).
func (k Kind) Valid() bool { return k < kindCount }

// String is the class's stable snake_case name.
func (c Class) String() string {
	if int(c) >= len(classNames) {
		return fmt.Sprintf("class(%d)", uint8(c))
	}
	return classNames[c]
}

// AllKinds lists every fault kind (None excluded) in declaration order.
func AllKinds() []Kind {
	kinds := make([]Kind, 0, kindCount-1)
	for k := None + 1; k < kindCount; k++ {
		kinds = append(kinds, k)
	}
	return kinds
}

// KindsOf lists the kinds belonging to any of the given classes, in
// declaration order.
func KindsOf(classes ...Class) []Kind {
	var kinds []Kind
	for _, k := range AllKinds() {
		for _, c := range classes {
			if k.Class() == c {
				kinds = append(kinds, k)
				break
			}
		}
	}
	return kinds
}

// parseKind is the inverse of Kind.String.
func parseKind(name string) (Kind, error) {
	for k, n := range kindNames {
		if n == name {
			return Kind(k), nil
		}
	}
	return None, fmt.Errorf("faultinject: unknown fault kind %q; accepted: %s",
		name, strings.Join(kindNames[1:], ", "))
}
