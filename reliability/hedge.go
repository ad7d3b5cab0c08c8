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
	// The round is one request to the host's bulkhead, whatever the number
	// of copies it sends: it waits for one slot here, and its
	// attempts go out on it. Were each copy to take a slot of its own, the
	// rounds whose every attempt hung would fill the bulkhead and the
	// copies of other calls' reads would queue behind them for seconds.
	// An open breaker is not queued for a slot: the first attempt's own
	// admission then refuses it at once, as for any request.
	h, err := t.layer.acquireHost(req.URL.Host)
	if err != nil {
		return nil, err
	}
	defer t.layer.releaseHost(h)
	ctx := req.Context()
	if state, _ := h.breaker.status(); state != BreakerOpen {
		if err := h.bulkhead.acquire(ctx); err != nil {
			return nil, err
		}
		defer h.bulkhead.release()
		ctx = withSlotHeld(ctx, h)
	}
	results := make(chan attemptResult, loop.maxAttempts)
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	out := 0 // attempts still running
	// No copy of a read has a timer of its own: it runs until an answer
	// wins or the call's deadline ends it.
	plan := attemptPlan{openEnded: true}
	if deadline, ok := ctx.Deadline(); ok {
		plan.limit = time.Until(deadline)
	}
	start := func(ctx context.Context, hedge bool) {
		attemptCtx, cancel := context.WithCancel(withAttemptPlan(ctx, plan))
		cancels = append(cancels, cancel)
		out++
		go t.launch(attemptCtx, loop, req, hedge, results)
	}
	// The hedge delay runs from the moment the primary is sent, i.e. has
	// its bulkhead slot: a hedge of a request still queued behind this
	// server's other requests would only queue behind it too.
	sent := make(chan struct{})
	start(withSentSignal(ctx, sent), false)

	// One more copy after the hedge delay, and another after a further
	// delay (hedgeGap), while attempts remain: with one copy, a read whose
	// first attempt and copy both hang would wait for the deadline (p² of
	// reads when a share p of attempts hang); a second copy makes that p³.
	var hedgeTimer <-chan time.Time
	op := operationOf(req.Method, req.URL.Path)
	delay, cold := t.layer.hedgeDelay(loop.host, op)
	nextGap := t.layer.hedgeGap(loop.host, op, delay, cold)
	copies := 0        // copies sent beside the first attempt
	primaryOut := true // the first attempt has neither answered nor failed
	// A cold delay is a guess made before op's fifth answer. Reads sent
	// side by side to a new catalog all start with it, and the others'
	// answers may teach the delay long before it ends: then a read among
	// them that is stuck gets its first copy at the learned delay (from
	// when it was sent), not at the attempt timeout, which a fresh server's
	// stuck first reads would otherwise wait. warmed is closed by op's fifth
	// answer.
	var warmed <-chan struct{}
	if cold {
		warmed = loop.host.latency[op].warmed()
	}
	var firstTimer *time.Timer // the first copy's timer, once the primary is sent
	var sentAt time.Time
	for {
		select {
		case <-warmed:
			warmed = nil
			if copies > 0 {
				continue // the first copy is out; its gap stays as planned
			}
			learned, stillCold := t.layer.hedgeDelay(loop.host, op)
			if stillCold || learned >= delay {
				continue // never later than planned
			}
			delay, cold = learned, false
			nextGap = t.layer.hedgeGap(loop.host, op, delay, cold)
			if firstTimer != nil {
				firstTimer.Reset(max(0, delay-time.Since(sentAt)))
			}
		case <-sent:
			sent = nil
			sentAt = time.Now()
			firstTimer = time.NewTimer(delay)
			defer firstTimer.Stop()
			hedgeTimer = firstTimer.C
		case r := <-results:
			out--
			if !r.hedge {
				primaryOut = false
			}
			if answered(r) {
				// A copy that answers while the first attempt is still out
				// marks the round stuck: the delay of op falls toward where
				// a waiting read is more likely stuck than slow
				// (stuckQuantile).
				loop.host.latency[op].noteRound(copies > 0 && r.hedge && primaryOut)
				for _, cancel := range cancels {
					cancel()
				}
				for ; out > 0; out-- {
					<-results // the losers end promptly once cancelled; their bodies are already buffered
				}
				if r.hedge {
					loop.lastRetryCost = budgetHedgeCost // a winning hedge is refunded like a successful retry
				}
				return r.resp, r.err
			}
			if out == 0 {
				// Every copy failed in a retryable way (or the first failed
				// before any hedge): the loop decides whether to retry.
				return r.resp, r.err
			}
			// A retryable failure while another copy is out: wait for it.
		case <-hedgeTimer:
			if !t.admitHedge(loop) {
				hedgeTimer = nil // no attempt, token or time left: wait for those out
				continue
			}
			start(ctx, true)
			copies++
			timer := time.NewTimer(nextGap)
			defer timer.Stop()
			hedgeTimer = timer.C
		}
	}
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
