// Package reliability is the one wrapper every tool call and every upstream
// request goes through: deadline, retries with full-jitter backoff,
// Retry-After, per-host retry budget, circuit breaker, bulkhead, request
// coalescing and a short cache, with metrics and structured logs.
//
// Two entry points matter: (*Layer).Run wraps one tool call (deadline,
// correlation id, receipt, denial) and (*Layer).HTTPClient is the client every
// upstream request must use (the retry loop lives in its RoundTripper). The
// policy is documented in adr/0002-reliability-policy.md.
package reliability

import (
	"fmt"
	"time"
)

// Policy is the retry and timeout policy. Defaults come from DefaultPolicy;
// PolicyFromEnv overrides them from STAC_MCP_* variables.
type Policy struct {
	ToolTimeout time.Duration // STAC_MCP_TOOL_TIMEOUT_SECS, 15 s
	// AttemptTimeout (STAC_MCP_ATTEMPT_TIMEOUT_SECS) follows the tool
	// timeout unless set: 4/15 of it, 4 s by default. With hedging on (the
	// default) no read is cut by it: it is how long a read of an operation
	// whose answer times are not known yet runs before a copy goes out
	// beside it (adr/0023). It bounds each attempt of a write, and every
	// attempt of a read but the last when hedging is off (adr/0011).
	AttemptTimeout time.Duration
	MaxAttempts    int           // STAC_MCP_MAX_ATTEMPTS, 3
	BackoffBase    time.Duration // STAC_MCP_BACKOFF_BASE_SECS, 0.4 s
	RetryAfterCap  time.Duration // STAC_MCP_RETRY_AFTER_CAP_SECS, 5 s
	CacheTTL       time.Duration // STAC_MCP_CACHE_TTL_SECS; 0 disables the cache
	CacheMaxBytes  int64         // STAC_MCP_CACHE_MAX_BYTES, 32 MiB
	BulkheadMax    int           // STAC_MCP_BULKHEAD_MAX, 16 requests in flight per host
	// MaxHosts bounds the catalog hosts whose state (breaker, budget,
	// bulkhead, health) is kept, pinned hosts aside (STAC_MCP_MAX_HOSTS, 512).
	MaxHosts int
	// BodyBudgetBytes bounds the bytes of upstream bodies being read at once
	// across all calls (STAC_MCP_BODY_BUDGET_BYTES, 256 MiB); at least
	// MaxBodyBytes, so that one body at the cap can always be read.
	BodyBudgetBytes int64

	// MaxBodyBytes caps one buffered response body. The body is read inside
	// the attempt so that a reset mid-body is retried like any reset.
	MaxBodyBytes int64
	// MinUsefulAttempt is the least time an attempt needs to be worth
	// starting; a wait that would leave less before the deadline is not taken.
	MinUsefulAttempt time.Duration

	// Hedge turns on hedged reads (STAC_MCP_HEDGE, on by default; see
	// adr/0023): an idempotent read runs until the call's deadline, and
	// one still unanswered after the hedge delay gets a copy beside it (a
	// second one after twice the delay again); the first answer wins and
	// the others are cancelled. A copy counts against MaxAttempts and the
	// retry budget like a retry. Off, reads are cut at AttemptTimeout and
	// retried instead (adr/0011).
	Hedge bool
	// HedgeDelay is a fixed wait before the first copy. 0 means the p95 of
	// the host's answered attempts of the same operation, never below
	// 50 ms; 2.5 × the slowest from its 5th answer to its 20th; before
	// that AttemptTimeout.
	HedgeDelay time.Duration
}

// DefaultPolicy is the documented policy.
func DefaultPolicy() Policy {
	return Policy{
		ToolTimeout:      15 * time.Second,
		AttemptTimeout:   4 * time.Second,
		MaxAttempts:      3,
		BackoffBase:      400 * time.Millisecond,
		RetryAfterCap:    5 * time.Second,
		CacheTTL:         30 * time.Second,
		CacheMaxBytes:    32 << 20,
		BulkheadMax:      16,
		MaxHosts:         512,
		BodyBudgetBytes:  256 << 20,
		MaxBodyBytes:     64 << 20,
		MinUsefulAttempt: 250 * time.Millisecond,
		Hedge:            true,
	}
}

// Validate reports the first field outside its accepted range, naming the
// environment variable that sets it.
func (p Policy) Validate() error {
	checks := []struct {
		ok       bool
		variable string
		got      any
		accepted string
	}{
		{toolTimeoutSecs.holds(p.ToolTimeout), EnvToolTimeout, p.ToolTimeout, toolTimeoutSecs.String()},
		{p.AttemptTimeout >= 100*time.Millisecond && p.AttemptTimeout <= p.ToolTimeout, envAttemptTimeout, p.AttemptTimeout, "0.1 seconds up to the tool timeout"},
		{maxAttemptsRange.holds(int64(p.MaxAttempts)), envMaxAttempts, p.MaxAttempts, maxAttemptsRange.String()},
		{backoffBaseSecs.holds(p.BackoffBase), envBackoffBase, p.BackoffBase, backoffBaseSecs.String()},
		{retryAfterCapSecs.holds(p.RetryAfterCap), envRetryAfterCap, p.RetryAfterCap, retryAfterCapSecs.String()},
		{cacheTTLSecs.holds(p.CacheTTL), envCacheTTL, p.CacheTTL, "0 (off) to 86400 seconds"},
		{p.CacheMaxBytes >= 0, envCacheMaxBytes, p.CacheMaxBytes, "0 or more bytes"},
		{bulkheadMaxRange.holds(int64(p.BulkheadMax)), envBulkheadMax, p.BulkheadMax, bulkheadMaxRange.String()},
		{p.MaxBodyBytes >= 1024, "Policy.MaxBodyBytes", p.MaxBodyBytes, "at least 1024 bytes"},
		{maxHostsRange.holds(int64(p.MaxHosts)), envMaxHosts, p.MaxHosts, maxHostsRange.String()},
		{p.BodyBudgetBytes >= p.MaxBodyBytes && p.BodyBudgetBytes <= bodyBudgetRange.max, envBodyBudget, p.BodyBudgetBytes,
			fmt.Sprintf("%d (the largest body one response may have) to %d bytes", p.MaxBodyBytes, bodyBudgetRange.max)},
		{p.MinUsefulAttempt >= 0 && p.MinUsefulAttempt <= p.AttemptTimeout, "Policy.MinUsefulAttempt", p.MinUsefulAttempt, "0 up to the attempt timeout"},
		{p.HedgeDelay >= 0 && p.HedgeDelay < p.AttemptTimeout, envHedge, p.HedgeDelay, "off, on, or a number of seconds below the attempt timeout"},
	}
	for _, c := range checks {
		if !c.ok {
			return fmt.Errorf("reliability policy: %s is %v; accepted: %s", c.variable, c.got, c.accepted)
		}
	}
	return nil
}

// The accepted ranges of the settings PolicyFromEnv reads, shared with
// Validate so that the two cannot drift apart.
var (
	toolTimeoutSecs   = secondsRange{1, 3600}
	backoffBaseSecs   = secondsRange{0, 10}
	retryAfterCapSecs = secondsRange{0, 60}
	cacheTTLSecs      = secondsRange{0, 86400}
	maxAttemptsRange  = intRange{1, 10}
	bulkheadMaxRange  = intRange{1, 1024}
	maxHostsRange     = intRange{1, 1 << 20}
	bodyBudgetRange   = intRange{64 << 20, 1 << 40}
)

// secondsRange is an inclusive range of durations, in (fractional) seconds
// as the environment gives them.
type secondsRange struct{ min, max float64 }

func (r secondsRange) holds(d time.Duration) bool {
	return d.Seconds() >= r.min && d.Seconds() <= r.max
}

func (r secondsRange) String() string { return fmt.Sprintf("%g to %g seconds", r.min, r.max) }

// intRange is an inclusive range of integers.
type intRange struct{ min, max int64 }

func (r intRange) holds(v int64) bool { return v >= r.min && v <= r.max }

func (r intRange) String() string { return fmt.Sprintf("an integer from %d to %d", r.min, r.max) }

// defaultAttemptTimeout is the attempt timeout of a tool timeout nobody
// paired with an attempt timeout of their own: the documented 4 s of 15 s, in
// proportion, so that three attempts and their waits fit in any tool timeout
// from 1 s (267 ms) to 3600 s (960 s). See adr/0011-adaptive-attempt-timeout.md.
func defaultAttemptTimeout(tool time.Duration) time.Duration {
	return (tool * 4 / 15).Round(time.Millisecond)
}

// withDefaults fills the fields whose zero value cannot be meant.
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.ToolTimeout == 0 {
		p.ToolTimeout = d.ToolTimeout
	}
	if p.AttemptTimeout == 0 {
		p.AttemptTimeout = defaultAttemptTimeout(p.ToolTimeout)
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BulkheadMax == 0 {
		p.BulkheadMax = d.BulkheadMax
	}
	if p.MaxBodyBytes == 0 {
		p.MaxBodyBytes = d.MaxBodyBytes
	}
	if p.MaxHosts == 0 {
		p.MaxHosts = d.MaxHosts
	}
	if p.BodyBudgetBytes == 0 {
		p.BodyBudgetBytes = max(d.BodyBudgetBytes, p.MaxBodyBytes)
	}
	return p
}
