package reliability

import "context"

// Calls made of many reads (adr/0030). A pixel tool's call fetches an
// item and then reads its COGs as dozens of independent byte ranges, and
// its answer needs every one: with the policy's 3 attempts per request a
// read fails for good with probability p³ (0.8 % at 20 % faults), and a
// call of k reads succeeds (1 − p³)^k, 82 % for k = 25. For such a call
// the unit the attempt policy bounds is the call, not the request: its
// idempotent requests ("parts") share one pool of attempts. Each part
// brings MaxAttempts − 1 retries to the pool when it starts, the pool
// starts with partExtraAttempts, and a part may go past MaxAttempts, by
// at most partExtraAttempts, only with retries the pool still holds. So a
// call of k parts never sends more than MaxAttempts·k + partExtraAttempts
// attempts: on average the 3 attempts a request, however the faults fall,
// with the extra ones where the faults fell. An extra attempt is a retry
// like any other (only retryable failures, backoff, Retry-After, the
// deadline, the breaker, a retry-budget token; counted and logged), waits
// at most what the last ordinary retry may wait, and is never hedged.

// partExtraAttempts is how far past MaxAttempts one part may go (6
// attempts with the default 3: a part fails for good with p⁶, 6.4e-5 at
// 20 %, and a call of up to 150 parts succeeds ≥ 99 %), and the pool's
// start, so that the call's first request (sent alone: the item) may
// use them too.
const partExtraAttempts = 3

type poolKey struct{}

// PoolAttempts makes the requests sent with ctx parts of one call that
// needs all of them (a pixel tool's item, search and range reads): each
// idempotent one may take up to three attempts past MaxAttempts, with
// retries the call's other parts left unused, so that the call sends at
// most MaxAttempts a request on average (adr/0030). Requests sent once
// (writes, or MaxAttempts 1) are unchanged.
func PoolAttempts(ctx context.Context) context.Context {
	return context.WithValue(ctx, poolKey{}, true)
}

func poolsAttempts(ctx context.Context) bool {
	pooled, _ := ctx.Value(poolKey{}).(bool)
	return pooled
}

// partPool is a call's pool of attempts for its parts, guarded by the
// call record's lock: credit is what the parts begun so far brought (plus
// the start), spent the retries of parts granted so far.
type partPool struct {
	parts, credit, spent int
}

// beginPart adds a part's retries to the call's pool.
func (r *callRecord) beginPart(retries int) {
	r.update(func(c *callRecord) {
		if c.pool.parts == 0 {
			c.pool.credit = partExtraAttempts
		}
		c.pool.parts++
		c.pool.credit += retries
	})
}

// spendPart counts a retry of a part within its own MaxAttempts (always
// allowed: the part brought it to the pool).
func (r *callRecord) spendPart() {
	r.update(func(c *callRecord) { c.pool.spent++ })
}

// takePooled grants one retry past MaxAttempts if the pool still holds a
// retry the call's parts left unused.
func (r *callRecord) takePooled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pool.credit-r.pool.spent < 1 {
		return false
	}
	r.pool.spent++
	return true
}

// poolLeft is the retries left in the call's pool.
func (r *callRecord) poolLeft() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pool.credit - r.pool.spent
}
