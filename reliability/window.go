package reliability

import (
	"sync"
	"time"
)

// Health counts events over the last five minutes in 10-second buckets.
const (
	healthWindow  = 5 * time.Minute
	healthBuckets = 30
)

// Event kinds counted in a slidingCounts: per host for Health, and the
// breaker's attempt outcomes.
const (
	evRetry = iota
	evGiveUp
	evTimeout
	evCacheHit
	evCacheMiss
	evAttempt       // breaker: an attempt outcome that counts
	evAttemptFailed // breaker: of those, a retryable failure
	evKinds
)

type windowBucket struct {
	start  time.Time
	counts [evKinds]int
}

// slidingCounts counts events by kind over the last span, in fixed-width
// buckets that are reused as time moves on.
type slidingCounts struct {
	mu      sync.Mutex
	span    time.Duration
	buckets []windowBucket
}

func newSlidingCounts(span time.Duration, buckets int) *slidingCounts {
	return &slidingCounts{span: span, buckets: make([]windowBucket, buckets)}
}

func (w *slidingCounts) add(now time.Time, kind int) {
	width := w.span / time.Duration(len(w.buckets))
	slot := now.Truncate(width)
	w.mu.Lock()
	defer w.mu.Unlock()
	b := &w.buckets[(slot.UnixNano()/int64(width))%int64(len(w.buckets))]
	if !b.start.Equal(slot) {
		*b = windowBucket{start: slot}
	}
	b.counts[kind]++
}

func (w *slidingCounts) sums(now time.Time) [evKinds]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [evKinds]int
	for _, b := range w.buckets {
		if !b.start.IsZero() && now.Sub(b.start) < w.span {
			for k, n := range b.counts {
				out[k] += n
			}
		}
	}
	return out
}

// reset forgets every event.
func (w *slidingCounts) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.buckets)
}
