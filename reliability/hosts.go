package reliability

import (
	"container/list"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// hostTable keeps the per-host state (breaker, retry budget, bulkhead,
// health and latency windows) of at most max hosts, plus the pinned ones
// (the operator's configured catalogs), which are never forgotten and do
// not count against max. Hosts come from callers (catalog_url, next links,
// asset hrefs), so without a bound one client naming thousands of hosts
// would grow the process, /metrics and get_service_health without limit.
//
// Past max, the least recently used host that is safe to forget is
// evicted. Forgetting must not hand an attacker a way to reset the
// protection of a host they are hammering, so a host is kept while
//   - a request to it is running (refs > 0): a new state would come with an
//     empty bulkhead and double the host's concurrency;
//   - its breaker is open: a new state would start closed and let traffic
//     through the pause.
//
// What eviction does lose is the retry budget's deficit, the half-open probe
// count and the health and latency windows. A host idle enough to be the
// least recently used of max hosts has nothing running; restarting its
// budget at full costs it at most budgetCapacity/budgetRetryCost retries.
// When every unpinned host is kept (all running or paused), a request to
// a new host is refused with errHostLimit rather than growing the table:
// the limit holds, and the operator's catalogs, pinned, keep working.
type hostTable struct {
	mu       sync.Mutex
	max      int
	byName   map[string]*list.Element // of *hostState
	lru      list.List                // front: most recently used
	pinned   map[string]bool
	unpinned int // entries not pinned, the ones max bounds
	create   func(name string, pinned bool) *hostState
	evicted  func(h *hostState)
}

func newHostTable(max int, create func(name string, pinned bool) *hostState, evicted func(*hostState)) *hostTable {
	return &hostTable{max: max, byName: map[string]*list.Element{}, pinned: map[string]bool{}, create: create, evicted: evicted}
}

// hostLimitError is a request to a new host while the table is full of
// hosts it must keep.
type hostLimitError struct {
	host string
	max  int
}

func (e *hostLimitError) Error() string {
	return fmt.Sprintf("this server already tracks %d catalog hosts (STAC_MCP_MAX_HOSTS) and each of them has requests running or a paused (open) "+
		"circuit breaker, so it takes on no new host (%s) until one is free", e.max, e.host)
}

// acquire returns name's state, creating it if needed, and holds it (refs)
// until release: a held host is never evicted.
func (t *hostTable) acquire(name string) (*hostState, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byName[name]; ok {
		t.lru.MoveToFront(e)
		h := e.Value.(*hostState)
		h.refs++
		return h, nil
	}
	pinned := t.pinned[name]
	if !pinned && t.unpinned >= t.max && !t.evictOneLocked() {
		return nil, &hostLimitError{host: name, max: t.max}
	}
	h := t.create(name, pinned)
	h.refs = 1
	t.byName[name] = t.lru.PushFront(h)
	if !pinned {
		t.unpinned++
	}
	return h, nil
}

// peek returns name's state if it is kept, without creating, holding or
// touching it.
func (t *hostTable) peek(name string) *hostState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byName[name]; ok {
		return e.Value.(*hostState)
	}
	return nil
}

func (t *hostTable) release(h *hostState) {
	t.mu.Lock()
	h.refs--
	t.mu.Unlock()
}

// evictOneLocked forgets the least recently used host that is safe to
// forget (see hostTable); false when there is none.
func (t *hostTable) evictOneLocked() bool {
	for e := t.lru.Back(); e != nil; e = e.Prev() {
		h := e.Value.(*hostState)
		if t.pinned[h.name] || h.refs > 0 {
			continue
		}
		if state, _ := h.breaker.status(); state == BreakerOpen {
			continue
		}
		t.lru.Remove(e)
		delete(t.byName, h.name)
		t.unpinned--
		if t.evicted != nil {
			t.evicted(h)
		}
		return true
	}
	return false
}

// pin marks names as never evicted and outside max.
func (t *hostTable) pin(names ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range names {
		if n == "" || t.pinned[n] {
			continue
		}
		t.pinned[n] = true
		if _, ok := t.byName[n]; ok {
			t.unpinned--
		}
	}
}

// snapshot lists the tracked hosts, sorted by name.
func (t *hostTable) snapshot() []*hostState {
	t.mu.Lock()
	out := make([]*hostState, 0, len(t.byName))
	for _, e := range t.byName {
		out = append(out, e.Value.(*hostState))
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b *hostState) int { return strings.Compare(a.name, b.name) })
	return out
}

// otherHostLabel is the metrics host label of hosts past maxHostLabels.
const otherHostLabel = "other"

// maxHostLabels bounds the distinct host label values on /metrics (pinned
// hosts aside): Prometheus keeps every label value it ever saw, so labels
// taken from caller input need a ceiling. The first hosts seen keep their
// own label for the life of the process; later ones share "other".
const maxHostLabels = 64

// hostLabels assigns metrics host labels; a label, once given, never changes.
type hostLabels struct {
	mu       sync.Mutex
	own      map[string]bool
	unpinned int
}

func (h *hostLabels) label(name string, pinned bool) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.own == nil {
		h.own = map[string]bool{}
	}
	switch {
	case h.own[name]:
		return name
	case pinned:
	case h.unpinned >= maxHostLabels:
		return otherHostLabel
	default:
		h.unpinned++
	}
	h.own[name] = true
	return name
}
