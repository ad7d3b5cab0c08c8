package reliability

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Hedge delay constants. The delay is the p95 of a host's last
// latencySamples answered attempts of one operation (a search, an item, a
// landing page …: see operationOf): past the p95, an attempt is more likely
// stuck than slow, so a copy beside it is worth its 5 % of extra load. The
// floor keeps a very fast host from being hedged on scheduler noise. Until
// the window holds hedgeMinSamples answers its p95 means little, so from
// hedgeEarlySamples on the delay is hedgeEarlyFactor × the slowest answer
// so far: the largest of 5 to 19 log-normal answers lies near their 83rd
// to 95th percentile, and 1.5 × that is at or above the p95. Before the
// fifth answer the delay is cold (hedgeDelay, adr/0023).
const (
	latencySamples    = 128
	hedgeMinSamples   = 20
	hedgeEarlySamples = 5
	hedgeEarlyFactor  = 1.5
	hedgeFloor        = 50 * time.Millisecond
	// hedgeMedianFactor bounds the delay by the median: a log-normal
	// catalog (σ 0.5) has its p95 at 2.3 × its median, so 4 × leaves the
	// p95 alone unless late answers have crept into the window.
	hedgeMedianFactor = 4
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
// one operation. The zero value is ready to use.
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
	// Never more than hedgeMedianFactor × the median: a late answer (a
	// stalled attempt that answered after seconds because no copy beat
	// it) is a sample too, and once a few of them sit in the window its
	// p95 becomes the stall itself, so stalled reads are no longer copied
	// before they answer late, which adds more such samples. The median is
	// what those samples cannot move (issue 25: search_items one call at a
	// time settled at a 6 s delay).
	ceiling := hedgeMedianFactor * sorted[(len(sorted)-1)/2]
	if len(sorted) < hedgeMinSamples {
		return min(time.Duration(hedgeEarlyFactor*float64(sorted[len(sorted)-1])), ceiling), true
	}
	return min(sorted[(len(sorted)*95+99)/100-1], ceiling), true
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
// yet). It is the fixed STAC_MCP_HEDGE delay, else the window's p95 (never
// below hedgeFloor). Cold, a fixed document (a landing page, a collection,
// an item …) borrows the host's: the largest of its other documents'
// delays, once one is known, never above the attempt timeout, because
// static pages of one catalog cost about the same and the first calls of a
// new kind of page are the ones a hang would otherwise hold for the attempt
// timeout. A search-like operation, or a host with nothing known, waits the
// attempt timeout, which is what the layer waited before a second attempt
// when it still cut attempts (adr/0011): a search that takes seconds is
// not stuck.
func (l *Layer) hedgeDelay(h *hostState, op operation) (delay time.Duration, cold bool) {
	if l.policy.HedgeDelay > 0 {
		return l.policy.HedgeDelay, false
	}
	if p95, ok := h.latency[op].p95(); ok {
		return max(p95, hedgeFloor), false
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
		if p95, ok := h.latency[other].p95(); ok {
			borrowed = max(borrowed, p95, hedgeFloor)
		}
	}
	if borrowed > 0 {
		delay = min(delay, borrowed)
	}
	return delay, true
}
