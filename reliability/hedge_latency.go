package reliability

import (
	"slices"
	"sync"
	"time"
)

// Hedge delay constants. The delay is the host's p95 over its last
// latencySamples answered attempts: past the p95, an attempt is more likely
// stuck than slow, so a second one is worth its 5 % of extra load. The floor
// keeps a very fast host from being hedged on scheduler noise. Until the
// window holds hedgeMinSamples answers its p95 means little, so from
// hedgeEarlySamples on the delay is hedgeEarlyFactor × the slowest answer
// so far: the largest of 5 to 19 log-normal answers lies near their 83rd
// to 95th percentile, and 1.5 × that is at or above the p95. Before, a cold
// host's first calls were never hedged, and at 20 % hangs the 4 % of them
// that hung held the p95 of 200 calls at the attempt timeout's mercy.
const (
	latencySamples    = 128
	hedgeMinSamples   = 20
	hedgeEarlySamples = 5
	hedgeEarlyFactor  = 1.5
	hedgeFloor        = 50 * time.Millisecond
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

// p95 returns the 95th percentile of the window once it holds
// hedgeMinSamples answers, hedgeEarlyFactor × its largest from
// hedgeEarlySamples on, and false before that.
func (w *latencyWindow) p95() (time.Duration, bool) {
	w.mu.Lock()
	if w.filled < hedgeEarlySamples {
		w.mu.Unlock()
		return 0, false
	}
	sorted := slices.Clone(w.samples[:w.filled])
	w.mu.Unlock()
	slices.Sort(sorted)
	if len(sorted) < hedgeMinSamples {
		return time.Duration(hedgeEarlyFactor * float64(sorted[len(sorted)-1])), true
	}
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
