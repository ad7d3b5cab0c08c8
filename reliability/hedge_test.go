package reliability

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// hedgePolicy hedges after a fixed 30 ms. The hedge tests run in
// testing/synctest bubbles, so every duration below is virtual time: the
// tests assert exact instants, and a loaded machine cannot shift them.
func hedgePolicy() Policy {
	p := noCache()
	p.Hedge = true
	p.HedgeDelay = 30 * time.Millisecond
	p.AttemptTimeout = 400 * time.Millisecond
	p.ToolTimeout = 2 * time.Second
	p.MinUsefulAttempt = 50 * time.Millisecond
	p.BackoffBase = 0
	return p
}

// hangFirst hangs the first hit until it is cancelled, and answers 200
// {"n": hit} to every later one. cancelled receives the first hit's end.
func hangFirst(cancelled chan<- error) func(int, *http.Request) (*http.Response, error) {
	return func(n int, req *http.Request) (*http.Response, error) {
		if n == 1 {
			<-req.Context().Done()
			cancelled <- req.Context().Err()
			return nil, req.Context().Err()
		}
		return answer(http.StatusOK, `{"n":`+itoa(n)+`}`), nil
	}
}

func TestHedgeWinsOverAHungAttemptAndCancelsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cancelled := make(chan error, 1)
		tl := newTestLayer(t, hedgePolicy(), hangFirst(cancelled))
		start := time.Now()
		rc, status, err := tl.get("get_root", "/")
		elapsed := time.Since(start)
		if err != nil || status != http.StatusOK {
			t.Fatalf("hedged call: status %d, %v; want 200 from the hedge", status, err)
		}
		if rc.Attempts != 2 || rc.Retries != 1 || rc.Hedges != 1 {
			t.Errorf("receipt %+v; want attempts 2, retries 1, hedges 1", rc)
		}
		if want := hedgePolicy().HedgeDelay; elapsed != want {
			t.Errorf("hedged call answered after %v (virtual time), want %v: one hedge delay, long before the %v attempt timeout",
				elapsed, want, hedgePolicy().AttemptTimeout)
		}
		select {
		case err := <-cancelled:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("losing attempt ended with %v; want context.Canceled (cancelled by the winner)", err)
			}
		default:
			t.Error("the losing attempt was still running when the round trip returned")
		}
		if got := testutilCounter(tl.metrics.hedges.WithLabelValues("get_root")); got != 1 {
			t.Errorf("hedged_attempts_total = %v, want 1", got)
		}
		if n := len(tl.logs.named(t, eventHedgeAttempt)); n != 1 {
			t.Errorf("%d %s events, want 1", n, eventHedgeAttempt)
		}
	})
}

func TestNoHedgeWhenTheFirstAttemptAnswersInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, hedgePolicy(), always(http.StatusOK, `{}`))
		rc, status, err := tl.get("get_root", "/")
		if err != nil || status != http.StatusOK {
			t.Fatalf("status %d, %v", status, err)
		}
		if rc.Attempts != 1 || rc.Hedges != 0 || tl.up.hitCount() != 1 {
			t.Errorf("receipt %+v, upstream hits %d; want one attempt and no hedge", rc, tl.up.hitCount())
		}
	})
}

func TestHedgeOffSendsOneAttemptUntilTheAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.Hedge, p.HedgeDelay = false, 0
		cancelled := make(chan error, 1)
		tl := newTestLayer(t, p, hangFirst(cancelled))
		start := time.Now()
		rc, status, err := tl.get("get_root", "/")
		if err != nil || status != http.StatusOK {
			t.Fatalf("status %d, %v", status, err)
		}
		// BackoffBase is 0: the retry follows the attempt timeout at once.
		if elapsed := time.Since(start); elapsed != p.AttemptTimeout {
			t.Errorf("without hedging the call answered after %v (virtual time); want the %v attempt timeout, then the retry", elapsed, p.AttemptTimeout)
		}
		if rc.Hedges != 0 || rc.Attempts != 2 {
			t.Errorf("receipt %+v; want 2 attempts (timeout, retry) and no hedge", rc)
		}
	})
}

// A copy takes one of MaxAttempts: with 2, a hung primary and a failed
// copy leave no third attempt, and since the primary is never cut by a
// timer, the call waits for it until the tool deadline (where it could
// still have answered) and ends in a timeout, with the catalog having seen
// exactly two requests.
func TestHedgeCountsAgainstTheAttemptCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.MaxAttempts = 2
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			if n == 1 {
				return hang(n, req)
			}
			return answer(http.StatusServiceUnavailable, `{"code":"unavailable"}`), nil
		})
		rc, _, err := tl.get("get_root", "/")
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeTimeout {
			t.Fatalf("err = %v; want a %s denial: the hung primary keeps the call until its deadline, no third attempt", err, CodeTimeout)
		}
		if hits := tl.up.hitCount(); hits != 2 || rc.Attempts != 2 || d.Attempts != 2 {
			t.Errorf("upstream hits %d, receipt attempts %d, denial attempts %d; want 2 each (primary + hedge, no third)", hits, rc.Attempts, d.Attempts)
		}
	})
}

func TestHedgeSpendsARetryBudgetToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cancelled := make(chan error, 2)
		tl := newTestLayer(t, hedgePolicy(), func(n int, req *http.Request) (*http.Response, error) {
			if n == 1 {
				time.Sleep(80 * time.Millisecond) // slow but answers: the primary wins after both hedges started (30, 60 ms)
				return answer(http.StatusOK, `{}`), nil
			}
			return hangFirst(cancelled)(1, req)
		})
		rc, _, err := tl.get("get_root", "/")
		if err != nil {
			t.Fatal(err)
		}
		if rc.Hedges != 2 {
			t.Fatalf("receipt %+v, want 2 hedges (after 30 and 60 ms)", rc)
		}
		h := tl.host(testHost)
		// Each losing hedge cost budgetHedgeCost; the answered call earned the bonus.
		if got, want := h.budget.available(), budgetCapacity-2*budgetHedgeCost+budgetSuccessBonus; got != want {
			t.Errorf("budget after two losing hedges = %d, want %d", got, want)
		}
		for range 2 {
			if err := <-cancelled; !errors.Is(err, context.Canceled) {
				t.Errorf("losing hedge ended with %v, want context.Canceled", err)
			}
		}
	})
}

func TestHedgedSearchSendsTheSameBodyTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cancelled := make(chan error, 1)
		tl := newTestLayer(t, hedgePolicy(), hangFirst(cancelled))
		body := `{"collections":["sentinel-2-l2a"],"limit":5}`
		_, err := tl.Run(context.Background(), "search_items", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+testHost+"/search", strings.NewReader(body))
			_, _, err := tl.readThrough(req)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tl.up.mu.Lock()
		defer tl.up.mu.Unlock()
		if len(tl.up.bodies) != 2 || !bytes.Equal(tl.up.bodies[0], []byte(body)) || !bytes.Equal(tl.up.bodies[1], []byte(body)) {
			t.Errorf("upstream bodies %q; want the search body on both the primary and the hedge", tl.up.bodies)
		}
	})
}

func TestNoHedgeForWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, hedgePolicy(), hang)
		_, err := tl.Run(context.Background(), "create_item", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+testHost+"/collections/c/items", strings.NewReader(`{}`))
			resp, err := tl.HTTPClient().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
		if err == nil {
			t.Fatal("a hung write succeeded")
		}
		if hits := tl.up.hitCount(); hits != 1 {
			t.Errorf("a write was sent %d times; want 1 (writes are never hedged or retried)", hits)
		}
	})
}

func TestLatencyWindowDelay(t *testing.T) {
	var w latencyWindow
	ms := func(i int) time.Duration { return time.Duration(10+i) * time.Millisecond } // 11, 12, … ms
	for i := 1; i < hedgeEarlySamples; i++ {
		w.add(ms(i))
	}
	if d, _, ok := w.delay(); ok {
		t.Fatalf("hedge basis %v after %d samples; want none before %d", d, hedgeEarlySamples-1, hedgeEarlySamples)
	}
	for i := hedgeEarlySamples; i < hedgeMinSamples; i++ {
		w.add(ms(i))
		// A cold host is hedged early, conservatively: 2.5 × its slowest
		// answer (below 4 × the median for these answers).
		if got, _, ok := w.delay(); !ok || got != ms(i)*5/2 {
			t.Fatalf("hedge basis after %d samples (11..%v) = %v, %v; want 2.5 × the slowest", i, ms(i), got, ok)
		}
	}
	for i := hedgeMinSamples; i <= 300; i++ { // wraps: only the last 128 (173..300 ms) count
		w.add(time.Duration(i) * time.Millisecond)
	}
	got, _, ok := w.delay()
	// 98.5th percentile of 173..300 by nearest rank: rank ceil(0.985*128) = 127, i.e. 173+126.
	if want := 299 * time.Millisecond; !ok || got != want {
		t.Errorf("delay = %v, %v; want %v (the p98.5) over the last %d samples", got, ok, want, latencySamples)
	}
}

// A read whose copy answers while it is still out is stuck; once a share h
// of the recent rounds are, the delay falls to the quantile past which a
// waiting read is at least twice as likely stuck as slow: 1 - h/(2(1-h)),
// the p87.5 at 20 %, never below the median. One stuck round among the
// first is not a stuck catalog (divided by at least stuckMinRounds), and
// stuck rounds age out of the last stuckRounds. The fault-free delay (the
// second copy's gap is half of it) does not move.
func TestStuckRoundsLowerTheDelay(t *testing.T) {
	var w latencyWindow
	for i := 1; i <= 100; i++ {
		w.add(time.Duration(i) * time.Millisecond)
	}
	check := func(when string, want time.Duration) {
		t.Helper()
		if got, base, _ := w.delay(); got != want || base != 99*time.Millisecond {
			t.Errorf("delay %s = %v (fault-free %v); want %v (fault-free 99ms, the p98.5)", when, got, base, want)
		}
	}
	check("with no stuck rounds", 99*time.Millisecond)
	w.noteRound(true)
	// 1 of at least 32: quantile 1 - (1/32)/(2·31/32) = 0.984, rank 99.
	check("after one stuck round", 99*time.Millisecond)
	for i := range 63 {
		w.noteRound(i%4 == 3) // 15 more: 16 of 64
	}
	// h = 1/4: quantile 1 - 0.25/1.5 = 0.833, rank 84.
	check("with 16 of 64 rounds stuck", 84*time.Millisecond)
	for range stuckRounds {
		w.noteRound(false)
	}
	check("once the stuck rounds aged out", 99*time.Millisecond)
	for range stuckRounds {
		w.noteRound(true)
	}
	check("with every round stuck (never below the median)", 50*time.Millisecond)
}

func TestPolicyFromEnvHedge(t *testing.T) {
	for raw, want := range map[string]struct {
		hedge bool
		delay time.Duration
	}{"off": {false, 0}, "on": {true, 0}, " ON ": {true, 0}, "0.3": {true, 300 * time.Millisecond}} {
		p, err := PolicyFromEnv(lookupFrom(map[string]string{envHedge: raw}))
		if err != nil || p.Hedge != want.hedge || p.HedgeDelay != want.delay {
			t.Errorf("%s=%q: hedge %v delay %v err %v; want %v %v", envHedge, raw, p.Hedge, p.HedgeDelay, err, want.hedge, want.delay)
		}
	}
	for _, raw := range []string{"sometimes", "0", "-1", "61", "5"} { // 5 s: not below the 4 s attempt timeout
		_, err := PolicyFromEnv(lookupFrom(map[string]string{envHedge: raw}))
		if err == nil || !strings.Contains(err.Error(), envHedge) || !strings.Contains(err.Error(), "accepted") {
			t.Errorf("%s=%q: err %v; want an error naming the variable and what is accepted", envHedge, raw, err)
		}
	}
}

func TestWithCorrelationID(t *testing.T) {
	tl := newTestLayer(t, noCache(), always(http.StatusOK, `{}`))
	call := func(id string) (Receipt, string) {
		var sent string
		rc, err := tl.Run(WithCorrelationID(context.Background(), id), "get_root", testHost, func(ctx context.Context) error {
			_, _, err := tl.getIn(ctx, "/")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tl.up.mu.Lock()
		sent = tl.up.headers[len(tl.up.headers)-1].Get(correlationHeader)
		tl.up.mu.Unlock()
		return rc, sent
	}
	if rc, sent := call("search_items/17"); rc.CorrelationID != "search_items/17" || sent != "search_items/17" {
		t.Errorf("valid id: receipt %q, header %q; want both search_items/17", rc.CorrelationID, sent)
	}
	rc, sent := call("bad id\r\nX-Injected: 1")
	if rc.CorrelationID == "" || strings.ContainsAny(rc.CorrelationID, " \r\n") || sent != rc.CorrelationID {
		t.Errorf("invalid id: receipt %q, header %q; want a random id in both", rc.CorrelationID, sent)
	}
	if n := len(tl.logs.named(t, "correlation_id_rejected")); n != 1 {
		t.Errorf("%d correlation_id_rejected events, want 1", n)
	}
}

// With both the primary and the first hedge hung, a second hedge answers
// after two hedge delays; with one hedge only, the call would wait for the
// attempt timeout and a retry.
func TestSecondHedgeAnswersWhenTheFirstTwoAttemptsHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, hedgePolicy(), func(n int, req *http.Request) (*http.Response, error) {
			if n <= 2 {
				return hang(n, req)
			}
			return answer(http.StatusOK, `{}`), nil
		})
		start := time.Now()
		rc, status, err := tl.get("get_root", "/")
		elapsed := time.Since(start)
		if err != nil || status != http.StatusOK {
			t.Fatalf("status %d, %v; want 200 from the second hedge", status, err)
		}
		if rc.Attempts != 3 || rc.Hedges != 2 {
			t.Errorf("receipt %+v; want 3 attempts, 2 of them hedges", rc)
		}
		if want := 2 * hedgePolicy().HedgeDelay; elapsed != want {
			t.Errorf("answered after %v (virtual time), want %v: two hedge delays, no attempt timeout", elapsed, want)
		}
	})
}

// queuedBehindAHeldSlot runs, inside a synctest bubble, a call to /hold
// that takes a bulkhead of one slot for a second, and beside it a call to
// path that must queue for that slot and is answered at once when it gets
// it; it returns the second call's receipt. hedgeDelay 0 is adaptive.
func queuedBehindAHeldSlot(t *testing.T, hedgeDelay time.Duration, path string) (*testLayer, Receipt) {
	p := hedgePolicy()
	p.HedgeDelay = hedgeDelay
	p.BulkheadMax = 1
	p.AttemptTimeout = 2 * time.Second
	p.ToolTimeout = 10 * time.Second
	release := make(chan struct{})
	tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
		if req.URL.Path == "/hold" {
			<-release
		}
		return answer(http.StatusOK, `{}`), nil
	})
	var g sync.WaitGroup
	g.Go(func() { _, _, _ = tl.get("get_root", "/hold") })
	synctest.Wait() // /hold has the only slot (its own hedges queue)
	var rc Receipt
	g.Go(func() { rc, _, _ = tl.get("get_item", path) })
	time.Sleep(time.Second)
	close(release)
	g.Wait()
	return tl, rc
}

// An attempt that waited for a bulkhead slot behind a hung request is not
// a slow answer: the hedge delay is the catalog's answer time, not our queue.
func TestHedgeLatencyExcludesTheBulkheadQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, _ := queuedBehindAHeldSlot(t, 0, "/fast") // adaptive delay: no hedge before 20 samples
		w := &tl.host(testHost).latency[opLanding]    // /hold and /fast read like landing pages
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.filled != 2 {
			t.Fatalf("%d samples, want 2", w.filled)
		}
		for _, d := range w.samples[:w.filled] {
			if d != 0 && d != time.Second {
				t.Errorf("sample %v; want 1s for /hold and 0 for /fast, which only queued", d)
			}
		}
		if w.samples[0]+w.samples[1] != time.Second {
			t.Errorf("samples %v; the queued request counted its wait for the slot", w.samples[:2])
		}
	})
}

// A request queued for a bulkhead slot is not slow, it has not been sent:
// the hedge delay starts when it goes out, so no hedge joins the queue
// behind it (and spends a budget token to lose).
func TestNoHedgeWhileThePrimaryWaitsForABulkheadSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rc := queuedBehindAHeldSlot(t, hedgePolicy().HedgeDelay, "/queued")
		if rc.Hedges != 0 || rc.Attempts != 1 {
			t.Errorf("queued request's receipt %+v; want one attempt and no hedge (it answered as soon as it was sent)", rc)
		}
	})
}

// The adaptive delay hedges a hung read once the host has answered
// enough: from its fifth answer on (2.5 × the slowest so far, so that the
// first calls to a new catalog are not the ones left waiting for the
// attempt timeout), and from its twentieth on at the rolling p95, floored.
func TestAdaptiveHedgeAfterEnoughAnswers(t *testing.T) {
	for _, answers := range []int{hedgeEarlySamples, hedgeMinSamples} {
		t.Run(itoa(answers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := hedgePolicy()
				p.HedgeDelay = 0 // the host's rolling p95, floored
				cancelled := make(chan error, 1)
				hangAt := answers + 1
				tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
					if n == hangAt {
						return hangFirst(cancelled)(1, req)
					}
					return answer(http.StatusOK, `{}`), nil
				})
				for i := 1; i < hangAt; i++ {
					if rc, _, err := tl.get("get_root", "/"); err != nil || rc.Hedges != 0 {
						t.Fatalf("warm-up call %d: receipt %+v, %v; want no hedge and success", i, rc, err)
					}
				}
				if delay, cold := tl.hedgeDelay(tl.host(testHost), opLanding); delay != hedgeFloor || cold {
					t.Fatalf("hedge delay after %d instant answers = %v; want the %v floor", answers, delay, hedgeFloor)
				}
				start := time.Now()
				rc, _, err := tl.get("get_root", "/")
				if err != nil || rc.Hedges != 1 {
					t.Errorf("call %d with a hung first attempt: receipt %+v, %v; want one winning hedge", hangAt, rc, err)
				}
				if elapsed := time.Since(start); elapsed != hedgeFloor {
					t.Errorf("call %d answered after %v (virtual time), want the %v hedge floor", hangAt, elapsed, hedgeFloor)
				}
				<-cancelled //nolint:errcheck // waits for the hung attempt to end; how it ended is TestHedgeWinsOverAHungAttemptAndCancelsIt's concern
			})
		})
	}
}

// sleepThenAnswer answers 200 after d (virtual time inside a bubble), or
// ends with the request when it is cancelled first.
func sleepThenAnswer(req *http.Request, d time.Duration) (*http.Response, error) {
	select {
	case <-time.After(d):
		return answer(http.StatusOK, `{}`), nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// With a learned delay D the second copy follows at 1.5 D, not 2 D: a read
// whose first copy has not answered half a delay after it went out is most
// likely stuck twice over, and at 20 % hung attempts those double hangs
// (4 % of reads) set the call's p95 (adr/0026).
func TestLearnedDelaySendsTheSecondCopyAtOneAndAHalfDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.HedgeDelay = 0 // learned
		const took = 100 * time.Millisecond
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			if n > hedgeMinSamples && n <= hedgeMinSamples+2 {
				return hang(n, req) // the read after the warm-up and its first copy
			}
			return sleepThenAnswer(req, took)
		})
		for i := range hedgeMinSamples {
			if rc, _, err := tl.get("get_root", "/"); err != nil || rc.Hedges != 0 {
				t.Fatalf("warm-up call %d: receipt %+v, %v; want no hedge and success", i+1, rc, err)
			}
		}
		if delay, cold := tl.hedgeDelay(tl.host(testHost), opLanding); delay != took || cold {
			t.Fatalf("learned delay %v (cold %v); want %v", delay, cold, took)
		}
		start := time.Now()
		rc, _, err := tl.get("get_root", "/")
		if err != nil || rc.Hedges != 2 {
			t.Fatalf("receipt %+v, %v; want success from the second copy", rc, err)
		}
		// Copies at D and 1.5 D; the second answers after its own 100 ms.
		if elapsed, want := time.Since(start), took+took/2+took; elapsed != want {
			t.Errorf("answered after %v (virtual time); want %v (second copy at 1.5 D, then its answer)", elapsed, want)
		}
	})
}

// A round whose copy answers while its first attempt is still out is
// stuck; with 10 such rounds among the last 50 (20 %) the learned delay
// falls from the window's p98.5 to its p87.5, where a read still waiting is
// twice as likely stuck as slow.
func TestStuckReadsBringTheCopyForward(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.HedgeDelay = 0 // learned
		const warm = 40
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			switch {
			case n <= warm:
				return sleepThenAnswer(req, time.Duration(91-n)*time.Millisecond) // 90 … 51 ms: none is hedged
			case n%2 == 1:
				return hang(n, req) // each later read's first attempt
			}
			return sleepThenAnswer(req, 20*time.Millisecond) // … and its copy
		})
		for range warm {
			if _, _, err := tl.get("get_root", "/"); err != nil {
				t.Fatal(err)
			}
		}
		if delay, _ := tl.hedgeDelay(tl.host(testHost), opLanding); delay != 90*time.Millisecond {
			t.Fatalf("delay after 40 answers of 51 … 90 ms = %v; want 90ms (p98.5 by nearest rank)", delay)
		}
		for i := range 10 {
			if rc, _, err := tl.get("get_root", "/"); err != nil || rc.Hedges != 1 {
				t.Fatalf("stuck read %d: receipt %+v, %v; want one winning copy", i+1, rc, err)
			}
		}
		// 50 samples: ten copies' 20 ms, then 51 … 90; h = 10/50, quantile
		// 1 - 0.2/1.6 = 0.875, nearest rank 44: 51 + 33 = 84 ms.
		if delay, _ := tl.hedgeDelay(tl.host(testHost), opLanding); delay != 84*time.Millisecond {
			t.Errorf("delay after 10 stuck reads of 50 = %v; want 84ms (the p87.5)", delay)
		}
	})
}

// Once reads of a fast catalog get stuck, the copy comes forward past the
// 50 ms floor, which holds only while nothing is stuck (adr/0028): a 50 ms
// catalog's p87.5 is under 50 ms, and with the floor its stuck reads waited
// for it. Fails on the floor-always rule (delay stays 50ms).
func TestStuckReadsBringTheCopyBelowTheFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.HedgeDelay = 0 // learned
		const warm = 40
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			switch {
			case n <= warm:
				return sleepThenAnswer(req, time.Duration(45-n)*time.Millisecond) // 44 … 5 ms
			case n%2 == 1:
				return hang(n, req) // each later read's first attempt
			}
			return sleepThenAnswer(req, 3*time.Millisecond) // … and its copy
		})
		for range warm {
			if _, _, err := tl.get("get_root", "/"); err != nil {
				t.Fatal(err)
			}
		}
		if delay, _ := tl.hedgeDelay(tl.host(testHost), opLanding); delay != hedgeFloor {
			t.Fatalf("delay after 40 answers of 5 … 44 ms, none stuck = %v; want the %v floor", delay, hedgeFloor)
		}
		for i := range 10 {
			if rc, _, err := tl.get("get_root", "/"); err != nil || rc.Hedges != 1 {
				t.Fatalf("stuck read %d: receipt %+v, %v; want one winning copy", i+1, rc, err)
			}
		}
		// 50 samples: ten copies' 3 ms, then 5 … 44; h = 10/50, quantile
		// 0.875, nearest rank 44: 5 + 33 = 38 ms, under the 50 ms floor.
		if delay, _ := tl.hedgeDelay(tl.host(testHost), opLanding); delay != 38*time.Millisecond {
			t.Errorf("delay after 10 stuck reads of 50 = %v; want 38ms (the p87.5, below the fault-free floor)", delay)
		}
	})
}

// Below the fault-free floor the stuck delay still has one: hedgeStuckFloor,
// against copies on scheduler noise for a catalog answering in a few
// milliseconds. Without stuck rounds such a catalog keeps hedgeFloor.
func TestStuckDelayKeepsAFloor(t *testing.T) {
	tl := newTestLayer(t, hedgePolicy(), func(int, *http.Request) (*http.Response, error) {
		return answer(http.StatusOK, `{}`), nil
	})
	tl.policy.HedgeDelay = 0 // learned
	h := tl.host(testHost)
	w := &h.latency[opLanding]
	for i := 1; i <= 30; i++ {
		w.add(time.Duration(i) * time.Millisecond) // 1 … 30 ms
	}
	if delay, cold := tl.hedgeDelay(h, opLanding); delay != hedgeFloor || cold {
		t.Errorf("delay with no stuck rounds = %v (cold %v); want the %v floor", delay, cold, hedgeFloor)
	}
	for range stuckRounds {
		w.noteRound(true) // every round stuck: the median, 15 ms
	}
	if delay, cold := tl.hedgeDelay(h, opLanding); delay != hedgeStuckFloor || cold {
		t.Errorf("delay with every round stuck = %v (cold %v); want the %v stuck floor", delay, cold, hedgeStuckFloor)
	}
}

// With copies below the floor, the budget still holds: 3000 reads, one at
// a time, of a catalog answering in 5 … 45 ms with 20 % of attempts hung.
// Every copy that loses costs budgetHedgeCost; at the retry's price (5) the
// copies beside slow reads that the stuck-lowered delay sends outspent what
// the answered calls earn back (about 300 tokens after 600 reads, 200 after
// 3000, and drained after about 6000: TestCopiesKeepTheRetryBudgetAtASRsFaultRate).
// It must hold, not drain: a drained budget refuses copies and stuck reads
// then fail at the deadline.
func TestStuckFloorKeepsTheRetryBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.HedgeDelay = 0 // learned
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			r := splitmix64(uint64(n))
			if r%5 == 0 {
				return hang(n, req)
			}
			// 5 … 45 ms, skewed towards the fast end like a catalog's answers.
			u := float64(r>>11) / (1 << 53)
			return sleepThenAnswer(req, 5*time.Millisecond+time.Duration(u*u*float64(40*time.Millisecond)))
		})
		below, failed := 0, 0
		for range 3000 {
			if _, _, err := tl.get("get_root", "/"); err != nil {
				failed++ // all three attempts hung: 0.8 % of reads (26 here, as with the floor)
			}
			if d, _ := tl.hedgeDelay(tl.host(testHost), opLanding); d < hedgeFloor {
				below++
			}
		}
		if below < 2500 {
			t.Errorf("delay below the %v floor after %d of 3000 calls; want most: stuck reads should bring it forward", hedgeFloor, below)
		}
		if tokens := tl.host(testHost).budget.available(); tokens < budgetCapacity/4 {
			t.Errorf("budget fell to %d tokens at 20%% hung attempts with copies below the floor", tokens)
		}
		if failed > 36 {
			t.Errorf("%d of 3000 reads failed; three hung attempts are 0.8 %% of reads: copies were withheld", failed)
		}
		t.Logf("%d failed, delay below the floor after %d of 3000 calls, budget %d, delay now %v", failed, below, tl.host(testHost).budget.available(), func() time.Duration { d, _ := tl.hedgeDelay(tl.host(testHost), opLanding); return d }())
	})
}

// hungCatalog answers like a catalog of the given shape (fast: 5 … 45 ms,
// skewed to the fast end; else log-normal with a 500 ms p95, σ 0.5, the SLO
// harness's) and hangs pct % of attempts until they are cancelled.
func hungCatalog(pct uint64, fast bool) func(int, *http.Request) (*http.Response, error) {
	if !fast {
		return logNormalCatalog(0, pct, 220*time.Millisecond)
	}
	return func(n int, req *http.Request) (*http.Response, error) {
		r := splitmix64(uint64(n))
		if r%100 < pct {
			return hang(n, req)
		}
		u := (float64(r>>11) + 0.5) / (1 << 53)
		return sleepThenAnswer(req, 5*time.Millisecond+time.Duration(u*u*float64(40*time.Millisecond)))
	}
}

// readHungCatalog makes n reads, one at a time, of a catalog hanging pct %
// of attempts, with the learned delay and a 15 s tool timeout; it returns
// the reads that failed and the lowest budget seen.
func readHungCatalog(t *testing.T, n int, pct uint64, fast bool) (failed, lowest int) {
	p := hedgePolicy()
	p.HedgeDelay = 0 // learned
	p.ToolTimeout = 15 * time.Second
	tl := newTestLayer(t, p, hungCatalog(pct, fast))
	lowest = budgetCapacity
	for range n {
		if _, _, err := tl.get("get_root", "/"); err != nil {
			failed++
		}
		lowest = min(lowest, tl.host(testHost).budget.available())
	}
	return failed, lowest
}

// TestCopiesKeepTheRetryBudgetAtASRsFaultRate: at ASR 1008's 20 % of
// attempts hung, 12,000 reads one after another keep the budget, so hung
// reads keep getting their copies: no more reads fail than the 0.2³ whose
// three attempts all hang. Copies priced like retries drain it (figures:
// bench/RESULTS.md, "Hedging: the constants and the figures behind them").
func TestCopiesKeepTheRetryBudgetAtASRsFaultRate(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "5-45ms", false: "p95_500ms"}[fast], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const reads = 12000
				failed, lowest := readHungCatalog(t, reads, 20, fast)
				if lowest < budgetCapacity/2 {
					t.Errorf("the budget fell to %d of %d tokens over %d reads at 20 %% hung attempts: copies drain it", lowest, budgetCapacity, reads)
				}
				if failed > reads*9/1000 {
					t.Errorf("%d of %d reads failed (%.2f %%); 0.8 %% hang in all three attempts: copies were refused",
						failed, reads, 100*float64(failed)/reads)
				}
				t.Logf("%d of %d reads failed, lowest budget %d", failed, reads, lowest)
			})
		})
	}
}

// TestCopiesStillDrainTheBudgetOfACatalogInTrouble: the cheaper copy does
// not take the budget's protection away. With 35 % of attempts hung
// (above the third past which retries drain it too) the budget runs out
// and copies stop.
func TestCopiesStillDrainTheBudgetOfACatalogInTrouble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const reads = 12000
		_, lowest := readHungCatalog(t, reads, 35, true)
		if lowest > budgetCapacity/10 {
			t.Errorf("the budget's lowest over %d reads at 35 %% hung attempts was %d of %d: copies no longer spend it", reads, lowest, budgetCapacity)
		}
	})
}

// Reads sent side by side to a new catalog all start with the cold delay
// (the attempt timeout for a search). When the others' answers teach the
// delay while one of them is stuck, that one gets its copy at the learned
// delay from when it was sent, not at the attempt timeout.
func TestAColdReadTakesTheDelayLearnedWhileItWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.HedgeDelay = 0 // learned
		p.AttemptTimeout = 4 * time.Second
		p.ToolTimeout = 15 * time.Second
		const took = 50 * time.Millisecond
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			if n == 1 {
				return hang(n, req) // the first search, sent cold
			}
			return sleepThenAnswer(req, took)
		})
		var g sync.WaitGroup
		var stuck Receipt
		var stuckErr error
		var stuckTook time.Duration
		g.Go(func() {
			start := time.Now()
			stuck, _, stuckErr = tl.get("search_items", "/search?q=stuck")
			stuckTook = time.Since(start)
		})
		synctest.Wait() // the stuck search is out, on the cold delay
		if delay, cold := tl.hedgeDelay(tl.host(testHost), opSearch); !cold || delay != p.AttemptTimeout {
			t.Fatalf("delay before any answer %v (cold %v); want the cold %v", delay, cold, p.AttemptTimeout)
		}
		for i := range hedgeEarlySamples { // its neighbours answer, one after another
			if rc, _, err := tl.get("search_items", "/search?q="+itoa(i)); err != nil || rc.Hedges != 0 {
				t.Fatalf("search %d: receipt %+v, %v; want success without a copy", i, rc, err)
			}
		}
		g.Wait()
		// One copy: the second would follow half the learned delay after
		// the first (62.5 ms), after the first answers (50 ms).
		if stuckErr != nil || stuck.Hedges != 1 {
			t.Fatalf("stuck search: receipt %+v, %v; want one copy and success", stuck, stuckErr)
		}
		// The fifth answer came at 5 × took; the learned delay (2.5 × the
		// slowest, 125 ms) had passed by then, so the copy goes out at once.
		if want := hedgeEarlySamples*took + took; stuckTook != want {
			t.Errorf("stuck search answered after %v (virtual time), want %v: a copy as soon as the delay was learned, not at the cold %v", stuckTook, want, p.AttemptTimeout)
		}
	})
}

// A read's copies go out on its own bulkhead slot: with every slot held by
// reads whose first attempt hung, their copies are still sent at the hedge
// delay and win, where copies that needed a slot of their own would queue
// behind the hung attempts until the deadline.
func TestCopiesGoOutOnTheirReadsBulkheadSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.BulkheadMax = 2
		var mu sync.Mutex
		seen := map[string]bool{}
		tl := newTestLayer(t, p, func(_ int, req *http.Request) (*http.Response, error) {
			mu.Lock()
			first := !seen[req.URL.Path]
			seen[req.URL.Path] = true
			mu.Unlock()
			if first {
				<-req.Context().Done() // each path's first attempt hangs until a copy wins
				return nil, req.Context().Err()
			}
			return answer(http.StatusOK, `{}`), nil
		})
		receipts := make([]Receipt, p.BulkheadMax)
		errs := make([]error, p.BulkheadMax)
		start := time.Now()
		var wg sync.WaitGroup
		for i := range receipts {
			wg.Go(func() { receipts[i], _, errs[i] = tl.get("get_item", "/v1/collections/c/items/"+itoa(i)) })
		}
		synctest.Wait() // both first attempts are out and hung: every slot is held
		if n := tl.host(testHost).bulkhead.inFlight(); n != p.BulkheadMax {
			t.Fatalf("%d bulkhead slots held by the two hung reads, want %d", n, p.BulkheadMax)
		}
		wg.Wait()
		if elapsed := time.Since(start); elapsed != p.HedgeDelay {
			t.Errorf("the calls ended after %v (virtual time), want the hedge delay %v: their copies waited for a slot", elapsed, p.HedgeDelay)
		}
		for i, rc := range receipts {
			if errs[i] != nil || rc.Attempts != 2 || rc.Hedges != 1 {
				t.Errorf("call %d: %v, receipt %+v; want success by its one copy", i, errs[i], rc)
			}
		}
		if n := tl.host(testHost).bulkhead.inFlight(); n != 0 {
			t.Errorf("%d bulkhead slots still held after the calls, want 0", n)
		}
	})
}

// An open breaker answers at once even when the host's bulkhead is full:
// a hedged read waits for a slot only if it may be sent. The round takes
// its slot ahead of the attempt's breaker check, so without this the read
// would wait behind the hung reads for the deadline and then time out.
func TestOpenBreakerDeniesAtOnceWhileTheBulkheadIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedgePolicy()
		p.BulkheadMax = 1
		tl := newTestLayer(t, p, func(_ int, req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/hold" {
				<-req.Context().Done()
				return nil, req.Context().Err()
			}
			return answer(http.StatusOK, `{}`), nil
		})
		var g sync.WaitGroup
		g.Go(func() { _, _, _ = tl.get("get_root", "/hold") })
		synctest.Wait() // /hold has the only slot
		b := tl.host(testHost).breaker
		for range breakerMinCalls { // failed attempts enough to open it
			_, probe := b.allow()
			b.record(probe, true, false)
		}
		if state, _ := b.status(); state != BreakerOpen {
			t.Fatalf("breaker %s after %d failures, want open", state, breakerMinCalls)
		}
		start := time.Now()
		_, _, err := tl.get("get_item", "/v1/collections/c/items/a")
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeCircuitOpen {
			t.Errorf("read while the breaker is open and the bulkhead full: %v; want circuit_open", err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("the denial took %v (virtual time); want none: an open breaker does not queue for a slot", took)
		}
		g.Wait()
	})
}
