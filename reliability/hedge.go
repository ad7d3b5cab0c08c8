package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hedgeTransport sits between go-retryablehttp and attemptTransport when
// Policy.Hedge is on (the default). For an idempotent read it starts one
// attempt with no timer of its own: it may run until the call's deadline,
// because cutting an attempt that could still answer in time only turns a
// slow answer into none. When the hedge delay passes without an
// answer, one more identical attempt goes out beside it, and another after
// a further delay while attempts remain (with the default 3, at most two
// copies beside the first: at D and 1.5 D with a learned delay, D and 3D
// while the delay is cold, D and 2D with a fixed one); the first answer wins
// and the others are cancelled and waited for, so no goroutine outlives the
// round trip. A copy is an attempt like any retry: it needs an attempt left
// under MaxAttempts, retry-budget tokens (budgetHedgeCost), a closed breaker
// and enough time before the tool deadline, and it is counted in the
// receipt (Attempts, Retries, Hedges). The delay is learned per host and
// operation (hedgeDelay), so a slow search is not hedged on its landing
// page's times. The design as a whole: adr/0037.
//
// An "answer" is any outcome the retry loop would not retry (a 2xx, a 4xx,
// a body too large); a retryable failure of one attempt while another is
// still out is not an answer, so the survivors are awaited. A retryable
// failure with nothing else out goes back to the loop, which retries it
// after the full-jitter backoff as before.
type hedgeTransport struct {
	layer   *Layer
	attempt http.RoundTripper
}

type loopKey struct{}

func withLoop(ctx context.Context, loop *retryLoop) context.Context {
	return context.WithValue(ctx, loopKey{}, loop)
}

func loopFrom(ctx context.Context) *retryLoop {
	loop, _ := ctx.Value(loopKey{}).(*retryLoop)
	return loop
}

// attemptResult is one attempt's outcome as the hedge sees it.
type attemptResult struct {
	resp  *http.Response
	err   error
	hedge bool
}

func (t *hedgeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	loop := loopFrom(req.Context())
	if loop == nil || loop.maxAttempts < 2 {
		return t.attempt.RoundTrip(req) // not a retried read: nothing to hedge
	}
	if req.Body != nil {
		// Each attempt gets a fresh body from req.GetBody, which
		// go-retryablehttp sets to replay the bytes the layer already holds.
		req.Body.Close()
	}
	ctx := req.Context()
	slot, release, err := t.holdSlot(ctx, req.URL.Host)
	if err != nil {
		return nil, err
	}
	defer release()
	if slot != nil {
		ctx = withSlotHeld(ctx, slot)
	}
	r := t.newRound(ctx, loop, req)
	defer r.stop()
	return r.run(ctx)
}

// holdSlot makes the round one request to the host's bulkhead, whatever
// the number of copies it sends: it waits for one slot here, and its
// attempts go out on it. Were each copy to take a slot of its own, the
// rounds whose every attempt hung would fill the bulkhead and the copies of
// other calls' reads would queue behind them for seconds. An open breaker
// is not queued for a slot: the first attempt's own admission then refuses
// it at once, as for any request. slot is the host whose slot the round
// holds (nil when none); release gives back what was held.
func (t *hedgeTransport) holdSlot(ctx context.Context, host string) (slot *hostState, release func(), err error) {
	h, err := t.layer.acquireHost(host)
	if err != nil {
		return nil, nil, err
	}
	if state, _ := h.breaker.status(); state != BreakerOpen {
		if err := h.bulkhead.acquire(ctx); err != nil {
			t.layer.releaseHost(h)
			return nil, nil, err
		}
		return h, func() { h.bulkhead.release(); t.layer.releaseHost(h) }, nil
	}
	return nil, func() { t.layer.releaseHost(h) }, nil
}

// hedgeRound is one round trip's attempts: the first, and the copies sent
// beside it while it has not answered.
type hedgeRound struct {
	t       *hedgeTransport
	loop    *retryLoop
	req     *http.Request
	op      operation
	plan    attemptPlan
	results chan attemptResult
	cancels []context.CancelFunc
	timers  []*time.Timer
	out     int // attempts still running

	delay      time.Duration // until the first copy, from when the first attempt was sent
	cold       bool          // delay is a guess made before op's fifth answer
	nextGap    time.Duration // until each further copy
	copies     int           // copies sent beside the first attempt
	primaryOut bool          // the first attempt has neither answered nor failed
	firstTimer *time.Timer   // the first copy's timer, once the first attempt is sent
	sentAt     time.Time
}

func (t *hedgeTransport) newRound(ctx context.Context, loop *retryLoop, req *http.Request) *hedgeRound {
	r := &hedgeRound{t: t, loop: loop, req: req, op: operationOf(req.Method, req.URL.Path),
		results: make(chan attemptResult, loop.maxAttempts), primaryOut: true,
		// No copy of a read has a timer of its own: it runs until an
		// answer wins or the call's deadline ends it.
		plan: attemptPlan{openEnded: true}}
	if deadline, ok := ctx.Deadline(); ok {
		r.plan.limit = time.Until(deadline)
	}
	r.delay, r.cold = t.layer.hedgeDelay(loop.host, r.op)
	r.nextGap = t.layer.hedgeGap(loop.host, r.op, r.delay, r.cold)
	return r
}

// stop cancels every attempt and stops every timer; the round's attempts
// have all ended (been waited for) when run returned an answer.
func (r *hedgeRound) stop() {
	for _, cancel := range r.cancels {
		cancel()
	}
	for _, timer := range r.timers {
		timer.Stop()
	}
}

// start sends one attempt (a copy when hedge).
func (r *hedgeRound) start(ctx context.Context, hedge bool) {
	attemptCtx, cancel := context.WithCancel(withAttemptPlan(ctx, r.plan))
	r.cancels = append(r.cancels, cancel)
	r.out++
	go r.t.launch(attemptCtx, r.loop, r.req, hedge, r.results)
}

// newTimer is a timer stopped when the round ends.
func (r *hedgeRound) newTimer(d time.Duration) *time.Timer {
	timer := time.NewTimer(d)
	r.timers = append(r.timers, timer)
	return timer
}

// run sends the first attempt and the copies, and returns the first
// answer, or the last retryable failure when every attempt failed.
//
// One more copy goes out after the hedge delay, and another after a
// further delay (hedgeGap), while attempts remain: with one copy, a read
// whose first attempt and copy both hang would wait for the deadline (p²
// of reads when a share p of attempts hang); a second copy makes that p³.
func (r *hedgeRound) run(ctx context.Context) (*http.Response, error) {
	// The hedge delay runs from the moment the primary is sent, i.e. has
	// its bulkhead slot: a hedge of a request still queued behind this
	// server's other requests would only queue behind it too.
	sent := make(chan struct{})
	r.start(withSentSignal(ctx, sent), false)
	// A cold delay is a guess made before op's fifth answer. Reads sent
	// side by side to a new catalog all start with it, and the others'
	// answers may teach the delay long before it ends: then a read among
	// them that is stuck gets its first copy at the learned delay (from
	// when it was sent), not at the attempt timeout, which a fresh server's
	// stuck first reads would otherwise wait. warmed is closed by op's fifth
	// answer.
	var warmed <-chan struct{}
	if r.cold {
		warmed = r.loop.host.latency[r.op].warmed()
	}
	var hedgeTimer <-chan time.Time
	for {
		select {
		case <-warmed:
			warmed = nil
			r.learnedWhileCold()
		case <-sent:
			sent = nil
			r.sentAt = time.Now()
			r.firstTimer = r.newTimer(r.delay)
			hedgeTimer = r.firstTimer.C
		case res := <-r.results:
			if done := r.settle(res); done {
				return res.resp, res.err
			}
		case <-hedgeTimer:
			if !r.t.admitHedge(r.loop) {
				hedgeTimer = nil // no attempt, token or time left: wait for those out
				continue
			}
			r.start(ctx, true)
			r.copies++
			hedgeTimer = r.newTimer(r.nextGap).C
		}
	}
}

// learnedWhileCold brings the first copy forward to the delay op has just
// learned, when no copy is out yet and the learned delay is shorter than
// the guess (never later than planned).
func (r *hedgeRound) learnedWhileCold() {
	if r.copies > 0 {
		return // the first copy is out; its gap stays as planned
	}
	learned, stillCold := r.t.layer.hedgeDelay(r.loop.host, r.op)
	if stillCold || learned >= r.delay {
		return
	}
	r.delay, r.cold = learned, false
	r.nextGap = r.t.layer.hedgeGap(r.loop.host, r.op, r.delay, r.cold)
	if r.firstTimer != nil {
		r.firstTimer.Reset(max(0, r.delay-time.Since(r.sentAt)))
	}
}

// settle takes one attempt's outcome and reports whether it ends the
// round: an answer (the others are cancelled and waited for, so no
// goroutine outlives the round trip), or a retryable failure with nothing
// else out (the loop decides whether to retry). A retryable failure while
// another copy is out waits for it.
func (r *hedgeRound) settle(res attemptResult) bool {
	r.out--
	if !res.hedge {
		r.primaryOut = false
	}
	if !answered(res) {
		return r.out == 0
	}
	// A copy that answers while the first attempt is still out marks the
	// round stuck: the delay of op falls toward where a waiting read is
	// more likely stuck than slow (stuckQuantile).
	r.loop.host.latency[r.op].noteRound(r.copies > 0 && res.hedge && r.primaryOut)
	for _, cancel := range r.cancels {
		cancel()
	}
	for ; r.out > 0; r.out-- {
		<-r.results // the losers end promptly once cancelled; their bodies are already buffered
	}
	if res.hedge {
		r.loop.lastRetryCost = budgetHedgeCost // a winning hedge is refunded like a successful retry
	}
	return true
}

type slotHeldKey struct{}

// withSlotHeld marks ctx as a hedge round's that holds a slot of h's
// bulkhead for all its attempts.
func withSlotHeld(ctx context.Context, h *hostState) context.Context {
	return context.WithValue(ctx, slotHeldKey{}, h)
}

// roundHoldsSlot reports whether an attempt to h on ctx goes out on its
// round's bulkhead slot. A redirect to another host takes that host's own.
func roundHoldsSlot(ctx context.Context, h *hostState) bool {
	held, _ := ctx.Value(slotHeldKey{}).(*hostState)
	return held == h
}

type sentSignalKey struct{}

// withSentSignal asks attemptTransport to close sent once the attempt has
// its bulkhead slot and goes out (once: a redirect sends it again).
func withSentSignal(ctx context.Context, sent chan struct{}) context.Context {
	return context.WithValue(ctx, sentSignalKey{}, sync.OnceFunc(func() { close(sent) }))
}

// signalSent closes the channel withSentSignal put in ctx, if any.
func signalSent(ctx context.Context) {
	if signal, ok := ctx.Value(sentSignalKey{}).(func()); ok {
		signal()
	}
}

// answered reports whether an attempt's outcome ends the round: anything
// the retry loop would not retry.
func answered(r attemptResult) bool {
	if r.err == nil && r.resp == nil {
		return false
	}
	return !classify(r.resp, r.err).retryable
}

// admitHedge takes an attempt and a retry-budget token for the hedge, or
// says why not by returning false.
func (t *hedgeTransport) admitHedge(loop *retryLoop) bool {
	l := t.layer
	if loop.attempt+1+loop.hedged >= loop.maxAttempts {
		return false
	}
	if state, _ := loop.host.breaker.status(); state != BreakerClosed {
		return false
	}
	if time.Until(loop.deadline) < l.policy.MinUsefulAttempt {
		return false
	}
	if !loop.host.budget.take(budgetHedgeCost) {
		return false
	}
	loop.hedged++
	loop.countRetry(func(c *callRecord) { c.hedges++ })
	l.metrics.hedges.WithLabelValues(loop.rec.tool).Inc()
	l.log.Info().Str("event", eventHedgeAttempt).Str("correlation_id", loop.rec.correlationID).Str("tool_name", loop.rec.tool).
		Int("attempt", loop.attempt+1+loop.hedged).Str("host", loop.host.name).Str("url_path", loop.path).
		Msg("hedging a slow upstream read with a second attempt")
	return true
}

// launch sends one attempt with its own copy of the request body.
func (t *hedgeTransport) launch(ctx context.Context, loop *retryLoop, req *http.Request, hedge bool, out chan<- attemptResult) {
	attempt := req.Clone(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil { // not reached: go-retryablehttp always sets it
			out <- attemptResult{err: errors.New("hedged attempt: the request body cannot be replayed (no GetBody)"), hedge: hedge}
			return
		}
		body, err := req.GetBody()
		if err != nil {
			out <- attemptResult{err: fmt.Errorf("replaying the request body for a hedged attempt: %w", err), hedge: hedge}
			return
		}
		attempt.Body = body
	}
	resp, err := t.attempt.RoundTrip(attempt) //nolint:bodyclose // handed over on out: RoundTrip returns the winner's; attemptTransport buffered every body (bufferBody)
	out <- attemptResult{resp: resp, err: err, hedge: hedge}
}
