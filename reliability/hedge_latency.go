package reliability

import (
	"slices"
	"sync"
	"time"
)

// Hedge delay constants. The delay is the host's p95 over its last
// latencySamples answered attempts: past the p95, an attempt is more likely
// stuck than slow, so a second one is worth its 5 % of extra load. The floor
// keeps a very fast host from being hedged on scheduler noise, and no hedge
// is sent before hedgeMinSamples answers, when the p95 means nothing yet.
const (
	latencySamples  = 128
	hedgeMinSamples = 20
	hedgeFloor      = 50 * time.Millisecond
)

// latencyWindow keeps the durations of a host's last answered attempts.
// The zero value is ready to use.
type latencyWindow struct {
	mu      sync.Mutex
	samples [latencySamples]time.Duration
	next    int
	filled  int
}

func (w *latencyWindow) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples[w.next] = d
	w.next = (w.next + 1) % latencySamples
	w.filled = min(w.filled+1, latencySamples)
}

// p95 returns the 95th percentile of the window, or false while it holds
// fewer than hedgeMinSamples.
func (w *latencyWindow) p95() (time.Duration, bool) {
	w.mu.Lock()
	if w.filled < hedgeMinSamples {
		w.mu.Unlock()
		return 0, false
	}
	sorted := slices.Clone(w.samples[:w.filled])
	w.mu.Unlock()
	slices.Sort(sorted)
	return sorted[(len(sorted)*95+99)/100-1], true
}

// hedgeDelay is how long an attempt to h may run before it is hedged; false
// means no hedge (the host's latency is not known yet).
func (l *Layer) hedgeDelay(h *hostState) (time.Duration, bool) {
	if l.policy.HedgeDelay > 0 {
		return l.policy.HedgeDelay, true
	}
	p95, ok := h.latency.p95()
	if !ok {
		return 0, false
	}
	return max(p95, hedgeFloor), true
}
