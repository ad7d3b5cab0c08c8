package reliability

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// errStop tells go-retryablehttp to stop; the reason is in retryLoop.reason
// and the ErrorHandler turns it into a Denial.
var errStop = errors.New("reliability: stop retrying")

// retryLoop holds one logical request's retry decisions. go-retryablehttp
// calls its methods from the requesting goroutine only, in order.
type retryLoop struct {
	layer       *Layer
	rec         *callRecord
	host        *hostState
	path        string
	deadline    time.Time
	maxAttempts int

	attempt       int // 0-based index of the current attempt
	hedged        int // extra attempts sent by the hedge transport
	last          outcome
	lastStatus    int
	lastMessage   string
	lastErr       error
	retryAfter    time.Duration
	hasRetryAfter bool
	wait          time.Duration
	lastRetryCost int
	reason        string

	// part: a request of a call that pools its attempts (PoolAttempts,
	// adr/0030): it may go past maxAttempts with retries from the pool.
	// spentAhead: check already counted the retry it granted in the pool,
	// so countRetry must not. pooled: the retry check granted is one past
	// maxAttempts.
	part, spentAhead, pooled bool
}

// beforeAttempt is the RequestLogHook: it runs before every attempt, after
// the backoff sleep, so it is where a retry is counted and logged.
func (r *retryLoop) beforeAttempt(_ retryablehttp.Logger, _ *http.Request, n int) {
	r.attempt = n
	if n == 0 {
		return
	}
	l := r.layer
	r.countRetry(func(c *callRecord) { c.seen.wait = r.wait })
	ev := l.log.Info()
	if r.pooled {
		l.metrics.pooledRetries.WithLabelValues(r.rec.tool).Inc()
		ev = ev.Bool("pooled", true).Int("pool_left", r.rec.poolLeft())
	}
	ev.Str("event", eventRetryAttempt).Str("correlation_id", r.rec.correlationID).Str("tool_name", r.rec.tool).
		Int("attempt", n+1).Int64("wait_ms", r.wait.Milliseconds()).Str("error_class", r.last.class).
		Int("status", r.lastStatus).Str("host", r.host.name).Str("url_path", r.path).Msg("retrying upstream request")
}

// countRetry counts one attempt after the first of this request, in the
// receipt, the retries metric and the host's health window, whether the loop
// sent it after a backoff or the hedge transport beside a slow attempt.
// note adds what only the caller knows to the call record.
func (r *retryLoop) countRetry(note func(c *callRecord)) {
	if r.part {
		if r.spentAhead {
			r.spentAhead = false // check counted it when it granted it
		} else {
			r.rec.spendPart() // a hedge copy, granted just now
		}
	}
	r.rec.update(func(c *callRecord) { c.retries++; note(c) })
	r.layer.metrics.retries.WithLabelValues(r.rec.tool).Inc()
	r.host.counts.add(r.layer.now(), evRetry)
}

// countReplays counts attempts net/http re-sent on its own within one
// attempt of the layer (adr/0018): in the receipt's attempts and replays,
// the replays metric and a log event, so that the catalog's count of
// requests and ours agree.
func (l *Layer) countReplays(rec *callRecord, h *hostState, req *http.Request, n int) {
	tool, id := "unknown", ""
	if rec != nil {
		rec.update(func(c *callRecord) { c.attempts += n; c.replays += n })
		tool, id = rec.tool, rec.correlationID
	}
	l.metrics.replays.WithLabelValues(tool).Add(float64(n))
	l.log.Info().Str("event", eventReplay).Str("correlation_id", id).Str("tool_name", tool).Int("replays", n).
		Str("host", h.name).Str("url_path", req.URL.Path).Msg("connection died before the answer; net/http sent the request again at once")
}

// check is the CheckRetry policy. It runs once per attempt (we set no
// response handler, because the attempt transport already read the body).
func (r *retryLoop) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if err != nil && ctx.Err() != nil {
		r.lastErr = err
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.reason = CodeTimeout
		}
		return false, ctx.Err()
	}
	r.observe(resp, err)
	if !r.last.retryable {
		if err != nil {
			switch r.last.class {
			case classCircuitOpen:
				r.reason = CodeCircuitOpen
			case classLocalLimit:
				r.reason = CodeOverloaded
			default:
				r.reason = CodeNotRetryable
			}
		}
		return false, err // a response goes back to the caller as it is
	}
	if r.maxAttempts == 1 {
		// Not idempotent: one attempt. A 5xx answer is handed back as is;
		// a transport failure becomes a not_retryable denial.
		if err != nil {
			r.reason = CodeNotRetryable
		}
		return false, err
	}
	sent := r.attempt + 1 + r.hedged
	pooled := sent >= r.maxAttempts
	if pooled && (!r.part || sent >= r.maxAttempts+partExtraAttempts) {
		r.reason = CodeRetryExhausted
		return false, errStop
	}
	if state, _ := r.host.breaker.status(); state == BreakerOpen {
		r.reason = CodeCircuitOpen
		return false, errStop
	}
	l := r.layer
	n := r.attempt + 1
	if pooled {
		// A part's extra attempts wait at most what its last ordinary
		// retry could: they are bounded by the call's pool and the host's
		// budget, not by a growing wait (adr/0030).
		n = min(n, r.maxAttempts-1)
	}
	jitter := fullJitter(l.rng, l.policy.BackoffBase, n)
	if r.last.neverSent {
		jitter = 0 // the server never saw it: no load to protect it from
	}
	r.wait = retryWait(jitter, r.retryAfter, r.hasRetryAfter, l.policy.RetryAfterCap)
	if time.Until(r.deadline) < r.wait+l.policy.MinUsefulAttempt {
		r.reason = CodeDeadline
		return false, errStop
	}
	if pooled {
		if !r.rec.takePooled() {
			// The call's parts used every attempt they brought: this part
			// has had its MaxAttempts, as any request.
			r.reason = CodeRetryExhausted
			return false, errStop
		}
	}
	cost := budgetRetryCost
	if r.last.class == classAttemptTimeout {
		cost = budgetTimeoutCost
	}
	if !r.host.budget.take(cost) {
		r.reason = CodeBudgetExhausted
		return false, errStop
	}
	r.lastRetryCost = cost
	if r.part {
		if !pooled {
			r.rec.spendPart()
		}
		r.spentAhead = true
	}
	r.pooled = pooled
	if !r.last.neverSent {
		// The catalog answered (or took the connection): the request is
		// alive until this retry is sent, however long the wait.
		progressFrom(ctx).noteRetry(time.Now(), r.wait)
	}
	return true, nil
}

// attemptsAllowed is how many attempts this request may make as far as
// is known now: a part's extra ones while its call's pool has some.
func (r *retryLoop) attemptsAllowed() int {
	if r.part && r.rec.poolLeft() > 0 {
		return r.maxAttempts + partExtraAttempts
	}
	return r.maxAttempts
}

// observe remembers what the attempt returned, for logs and denials.
func (r *retryLoop) observe(resp *http.Response, err error) {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // the outer client adds the method and URL again
	}
	r.lastErr = err
	r.hasRetryAfter = false
	r.retryAfter = 0
	if err != nil {
		r.last = classify(nil, err)
		if r.last.class != classCircuitOpen {
			// A refused attempt says nothing new about the catalog: keep
			// the last answer it actually gave.
			r.lastStatus, r.lastMessage = 0, ""
		}
	} else {
		r.last = classifyStatus(resp.StatusCode)
		r.lastStatus = resp.StatusCode
		r.lastMessage = ""
		if b, ok := resp.Body.(*bufferedBody); ok && resp.StatusCode >= 400 {
			r.lastMessage = upstream.MessageOf(resp, b.data)
		}
		r.retryAfter, r.hasRetryAfter = retryAfterFrom(resp, r.layer.now())
	}
	r.rec.update(func(c *callRecord) {
		c.seen.status, c.seen.message, c.seen.class, c.seen.path, c.seen.host = r.lastStatus, r.lastMessage, r.last.class, r.path, r.host.name
	})
}

// backoff hands go-retryablehttp the wait check already computed.
func (r *retryLoop) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return r.wait }

// giveUp is the ErrorHandler: every non-clean end becomes a *Denial (or the
// caller's own cancellation), never a drained body and a vague message.
func (r *retryLoop) giveUp(resp *http.Response, err error, _ int) (*http.Response, error) {
	if resp != nil {
		resp.Body.Close()
	}
	if r.reason == "" {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		r.reason = CodeNotRetryable
	}
	cause := r.lastErr
	if cause == nil && err != nil && !errors.Is(err, errStop) {
		cause = err
	}
	return nil, r.deny(r.reason, cause)
}

// deny builds, records, counts and logs the denial for this request.
func (r *retryLoop) deny(code string, cause error) *Denial {
	l := r.layer
	now := l.now()
	d := &Denial{
		Code: code, Host: r.host.name, ErrorClass: r.last.class, Attempts: r.attempt + 1 + r.hedged,
		ElapsedMS: since(r.rec.start), LastStatus: r.lastStatus, LastMessage: r.lastMessage, Err: cause,
	}
	if r.hasRetryAfter {
		d.RetryAfterMS = r.retryAfter.Milliseconds()
	}
	switch code {
	case CodeRetryExhausted:
		next := l.policy.BackoffBase << min(r.attempt, 20)
		if r.hasRetryAfter {
			next = max(next, r.retryAfter)
		}
		d.RetryAt = now.Add(next)
		l.metrics.retryExhausted.WithLabelValues(r.rec.tool).Inc()
	case CodeDeadline:
		d.RetryAt = now.Add(r.wait)
	case CodeCircuitOpen:
		_, d.RetryAt = r.host.breaker.status()
	case CodeBudgetExhausted:
		d.RetryAt = now.Add(breakerOpenFor)
	}
	if code == CodeCircuitOpen && r.last.class == classCircuitOpen {
		d.Attempts = r.attempt + r.hedged // the refused attempt was never sent
	}
	s := Situation{Now: now, NoAnswer: d.LastStatus == 0 && d.Err != nil && code != CodeOverloaded}
	if r.last.class == classTooLarge {
		s.BodyLimit = l.policy.MaxBodyBytes // the answer came; it was only too long to buffer
	}
	d.AssetHost = r.rec.host != "" && r.host.name != r.rec.host
	d = l.advise(r.rec.annotate(d), s)
	r.rec.update(func(c *callRecord) { c.denial = d })
	if code != CodeTimeout {
		r.host.counts.add(now, evGiveUp)
		ev := l.log.Warn()
		if r.part {
			ev = ev.Bool("pooled_call", true).Int("pool_left", r.rec.poolLeft())
		}
		ev.Str("event", eventRetryGiveUp).Str("reason", code).Str("correlation_id", r.rec.correlationID).
			Str("tool_name", r.rec.tool).Int("attempt", d.Attempts).Int64("wait_ms", r.wait.Milliseconds()).
			Str("error_class", r.last.class).Int("status", r.lastStatus).Str("host", r.host.name).
			Str("url_path", r.path).Msg("giving up on upstream request")
	}
	return d
}

// answered settles the budget and notes a throttling 403 once the loop
// returned a response.
func (r *retryLoop) answered(s *snapshot) {
	if s.status < 400 {
		r.host.budget.succeeded(r.lastRetryCost)
	}
	if isForbiddenThrottle(s.status, s.body) {
		r.rec.update(func(c *callRecord) { c.throttleHit = true })
	}
}
