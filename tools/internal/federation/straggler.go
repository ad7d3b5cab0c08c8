package federation

import (
	"context"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
)

// How long a member that has not answered is waited for once every other
// member of its round has (adr/0035). The call's deadline bounds it all;
// within it a member is waited for while its own learned latency says an
// answer is still likely:
//   - from its last sign of life (an attempt answered, even with an error,
//     or the end of the backoff before a retry), StragglerP95Factor × the
//     p95 of its catalog's recent search answers, once the layer has at
//     least MinLatencySamples of them: a member retrying after faults keeps
//     being waited for, one whose attempt has been out for longer than its
//     catalog ever takes to answer is not;
//   - a member whose catalog answered something (its landing page in this
//     call) but no search yet: ColdWait from that sign, the time the layer
//     itself gives a cold search before sending a copy beside it;
//   - a member that never answered anything: nothing of its own, so only
//     the others' time justifies a wait.
//
// Whatever its own latency says, a straggler is waited for at least
// StragglerOthersFactor × the others' time after they are done (never less
// than MinStragglerWait): a member a little slower than the rest is not
// dropped for it.
const (
	StragglerP95Factor    = 2.0
	StragglerOthersFactor = 0.5
	MinStragglerWait      = 50 * time.Millisecond
	MinLatencySamples     = 5
)

// Latency is where a member's learned latency comes from: the reliability
// layer's per-host answer times (reliability.Layer).
type Latency interface {
	SearchAnswerTime(host string, q float64) (time.Duration, int)
}

// cutAt is when a straggler is given up on: start is when its fetch
// began, progress what its requests showed since, othersEnd when the
// last of the others ended and others how long they took.
func cutAt(lat Latency, host string, start time.Time, progress *reliability.Progress, othersEnd time.Time, others time.Duration, coldWait time.Duration) time.Time {
	cut := othersEnd.Add(max(time.Duration(StragglerOthersFactor*float64(others)), MinStragglerWait))
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
		if own := since.Add(time.Duration(StragglerP95Factor * float64(p95))); own.After(cut) {
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
		cancel   context.CancelFunc
		progress *reliability.Progress
		done     bool
		cut      bool
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
				wait := time.Until(cutAt(lat, hosts[i], out[i].Start, b.progress, othersEnd, othersTook, coldWait))
				if wait <= 0 {
					b.cut = true
					b.cancel() // its run returns at once with the cancellation
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
