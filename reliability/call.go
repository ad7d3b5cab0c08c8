package reliability

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Receipt is what one tool call cost, attached to every result's _meta.
// UpstreamRequests counts the logical requests that went upstream (a page, a
// HEAD probe; cache hits and coalesced reads are not among them), Attempts the
// HTTP attempts actually sent for them (what the catalog saw), Retries the
// attempts after the first of each request.
type Receipt struct {
	CorrelationID    string `json:"correlation_id"`
	Tool             string `json:"tool_name"`
	Attempts         int    `json:"attempts"`
	Retries          int    `json:"retries"`
	UpstreamRequests int    `json:"upstream_requests"`
	ElapsedMS        int64  `json:"elapsed_ms"`
	CacheHit         bool   `json:"cache_hit"`
	Coalesced        bool   `json:"coalesced,omitempty"`
	CatalogHost      string `json:"catalog_host"`
	// Hedges counts the hedged attempts among Retries (Policy.Hedge): a
	// second attempt sent while the first was still out.
	Hedges int `json:"hedges,omitempty"`
	// Replays counts the attempts net/http sent again at once, on a new
	// connection, because the reused keep-alive connection an attempt went
	// out on died before the first byte of the answer (reads only,
	// adr/0018). They are among Attempts, not Retries: no backoff, no
	// budget token, no attempt of the policy's three.
	Replays int `json:"replays,omitempty"`
	// SideEffect is what the call may change upstream: read, create,
	// update or delete. The fields after it are set for writes only
	// (WriteNote): the idempotency key, how the outcome was reached
	// (executed, duplicate, looked-up, replayed), and for a duplicate the
	// correlation id of the call whose stored outcome it returns.
	SideEffect            string `json:"side_effect"`
	IdempotencyKey        string `json:"idempotency_key,omitempty"`
	ReplayDecision        string `json:"replay_decision,omitempty"`
	Duplicate             bool   `json:"duplicate,omitempty"`
	OriginalCorrelationID string `json:"original_correlation_id,omitempty"`
}

// callRecord is the per-call state Run puts in the context; the HTTP layer
// reads and updates it. Tools may issue requests concurrently, hence the lock.
type callRecord struct {
	tool, correlationID, host string
	start                     time.Time
	insideRun                 bool // false: a request made outside Run

	mu          sync.Mutex
	attempts    int
	retries     int
	hedges      int
	replays     int
	requests    int
	cacheHit    bool
	coalesced   bool
	denial      *Denial
	throttleHit bool     // a 403 {"message":"Forbidden"} answer was seen
	pool        partPool // the attempts its parts share (PoolAttempts, adr/0030)
	seen        lastSeen
	pending     []*pendingRequest // requests still waiting for an answer, oldest first
	write       WriteNote         // set by write tools (NoteWrite)
}

// pendingRequest is a logical request of the call still in the retry loop.
type pendingRequest struct {
	path, host string
	side       bool // made beside another request the call needs more (SideRequest)
}

// begin notes a request as waiting; the returned func notes its end. A
// request ended by the call's deadline stays noted: it was still waiting
// when the time ran out, which is what the timeout's advice is about.
func (r *callRecord) begin(ctx context.Context, p *pendingRequest) (end func()) {
	r.update(func(c *callRecord) {
		c.requests++
		c.seen.path, c.seen.host = p.path, p.host
		c.pending = append(c.pending, p)
	})
	return func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return
		}
		r.update(func(c *callRecord) {
			c.pending = slices.DeleteFunc(c.pending, func(q *pendingRequest) bool { return q == p })
		})
	}
}

// waitedFor is what a timeout's advice names: the call's oldest request
// still waiting that is not a side request, else its oldest side request,
// else the last request it saw.
func (r *callRecord) waitedFor() lastSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	var chosen *pendingRequest
	for _, p := range r.pending {
		if chosen == nil || chosen.side && !p.side {
			chosen = p
		}
	}
	if chosen != nil && (chosen.path != seen.path || chosen.host != seen.host) {
		seen = lastSeen{path: chosen.path, host: chosen.host, wait: seen.wait}
	}
	return seen
}

type sideRequestKey struct{}

// SideRequest marks the requests made with ctx as side requests: sent
// beside another request of the same call that the call needs more (the
// landing page, say, with /conformance fetched speculatively beside it).
// They are sent, retried and counted like any other; only when the call
// times out while both wait does its advice name the other request.
func SideRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, sideRequestKey{}, true)
}

func isSideRequest(ctx context.Context) bool {
	side, _ := ctx.Value(sideRequestKey{}).(bool)
	return side
}

// lastSeen is what the call last saw upstream, for its denial and its logs.
type lastSeen struct {
	status  int
	message string
	class   string
	path    string
	host    string        // of the latest request: the catalog's, or an asset host's
	wait    time.Duration // the backoff before the latest retry
}

// lastSeen returns a copy of what the call last saw upstream.
func (r *callRecord) lastSeen() lastSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

type recordKey struct{}

func withRecord(ctx context.Context, r *callRecord) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

func recordFrom(ctx context.Context) *callRecord {
	r, _ := ctx.Value(recordKey{}).(*callRecord)
	return r
}

// correlationIDOf returns the correlation id of the tool call ctx belongs to,
// or "" outside Run.
func correlationIDOf(ctx context.Context) string {
	if r := recordFrom(ctx); r != nil && r.insideRun {
		return r.correlationID
	}
	return ""
}

// CallInfo tells which tool call a context belongs to. The request contexts
// the base transport (Options.Transport) sees carry it, so a test can check
// that every upstream request was made inside Run by the tool it expects:
// insideRun is false for requests made with HTTPClient outside Run.
func CallInfo(ctx context.Context) (tool, correlationID string, insideRun bool) {
	r := recordFrom(ctx)
	if r == nil {
		return "", "", false
	}
	return r.tool, r.correlationID, r.insideRun
}

func (l *Layer) newRecord(tool, host string) *callRecord {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return &callRecord{tool: tool, host: host, correlationID: hex.EncodeToString(b[:]), start: time.Now()}
}

func (r *callRecord) update(f func(r *callRecord)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

func (r *callRecord) receipt() Receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	sideEffect := r.write.SideEffect
	if sideEffect == "" {
		sideEffect = SideEffectRead
	}
	return Receipt{
		CorrelationID: r.correlationID, Tool: r.tool, Attempts: r.attempts, Retries: r.retries, Hedges: r.hedges, Replays: r.replays,
		UpstreamRequests: r.requests, ElapsedMS: time.Since(r.start).Milliseconds(),
		CacheHit: r.cacheHit, Coalesced: r.coalesced, CatalogHost: r.host,
		SideEffect: sideEffect, IdempotencyKey: r.write.IdempotencyKey, ReplayDecision: r.write.ReplayDecision,
		Duplicate: r.write.Duplicate, OriginalCorrelationID: r.write.OriginalCorrelationID,
	}
}

// timeoutGrace is how long Run waits, after the tool deadline, for fn to
// return on its own; the issue allows 100 ms past the cap.
const timeoutGrace = 50 * time.Millisecond

type fnResult struct {
	err      error
	panicked any
}

// Run executes one tool call: it sets the tool deadline and the per-call
// record, calls fn, and returns the receipt. fn's error is returned as is
// (plain 4xx answers reach stacclient, which types them), or as a *Denial
// when the layer gave up: timeout, retries exhausted, breaker open, budget
// spent, no time left for a retry, or a 403 throttling answer.
//
// fn runs on its own goroutine so that Run returns at the tool deadline (at
// most timeoutGrace later) even if fn is slow to notice the cancelled
// context. If fn returns a result within the grace, that result stands.
func (l *Layer) Run(ctx context.Context, tool, catalogHost string, fn func(ctx context.Context) error) (Receipt, error) {
	rec := l.newRecord(tool, catalogHost)
	rec.insideRun = true
	l.applyRequestedID(ctx, rec)
	l.metrics.touch(tool)
	callCtx, cancel := context.WithTimeout(withRecord(ctx, rec), l.policy.ToolTimeout)
	defer cancel()

	done := make(chan fnResult, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fnResult{panicked: p}
			}
		}()
		done <- fnResult{err: fn(callCtx)}
	}()
	var res fnResult
	select {
	case res = <-done:
	case <-callCtx.Done():
		// Give fn a moment to return what it has (a tool may answer with the
		// pages it got and a cursor), but never hold the call much past the cap.
		grace := time.NewTimer(timeoutGrace)
		select {
		case res = <-done:
		case <-grace.C:
			res = fnResult{err: callCtx.Err()}
			go l.reportLatePanic(rec, done)
		}
		grace.Stop()
	}
	if res.panicked != nil {
		panic(res.panicked)
	}
	err := l.finish(callCtx, rec, res.err)
	receipt := rec.receipt()
	l.complete(rec, receipt, err)
	return receipt, err
}

// annotate completes a denial the layer builds for this call with the
// call's side effect: a write's denial names its key, and allows a retry
// only with that same key. It runs when the denial is built, before it can
// be shared (coalesced readers share their leader's denial).
func (r *callRecord) annotate(d *Denial) *Denial {
	r.mu.Lock()
	note := r.write
	r.mu.Unlock()
	d.Recovery = recoveryFor(d.Code, note.writes())
	d.SideEffect = SideEffectRead
	if note.writes() {
		d.SideEffect, d.IdempotencyKey = note.SideEffect, note.IdempotencyKey
	}
	return d
}

// reportLatePanic drains fn's result after Run returned, so a panic in an
// abandoned fn is logged instead of lost (it cannot be re-raised anywhere).
func (l *Layer) reportLatePanic(rec *callRecord, done <-chan fnResult) {
	if res := <-done; res.panicked != nil {
		l.log.Error().Str("correlation_id", rec.correlationID).Str("tool_name", rec.tool).
			Str("panic", fmt.Sprint(res.panicked)).Msg("tool function panicked after its deadline")
	}
}

// finish turns fn's error into what the tool returns.
func (l *Layer) finish(ctx context.Context, rec *callRecord, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return l.toolTimeout(rec, err)
	}
	var d *Denial
	if errors.As(err, &d) {
		return err
	}
	rec.mu.Lock()
	recorded, throttled, seen := rec.denial, rec.throttleHit, rec.seen
	rec.mu.Unlock()
	switch {
	case recorded != nil:
		// fn dropped the denial from its error chain; keep fn's text as the cause.
		dup := *recorded
		dup.Err = err
		return &dup
	case throttled:
		return l.advise(rec.annotate(&Denial{
			Code: CodeNotRetryable, Host: rec.host, ErrorClass: classHTTP4xx, Attempts: rec.receipt().Attempts,
			ElapsedMS: since(rec.start), LastStatus: seen.status, LastMessage: seen.message,
			RetryAt: l.now().Add(10 * time.Second), Err: err,
		}), Situation{Throttled: true})
	}
	return err
}

// toolTimeout is the tool deadline expiring: counted, logged, and reported
// as a timeout denial whatever fn returned.
func (l *Layer) toolTimeout(rec *callRecord, cause error) *Denial {
	rc, seen := rec.receipt(), rec.waitedFor()
	l.metrics.toolTimeouts.WithLabelValues(rec.tool).Inc()
	if rec.host != "" {
		if h, err := l.acquireHost(rec.host); err == nil {
			h.counts.add(l.now(), evTimeout)
			l.releaseHost(h)
		}
	}
	l.log.Warn().Str("event", eventTimeoutAbort).Str("correlation_id", rec.correlationID).Str("tool_name", rec.tool).
		Int("attempt", rc.Attempts).Int64("wait_ms", seen.wait.Milliseconds()).Int64("elapsed_ms", rc.ElapsedMS).
		Str("error_class", seen.class).Int("status", seen.status).Str("host", rec.host).Str("url_path", seen.path).
		Msg("tool call stopped at its deadline")
	return l.advise(rec.annotate(&Denial{
		Code: CodeTimeout, Host: rec.host, ErrorClass: seen.class, Attempts: rc.Attempts, ElapsedMS: rc.ElapsedMS,
		LastStatus: seen.status, LastMessage: seen.message, Err: cause,
	}), Situation{CallTimedOut: true, WaitingPath: seen.path, WaitingHost: seen.host})
}

// complete records the call's metrics and its tool_complete event.
func (l *Layer) complete(rec *callRecord, rc Receipt, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		var d *Denial
		if errors.As(err, &d) {
			outcome = d.Code
		}
	}
	l.metrics.toolCalls.WithLabelValues(rec.tool, outcome).Inc()
	l.metrics.toolDuration.WithLabelValues(rec.tool).Observe(time.Since(rec.start).Seconds())
	l.metrics.countWrite(rec.tool, rc, err, outcome)
	seen := rec.lastSeen()
	ev := l.log.Info()
	if err != nil {
		ev = l.log.Warn().Str("error", err.Error())
	}
	if seen.path != "" {
		ev = ev.Str("error_class", seen.class).Int("status", seen.status).Str("url_path", seen.path)
	}
	if rc.SideEffect != SideEffectRead {
		ev = ev.Str("side_effect", rc.SideEffect).Str("replay_decision", rc.ReplayDecision).Bool("duplicate", rc.Duplicate)
	}
	ev.Str("event", eventToolComplete).Str("correlation_id", rc.CorrelationID).Str("tool_name", rc.Tool).
		Str("outcome", outcome).Int("attempt", rc.Attempts).Int("retries", rc.Retries).
		Int("upstream_requests", rc.UpstreamRequests).Int64("elapsed_ms", rc.ElapsedMS).
		Bool("cache_hit", rc.CacheHit).Str("host", rc.CatalogHost).Msg("tool call complete")
}

// meta is the receipt as a map for an MCP result's _meta.
func (r Receipt) meta() map[string]any {
	m := map[string]any{
		"correlation_id": r.CorrelationID, "tool_name": r.Tool, "attempts": r.Attempts, "retries": r.Retries,
		"upstream_requests": r.UpstreamRequests, "elapsed_ms": r.ElapsedMS, "cache_hit": r.CacheHit,
		"coalesced": r.Coalesced, "catalog_host": r.CatalogHost, "side_effect": r.SideEffect,
	}
	if r.Hedges > 0 {
		m["hedges"] = r.Hedges
	}
	for k, v := range map[string]string{"idempotency_key": r.IdempotencyKey, "replay_decision": r.ReplayDecision,
		"original_correlation_id": r.OriginalCorrelationID} {
		if v != "" {
			m[k] = v
		}
	}
	if r.Duplicate {
		m["duplicate"] = true
	}
	return m
}
