package reliability

import (
	"context"
	"errors"
	"io"
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
}

var errAttemptTimeout = errors.New("attempt timeout")

func (t *attemptTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	l := t.layer
	ctx := req.Context()
	rec := recordFrom(ctx)
	h := l.host(req.URL.Host)
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
	resp, err := t.base.RoundTrip(req.WithContext(attemptCtx))
	if err == nil {
		var data []byte
		data, err = readCapped(resp.Body, l.policy.MaxBodyBytes)
		resp.Body.Close()
		if err == nil {
			resp.Body = newBufferedBody(data)
			if req.Method != http.MethodHead {
				resp.ContentLength = int64(len(data))
			}
		} else {
			var tooLarge *bodyTooLargeError
			if !errors.As(err, &tooLarge) {
				err = &bodyReadError{err: err}
			}
			resp = nil
		}
	}
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(attemptCtx), errAttemptTimeout) {
		err = &attemptTimeoutError{limit: l.policy.AttemptTimeout.String()}
		tool := "unknown"
		if rec != nil {
			tool = rec.tool
		}
		l.metrics.attemptTimeouts.WithLabelValues(tool).Inc()
	}
	l.metrics.upstreamRequests.WithLabelValues(h.name, statusClass(resp, err)).Inc()
	o := outcome{class: classOK}
	if err != nil || resp != nil {
		o = classify(resp, err)
	}
	h.breaker.record(probe, o.retryable, ctx.Err() != nil)
	return resp, err
}

// readCapped reads at most limit bytes, failing when the body is longer.
func readCapped(body io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &bodyTooLargeError{limit: limit}
	}
	return data, nil
}
