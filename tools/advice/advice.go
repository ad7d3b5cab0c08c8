// Package advice words what a model should do after the reliability layer
// gave up on a request: the Next of a reliability.Denial. The layer reports
// facts (the denial and its reliability.Situation); the words belong here,
// with the MCP tools, because they name tool arguments (catalog_url,
// max_items, idempotency_key) and settings. The server wires Next into
// reliability.Options.Advice.
package advice

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
)

// Next is the advice for the model after d: a reliability.Advisor.
func Next(d *reliability.Denial, s reliability.Situation) string {
	next := forSituation(d, s)
	if d.Recovery == reliability.RecoveryRetrySameKey && d.SideEffect != "" && d.SideEffect != reliability.SideEffectRead {
		next += " Call again with the same arguments and the same idempotency_key, never a new one: " +
			"the server checks whether the write was applied before it sends anything again."
	}
	return next
}

// forSituation is the advice before the write's own: the throttling 403,
// the tool deadline, a refused address, an answer too large to buffer, a
// host that is not the catalog's, else the denial's code.
func forSituation(d *reliability.Denial, s reliability.Situation) string {
	var denied *reliability.NetworkDeniedError
	switch {
	case s.Throttled:
		return throttle403Next(d.Host)
	case s.CallTimedOut:
		return timeoutNext(s.ToolTimeout, s.WaitingPath, s.WaitingHost, d.Host)
	case errors.As(d.Err, &denied):
		return networkDeniedNext
	case s.BodyLimit > 0:
		return tooLargeNext(s.BodyLimit)
	}
	if d.AssetHost {
		if next := assetHostNext(d.Code, s.NoAnswer); next != "" {
			return next
		}
	}
	return nextStep(d.Code, s.ToolTimeout, d.RetryAt, s.Now, s.NoAnswer)
}

// networkDeniedNext is the next step for a connection the layer's
// NetworkPolicy refused, naming the settings that change it.
const networkDeniedNext = "Use a public catalog URL. If this address is a catalog the operator means to serve, the operator can set " +
	"STAC_MCP_ALLOWED_CATALOG_HOSTS to list its host (or configure it in STAC_MCP_CATALOGS), or set " +
	"STAC_MCP_ALLOW_PRIVATE_NETWORKS=true; calling again with the same catalog_url will be refused the same way."

// nextStep is the advice for the model, by code. noAnswer is true when the
// last attempt got no HTTP answer at all (refused, reset, DNS, TLS): then
// the catalog may not be there, not merely overloaded.
func nextStep(code string, toolTimeout time.Duration, retryAt, now time.Time, noAnswer bool) string {
	wait := ""
	if d := retryAt.Sub(now).Round(100 * time.Millisecond); !retryAt.IsZero() && d > 0 {
		wait = fmt.Sprintf(" (about %s from now, at %s)", d, retryAt.UTC().Format(time.RFC3339))
	}
	switch {
	case code == reliability.CodeRetryExhausted && noAnswer:
		return "No HTTP answer came back: check catalog_url (a reachable STAC API root) and the network, then call the tool again" + wait + "."
	case code == reliability.CodeNotRetryable && noAnswer:
		return "No HTTP answer came back: check catalog_url (a reachable STAC API root, with the right scheme and certificate) and the network."
	}
	switch code {
	case reliability.CodeRetryExhausted:
		return "The catalog looks unhealthy or overloaded: wait before calling the tool again" + wait + ", or try another catalog."
	case reliability.CodeCircuitOpen:
		return "Do not retry immediately: the server retries this catalog automatically once the pause ends" + wait + "; until then use another catalog or wait."
	case reliability.CodeBudgetExhausted:
		return "This catalog has been failing often, so automatic retries are suspended until requests succeed again: wait a little before calling the tool again" + wait + "."
	case reliability.CodeDeadline:
		return fmt.Sprintf("Call the tool again%s; if this keeps happening, ask for less so that the call finishes inside the time limit, or raise %s (now %s).", wait, reliability.EnvToolTimeout, toolTimeout)
	case reliability.CodeOverloaded:
		return "This is a limit of this server, not a problem of the catalog: call the tool again in a few seconds. " +
			"If it keeps happening, the server's operator can raise the setting named above."
	}
	return "Check the request parameters; calling the tool again with the same arguments will fail the same way."
}

// tooLargeNext is the advice when a catalog's answer was longer than the
// body cap: it did answer, so "no answer came back" would be wrong.
func tooLargeNext(limit int64) string {
	return fmt.Sprintf("The catalog answered, but with a body larger than the %s this server buffers per response: "+
		"ask for less in one call (a lower limit or max_items, fewer collections, a narrower bbox or datetime).", reliability.FormatBytes(limit))
}

// assetHostNext replaces the catalog-centred advice for a host that is not
// the catalog: its failures say nothing about catalog_url.
func assetHostNext(code string, noAnswer bool) string {
	switch {
	case noAnswer:
		return "No HTTP answer came back from this host, which is not the catalog's: it may be unreachable from this machine or need credentials; check the network, or go without this host's answers (catalog_url is not the problem)."
	case code == reliability.CodeRetryExhausted:
		return "This host, which is not the catalog's, kept failing: try again later, or go without its answers."
	}
	return ""
}

// timeoutNext is the advice when the tool deadline ended a call, by what
// was still waiting for an answer: asking for less helps a slow search, not
// a landing page or an asset host that does not answer. Every branch names
// the setting that would have given the call more time.
func timeoutNext(toolTimeout time.Duration, path, host, catalogHost string) string {
	limit := fmt.Sprintf("The whole call is limited to %s (%s)", toolTimeout, reliability.EnvToolTimeout)
	// What raising it does, in the layer's terms (adr/0023): a request is
	// never cut while it could still answer inside the call's time, so the
	// limit is the one thing between a slow catalog and its answer.
	raise := fmt.Sprintf("if it is known to be slow, the server's operator can raise %s (for example to %d, \"Tool timeout (seconds)\" in the Claude Desktop extension's settings): "+
		"every call then waits up to that long for the catalog's answers, and a call answered sooner still returns at once",
		reliability.EnvToolTimeout, max(60, int(2*toolTimeout.Seconds())))
	what, search := describeRequest(path)
	switch {
	case path == "":
		return limit + " and it ran out before any request to the catalog was answered: try again later; " + raise + "."
	case host != "" && catalogHost != "" && host != catalogHost:
		return fmt.Sprintf("%s and the host %s (not the catalog) had not answered %s: ask about fewer items or assets, or try again later; %s.", limit, host, path, raise)
	case search:
		return fmt.Sprintf("%s and the catalog's %s (%s) had not finished: ask for less (a lower limit or max_items, a narrower bbox or datetime, fewer collections) or try again later; %s.", limit, what, path, raise)
	}
	return fmt.Sprintf("%s and the catalog had not served its %s (%s), so asking for fewer items would not help: the catalog may be down or overloaded. Check catalog_url or try again later; %s.", limit, what, path, raise)
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
