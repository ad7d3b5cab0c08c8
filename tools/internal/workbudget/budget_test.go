package workbudget

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestAcquireRefusesMoreThanTheWholeBudgetAtOnce(t *testing.T) {
	b := NewPixels(32_000_000, "STAC_MCP_DECODE_BUDGET_PIXELS", time.Second)
	_, err := b.Acquire(context.Background(), 40_000_000)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Cost != 40_000_000 || tl.Size != 32_000_000 {
		t.Fatalf("err = %v, want a TooLargeError", err)
	}
	for _, want := range []string{"40 Mpx", "32 Mpx", "STAC_MCP_DECODE_BUDGET_PIXELS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
	if b.InUse() != 0 {
		t.Errorf("in use after a refusal: %d", b.InUse())
	}
}

// A step that does not fit waits in line and runs when the cost is given
// back; the wait is bounded by MaxWait, then refused with a BusyError
// that says to retry.
func TestAcquireQueuesThenRefusesWhenTheBudgetStaysSpent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewPixels(20, "SETTING", 5*time.Second)
		releaseA, err := b.Acquire(t.Context(), 16)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			release, err := b.Acquire(t.Context(), 16)
			if err == nil {
				release()
			}
			got <- err
		}()
		synctest.Wait() // the second decode is queued, not running
		select {
		case err := <-got:
			t.Fatalf("the second acquire did not wait: %v", err)
		default:
		}
		releaseA()
		if err := <-got; err != nil {
			t.Fatalf("queued acquire after release: %v", err)
		}

		// Now hold the budget past MaxWait.
		releaseA, _ = b.Acquire(t.Context(), 16)
		defer releaseA()
		start := time.Now()
		_, err = b.Acquire(t.Context(), 16)
		var busy *BusyError
		if !errors.As(err, &busy) {
			t.Fatalf("err = %v, want a BusyError", err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("waited %v (bubble time), want MaxWait 5s", waited)
		}
		if !strings.Contains(err.Error(), "busy decoding other images") || !strings.Contains(err.Error(), "retry") {
			t.Errorf("message %q does not say the server is busy and to retry", err)
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			t.Errorf("the budget's own wait limit is not the call's context ending: %v", err)
		}
		if b.InUse() != 16 {
			t.Errorf("in use = %d, want 16", b.InUse())
		}
	})
}

// The call's context ending (its deadline, a cancellation) ends the wait:
// the refusal wraps the context's error.
func TestAcquireStopsWaitingWhenTheCallEnds(t *testing.T) {
	b := NewSlots(1, 0)
	release, err := b.Acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.Acquire(ctx, 1)
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a BusyError wrapping context.Canceled", err)
	}
}

// However many steps ask at once, no more than the slots run together.
func TestSlotsBoundConcurrentSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewSlots(2, 0)
		var running, peak, done atomic.Int64
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				release, err := b.Acquire(t.Context(), 1)
				if err != nil {
					t.Error(err)
					return
				}
				defer release()
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-gate
				running.Add(-1)
				done.Add(1)
			})
		}
		synctest.Wait()
		if r := running.Load(); r != 2 {
			t.Errorf("%d steps running while 8 asked, want 2", r)
		}
		close(gate)
		wg.Wait()
		if peak.Load() != 2 || done.Load() != 8 {
			t.Errorf("peak %d, done %d: want 2 and 8", peak.Load(), done.Load())
		}
	})
}

func TestReleaseTwiceGivesBackOnce(t *testing.T) {
	b := NewSlots(1, 0)
	release, _ := b.Acquire(context.Background(), 1)
	release()
	release()
	if b.InUse() != 0 {
		t.Fatalf("in use = %d", b.InUse())
	}
	r1, err := b.Acquire(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r1()
	if b.sem.TryAcquire(1) {
		t.Fatal("a second release gave back a slot it did not hold")
	}
}

func TestNilBudgetBoundsNothing(t *testing.T) {
	var b *Budget
	release, err := b.Acquire(context.Background(), 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	release()
}

func TestMegapixels(t *testing.T) {
	for px, want := range map[int64]string{16_000_000: "16 Mpx", 262_144: "0.26 Mpx", 1_500_000: "1.5 Mpx", 32_000_000: "32 Mpx"} {
		if got := Megapixels(px); got != want {
			t.Errorf("Megapixels(%d) = %q, want %q", px, got, want)
		}
	}
}

// A step's parts are charged together and given back one by one: what a
// step gives back early is free for others while it keeps the rest.
func TestAcquirePartsGivesBackEachPart(t *testing.T) {
	b := NewPixels(100, "SETTING", 0)
	rel, err := b.AcquireParts(context.Background(), 30, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.InUse() != 80 {
		t.Fatalf("in use %d, want 80", b.InUse())
	}
	rel[1]()
	rel[1]() // a second call gives nothing back again
	if b.InUse() != 30 {
		t.Fatalf("in use %d after the scratch part, want 30", b.InUse())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var busy *BusyError
	if _, err := b.AcquireParts(ctx, 71); !errors.As(err, &busy) {
		t.Fatalf("71 more in a budget of 100 with 30 kept: err = %v, want a BusyError", err)
	}
	rel[0]()
	rel[2]()
	if b.InUse() != 0 {
		t.Fatalf("in use %d after every part, want 0", b.InUse())
	}
	var tl *TooLargeError
	if _, err := b.AcquireParts(context.Background(), 60, 50); !errors.As(err, &tl) {
		t.Fatalf("parts over the whole budget: err = %v, want a TooLargeError", err)
	}
}
