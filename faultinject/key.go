package faultinject

import (
	"context"
	"net/http"
)

// Request headers the default KeyFunc reads.
const (
	// HeaderTool names the tool making the request (set by a test harness).
	HeaderTool = "X-Fault-Tool"
	// HeaderInvocation names one call of that tool (set by a test harness).
	HeaderInvocation = "X-Fault-Invocation"
	// HeaderCorrelationID is sent by the reliability layer on every attempt
	// of one tool call; it serves as the invocation when HeaderInvocation is
	// absent.
	HeaderCorrelationID = "X-Correlation-ID"
	// HeaderInjected is set on every synthetic response the injector writes,
	// naming the kind, so a person reading a trace can tell injected
	// answers from real ones.
	HeaderInjected = "X-Fault-Injected"
)

// KeyFunc derives the tool and invocation of a request. It returns false
// when the request carries no key. Leave Key.Attempt at 0 to let the
// injector count attempts per (tool, invocation) in arrival order, or set
// it to take the attempt number from the request itself.
type KeyFunc func(*http.Request) (Key, bool)

type contextKey struct{}

// WithKey attaches a tool and invocation to ctx. DefaultKeyFunc prefers it
// over headers, which suits in-process tests whose context reaches the
// transport.
func WithKey(ctx context.Context, tool, invocation string) context.Context {
	return context.WithValue(ctx, contextKey{}, Key{Tool: tool, Invocation: invocation})
}

// DefaultKeyFunc looks, in order, for:
//  1. a key attached with WithKey to the request context;
//  2. the HeaderInvocation header, with the tool from HeaderTool (may be empty);
//  3. the HeaderCorrelationID header, with the tool from HeaderTool.
//
// Attempts are then counted per (tool, invocation) by the injector. A
// correlation id only gives reproducible schedules if the ids themselves
// are reproducible across runs (e.g. derived from a seed); random ids give
// a schedule that is deterministic per id but differs from run to run.
func DefaultKeyFunc(r *http.Request) (Key, bool) {
	if k, ok := r.Context().Value(contextKey{}).(Key); ok {
		return k, true
	}
	tool := r.Header.Get(HeaderTool)
	if inv := r.Header.Get(HeaderInvocation); inv != "" {
		return Key{Tool: tool, Invocation: inv}, true
	}
	if id := r.Header.Get(HeaderCorrelationID); id != "" {
		return Key{Tool: tool, Invocation: id}, true
	}
	return Key{}, false
}
