package reliability

import (
	"sync"
	"time"
)

// Circuit breaker constants. A host's breaker opens when at least half of
// the last breakerMinCalls-or-more attempt outcomes inside breakerWindow were
// retryable failures (5xx, 429, resets, attempt timeouts; never 4xx). With 50
// outcomes a steady 20 % fault rate opens it with probability ~2e-6, while a
// dead host opens it within 17 calls. The window is 30 s rather than 10 s:
// one session against a dead host produces about five outcomes a second
// (three fast failures and two jittered waits per call), so a 10 s window
// would rarely hold 50 of them.
const (
	breakerWindow      = 30 * time.Second
	breakerBuckets     = 10
	breakerMinCalls    = 50
	breakerFailureRate = 0.5
	breakerOpenFor     = 10 * time.Second
	breakerOpenJitter  = 2 * time.Second // open for U[10 s, 12 s)
	breakerProbes      = 3               // half-open: this many successes close it
)

// Breaker states, as reported by Health and the breaker_state gauge.
const (
	BreakerClosed   = "closed"
	BreakerHalfOpen = "half_open"
	BreakerOpen     = "open"
)

// breaker is one host's circuit breaker, shared by all sessions.
type breaker struct {
	mu        sync.Mutex
	now       func() time.Time
	rng       *lockedRand
	state     string
	outcomes  *slidingCounts // evAttempt and evAttemptFailed over breakerWindow
	openUntil time.Time
	probes    int // half-open probes in flight
	probeOK   int // half-open probes that succeeded
	onChange  func(state string)
}

func newBreaker(now func() time.Time, rng *lockedRand, onChange func(string)) *breaker {
	return &breaker{now: now, rng: rng, state: BreakerClosed, onChange: onChange,
		outcomes: newSlidingCounts(breakerWindow, breakerBuckets)}
}

// allow admits one attempt. probe is true for a half-open probe; the caller
// reports the attempt's result with record, passing probe back, so that an
// attempt admitted before the breaker tripped is never taken for a probe.
func (b *breaker) allow() (admitted, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		if b.now().Before(b.openUntil) {
			return false, false
		}
		b.setState(BreakerHalfOpen)
		b.probes, b.probeOK = 0, 0
		fallthrough
	case BreakerHalfOpen:
		if b.probes >= breakerProbes-b.probeOK {
			return false, false
		}
		b.probes++
		return true, true
	}
	return true, false
}

// record reports one admitted attempt: failed is true only for retryable
// failures; neutral outcomes (caller cancellation) release a probe slot
// without counting.
func (b *breaker) record(probe, failed, neutral bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		if b.state != BreakerHalfOpen {
			return // the breaker tripped again while this probe was out
		}
		b.probes = max(0, b.probes-1)
		switch {
		case neutral:
		case failed:
			b.trip()
		default:
			b.probeOK++
			if b.probeOK >= breakerProbes {
				b.outcomes.reset()
				b.setState(BreakerClosed)
			}
		}
		return
	}
	if neutral || b.state != BreakerClosed {
		return
	}
	now := b.now()
	b.outcomes.add(now, evAttempt)
	if failed {
		b.outcomes.add(now, evAttemptFailed)
	}
	sums := b.outcomes.sums(now)
	total, failures := sums[evAttempt], sums[evAttemptFailed]
	if total >= breakerMinCalls && float64(failures) >= breakerFailureRate*float64(total) {
		b.trip()
	}
}

// trip opens the breaker for a jittered period. Caller holds mu.
func (b *breaker) trip() {
	b.openUntil = b.now().Add(breakerOpenFor + time.Duration(b.rng.Float64()*float64(breakerOpenJitter)))
	b.probes, b.probeOK = 0, 0
	b.setState(BreakerOpen)
}

func (b *breaker) setState(s string) {
	if b.state == s {
		return
	}
	b.state = s
	if b.onChange != nil {
		b.onChange(s)
	}
}

// status reports the state and, when open, until when.
func (b *breaker) status() (string, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerOpen && !b.now().Before(b.openUntil) {
		return BreakerHalfOpen, time.Time{}
	}
	return b.state, b.openUntil
}
