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

// Event kinds counted per host for Health.
const (
	evRetry = iota
	evGiveUp
	evTimeout
	evCacheHit
	evCacheMiss
	evKinds
)

type windowBucket struct {
	start  time.Time
	counts [evKinds]int
}

// rollingCounts is a sliding five-minute event counter.
type rollingCounts struct {
	mu      sync.Mutex
	buckets [healthBuckets]windowBucket
}

func (w *rollingCounts) add(now time.Time, kind int) {
	width := healthWindow / healthBuckets
	slot := now.Truncate(width)
	w.mu.Lock()
	defer w.mu.Unlock()
	b := &w.buckets[(slot.UnixNano()/int64(width))%healthBuckets]
	if !b.start.Equal(slot) {
		*b = windowBucket{start: slot}
	}
	b.counts[kind]++
}

func (w *rollingCounts) sums(now time.Time) [evKinds]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [evKinds]int
	for _, b := range w.buckets {
		if !b.start.IsZero() && now.Sub(b.start) < healthWindow {
			for k, n := range b.counts {
				out[k] += n
			}
		}
	}
	return out
}
