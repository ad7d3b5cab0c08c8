package reliability

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// attemptTransport makes exactly one upstream attempt: breaker admission,
// bulkhead slot, per-attempt timeout, and the whole body read inside the
// attempt so that a reset or truncation mid-body is an attempt failure the
// loop can retry. It deliberately has no CloseIdleConnections method.
type attemptTransport struct {
	layer *Layer
	base  http.RoundTripper
	once  http.RoundTripper // base without connection reuse (nil: base), for writes sent once
}

var errAttemptTimeout = errors.New("attempt timeout")

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	l := t.layer
	ctx := req.Context()
	rec := recordFrom(ctx)
	// By name, not the loop's host: a redirect may lead elsewhere.
	h, err := l.acquireHost(req.URL.Host)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	defer l.releaseHost(h)
	if rec != nil {
		rec.noteHost(req.URL.Host)
	}
	admitted, probe := h.breaker.allow()
	if !admitted {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errCircuitOpen
	}
	if err := h.bulkhead.acquire(ctx); err != nil {
		h.breaker.record(probe, false, true)
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	defer h.bulkhead.release()

	// An attempt that would run into the tool deadline anyway gets no timer
	// of its own, so that expiry is reported as the tool timeout it is.
	attemptCtx := ctx
	if deadline, ok := ctx.Deadline(); !ok || time.Until(deadline) > l.policy.AttemptTimeout {
		var cancel context.CancelFunc
		attemptCtx, cancel = context.WithTimeoutCause(ctx, l.policy.AttemptTimeout, errAttemptTimeout)
		defer cancel()
	}
	if rec != nil {
		rec.update(func(r *callRecord) { r.attempts++ })
	}
	out, base := req.WithContext(attemptCtx), t.base
	if sendOnce(req) {
		// net/http replays a request on a reused connection that died before
		// the answer when it can rewind the body and the request looks
		// idempotent, which an Idempotency-Key header makes any write look.
		// A new connection is never "reused", and without GetBody a body
		// cannot be rewound: a write the layer sends once reaches the
		// catalog at most once.
		out.GetBody = nil
		if t.once != nil {
			base = t.once
		}
	}
	resp, err := base.RoundTrip(out)
	if err == nil {
		var data []byte
		data, err = l.readBody(attemptCtx, req, resp)
		resp.Body.Close()
		if err == nil {
			resp.Body = newBufferedBody(data)
			if req.Method != http.MethodHead {
				resp.ContentLength = int64(len(data))
			}
		} else {
			if !errors.As(err, new(*bodyTooLargeError)) && !isLocalLimit(err) {
				err = &bodyReadError{err: err}
			}
			resp = nil
		}
	}
	if err != nil && ctx.Err() == nil && !isLocalLimit(err) && errors.Is(context.Cause(attemptCtx), errAttemptTimeout) {
		err = &attemptTimeoutError{limit: l.policy.AttemptTimeout.String()}
		tool := "unknown"
		if rec != nil {
			tool = rec.tool
		}
		l.metrics.attemptTimeouts.WithLabelValues(tool).Inc()
	}
	l.metrics.upstreamRequests.WithLabelValues(h.label, statusClass(resp, err)).Inc()
	o := outcome{class: classOK}
	if err != nil || resp != nil {
		o = classify(resp, err)
	}
	// A limit of this server says nothing about the catalog.
	h.breaker.record(probe, o.retryable, ctx.Err() != nil || o.class == classLocalLimit)
	return resp, err
}
