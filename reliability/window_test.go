package reliability

import (
	"testing"
	"time"
)

// The breaker's 30 s window and Health's five minutes share slidingCounts:
// an event counts until span has passed since its bucket began, then not.
func TestSlidingCountsForgetEventsOlderThanTheSpan(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // on a bucket boundary
	w := newSlidingCounts(30*time.Second, 10)
	w.add(start, evAttempt)
	w.add(start.Add(time.Second), evAttemptFailed)
	w.add(start.Add(15*time.Second), evAttempt)

	if got := w.sums(start.Add(29 * time.Second)); got[evAttempt] != 2 || got[evAttemptFailed] != 1 {
		t.Errorf("at 29 s: %d attempts, %d failed; want 2 and 1", got[evAttempt], got[evAttemptFailed])
	}
	if got := w.sums(start.Add(30 * time.Second)); got[evAttempt] != 1 || got[evAttemptFailed] != 0 {
		t.Errorf("at 30 s: %d attempts, %d failed; want only the one at 15 s", got[evAttempt], got[evAttemptFailed])
	}
	// A bucket reused a lap later starts from zero instead of adding to the old counts.
	w.add(start.Add(30*time.Second), evAttempt)
	if got := w.sums(start.Add(30 * time.Second)); got[evAttempt] != 2 {
		t.Errorf("after a lap: %d attempts, want 2", got[evAttempt])
	}
	w.reset()
	if got := w.sums(start.Add(30 * time.Second)); got != [evKinds]int{} {
		t.Errorf("after reset: %v, want all zero", got)
	}
}
