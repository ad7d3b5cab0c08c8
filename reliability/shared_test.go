package reliability

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// hungStore is a SharedStore that never answers: every operation waits
// for its context to end. It records how long each operation was given.
type hungStore struct {
	mu     sync.Mutex
	calls  []string
	bounds []time.Duration // deadline - time of the call; 0: no deadline
}

func (s *hungStore) wait(ctx context.Context, op string) error {
	bound := time.Duration(0)
	if d, ok := ctx.Deadline(); ok {
		bound = time.Until(d)
	}
	s.mu.Lock()
	s.calls = append(s.calls, op)
	s.bounds = append(s.bounds, bound)
	s.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (s *hungStore) seen() ([]string, []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...), append([]time.Duration(nil), s.bounds...)
}

func (s *hungStore) Ping(ctx context.Context) error { return s.wait(ctx, "ping") }
func (s *hungStore) CacheRead(ctx context.Context, _, _ string) (string, []byte, error) {
	return "", nil, s.wait(ctx, "cache_read")
}
func (s *hungStore) CacheWrite(ctx context.Context, _, _, _ string, _ []byte, _ time.Duration, _ int64) (bool, error) {
	return false, s.wait(ctx, "cache_write")
}
func (s *hungStore) Invalidate(ctx context.Context, _ []string, _ bool) error {
	return s.wait(ctx, "invalidate")
}
func (s *hungStore) Lead(ctx context.Context, _, _ string, _ time.Duration) (bool, error) {
	return false, s.wait(ctx, "lead")
}
func (s *hungStore) Unlead(ctx context.Context, _, _ string) error { return s.wait(ctx, "unlead") }
func (s *hungStore) BudgetTake(ctx context.Context, _ string, _, _ int) (bool, int, error) {
	return false, 0, s.wait(ctx, "budget")
}
func (s *hungStore) BudgetRefund(ctx context.Context, _ string, _, _ int) (int, error) {
	return 0, s.wait(ctx, "budget")
}
func (s *hungStore) BreakerAllow(ctx context.Context, _ string, _ time.Time, _ BreakerRules) (bool, bool, BreakerView, error) {
	return false, false, BreakerView{}, s.wait(ctx, "breaker")
}
func (s *hungStore) BreakerRecord(ctx context.Context, _ string, _ BreakerOutcome, _ time.Time, _ time.Duration, _ BreakerRules) (BreakerView, error) {
	return BreakerView{}, s.wait(ctx, "breaker")
}
func (s *hungStore) Peek(ctx context.Context, _ []string, _ int) ([]BreakerView, []int, error) {
	return nil, nil, s.wait(ctx, "peek")
}

// A shared store that hangs costs a read one bounded operation (its
// context ends after sharedOpTimeout), and nothing more until the rest
// period is over on the layer's clock; then one probe, and a rest twice
// as long while the store still hangs. The read itself is answered from
// the catalog every time.
func TestHungSharedStoreCostsOneBoundedOperationPerRest(t *testing.T) {
	// In a synctest bubble: each hung store operation lasts its
	// sharedOpTimeout in virtual time, not on the machine's clock.
	synctest.Test(t, func(t *testing.T) {
		clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		var clockMu sync.Mutex
		now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
		advance := func(d time.Duration) { clockMu.Lock(); clock = clock.Add(d); clockMu.Unlock() }

		store := &hungStore{}
		logs := &syncBuffer{}
		logger := zerolog.New(logs)
		up := &fakeUpstream{respond: always(200, `{}`)}
		l := New(DefaultPolicy(), Options{Transport: up, Logger: &logger, Shared: store, Now: now, Rand: rand.New(rand.NewPCG(1, 2)), Advice: testAdvice})
		tl := &testLayer{Layer: l, logs: logs, up: up}

		read := func(path string) {
			t.Helper()
			if _, status, err := tl.get("t", path); err != nil || status != http.StatusOK {
				t.Fatalf("read %s with the store hung: %d %v", path, status, err)
			}
		}
		read("/a")
		calls, bounds := store.seen()
		if len(calls) != 1 || calls[0] != "cache_read" {
			t.Fatalf("store operations for the first read: %v, want [cache_read] (then local state)", calls)
		}
		if bounds[0] <= 0 || bounds[0] > sharedOpTimeout {
			t.Errorf("the store operation was given %v, want a deadline within %v", bounds[0], sharedOpTimeout)
		}
		errorsTotal := func() float64 {
			return testutil.ToFloat64(l.metrics.sharedErrors.WithLabelValues("cache_read")) +
				testutil.ToFloat64(l.metrics.sharedErrors.WithLabelValues("ping"))
		}
		if errorsTotal() != 1 || testutil.ToFloat64(l.metrics.sharedUp) != 0 || len(logs.named(t, "shared_state_unavailable")) != 1 {
			t.Errorf("after the first failure: %v errors, shared_state_up %v, %d warnings; want 1, 0, 1",
				errorsTotal(), testutil.ToFloat64(l.metrics.sharedUp), len(logs.named(t, "shared_state_unavailable")))
		}

		for i := range 10 {
			read("/b" + itoa(i))
		}
		if calls, _ := store.seen(); len(calls) != 1 {
			t.Errorf("10 reads within the rest period called the store %d more times, want 0", len(calls)-1)
		}

		advance(sharedRestFirst)
		read("/c")
		calls, bounds = store.seen()
		if len(calls) != 2 || calls[1] != "ping" || bounds[1] > sharedOpTimeout {
			t.Errorf("after the first rest: store calls %v (bounds %v), want one ping within %v", calls, bounds, sharedOpTimeout)
		}
		advance(sharedRestFirst) // half of the doubled rest
		read("/d")
		if calls, _ := store.seen(); len(calls) != 2 {
			t.Errorf("within the doubled rest: %d store calls, want still 2", len(calls))
		}
		advance(sharedRestFirst)
		read("/e")
		if calls, _ := store.seen(); len(calls) != 3 {
			t.Errorf("after the doubled rest: %d store calls, want 3 (a second probe)", len(calls))
		}
		if up.hitCount() != 14 {
			t.Errorf("the catalog answered %d reads, want all 14", up.hitCount())
		}
	})
}

// Without a shared store nothing of it exists: the hosts keep their own
// budget and breaker, and /metrics has no shared_state_up.
func TestNoSharedStoreKeepsEverythingInProcess(t *testing.T) {
	tl := newTestLayer(t, DefaultPolicy(), always(200, `{}`))
	if _, _, err := tl.get("t", "/x"); err != nil {
		t.Fatal(err)
	}
	h := tl.host(testHost)
	if _, ok := h.budget.(*retryBudget); !ok {
		t.Errorf("budget is %T, want the in-process *retryBudget", h.budget)
	}
	if _, ok := h.breaker.(*breaker); !ok {
		t.Errorf("breaker is %T, want the in-process *breaker", h.breaker)
	}
	families, err := tl.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "shared_state_up" || f.GetName() == "shared_state_errors_total" {
			t.Errorf("%s is exported without a shared store", f.GetName())
		}
	}
}
