package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// hedgeTransport sits between go-retryablehttp and attemptTransport when
// Policy.Hedge is on. For an idempotent read it starts one attempt and, if
// no answer came within the hedge delay, a second identical one; the first
// answer wins and the other attempt is cancelled and waited for, so no
// goroutine outlives the round trip. The hedge is an attempt like any
// retry: it needs an attempt left under MaxAttempts, a retry-budget token,
// a closed breaker and enough time before the tool deadline, and it is
// counted in the receipt (Attempts, Retries, Hedges).
//
// An "answer" is any outcome the retry loop would not retry (a 2xx, a 4xx,
// a body too large); a retryable failure of one attempt while the other is
// still out is not an answer, so the survivor is awaited.
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
		return t.timed(loop, req) // not a retried read: nothing to hedge
	}
	if req.Body != nil {
		// Each attempt gets a fresh body from req.GetBody, which
		// go-retryablehttp sets to replay the bytes the layer already holds.
		req.Body.Close()
	}
	ctx := req.Context()
	results := make(chan attemptResult, 2)
	primaryCtx, cancelPrimary := context.WithCancel(withAttemptPlan(ctx, t.layer.planAttempt(ctx, loop, loop.host, false)))
	defer cancelPrimary()
	go t.launch(primaryCtx, loop, req, false, results)

	var hedgeTimer <-chan time.Time
	if delay, ok := t.layer.hedgeDelay(loop.host); ok {
		timer := time.NewTimer(delay)
		defer timer.Stop()
		hedgeTimer = timer.C
	}
	select {
	case r := <-results:
		return r.resp, r.err // answered (or failed) before the hedge delay
	case <-hedgeTimer:
	}
	if !t.admitHedge(loop) {
		r := <-results
		return r.resp, r.err
	}
	hedgeCtx, cancelHedge := context.WithCancel(withAttemptPlan(ctx, t.layer.planAttempt(ctx, loop, loop.host, false)))
	defer cancelHedge()
	go t.launch(hedgeCtx, loop, req, true, results)

	first := <-results
	if answered(first) {
		if first.hedge {
			cancelPrimary()
		} else {
			cancelHedge()
		}
		<-results // the loser ends promptly once cancelled; its body is already buffered
		if first.hedge {
			loop.lastRetryCost = budgetRetryCost // a winning hedge is refunded like a successful retry
		}
		return first.resp, first.err
	}
	// The first to end failed in a retryable way; the other may still answer.
	second := <-results
	return second.resp, second.err
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
	if !loop.host.budget.take(budgetRetryCost) {
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
	resp, err := t.timed(loop, attempt)
	out <- attemptResult{resp: resp, err: err, hedge: hedge}
}

// timed makes one attempt and adds its duration to the host's latency
// window when it was answered, which is what the hedge delay is drawn from.
func (t *hedgeTransport) timed(loop *retryLoop, req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.attempt.RoundTrip(req)
	if loop != nil && req.Context().Err() == nil && answered(attemptResult{resp: resp, err: err}) {
		loop.host.latency.add(time.Since(start))
	}
	return resp, err
}
