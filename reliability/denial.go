package reliability

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// Denial codes.
const (
	CodeRetryExhausted  = "retry_exhausted"
	CodeTimeout         = "timeout"
	CodeCircuitOpen     = "circuit_open"
	CodeBudgetExhausted = "budget_exhausted"
	CodeNotRetryable    = "not_retryable"
	CodeDeadline        = "deadline"
	CodeOverloaded      = "overloaded"

	// Denials of write tools, decided before anything is sent (or after the
	// answer to a write was lost); see adr/0014-idempotent-writes.md.
	CodeIdempotencyConflict = "idempotency_conflict"
	CodeInFlight            = "in_flight"
	CodeOutcomeUnknown      = "outcome_unknown"
)

// Denial is a typed give-up: why the layer stopped and what to do next.
// Error() is a complete sentence a model can act on (its last part is Next,
// which Options.Advice words); the fields carry the same facts for
// structured output.
type Denial struct {
	Code         string    `json:"code"` // retry_exhausted, timeout, circuit_open, budget_exhausted, not_retryable, deadline
	Host         string    `json:"host,omitempty"`
	ErrorClass   string    `json:"error_class,omitempty"`
	Attempts     int       `json:"attempts"`
	ElapsedMS    int64     `json:"elapsed_ms"`
	LastStatus   int       `json:"last_status,omitempty"`
	LastMessage  string    `json:"last_message,omitempty"`
	RetryAfterMS int64     `json:"retry_after_ms,omitempty"`
	RetryAt      time.Time `json:"retry_at,omitzero"`
	Next         string    `json:"next"` // what to do next, for the model (Options.Advice words it)
	// Recovery is the action allowed next, as a code: retry,
	// retry_same_key, fix_request or new_key (Recovery* constants).
	Recovery string `json:"recovery"`
	// SideEffect and IdempotencyKey say what the denied call was: a read,
	// or a write under which key.
	SideEffect     string `json:"side_effect,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// AssetHost is true when Host is not the host of the catalog the call
	// was made for (an asset href's host, probed by HEAD): advice about
	// catalog_url or the catalog's health would be wrong there.
	AssetHost bool  `json:"asset_host,omitempty"`
	Err       error `json:"-"`
}

var codeSummaries = map[string]string{
	CodeRetryExhausted:  "the catalog kept failing on every allowed attempt",
	CodeTimeout:         "the tool call ran out of time",
	CodeCircuitOpen:     "requests to this catalog are paused because most recent requests failed",
	CodeBudgetExhausted: "the retry budget for this catalog is spent, so the failed request was not retried",
	CodeNotRetryable:    "the request failed in a way that retrying cannot fix",
	CodeDeadline:        "there was not enough time left before the tool deadline to wait and retry",
	CodeOverloaded:      "this server is at one of its own resource limits, so it did not send the request",

	CodeIdempotencyConflict: "this idempotency_key was already used with different arguments, so nothing was sent",
	CodeInFlight:            "another call with this idempotency_key is still running, so nothing was sent",
	CodeOutcomeUnknown:      "the answer to the write was lost and the catalog could not be checked, so it is not known whether the write was applied",
}

func (d *Denial) Error() string {
	var b strings.Builder
	summary := codeSummaries[d.Code]
	switch {
	case d.AssetHost:
		fmt.Fprintf(&b, "The request to %s (not the catalog's host: an asset host, say)", d.Host)
		summary = strings.Replace(summary, "the catalog", "the host", 1)
	case d.Host != "":
		b.WriteString("The catalog request to " + d.Host)
	default:
		b.WriteString("The catalog request")
	}
	what := "given up"
	if d.Code == CodeIdempotencyConflict || d.Code == CodeInFlight {
		what = "not sent"
	}
	fmt.Fprintf(&b, " was %s (%s): %s", what, d.Code, summary)
	fmt.Fprintf(&b, "; %d attempt(s) in %d ms", d.Attempts, d.ElapsedMS)
	switch {
	case d.LastStatus != 0 && d.LastMessage != "":
		fmt.Fprintf(&b, "; last upstream answer HTTP %d %q", d.LastStatus, d.LastMessage)
	case d.LastStatus != 0:
		fmt.Fprintf(&b, "; last upstream answer HTTP %d", d.LastStatus)
	case d.Err != nil:
		fmt.Fprintf(&b, "; last error: %v", d.Err)
	}
	if d.RetryAfterMS > 0 {
		fmt.Fprintf(&b, "; the catalog asked to wait %d ms (Retry-After)", d.RetryAfterMS)
	}
	b.WriteString(". ")
	b.WriteString(d.Next)
	return redact.Secrets(b.String()) // a cause may quote a URL with a key in it
}

func (d *Denial) Unwrap() error { return d.Err }

// Advisor words what a model should do after a denial the layer built:
// its Next. The layer reports facts (the Denial's fields and the
// Situation); the words, which name tool arguments such as catalog_url or
// max_items, belong to the MCP layer, which supplies them in
// Options.Advice (tools/advice).
type Advisor func(d *Denial, s Situation) string

// Situation is what the layer knew when it gave up, beyond the denial's own
// fields: the facts its advice depends on.
type Situation struct {
	Now         time.Time     // the layer's clock when it gave up (Options.Now)
	ToolTimeout time.Duration // the time the whole call had (Policy.ToolTimeout)
	// NoAnswer: the last attempt got no HTTP answer at all (refused, reset,
	// DNS, TLS): the catalog may not be there, not merely overloaded.
	NoAnswer bool
	// BodyLimit is set when the host answered, but with a body longer than
	// this many bytes (Policy.MaxBodyBytes): it is not "no answer".
	BodyLimit int64
	// Throttled: the call met API Gateway's answer when it sheds load,
	// HTTP 403 {"message":"Forbidden"}, most likely rate limiting.
	Throttled bool
	// CallTimedOut: the tool deadline ended the call (code timeout, from
	// Run). WaitingPath and WaitingHost are then the request it was still
	// waiting for (the oldest that was not a side request; empty when no
	// request had been sent).
	CallTimedOut             bool
	WaitingPath, WaitingHost string
}

// advise words d's Next with the Advisor (without one, a denial has no
// advice). It runs once the denial's facts are all set, before it can be
// shared.
func (l *Layer) advise(d *Denial, s Situation) *Denial {
	if l.advice != nil {
		if s.Now.IsZero() {
			s.Now = l.now()
		}
		s.ToolTimeout = l.policy.ToolTimeout
		d.Next = l.advice(d, s)
	}
	return d
}

// isForbiddenThrottle reports the API Gateway throttling answer.
func isForbiddenThrottle(status int, body []byte) bool {
	if status != 403 {
		return false
	}
	var v struct {
		Message string `json:"message"`
	}
	return json.Unmarshal(body, &v) == nil && strings.EqualFold(strings.TrimSpace(v.Message), "forbidden")
}

// FormatBytes writes a size as the layer's messages do ("2 KiB", "640 KiB",
// "1536 bytes"), so that advice naming a cap names it as the error does.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
