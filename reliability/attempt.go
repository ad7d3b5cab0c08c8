package reliability

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
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
	// By name, not the loop's host: a redirect may lead elsewhere.
	h, err := l.acquireHost(req.URL.Host)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	defer l.releaseHost(h)
	probe, release, err := admit(ctx, h)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	defer release()
	signalSent(ctx)

	attemptCtx, plan, cancel := l.attemptContext(ctx, h, req)
	defer cancel()
	rec := recordFrom(ctx)
	if rec != nil {
		rec.update(func(r *callRecord) { r.attempts++ })
	}
	start := time.Now()
	resp, err := t.send(attemptCtx, rec, h, req)
	if err == nil {
		resp, err = l.bufferBody(attemptCtx, req, resp)
	}
	took := time.Since(start)
	err = l.attemptTimedOut(ctx, attemptCtx, rec, plan, err)
	l.recordAttempt(ctx, h, probe, operationOf(req.Method, req.URL.Path), took, resp, err)
	return resp, err
}

// closeBody closes the body of a request that will not be sent, as a
// RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// admit lets one attempt to h through the host's circuit breaker, then
// into its bulkhead, unless the attempt's hedge round already holds a slot
// for it (roundHoldsSlot). The caller calls release when the attempt ends.
// probe is the breaker's ticket for the attempt's result (recordAttempt).
func admit(ctx context.Context, h *hostState) (probe probeTicket, release func(), err error) {
	admitted, probe := h.breaker.allow()
	if !admitted {
		return probe, nil, errCircuitOpen
	}
	if roundHoldsSlot(ctx, h) {
		return probe, func() {}, nil
	}
	if err := h.bulkhead.acquire(ctx); err != nil {
		h.breaker.record(probe, false, true)
		return probe, nil, err
	}
	return probe, h.bulkhead.release, nil
}

// attemptContext is the context of one attempt, bounded by its plan (made
// here unless the hedge transport made it on the loop's goroutine). An
// open-ended attempt gets no timer of its own, so that its expiry is
// reported as the tool timeout it is.
func (l *Layer) attemptContext(ctx context.Context, h *hostState, req *http.Request) (context.Context, attemptPlan, context.CancelFunc) {
	plan, planned := attemptPlanFrom(ctx)
	if !planned {
		plan = l.planAttempt(ctx, loopFrom(ctx), h, sendOnce(req))
	}
	if plan.openEnded {
		return ctx, plan, func() {}
	}
	attemptCtx, cancel := context.WithTimeoutCause(ctx, plan.limit, errAttemptTimeout)
	return attemptCtx, plan, cancel
}

// send sends req once on attemptCtx and counts the replays net/http made
// of it: every connection after the first is one (adr/0018).
func (t *attemptTransport) send(attemptCtx context.Context, rec *callRecord, h *hostState, req *http.Request) (*http.Response, error) {
	out, base := t.outgoing(attemptCtx, req)
	var conns atomic.Int32
	out = out.WithContext(httptrace.WithClientTrace(attemptCtx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { conns.Add(1) },
	}))
	resp, err := base.RoundTrip(out)
	if replays := int(conns.Load()) - 1; replays > 0 {
		t.layer.countReplays(rec, h, req, replays)
	}
	return resp, err
}

// outgoing is req as this attempt sends it, on attemptCtx, and the
// transport that sends it: whether net/http may replay it on a new
// connection depends on whether the layer sends it once.
func (t *attemptTransport) outgoing(attemptCtx context.Context, req *http.Request) (*http.Request, http.RoundTripper) {
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
	} else if req.Method == http.MethodPost && req.Header["Idempotency-Key"] == nil {
		// A POST search is a read, but net/http only replays requests it
		// knows to be idempotent. An empty Idempotency-Key says so without
		// sending the header (net/http's documented convention), so a dead
		// keep-alive connection costs a POST search what it costs a GET
		// (adr/0018): the replays are counted in send.
		out.Header = out.Header.Clone()
		out.Header["Idempotency-Key"] = []string{}
	}
	return out, base
}

// bufferBody reads resp's whole body inside the attempt, so that a reset
// or a truncation mid-body fails this attempt (one the loop can retry)
// rather than the caller's read; resp then carries the buffered body.
func (l *Layer) bufferBody(attemptCtx context.Context, req *http.Request, resp *http.Response) (*http.Response, error) {
	data, err := l.readBody(attemptCtx, req, resp)
	resp.Body.Close()
	if err != nil {
		if !errors.As(err, new(*bodyTooLargeError)) && !isLocalLimit(err) {
			err = &bodyReadError{err: err}
		}
		return nil, err
	}
	resp.Body = newBufferedBody(data)
	if req.Method != http.MethodHead {
		resp.ContentLength = int64(len(data))
	}
	return resp, nil
}

// attemptTimedOut turns a failure caused by the attempt's own timer into
// an *attemptTimeoutError, counted per tool; a failure of the call itself
// (its deadline, its cancellation) or of a limit of this server stays as it
// is.
func (l *Layer) attemptTimedOut(ctx, attemptCtx context.Context, rec *callRecord, plan attemptPlan, err error) error {
	if err == nil || ctx.Err() != nil || isLocalLimit(err) || !errors.Is(context.Cause(attemptCtx), errAttemptTimeout) {
		return err
	}
	tool := "unknown"
	if rec != nil {
		tool = rec.tool
	}
	l.metrics.attemptTimeouts.WithLabelValues(tool).Inc()
	return &attemptTimeoutError{limit: plan.limit.String()}
}

// recordAttempt tells the host's state and the metrics how the attempt
// went: a slow answer, the answer time of op the hedge delay is drawn from,
// and the breaker's count.
func (l *Layer) recordAttempt(ctx context.Context, h *hostState, probe probeTicket, op operation, took time.Duration, resp *http.Response, err error) {
	if err == nil && took > l.policy.AttemptTimeout {
		h.slow.note(took, l.now())
	}
	l.metrics.upstreamRequests.WithLabelValues(h.label, statusClass(resp, err)).Inc()
	o := outcome{class: classOK}
	if err != nil || resp != nil {
		o = classify(resp, err)
	}
	if ctx.Err() == nil && (err != nil || resp != nil) && !o.retryable {
		// The hedge delay is drawn from the catalog's answer times, counted
		// from the moment the attempt had its bulkhead slot: time spent
		// queueing behind this server's other requests (hung ones, say)
		// would make a busy host look slow and delay every hedge. They are
		// kept with hedging off too: a search of several catalogs waits for
		// a slow one by them (AnswerTime, adr/0035).
		h.latency[op].add(took)
	}
	if resp != nil {
		progressFrom(ctx).noteAnswer(time.Now())
	}
	// A limit of this server says nothing about the catalog.
	h.breaker.record(probe, o.retryable, ctx.Err() != nil || o.class == classLocalLimit)
}

// attemptPlan is how long one attempt may run: limit, or, when openEnded,
// until the call's own deadline.
type attemptPlan struct {
	limit     time.Duration
	openEnded bool
}

type attemptPlanKey struct{}

// withAttemptPlan hands a plan made on the loop's goroutine to an attempt
// that runs on another one (the hedge transport's), which must not read the
// loop's fields itself.
func withAttemptPlan(ctx context.Context, p attemptPlan) context.Context {
	return context.WithValue(ctx, attemptPlanKey{}, p)
}

func attemptPlanFrom(ctx context.Context) (attemptPlan, bool) {
	p, ok := ctx.Value(attemptPlanKey{}).(attemptPlan)
	return p, ok
}

// planAttempt decides the next attempt's time limit (adr/0011). It is the
// policy's attempt timeout, stretched for a host that recently answered
// only after it (never past half of the time left, so a hung attempt still
// leaves room for another), and open-ended when no retry could follow it
// anyway: the last attempt allowed, or one after which too little time
// would be left for the longest backoff wait and a useful attempt. Cutting
// such an attempt early would only turn a slow answer into no answer. A
// request sent once (a write) is the exception: it keeps the attempt
// timeout, because its caller needs the rest to recover a lost answer.
// It must run on the loop's goroutine.
func (l *Layer) planAttempt(ctx context.Context, loop *retryLoop, h *hostState, once bool) attemptPlan {
	deadline, ok := ctx.Deadline()
	if !ok {
		return attemptPlan{limit: l.policy.AttemptTimeout} // not reached: execute always sets a deadline
	}
	remaining := time.Until(deadline)
	limit := l.policy.AttemptTimeout
	if slow, ok := h.slow.recent(l.now()); ok {
		limit = max(limit, min(slow*3/2, remaining/2))
	}
	index, maxAttempts := 0, 1
	if loop != nil {
		index, maxAttempts = loop.attempt+loop.hedged, loop.attemptsAllowed()
	}
	longestWait := l.policy.BackoffBase << min(index, 20) // full jitter: the wait after attempt index is below this
	if once {
		// A write is sent once and its caller recovers a lost answer itself
		// (looks it up, then replays once): it needs the time left after
		// the attempt timeout, so the attempt keeps it.
		return attemptPlan{limit: min(limit, remaining)}
	}
	if index+1 >= maxAttempts || remaining-limit < longestWait+l.policy.MinUsefulAttempt {
		return attemptPlan{limit: remaining, openEnded: true}
	}
	return attemptPlan{limit: limit}
}

// slowMemory is how long a host's slow answer stretches its attempts.
const slowMemory = healthWindow

// slowAnswers remembers that a host answered only after the attempt timeout
// (which only an open-ended attempt can see): the slowest such answer while
// they keep coming, forgotten slowMemory after the last one.
type slowAnswers struct {
	mu   sync.Mutex
	took time.Duration
	at   time.Time
}

func (s *slowAnswers) note(took time.Duration, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.at) > slowMemory {
		s.took = 0
	}
	s.took, s.at = max(s.took, took), now
}

// recent returns the remembered answer time, if there is a recent one.
func (s *slowAnswers) recent(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.took == 0 || now.Sub(s.at) > slowMemory {
		return 0, false
	}
	return s.took, true
}
