package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/redact"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// toolError is an error already phrased for the model: what failed, why, and
// what to do next. renderError passes it through unchanged, so a handler can
// phrase a failure itself (actionable) and define still renders once.
type toolError struct {
	msg   string
	cause error
}

func (e *toolError) Error() string { return e.msg }
func (e *toolError) Unwrap() error { return e.cause }

// actionable builds a toolError with an explicit message.
func actionable(cause error, format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...), cause: cause}
}

// failWith returns a handler's failure return: the zero output, no text,
// and err as it is. Handlers do not render: define renders every error
// once, after the reliability layer has had its say (a Denial it wraps
// around the handler's error is what the model must read).
func failWith[Out any]() func(error) (Out, string, error) {
	return func(err error) (Out, string, error) {
		var zero Out
		return zero, "", err
	}
}

// relabelError names an in-process catalog (the demo, a local catalog) in
// a rendered error by its name rather than the loopback URL and host it is
// served at ("collection 'x' not found in catalog demo", "GET
// demo/collections/x").
func relabelError(cat *Catalog, err error) error {
	label := cat.Label()
	var done *toolError
	if label == "" || !errors.As(err, &done) {
		return err
	}
	msg := strings.ReplaceAll(done.msg, cat.URL, label)
	msg = strings.ReplaceAll(msg, cat.Host, label)
	return &toolError{msg: msg, cause: done.cause}
}

// renderError turns the errors a tool can meet into a message that says what
// failed, why (with the upstream status and message when there is one) and
// what to do next. Errors it does not know are prefixed with the tool name.
func renderError(toolName string, err error) error {
	if err == nil {
		return nil
	}
	var done *toolError
	if errors.As(err, &done) && err == error(done) { //nolint:errorlint // already rendered: err is itself a toolError, not one wrapped in another error
		return err
	}
	var pe *stacclient.ParamError
	if errors.As(err, &pe) {
		return &toolError{msg: paramErrorMessage(toolName, pe), cause: err}
	}
	var denial *reliability.Denial
	if errors.As(err, &denial) {
		return &toolError{msg: denialMessage(toolName, denial), cause: err}
	}
	var se *stacclient.Error
	if errors.As(err, &se) {
		return &toolError{msg: stacErrorMessage(toolName, se), cause: err}
	}
	var de *stacdoc.Error
	if errors.As(err, &de) {
		return &toolError{cause: err, msg: fmt.Sprintf("%s: %s. Nothing was sent and nothing was recorded: fix every problem listed and call again (the same idempotency_key may be reused).", toolName, err.Error())}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &toolError{cause: err, msg: toolName + " did not finish before the tool deadline. " +
			"Narrow the request (fewer collections, a smaller bbox or datetime range, a smaller max_items) and try again."}
	case errors.Is(err, context.Canceled):
		return &toolError{cause: err, msg: toolName + " was cancelled before it finished; nothing was returned."}
	}
	return &toolError{msg: toolName + ": " + err.Error(), cause: err}
}

func paramErrorMessage(toolName string, pe *stacclient.ParamError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: invalid argument %q", toolName, pe.Param)
	if pe.Reason != "" {
		fmt.Fprintf(&b, ": %s", pe.Reason)
	}
	fmt.Fprintf(&b, ". Received: %s.", quoteIfEmpty(pe.Got))
	if pe.Accepted != "" {
		fmt.Fprintf(&b, " Accepted: %s.", pe.Accepted)
	}
	return b.String()
}

func quoteIfEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func denialMessage(toolName string, d *reliability.Denial) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the catalog request was given up (%s) after %d attempt(s) in %d ms", toolName, d.Code, d.Attempts, d.ElapsedMS)
	if d.LastStatus != 0 {
		fmt.Fprintf(&b, "; last upstream status %d", d.LastStatus)
	}
	if d.LastMessage != "" {
		fmt.Fprintf(&b, ": %s", d.LastMessage)
	}
	b.WriteString(".")
	if d.RetryAfterMS > 0 {
		fmt.Fprintf(&b, " Retry after %d ms.", d.RetryAfterMS)
	}
	var se *stacclient.Error
	if errors.As(d.Err, &se) {
		// The layer's summary says that it gave up; the last failure says why.
		last := strings.TrimPrefix(stacErrorMessage("", se), ": ")
		if d.Code == reliability.CodeTimeout && se.Kind == stacclient.KindTransport && se.Status == 0 {
			// The call's deadline ended a request still waiting for its
			// answer: the catalog was reached, so the transport kind's
			// "could not be reached" would be wrong; Next says what was
			// still waiting and which setting gives it more time.
			last = strings.TrimSuffix(last, " "+nextStepByKind[se.Kind])
		}
		fmt.Fprintf(&b, " Last failure: %s", last)
	} else if d.Err != nil && d.LastMessage == "" {
		fmt.Fprintf(&b, " Last failure: %v.", d.Err)
	}
	// When no HTTP answer came back, the layer's Next already says to check
	// catalog_url and the network.
	if d.Next != "" {
		fmt.Fprintf(&b, " Next: %s", d.Next)
	}
	return b.String()
}

// nextStepByKind says what a model should do after each kind of upstream failure.
var nextStepByKind = map[stacclient.ErrorKind]string{
	stacclient.KindNotFound:     "Check the id: call search_collections to list collection ids, or search_items to find item ids.",
	stacclient.KindConflict:     "It exists already: read it (get_item, get_collection), or replace it with update_item or update_collection.",
	stacclient.KindBadRequest:   "The catalog rejected a parameter: fix the one its message names (get_queryables lists property names, get_capabilities what the catalog supports).",
	stacclient.KindUnauthorized: "The catalog refused access: it needs credentials this server was not given, or the resource is private.",
	stacclient.KindThrottled:    "The catalog is rate-limiting: wait before retrying, and ask for fewer items.",
	stacclient.KindServer:       "The catalog failed on its side: retry later, or narrow the request (smaller limit, fewer collections).",
	stacclient.KindTransport:    "The catalog could not be reached: check catalog_url, or retry later.",
	stacclient.KindInvalidSTAC:  "The answer was not the STAC JSON expected: check that catalog_url is a STAC API root (call get_root).",
	stacclient.KindTooLarge:     "The answer was larger than the size cap: ask for less (smaller limit or max_items, or fields to exclude geometry).",
	stacclient.KindUnsupported:  "The catalog does not offer this: call get_capabilities to see what it supports.",
}

func stacErrorMessage(toolName string, e *stacclient.Error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", toolName)
	switch {
	case e.Status != 0:
		fmt.Fprintf(&b, "the catalog answered %d (%s)", e.Status, e.Kind)
	default:
		fmt.Fprintf(&b, "the request failed (%s)", e.Kind)
	}
	if e.Method != "" || e.URL != "" {
		// The URL may carry a configured catalog's key (?api_key=…), as
		// stacclient.Error.Error knows; this text reaches the model.
		fmt.Fprintf(&b, " for %s %s", e.Method, redact.Secrets(e.URL))
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	b.WriteString(".")
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " Retry after %s.", e.RetryAfter)
	}
	if next := nextStepByKind[e.Kind]; next != "" {
		b.WriteString(" " + next)
	}
	return b.String()
}

// isKind reports whether err is a stacclient error of kind k.
func isKind(err error, k stacclient.ErrorKind) bool {
	var se *stacclient.Error
	return errors.As(err, &se) && se.Kind == k
}
