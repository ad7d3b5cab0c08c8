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

// hostBreaker is a host's circuit breaker as the layer uses it: this
// process's own (breaker) or the one replicas share (sharedBreaker).
type hostBreaker interface {
	// allow admits one attempt. A probe ticket other than noProbe marks a
	// half-open probe; the caller hands it back to record with the
	// attempt's result, so that an attempt admitted before the breaker
	// tripped is never taken for a probe.
	allow() (admitted bool, probe probeTicket)
	// record reports one admitted attempt: failed is true only for
	// retryable failures; neutral outcomes (caller cancellation) release a
	// probe slot without counting.
	record(probe probeTicket, failed, neutral bool)
	// status reports the state and, when open, until when.
	status() (state string, openUntil time.Time)
}

// probeTicket says whether an admitted attempt is a half-open probe, and
// whose: a probe slot taken in the shared breaker is given back there even
// if the layer fell back to its own state in between.
type probeTicket uint8

const (
	noProbe probeTicket = iota
	localProbe
	sharedProbe
)

// breaker is one host's circuit breaker in this process, shared by all
// sessions.
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

func (b *breaker) allow() (admitted bool, probe probeTicket) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		if b.now().Before(b.openUntil) {
			return false, noProbe
		}
		b.setState(BreakerHalfOpen)
		b.probes, b.probeOK = 0, 0
		fallthrough
	case BreakerHalfOpen:
		if b.probes >= breakerProbes-b.probeOK {
			return false, noProbe
		}
		b.probes++
		return true, localProbe
	}
	return true, noProbe
}

func (b *breaker) record(probe probeTicket, failed, neutral bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe != noProbe {
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

func (b *breaker) status() (string, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerOpen && !b.now().Before(b.openUntil) {
		return BreakerHalfOpen, time.Time{}
	}
	return b.state, b.openUntil
}
