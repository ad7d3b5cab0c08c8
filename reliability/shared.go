package reliability

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// SharedStore is the state the replicas of one deployment share
// (adr/0016-shared-state-on-redis.md): the response cache with its write
// generations, the claims that coalesce identical reads across replicas,
// and each catalog host's retry budget and circuit breaker.
// reliability/sharedstate implements it on Redis; without one
// (Options.Shared nil) every state stays in the process.
//
// The layer calls each method with a context that ends after
// sharedOpTimeout. Any error means "the store did not answer": the layer
// then uses its own state, leaves the store alone for a while, and tries
// again (sharedState).
type SharedStore interface {
	// Ping checks that the store answers.
	Ping(ctx context.Context) error

	// CacheRead returns host's cache generation, a token that every
	// Invalidate naming host (or all) changes, and the entry stored under
	// key, whatever generation it was stored in (nil: none). An empty key
	// reads the generation only.
	CacheRead(ctx context.Context, host, key string) (gen string, entry []byte, err error)
	// CacheWrite stores entry under key for ttl, unless host's generation
	// is no longer gen (stored is false then). It then evicts the entries
	// that expire first until all entries together take at most maxBytes.
	CacheWrite(ctx context.Context, host, key, gen string, entry []byte, ttl time.Duration, maxBytes int64) (stored bool, err error)
	// Invalidate changes the generation of each host, or of every host
	// when all is set.
	Invalidate(ctx context.Context, hosts []string, all bool) error
	// Lead claims the fetch of claim for ttl under token; false when
	// another replica holds it. Unlead releases it if token still holds it.
	Lead(ctx context.Context, claim, token string, ttl time.Duration) (bool, error)
	Unlead(ctx context.Context, claim, token string) error

	// BudgetTake spends cost tokens of host's bucket (capacity tokens when
	// full) if it holds that many, and returns what is left.
	BudgetTake(ctx context.Context, host string, cost, capacity int) (ok bool, tokens int, err error)
	// BudgetRefund gives back up to amount tokens, never above capacity.
	BudgetRefund(ctx context.Context, host string, amount, capacity int) (tokens int, err error)

	// BreakerAllow admits one attempt to host at now under r; probe is set
	// when the breaker was half-open and a probe slot was taken (record
	// gives it back).
	BreakerAllow(ctx context.Context, host string, now time.Time, r BreakerRules) (admitted, probe bool, v BreakerView, err error)
	// BreakerRecord reports one admitted attempt at now (see hostBreaker);
	// a trip opens the breaker for openFor, which the caller jitters.
	BreakerRecord(ctx context.Context, host string, o BreakerOutcome, now time.Time, openFor time.Duration, r BreakerRules) (BreakerView, error)
	// Peek reads the breaker and the budget tokens of each host.
	Peek(ctx context.Context, hosts []string, capacity int) ([]BreakerView, []int, error)
}

// BreakerRules are the breaker's thresholds (breaker.go), handed to a
// shared store that runs the same algorithm.
type BreakerRules struct {
	Window      time.Duration // outcomes count for this long
	Buckets     int           // in this many buckets
	MinCalls    int           // at least this many outcomes before the rate counts
	FailureRate float64       // this share of failures opens the breaker
	Probes      int           // half-open: this many successes close it
	// ProbeLease is how long a half-open probe slot is held when its
	// outcome never arrives (a replica died or lost the store mid-attempt).
	ProbeLease time.Duration
}

// BreakerOutcome is one admitted attempt's result.
type BreakerOutcome struct {
	Probe, Failed, Neutral bool
}

// BreakerView is a breaker's state as a store reports it.
type BreakerView struct {
	State     string    // BreakerClosed, BreakerHalfOpen, BreakerOpen
	OpenUntil time.Time // when open
}

// sharedBreakerRules are the local breaker's constants.
func (l *Layer) sharedBreakerRules() BreakerRules {
	return BreakerRules{Window: breakerWindow, Buckets: breakerBuckets, MinCalls: breakerMinCalls,
		FailureRate: breakerFailureRate, Probes: breakerProbes, ProbeLease: l.policy.ToolTimeout}
}

// Shared-state timing. An operation that takes longer than sharedOpTimeout
// fails (Redis on the same network answers in well under a millisecond);
// after a failure the store is left alone for sharedRestFirst, doubling up
// to sharedRestMax while it keeps failing, and then one operation probes
// it. So a dead or hung store costs each call at most one timeout, once
// per rest period across all calls, and recovery needs no one's help.
const (
	sharedOpTimeout = 250 * time.Millisecond
	sharedRestFirst = time.Second
	sharedRestMax   = 15 * time.Second
	// sharedViewFresh is how long a breaker or budget reading taken from
	// the store stands in for asking again.
	sharedViewFresh = time.Second
)

// errSharedDown is returned without trying while the store rests.
var errSharedDown = errors.New("shared state unavailable: using this process's own state")

// sharedState wraps the store with its own breaker, error counting and
// logs, and keeps the writes it could not pass on (pending invalidations)
// until the store is back.
type sharedState struct {
	store   SharedStore
	now     func() time.Time
	log     zerolog.Logger
	metrics *metrics
	// onRecover runs when the store answers again, before it is used:
	// the layer drops what it cached locally meanwhile, which writes on
	// other replicas could not invalidate.
	onRecover func()

	mu        sync.Mutex
	down      bool
	restUntil time.Time
	rest      time.Duration
	probing   bool
	pending   map[string]bool // hosts written to while the store was down
	// pendingAll: more than maxGenerationHosts hosts were written to
	// while down, so every host's generation moves on at recovery.
	pendingAll bool
}

func newSharedState(store SharedStore, now func() time.Time, log zerolog.Logger, m *metrics, onRecover func()) *sharedState {
	m.registry.MustRegister(m.sharedUp)
	m.sharedUp.Set(1)
	for _, op := range sharedOps {
		m.sharedErrors.WithLabelValues(op)
	}
	return &sharedState{store: store, now: now, log: log, metrics: m, onRecover: onRecover, pending: map[string]bool{}}
}

// sharedOps label shared_state_errors_total.
var sharedOps = []string{"ping", "cache_read", "cache_write", "invalidate", "lead", "budget", "breaker", "peek"}

// usable reports whether the store is in use now (not resting after a
// failure). It does not probe: do does.
func (s *sharedState) usable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.down
}

// do runs f against the store with a bounded context. While the store
// rests after a failure it returns errSharedDown at once; the first call
// after the rest probes it (passing on the pending invalidations first).
// The operation keeps ctx's values but not its cancellation: it is bounded
// by sharedOpTimeout alone, so that a write's invalidation or a cache write
// still reaches the store after its caller has gone.
func (s *sharedState) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	if !s.enter(ctx) {
		return errSharedDown
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedOpTimeout)
	defer cancel()
	err := f(ctx)
	if err != nil {
		s.failed(op, err)
	}
	return err
}

// enter reports whether the store may be used now; at the end of a rest
// one caller probes it (bounded like do).
func (s *sharedState) enter(ctx context.Context) bool {
	s.mu.Lock()
	if !s.down {
		s.mu.Unlock()
		return true
	}
	if s.probing || s.now().Before(s.restUntil) {
		s.mu.Unlock()
		return false
	}
	s.probing = true
	hosts := make([]string, 0, len(s.pending))
	for h := range s.pending {
		hosts = append(hosts, h)
	}
	all := s.pendingAll
	s.mu.Unlock()

	// The writes made while the store was away go first: until they are
	// passed on, other replicas may read answers from before them.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedOpTimeout)
	var err error
	if len(hosts) > 0 || all {
		err = s.store.Invalidate(ctx, hosts, all)
	} else {
		err = s.store.Ping(ctx)
	}
	cancel()

	s.mu.Lock()
	s.probing = false
	if err != nil {
		s.rest = min(2*s.rest, sharedRestMax)
		s.restUntil = s.now().Add(s.rest)
		s.mu.Unlock()
		s.metrics.sharedErrors.WithLabelValues("ping").Inc()
		s.log.Debug().Str("event", "shared_state_probe_failed").Err(err).Dur("next_try_in", s.rest).
			Msg("shared state still unavailable")
		return false
	}
	for _, h := range hosts {
		delete(s.pending, h)
	}
	if all {
		s.pendingAll = false
	}
	s.down = false
	s.mu.Unlock()
	// Drop what was cached locally before anyone reads the shared cache
	// again (a read that starts now may still fill the local cache from a
	// fallback that began before; the next outage's recovery drops it).
	if s.onRecover != nil {
		s.onRecover()
	}
	s.metrics.sharedUp.Set(1)
	s.log.Warn().Str("event", "shared_state_recovered").Int("invalidations_passed_on", len(hosts)).Bool("invalidated_all", all).
		Msg("shared state answers again: replicas share cache, retry budgets and breakers again")
	return true
}

// failed counts an error and, if the store was in use, rests it.
func (s *sharedState) failed(op string, err error) {
	s.metrics.sharedErrors.WithLabelValues(op).Inc()
	s.mu.Lock()
	if s.down {
		s.mu.Unlock()
		return
	}
	s.down = true
	s.rest = sharedRestFirst
	s.restUntil = s.now().Add(s.rest)
	s.mu.Unlock()
	s.metrics.sharedUp.Set(0)
	s.log.Warn().Str("event", "shared_state_unavailable").Str("op", op).Err(err).Dur("next_try_in", sharedRestFirst).
		Msg("shared state (Redis) failed: this replica uses its own cache, retry budgets and breakers until it answers again")
}

// invalidate moves host's shared cache generation on, or remembers to do
// so when the store is back.
func (s *sharedState) invalidate(ctx context.Context, host string) {
	err := s.do(ctx, "invalidate", func(ctx context.Context) error { return s.store.Invalidate(ctx, []string{host}, false) })
	if err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.pendingAll:
	case s.pending[host]:
	case len(s.pending) >= maxGenerationHosts:
		s.pending = map[string]bool{}
		s.pendingAll = true
	default:
		s.pending[host] = true
	}
}
