package faultinject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
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

// withKey attaches a tool and invocation to ctx. DefaultKeyFunc prefers it
// over headers, which suits in-process tests whose context reaches the
// transport.
func withKey(ctx context.Context, tool, invocation string) context.Context {
	return context.WithValue(ctx, contextKey{}, Key{Tool: tool, Invocation: invocation})
}

// DefaultKeyFunc looks, in order, for:
//  1. a key attached to the request context (withKey, in the package's own tests);
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

// KeyByRequest keys a request by its content: the tool from HeaderTool (may
// be empty) and, as the invocation, the method, path, query and a SHA-256
// of the body. Retries of one request share the key, so attempts are
// counted per distinct request, and each page of a paginated call is its
// own sequence of attempts.
//
// Use it when nothing reproducible identifies the tool call — the
// reliability layer's correlation ids are random per run — but the calls
// under test send distinct requests (different ids, bboxes or limits):
// then the schedule is the same for any seed whatever the interleaving.
// Identical requests in flight at the same time share one attempt counter,
// so their attempt numbers depend on arrival order.
//
// The body is read and put back (at most maxDrainBytes are hashed; the
// rest is passed on unread).
func KeyByRequest(r *http.Request) (Key, bool) {
	digest, err := bodyDigest(r)
	if err != nil {
		return Key{}, false
	}
	return Key{
		Tool:       r.Header.Get(HeaderTool),
		Invocation: r.Method + " " + r.URL.RequestURI() + " body-sha256:" + digest,
	}, true
}

// bodyDigest hashes the request body. It reads a copy from GetBody when
// the request has one (client requests built by net/http from byte
// readers do), so a RoundTripper leaves the caller's request untouched;
// otherwise it reads the body and puts the bytes back in front of the rest.
func bodyDigest(r *http.Request) (string, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return "none", nil
	}
	var prefix []byte
	var err error
	if r.GetBody != nil {
		var copyOfBody io.ReadCloser
		if copyOfBody, err = r.GetBody(); err != nil {
			return "", err
		}
		prefix, err = io.ReadAll(io.LimitReader(copyOfBody, maxDrainBytes))
		_ = copyOfBody.Close() // an in-memory copy; nothing to report
	} else {
		prefix, err = bufferRequestBody(r)
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(prefix)
	return hex.EncodeToString(sum[:8]), nil
}

// bufferRequestBody reads up to maxDrainBytes of r.Body and puts them back
// in front of whatever remains, so the next reader sees the whole body.
func bufferRequestBody(r *http.Request) ([]byte, error) {
	prefix, err := io.ReadAll(io.LimitReader(r.Body, maxDrainBytes))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix), r.Body), r.Body}
	return prefix, err
}
