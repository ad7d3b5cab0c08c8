package reliability

import (
	"context"
	"sync"
	"time"
)

// sharedBudget is a host's retry budget kept in the shared store, so that
// a catalog sees at most one budget's retries whatever the number of
// replicas. While the store is unavailable the host's own local budget
// stands in (each replica then has its own, as without a store).
type sharedBudget struct {
	host     string
	s        *sharedState
	local    *retryBudget
	onChange func(tokens int)

	mu     sync.Mutex
	tokens int       // as the store last reported them
	seen   time.Time // when
}

func (b *sharedBudget) take(cost int) bool {
	var ok bool
	var tokens int
	err := b.s.do(context.Background(), "budget", func(ctx context.Context) (err error) {
		ok, tokens, err = b.s.store.BudgetTake(ctx, b.host, cost, budgetCapacity)
		return err
	})
	if err != nil {
		return b.local.take(cost)
	}
	b.saw(tokens)
	return ok
}

func (b *sharedBudget) succeeded(lastRetryCost int) {
	// Most answers come at the first attempt to a host whose budget is
	// full: the bonus would change nothing, so the round trip is skipped
	// while the last reading is fresh.
	if lastRetryCost == 0 {
		b.mu.Lock()
		full := b.tokens >= budgetCapacity && b.s.now().Sub(b.seen) < sharedViewFresh
		b.mu.Unlock()
		if full {
			return
		}
	}
	var tokens int
	err := b.s.do(context.Background(), "budget", func(ctx context.Context) (err error) {
		tokens, err = b.s.store.BudgetRefund(ctx, b.host, lastRetryCost+budgetSuccessBonus, budgetCapacity)
		return err
	})
	if err != nil {
		b.local.succeeded(lastRetryCost)
		return
	}
	b.saw(tokens)
}

func (b *sharedBudget) available() int {
	if !b.s.usable() {
		return b.local.available()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}

// saw records a reading from the store.
func (b *sharedBudget) saw(tokens int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens, b.seen = tokens, b.s.now()
	if b.onChange != nil {
		b.onChange(tokens)
	}
}

// sharedBreaker is a host's circuit breaker kept in the shared store:
// every replica's attempts count in one outcome window, and a breaker one
// replica opens is open for all. It keeps the store's last answer (view):
// while that says closed and is fresh, or open and not yet over, attempts
// are admitted or refused without asking, and every outcome recorded
// refreshes it. The host's local breaker sees every outcome too and
// stands in while the store is unavailable.
type sharedBreaker struct {
	host     string
	s        *sharedState
	local    *breaker
	rules    BreakerRules
	layer    *Layer // clock and jitter
	onChange func(state string)

	mu   sync.Mutex
	view BreakerView
	seen time.Time
}

func (b *sharedBreaker) allow() (bool, probeTicket) {
	if !b.s.usable() {
		return b.local.allow()
	}
	now := b.layer.now()
	b.mu.Lock()
	v, fresh := b.view, now.Sub(b.seen) < sharedViewFresh
	b.mu.Unlock()
	switch {
	case v.State == BreakerClosed && fresh:
		return true, noProbe
	case v.State == BreakerOpen && now.Before(v.OpenUntil):
		return false, noProbe
	}
	var admitted, probe bool
	err := b.s.do(context.Background(), "breaker", func(ctx context.Context) (err error) {
		admitted, probe, v, err = b.s.store.BreakerAllow(ctx, b.host, now, b.rules)
		return err
	})
	if err != nil {
		return b.local.allow()
	}
	b.saw(v, now)
	if probe {
		return admitted, sharedProbe
	}
	return admitted, noProbe
}

func (b *sharedBreaker) record(probe probeTicket, failed, neutral bool) {
	if probe == localProbe {
		b.local.record(probe, failed, neutral)
		return
	}
	// The local breaker follows the host too, so that it is ready to
	// stand in; it never takes shared probes for its own.
	b.local.record(noProbe, failed, neutral)
	if neutral && probe == noProbe {
		return // counts nothing anywhere
	}
	now := b.layer.now()
	openFor := breakerOpenFor + time.Duration(b.layer.rng.Float64()*float64(breakerOpenJitter))
	var v BreakerView
	err := b.s.do(context.Background(), "breaker", func(ctx context.Context) (err error) {
		v, err = b.s.store.BreakerRecord(ctx, b.host, BreakerOutcome{Probe: probe == sharedProbe, Failed: failed, Neutral: neutral},
			now, openFor, b.rules)
		return err
	})
	if err == nil {
		b.saw(v, now)
	}
}

func (b *sharedBreaker) status() (string, time.Time) {
	if !b.s.usable() {
		return b.local.status()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return viewStatus(b.view, b.layer.now())
}

// viewStatus is status() of a breaker in state v: an open breaker whose
// time is over is half-open.
func viewStatus(v BreakerView, now time.Time) (string, time.Time) {
	if v.State == BreakerOpen {
		if !now.Before(v.OpenUntil) {
			return BreakerHalfOpen, time.Time{}
		}
		return BreakerOpen, v.OpenUntil
	}
	return v.State, time.Time{}
}

// saw records a reading from the store and publishes a change of state.
func (b *sharedBreaker) saw(v BreakerView, now time.Time) {
	b.mu.Lock()
	changed := v.State != b.view.State
	b.view, b.seen = v, now
	if changed && b.onChange != nil {
		b.onChange(v.State)
	}
	b.mu.Unlock()
}

// refreshShared reads the shared breakers and budgets of hosts in one
// round trip (Health), when the store is in use.
func (l *Layer) refreshShared(ctx context.Context, hosts []*hostState) {
	if l.shared == nil || !l.shared.usable() || len(hosts) == 0 {
		return
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.name
	}
	var views []BreakerView
	var tokens []int
	err := l.shared.do(ctx, "peek", func(ctx context.Context) (err error) {
		views, tokens, err = l.shared.store.Peek(ctx, names, budgetCapacity)
		return err
	})
	if err != nil || len(views) != len(hosts) || len(tokens) != len(hosts) {
		return
	}
	now := l.now()
	for i, h := range hosts {
		if b, ok := h.breaker.(*sharedBreaker); ok {
			b.saw(views[i], now)
		}
		if b, ok := h.budget.(*sharedBudget); ok {
			b.saw(tokens[i])
		}
	}
}
