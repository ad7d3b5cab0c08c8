package federation

import (
	"container/list"
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
)

// How long a member that has not answered is waited for once another
// member of its round has (adr/0035). The call's deadline bounds it all;
// within it a member is waited for while its own learned latency says an
// answer is still likely:
//   - from its last sign of life (an attempt answered, even with an error,
//     or the end of the backoff before a retry), StragglerP95Factor × the
//     p95 of its catalog's recent pages (PageTimes; the layer's search
//     answer times until it has MinLatencySamples of them), and at least
//     as long as the others took and RecentFactor × its slowest page of
//     the last RecentWindow (the window may predate a load that slows
//     every page now): a member retrying after faults keeps being
//     waited for, one whose attempt has been out for longer than its
//     catalog takes to answer is not;
//   - a member whose catalog answered something (its landing page in this
//     call) but no search yet: ColdWait from that sign, the time the layer
//     itself gives a cold search before sending a copy beside it;
//   - a member that never answered anything, or that was cut as a
//     straggler the last UnresponsiveAfter times it was asked without a
//     page between (it stopped answering: a hung catalog), nothing of its
//     own: only the others' time justifies a wait. Every ProbeEvery one
//     call gives such a member its whole allowance again, so that one that
//     is only slow comes back.
//
// Whatever its own latency says, a straggler is waited for at least
// StragglerOthersFactor × the others' time after they are done (never less
// than MinStragglerWait): a member a little slower than the rest is not
// dropped for it.
const (
	StragglerP95Factor    = 3.0
	StragglerOthersFactor = 0.5
	MinStragglerWait      = 50 * time.Millisecond
	MinLatencySamples     = 5
	UnresponsiveAfter     = 2
	ProbeEvery            = 10 * time.Second
	RecentFactor          = 1.5
	RecentWindow          = 5 * time.Second
)

// stragglers is what a Latency may also remember: which hosts stopped
// answering.
type stragglers interface {
	// Unresponsive reports whether host was cut the last
	// UnresponsiveAfter times without a page between and no probe is due
	// (one is due every ProbeEvery: then it reports false, once).
	Unresponsive(host string) bool
	// Cut records that host was given up on as a straggler.
	Cut(host string)
}

// Latency is where a member's learned latency comes from: PageTimes, or
// the reliability layer's per-host answer times (reliability.Layer).
type Latency interface {
	SearchAnswerTime(host string, q float64) (time.Duration, int)
}

// PageTimes are the times members took to answer a page of a search, by
// host: what a straggler is waited for (the layer's attempt answer times
// leave out what a page costs around its attempts: building the request,
// queueing for a bulkhead slot, decoding the page, all of which grow with
// this server's own load). Until a host has MinLatencySamples pages,
// Fallback's answer times stand in. The zero value is ready; it keeps at
// most maxPageHosts hosts, the least recently used one forgotten first, so
// callers naming many hosts cannot grow it.
type PageTimes struct {
	Fallback Latency

	mu     sync.Mutex
	byHost map[string]*list.Element // of *pageWindow
	lru    list.List
}

const (
	pageSamples  = 64
	maxPageHosts = 256
)

type pageWindow struct {
	host    string
	samples [pageSamples]time.Duration
	at      [pageSamples]time.Time // when each sample was taken
	next    int
	filled  int
	cuts    int       // cut as a straggler since its last page
	probeAt time.Time // when it was last given its whole allowance while unresponsive
}

// window is host's window, created when missing. The caller holds mu.
func (p *PageTimes) window(host string) *pageWindow {
	if p.byHost == nil {
		p.byHost = map[string]*list.Element{}
	}
	e, ok := p.byHost[host]
	if !ok {
		if p.lru.Len() >= maxPageHosts {
			oldest := p.lru.Back()
			p.lru.Remove(oldest)
			delete(p.byHost, oldest.Value.(*pageWindow).host)
		}
		e = p.lru.PushFront(&pageWindow{host: host})
		p.byHost[host] = e
	}
	p.lru.MoveToFront(e)
	return e.Value.(*pageWindow)
}

// Observe records that host answered a page in d.
func (p *PageTimes) Observe(host string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.window(host)
	w.samples[w.next], w.at[w.next] = d, time.Now()
	w.next = (w.next + 1) % pageSamples
	w.filled = min(w.filled+1, pageSamples)
	w.cuts = 0
}

// RecentMax is the longest page host took among those that ended in the
// last within (0 when none did): what this server's load makes of its pages
// right now, which a window of 64 pages follows only slowly.
func (p *PageTimes) RecentMax(host string, within time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byHost[host]
	if !ok {
		return 0
	}
	w := e.Value.(*pageWindow)
	var longest time.Duration
	for i := range w.filled {
		if time.Since(w.at[i]) <= within {
			longest = max(longest, w.samples[i])
		}
	}
	return longest
}

// Cut records that host was given up on as a straggler.
func (p *PageTimes) Cut(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.window(host).cuts++
}

// Unresponsive reports whether host stopped answering (see stragglers).
func (p *PageTimes) Unresponsive(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.byHost[host]
	if !ok {
		return false
	}
	w := e.Value.(*pageWindow)
	if w.cuts < UnresponsiveAfter {
		return false
	}
	if time.Since(w.probeAt) >= ProbeEvery {
		w.probeAt = time.Now()
		return false
	}
	return true
}

// SearchAnswerTime is the q-quantile of host's recent page times and how
// many there are, or Fallback's while there are fewer than
// MinLatencySamples.
func (p *PageTimes) SearchAnswerTime(host string, q float64) (time.Duration, int) {
	p.mu.Lock()
	var sorted []time.Duration
	if e, ok := p.byHost[host]; ok {
		w := e.Value.(*pageWindow)
		sorted = slices.Clone(w.samples[:w.filled])
	}
	p.mu.Unlock()
	if len(sorted) < MinLatencySamples {
		if p.Fallback != nil {
			return p.Fallback.SearchAnswerTime(host, q)
		}
		return 0, len(sorted)
	}
	slices.Sort(sorted)
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(0, rank), len(sorted)-1)], len(sorted)
}

// observer is a Latency that also learns.
type observer interface {
	Observe(host string, d time.Duration)
}

// cutAt is when a straggler is given up on: start is when its fetch
// began, progress what its requests showed since, othersEnd when the
// last of the others ended and others how long they took; unresponsive
// says it stopped answering (stragglers).
func cutAt(lat Latency, host string, start time.Time, progress *reliability.Progress, othersEnd time.Time, others, coldWait time.Duration, unresponsive bool) time.Time {
	cut := othersEnd.Add(max(time.Duration(StragglerOthersFactor*float64(others)), MinStragglerWait))
	if unresponsive {
		return cut
	}
	since := start
	if t, ok := progress.LastSign(); ok && t.After(since) {
		since = t
	}
	var p95 time.Duration
	n := 0
	if lat != nil {
		p95, n = lat.SearchAnswerTime(host, 0.95)
	}
	switch {
	case n >= MinLatencySamples:
		// Its learned page time, but never less than the others just took,
		// nor than RecentFactor × its slowest page of the last RecentWindow:
		// the window may predate a load that slows every page now (a burst
		// of calls on this server), which those reflect at once.
		allowance := max(time.Duration(StragglerP95Factor*float64(p95)), others)
		if r, ok := lat.(interface {
			RecentMax(host string, within time.Duration) time.Duration
		}); ok {
			allowance = max(allowance, time.Duration(RecentFactor*float64(r.RecentMax(host, RecentWindow))))
		}
		if own := since.Add(allowance); own.After(cut) {
			cut = own
		}
	case n > 0 || progress.Responded():
		if own := since.Add(coldWait); own.After(cut) {
			cut = own
		}
	}
	return cut
}

// Branch is how one member's part of a fan-out went.
type Branch struct {
	Start, End time.Time
	// Cut says it was given up on as a straggler (its run saw its context
	// cancelled).
	Cut bool
}

// FanOut runs run(i) for every member side by side, each under its own
// context watched for progress (reliability.WatchProgress), and returns
// when all have ended. Once one has answered (run returned nil), those
// still out are stragglers: each is cancelled at its cutAt. The caller's
// ctx (the call's deadline) bounds everything.
func FanOut(ctx context.Context, hosts []string, lat Latency, coldWait time.Duration, run func(ctx context.Context, i int) error) []Branch {
	type branch struct {
		cancel       context.CancelFunc
		progress     *reliability.Progress
		done         bool
		cut          bool
		judged       bool // unresponsive was read (once: a probe is given once)
		unresponsive bool
	}
	type result struct {
		i   int
		err error
		end time.Time
	}
	out := make([]Branch, len(hosts))
	branches := make([]*branch, len(hosts))
	results := make(chan result, len(hosts))
	var wg sync.WaitGroup
	for i := range hosts {
		bctx, cancel := context.WithCancel(ctx)
		b := &branch{cancel: cancel, progress: &reliability.Progress{}}
		bctx = reliability.WatchProgress(bctx, b.progress)
		branches[i] = b
		out[i].Start = time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := run(bctx, i)
			results <- result{i: i, err: err, end: time.Now()}
		}()
	}
	defer func() {
		for _, b := range branches {
			b.cancel()
		}
		wg.Wait()
	}()
	pending, answered := len(hosts), 0
	var othersEnd time.Time // when the member to end last so far ended
	var othersTook time.Duration
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for pending > 0 {
		if answered > 0 {
			next := time.Duration(-1)
			for i, b := range branches {
				if b.done || b.cut {
					continue
				}
				if !b.judged {
					b.judged = true
					if st, ok := lat.(stragglers); ok {
						b.unresponsive = st.Unresponsive(hosts[i])
					}
				}
				wait := time.Until(cutAt(lat, hosts[i], out[i].Start, b.progress, othersEnd, othersTook, coldWait, b.unresponsive))
				if wait <= 0 {
					b.cut = true
					b.cancel() // its run returns at once with the cancellation
					if st, ok := lat.(stragglers); ok {
						st.Cut(hosts[i])
					}
					continue
				}
				if next < 0 || wait < next {
					next = wait
				}
			}
			if next >= 0 {
				timer.Reset(next)
			}
		}
		select {
		case r := <-results:
			pending--
			b := branches[r.i]
			b.done = true
			out[r.i].End, out[r.i].Cut = r.end, b.cut
			if r.err == nil && !b.cut {
				answered++
			}
			if r.end.After(othersEnd) {
				othersEnd, othersTook = r.end, r.end.Sub(out[r.i].Start)
			}
		case <-timer.C:
			// Evaluated again at the top: cut when its time has come, or
			// waited for longer if it showed life meanwhile.
		case <-ctx.Done():
			for _, b := range branches {
				b.cancel()
			}
			for ; pending > 0; pending-- {
				r := <-results
				out[r.i].End, out[r.i].Cut = r.end, branches[r.i].cut
			}
		}
	}
	return out
}
