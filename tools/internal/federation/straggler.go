package federation

import (
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
