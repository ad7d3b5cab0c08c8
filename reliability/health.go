package reliability

import (
	"context"
	"time"
)

// HostHealth is one catalog host's reliability state, for get_service_health.
// Counts cover the last five minutes.
type HostHealth struct {
	Host             string    `json:"host"`
	Breaker          string    `json:"breaker"` // closed, half_open, open
	BreakerOpenUntil time.Time `json:"breaker_open_until,omitzero"`
	BudgetTokens     int       `json:"budget_tokens"`
	BudgetCapacity   int       `json:"budget_capacity"`
	InFlight         int       `json:"in_flight"`
	Retries5m        int       `json:"retries_5m"`
	GiveUps5m        int       `json:"give_ups_5m"`
	Timeouts5m       int       `json:"timeouts_5m"`
	CacheLookups5m   int       `json:"cache_lookups_5m"`
	CacheHitRate     float64   `json:"cache_hit_rate"` // 0 when there were no lookups
}

// Health reports every host whose state the layer keeps (the hosts it has
// talked to, at most Policy.MaxHosts besides the pinned ones), sorted by
// host. Reading it does not count as using a host. With a shared store it
// first reads the hosts' breakers and budgets from the store (see
// sharedState.do for how ctx bounds that read).
func (l *Layer) Health(ctx context.Context) []HostHealth {
	now := l.now()
	var out []HostHealth
	hosts := l.hosts.snapshot()
	l.refreshShared(ctx, hosts)
	for _, h := range hosts {
		name := h.name
		state, until := h.breaker.status()
		sums := h.counts.sums(now)
		hh := HostHealth{
			Host:           name,
			Breaker:        state,
			BudgetTokens:   h.budget.available(),
			BudgetCapacity: budgetCapacity,
			InFlight:       h.bulkhead.inFlight(),
			Retries5m:      sums[evRetry],
			GiveUps5m:      sums[evGiveUp],
			Timeouts5m:     sums[evTimeout],
			CacheLookups5m: sums[evCacheHit] + sums[evCacheMiss],
		}
		if state == BreakerOpen {
			hh.BreakerOpenUntil = until
		}
		if hh.CacheLookups5m > 0 {
			hh.CacheHitRate = float64(sums[evCacheHit]) / float64(hh.CacheLookups5m)
		}
		out = append(out, hh)
	}
	return out
}
