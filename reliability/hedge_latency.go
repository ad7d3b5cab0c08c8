package reliability

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Hedge delay constants (adr/0037; the measurements that chose each value
// are in bench/RESULTS.md, "Hedging: the constants and the figures behind
// them"). The delay is a high quantile (hedgeQuantile) of a host's last
// latencySamples answered attempts of one operation (a search, an item, a
// landing page …: see operationOf): past it, an attempt is more likely
// stuck than slow, so a copy beside it is worth its small extra load. The
// quantile is above the p95 because the window under-states the tail: when
// a copy beats a slow attempt, the slow attempt's time is never a sample.
// When attempts of the operation are being stuck (stuckRate), the delay
// drops to the quantile past which a still-waiting attempt is more likely
// stuck than slow (stuckQuantile). The floor keeps a very fast host from
// being hedged on scheduler noise while nothing is stuck; once attempts
// are, the lower stuck floor takes its place. Until the window holds
// hedgeMinSamples answers its high quantiles mean little, so from
// hedgeEarlySamples on the delay is hedgeEarlyFactor × the slowest answer
// so far: a generous factor, because those first answers are the fastest
// of the reads sent beside them (a new catalog's first calls go out
// together), not a sample of the catalog. Before the fifth answer the
// delay is cold (hedgeDelay).
const (
	latencySamples    = 128
	hedgeMinSamples   = 20
	hedgeEarlySamples = 5
	hedgeEarlyFactor  = 2.5
	hedgeFloor        = 50 * time.Millisecond
	// hedgeStuckFloor is the floor once stuck rounds have brought the delay
	// below the fault-free one: for a fast catalog the stuck quantile lies
	// under hedgeFloor, which would hold its stuck reads back from the copy
	// they need. The stuck quantile is never below the median, so this only
	// guards a catalog answering in a few milliseconds against copies on
	// scheduler noise; fault-free reads (no stuck rounds) keep hedgeFloor.
	hedgeStuckFloor = 20 * time.Millisecond
	// hedgeQuantile is the delay's quantile of the window while no attempt
	// is stuck: with 128 samples, the second slowest.
	hedgeQuantile = 0.985
	// hedgeMedianFactor bounds the delay by the median: a log-normal
	// catalog (σ 0.5) has its p95 at 2.3 × its median, so 4 × leaves the
	// tail alone unless late answers have crept into the window.
	hedgeMedianFactor = 4
	// stuckRounds is how many of the operation's last rounds (a read and
	// its copies) the stuck rate is counted over, and stuckMinRounds the
	// fewest it is divided by, so that one stuck read among the first few
	// does not read as a stuck catalog.
	stuckRounds    = 64
	stuckMinRounds = 32
)

// operation is what a read asks a catalog for. Answer times are kept per
// host and operation because one host's landing page answers in
// milliseconds where its searches take seconds: one window for both would
// hedge every slow search (and wait for the searches' tail before hedging a
// hung landing page).
type operation int

const (
	opLanding operation = iota
	opConformance
	opCollections
	opCollection
	opQueryables
	opItems // a collection's items: a search by GET
	opItem
	opSearch
	opAggregate
	opOther // anything else: an asset, a thumbnail, an unknown path
	numOperations
)

// operationOf classifies a request by method and path, from the end of the
// path so that a catalog under a prefix (/v1/…, /api/stac/v1/…) is read the
// same way.
func operationOf(method, path string) operation {
	if method != http.MethodGet && method != http.MethodPost {
		return opOther
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	last := segs[len(segs)-1]
	prev := ""
	if len(segs) > 1 {
		prev = segs[len(segs)-2]
	}
	switch {
	case last == "search":
		return opSearch
	case last == "aggregate" || last == "aggregations":
		return opAggregate
	case last == "queryables":
		return opQueryables
	case last == "conformance":
		return opConformance
	case last == "collections":
		return opCollections
	case last == "items":
		return opItems
	case prev == "items":
		return opItem
	case prev == "collections":
		return opCollection
	case method == http.MethodGet && !strings.Contains(last, "."):
		return opLanding // the root, under whatever prefix
	}
	return opOther
}

// latencyWindow keeps the durations of a host's last answered attempts of
// one operation, and which of its last rounds were stuck. The zero value is
// ready to use.
type latencyWindow struct {
	mu      sync.Mutex
	samples [latencySamples]time.Duration
	next    int
	filled  int

	// warm is closed once filled reaches hedgeEarlySamples (see warmed).
	warm chan struct{}

	stuck       [stuckRounds]bool
	stuckNext   int
	stuckFilled int
	stuckCount  int
}

func (w *latencyWindow) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples[w.next] = d
	w.next = (w.next + 1) % latencySamples
	w.filled = min(w.filled+1, latencySamples)
	if w.filled == hedgeEarlySamples && w.warm != nil {
		close(w.warm)
	}
}

// warmed returns a channel closed once the window holds hedgeEarlySamples
// answers, i.e. once delay has one to give: a read waiting on a cold delay
// then takes the learned one (hedgeTransport).
func (w *latencyWindow) warmed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warm == nil {
		w.warm = make(chan struct{})
		if w.filled >= hedgeEarlySamples {
			close(w.warm)
		}
	}
	return w.warm
}

// noteRound records how a hedged round ended: stuck when a copy answered
// while the first attempt was still out (it had neither answered nor
// failed), the mark of an attempt that hangs rather than one that is slow.
func (w *latencyWindow) noteRound(stuck bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stuck[w.stuckNext] {
		w.stuckCount--
	}
	w.stuck[w.stuckNext] = stuck
	if stuck {
		w.stuckCount++
	}
	w.stuckNext = (w.stuckNext + 1) % stuckRounds
	w.stuckFilled = min(w.stuckFilled+1, stuckRounds)
}

// stuckRate is the share of the last rounds that were stuck (over at least
// stuckMinRounds). The caller holds w.mu.
func (w *latencyWindow) stuckRate() float64 {
	return float64(w.stuckCount) / float64(max(w.stuckFilled, stuckMinRounds))
}

// stuckQuantile is the quantile of the answer times past which a read
// still waiting is at least twice as likely stuck as slow, given that a
// share h of reads get stuck: P(stuck | waiting at t) = h / (h + (1-h)·S(t))
// ≥ 2/3 where S(t) ≤ h / (2(1-h)). Never above hedgeQuantile (no stuck
// read: the fault-free delay), never below the median (a copy sent before
// half the answers have come costs more than it can save). At 20 % stuck
// reads it is the p87.5. Odds of 2:1 rather than even: a copy that loses
// costs retry-budget tokens, and at even odds the copies beside slow but
// healthy reads drain the budget, after which stuck reads get no copy and
// wait for the deadline.
func stuckQuantile(h float64) float64 {
	if h <= 0 {
		return hedgeQuantile
	}
	if h >= 0.5 {
		return 0.5
	}
	return min(hedgeQuantile, max(0.5, 1-h/(2*(1-h))))
}

// delay returns the hedge delays the window supports: d, the
// stuck-adjusted quantile (stuckQuantile) of its answer times, and base, the
// fault-free one (hedgeQuantile), once it holds hedgeMinSamples answers;
// hedgeEarlyFactor × its largest from hedgeEarlySamples on (or, with stuck
// reads seen, d is the adjusted quantile of the few it has); false before
// that.
func (w *latencyWindow) delay() (d, base time.Duration, ok bool) {
	w.mu.Lock()
	if w.filled < hedgeEarlySamples {
		w.mu.Unlock()
		return 0, 0, false
	}
	q := stuckQuantile(w.stuckRate())
	sorted := slices.Clone(w.samples[:w.filled])
	w.mu.Unlock()
	slices.Sort(sorted)
	// Never more than hedgeMedianFactor × the median: a late answer (a
	// stalled attempt that answered after seconds because no copy beat
	// it) is a sample too, and once a few of them sit in the window its
	// high quantile becomes the stall itself, so stalled reads are no
	// longer copied before they answer late, which adds more such samples.
	// The median is what those samples cannot move.
	ceiling := hedgeMedianFactor * sorted[(len(sorted)-1)/2]
	quantile := func(q float64) time.Duration {
		rank := int(math.Ceil(q*float64(len(sorted)))) - 1 // nearest rank
		return min(sorted[max(0, rank)], ceiling)
	}
	if len(sorted) < hedgeMinSamples {
		base = min(time.Duration(hedgeEarlyFactor*float64(sorted[len(sorted)-1])), ceiling)
	} else {
		base = quantile(hedgeQuantile)
	}
	d = base
	if q < hedgeQuantile {
		d = min(base, quantile(q))
	}
	return d, base, true
}

// latencyWindows are a host's answer times, one window per operation.
type latencyWindows [numOperations]latencyWindow

// searchLike reports whether op's cost depends on what is asked (a
// search, an items listing, an aggregation): its answer times cannot be
// guessed from the host's other requests.
func (op operation) searchLike() bool {
	return op == opSearch || op == opItems || op == opAggregate
}

// hedgeDelay is how long a read of op to h may run before a copy goes out
// beside it, and whether that delay is cold (no answer times of op known
// yet). It is the fixed STAC_MCP_HEDGE delay, else the window's delay
// (latencyWindow.delay, never below hedgeFloor, or below hedgeStuckFloor
// while stuck rounds hold it under the fault-free delay). Cold, a fixed
// document (a landing page, a collection,
// an item …) borrows the host's: the largest of its other documents'
// delays, once one is known, never above the attempt timeout, because
// static pages of one catalog cost about the same and the first calls of a
// new kind of page are the ones a hang would otherwise hold for the attempt
// timeout. A search-like operation, or a host with nothing known, waits the
// attempt timeout, which is what the hedge-off policy waits before a second
// attempt: a search that takes seconds is not stuck.
func (l *Layer) hedgeDelay(h *hostState, op operation) (delay time.Duration, cold bool) {
	if l.policy.HedgeDelay > 0 {
		return l.policy.HedgeDelay, false
	}
	if d, base, ok := h.latency[op].delay(); ok {
		if d < base {
			return max(d, hedgeStuckFloor), false
		}
		return max(d, hedgeFloor), false
	}
	delay = l.policy.AttemptTimeout
	if op.searchLike() {
		return delay, true
	}
	borrowed := time.Duration(0)
	for other := range numOperations {
		if other == op || other.searchLike() {
			continue
		}
		if d, _, ok := h.latency[other].delay(); ok {
			borrowed = max(borrowed, d, hedgeFloor)
		}
	}
	if borrowed > 0 {
		delay = min(delay, borrowed)
	}
	return delay, true
}

// hedgeGap is how long after the first copy (sent after delay) the second
// one follows. Cold: twice the delay (copies at 4 s and 12 s of 15), so a
// read that is slow rather than stuck reaches the catalog at most twice in
// 12 s. Fixed (STAC_MCP_HEDGE=<seconds>): the delay again. Learned: half the
// fault-free delay, so copies at D and 1.5 D while nothing is stuck. A read
// unanswered that long after its copy is most likely stuck twice over, and
// the reads whose first two attempts hang are the ones that set a call's
// p95 under hung attempts. The gap stays half the fault-free delay when
// stuck reads bring the first copy forward: the second copy guards the
// first, which is a fresh read.
func (l *Layer) hedgeGap(h *hostState, op operation, delay time.Duration, cold bool) time.Duration {
	switch {
	case cold:
		return 2 * delay
	case l.policy.HedgeDelay > 0:
		return delay
	}
	if _, base, ok := h.latency[op].delay(); ok {
		return max(base, hedgeFloor) / 2
	}
	return delay / 2 // not reached: a learned delay has a window
}
