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
// Error() is a complete sentence a model can act on; the fields carry the
// same facts for structured output.
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
	Next         string    `json:"next"` // what to do next, for the model
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

// nextStep is the advice for the model, by code. noAnswer is true when the
// last attempt got no HTTP answer at all (refused, reset, DNS, TLS): then
// the catalog may not be there, not merely overloaded.
func nextStep(code string, p Policy, retryAt, now time.Time, noAnswer bool) string {
	wait := ""
	if d := retryAt.Sub(now).Round(100 * time.Millisecond); !retryAt.IsZero() && d > 0 {
		wait = fmt.Sprintf(" (about %s from now, at %s)", d, retryAt.UTC().Format(time.RFC3339))
	}
	switch {
	case code == CodeRetryExhausted && noAnswer:
		return "No HTTP answer came back: check catalog_url (a reachable STAC API root) and the network, then call the tool again" + wait + "."
	case code == CodeNotRetryable && noAnswer:
		return "No HTTP answer came back: check catalog_url (a reachable STAC API root, with the right scheme and certificate) and the network."
	}
	switch code {
	case CodeRetryExhausted:
		return "The catalog looks unhealthy or overloaded: wait before calling the tool again" + wait + ", or try another catalog."
	case CodeCircuitOpen:
		return "Do not retry immediately: the server retries this catalog automatically once the pause ends" + wait + "; until then use another catalog or wait."
	case CodeBudgetExhausted:
		return "This catalog has been failing often, so automatic retries are suspended until requests succeed again: wait a little before calling the tool again" + wait + "."
	case CodeDeadline:
		return fmt.Sprintf("Call the tool again%s; if this keeps happening, ask for less so that the call finishes inside the time limit, or raise %s (now %s).", wait, envToolTimeout, p.ToolTimeout)
	case CodeOverloaded:
		return "This is a limit of this server, not a problem of the catalog: call the tool again in a few seconds. " +
			"If it keeps happening, the server's operator can raise the setting named above."
	}
	return "Check the request parameters; calling the tool again with the same arguments will fail the same way."
}

// tooLargeNext is the advice when a catalog's answer was longer than the
// body cap: it did answer, so "no answer came back" would be wrong.
func tooLargeNext(limit int64) string {
	return fmt.Sprintf("The catalog answered, but with a body larger than the %s this server buffers per response: "+
		"ask for less in one call (a lower limit or max_items, fewer collections, a narrower bbox or datetime).", formatBytes(limit))
}

// assetHostNext replaces the catalog-centred advice for a host that is not
// the catalog: its failures say nothing about catalog_url.
func assetHostNext(code string, noAnswer bool) string {
	switch {
	case noAnswer:
		return "No HTTP answer came back from this host, which is not the catalog's: it may be unreachable from this machine or need credentials; check the network, or go without this host's answers (catalog_url is not the problem)."
	case code == CodeRetryExhausted:
		return "This host, which is not the catalog's, kept failing: try again later, or go without its answers."
	}
	return ""
}

// timeoutNext is the advice when the tool deadline ended a call, by what
// was still waiting for an answer: asking for less helps a slow search, not
// a landing page or an asset host that does not answer. Every branch names
// the setting that would have given the call more time.
func timeoutNext(p Policy, seen lastSeen, catalogHost string) string {
	limit := fmt.Sprintf("The whole call is limited to %s (%s)", p.ToolTimeout, envToolTimeout)
	raise := fmt.Sprintf("raise %s (for example to %d) if it is known to be slow", envToolTimeout, max(60, int(2*p.ToolTimeout.Seconds())))
	what, search := describeRequest(seen.path)
	switch {
	case seen.path == "":
		return limit + " and it ran out before any request to the catalog was answered: try again later, or " + raise + "."
	case seen.host != "" && catalogHost != "" && seen.host != catalogHost:
		return fmt.Sprintf("%s and the host %s (not the catalog) had not answered %s: ask about fewer items or assets, try again later, or %s.", limit, seen.host, seen.path, raise)
	case search:
		return fmt.Sprintf("%s and the catalog's %s (%s) had not finished: ask for less (a lower limit or max_items, a narrower bbox or datetime, fewer collections), try again later, or %s.", limit, what, seen.path, raise)
	}
	return fmt.Sprintf("%s and the catalog had not served its %s (%s), so asking for fewer items would not help: the catalog may be down or overloaded. Check catalog_url, try again later, or %s.", limit, what, seen.path, raise)
}

// describeRequest names what a STAC API path asks for, and whether it is a
// search (whose cost depends on what is asked) rather than a fixed page.
func describeRequest(path string) (what string, search bool) {
	path = strings.TrimSuffix(path, "/")
	last := path[strings.LastIndex(path, "/")+1:]
	switch {
	case last == "search" || last == "items":
		return "search", true
	case last == "aggregate":
		return "aggregation", true
	case last == "conformance":
		return "conformance page", false
	case last == "queryables":
		return "queryables", false
	case last == "collections":
		return "collection list", false
	case strings.Contains(path, "/items/"):
		return "item page", false
	case strings.Contains(path, "/collections/"):
		return "collection page", false
	}
	return "landing page", false
}

// throttle403Next explains Earth Search style throttling (API Gateway answers
// 403 {"message":"Forbidden"} when it sheds load).
func throttle403Next(host string) string {
	return fmt.Sprintf("This catalog (%s) answers HTTP 403 {\"message\":\"Forbidden\"} when it throttles too many or too fast requests, "+
		"so this is most likely rate limiting, not a permission problem: wait 10-30 seconds, then try again with fewer parallel or smaller requests.", host)
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

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
