package reliability

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Calls that pool their attempts (adr/0030): a request sent with
// PoolAttempts may go past MaxAttempts by three attempts drawn from its
// call's pool; everything else about retries stays as it is. Virtual time
// (synctest), fake upstream.

// failFirst answers 503 to the first n hits, then 206.
func failFirst(n int, header ...string) func(int, *http.Request) (*http.Response, error) {
	return func(hit int, _ *http.Request) (*http.Response, error) {
		if hit <= n {
			return answer(503, `{"description":"busy"}`, header...), nil
		}
		return answer(206, "tile bytes", "Content-Range", "bytes 0-9/100"), nil
	}
}

// readParts runs one tool call that GETs each path in order, pooling its
// attempts when part is set, and returns the receipt and the first error.
func (tl *testLayer) readParts(part bool, paths ...string) (Receipt, error) {
	return tl.Run(context.Background(), "aoi_statistics", testHost, func(ctx context.Context) error {
		if part {
			ctx = PoolAttempts(ctx)
		}
		for _, p := range paths {
			if _, _, err := tl.getIn(ctx, p); err != nil {
				return err
			}
		}
		return nil
	})
}

func pooledOf(l *Layer, tool string) float64 {
	return testutil.ToFloat64(l.metrics.pooledRetries.WithLabelValues(tool))
}

// Five faults in a row: a plain read gives up after its 3 attempts, a
// part of a pooled call succeeds on its 6th, the three extra attempts
// counted, logged and waiting no longer than the last ordinary retry may
// (0.8 s).
func TestPooledCallPartTakesThreeMoreAttempts(t *testing.T) {
	for _, hedge := range []bool{true, false} {
		t.Run(map[bool]string{true: "hedge on", false: "hedge off"}[hedge], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := noCache()
				p.Hedge = hedge
				plain := newTestLayer(t, p, failFirst(5))
				_, err := plain.readParts(false, "/cog/red.tif")
				var d *Denial
				if !errors.As(err, &d) || d.Code != CodeRetryExhausted || plain.up.hitCount() != 3 {
					t.Fatalf("plain read: %d hits, error %v; want retry_exhausted after 3 (a request that is not a part keeps 3 attempts)", plain.up.hitCount(), err)
				}

				tl := newTestLayer(t, p, failFirst(5))
				rc, err := tl.readParts(true, "/cog/red.tif")
				if err != nil {
					t.Fatalf("pooled part: %v after %d hits; want success on the 6th attempt", err, tl.up.hitCount())
				}
				if tl.up.hitCount() != 6 || rc.Attempts != 6 || rc.Retries != 5 {
					t.Errorf("hits %d, receipt %+v; want 6 attempts, 5 retries", tl.up.hitCount(), rc)
				}
				if got := retriesOf(tl.Layer, "aoi_statistics"); got != 5 {
					t.Errorf("retries_attempted_total = %v, want 5 (the extra attempts are retries)", got)
				}
				if got := pooledOf(tl.Layer, "aoi_statistics"); got != 3 {
					t.Errorf("pooled_retries_total = %v, want 3", got)
				}
				events := tl.logs.named(t, eventRetryAttempt)
				if len(events) != 5 {
					t.Fatalf("retry_attempt events = %v, want 5", events)
				}
				for i, e := range events {
					pooled := e["pooled"] == true
					if pooled != (i >= 2) || e["correlation_id"] == "" || e["attempt"] != float64(i+2) {
						t.Errorf("retry_attempt %d = %v; want attempt %d, pooled %v, with the correlation id", i+1, e, i+2, i >= 2)
					}
					if w, _ := e["wait_ms"].(float64); w >= 800 {
						t.Errorf("retry_attempt %d waited %v ms; a part's retries wait below the last ordinary ceiling, 800 ms", i+1, w)
					}
				}
			})
		})
	}
}

// A call's parts never send more than 3 attempts a part on average, plus
// the pool's start of 3, however the faults fall, side by side too.
func TestPooledCallStaysWithinThreeAttemptsAPartOnAverage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, `{"description":"down"}`))
		for range 4 {
			_, _ = tl.Run(context.Background(), "render_aoi", testHost, func(ctx context.Context) error {
				ctx = PoolAttempts(ctx)
				var wg sync.WaitGroup
				for _, p := range []string{"/a", "/b", "/c", "/d", "/e", "/f"} {
					wg.Go(func() { _, _, _ = tl.getIn(ctx, p) })
				}
				wg.Wait()
				return nil
			})
		}
		// 4 calls × (3 × 6 parts + 3); the breaker opens on the way.
		if hits := tl.up.hitCount(); hits > 4*(3*6+3) || hits < 3*6 {
			t.Errorf("%d attempts for 4 calls of 6 failing parts; the pool allows at most %d", hits, 4*(3*6+3))
		}
		if got := pooledOf(tl.Layer, "render_aoi"); got > 4*3 || got == 0 {
			t.Errorf("pooled_retries_total = %v; want some, and at most the pool's start, 3 a call, when every part fails", got)
		}
		gaveUp := tl.logs.named(t, eventRetryGiveUp)
		if len(gaveUp) == 0 || gaveUp[0]["pooled_call"] != true {
			t.Errorf("retry_give_up events %v; want them marked pooled_call", gaveUp)
		}
	})
}

// Sequentially, the count is exact: part 1 takes 6 attempts (3 + the
// pool's 3), parts 2–4 find no surplus left and take 3.
func TestPooledCallSharesThePoolInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, `{"description":"down"}`))
		var hits []int
		_, _ = tl.Run(context.Background(), "render_aoi", testHost, func(ctx context.Context) error {
			ctx = PoolAttempts(ctx)
			for _, p := range []string{"/a", "/b", "/c", "/d"} {
				before := tl.up.hitCount()
				_, _, _ = tl.getIn(ctx, p)
				hits = append(hits, tl.up.hitCount()-before)
			}
			return nil
		})
		if want := []int{6, 3, 3, 3}; !equalInts(hits, want) {
			t.Errorf("attempts per part = %v, want %v (3 each on average, plus the pool's 3)", hits, want)
		}
	})
}

// Parts that succeed leave their unused attempts to the others: /slow1
// takes 6 attempts (the pool's start of 3), and /slow2, failing 4 times,
// gets its 5th only if a clean part left its 2 retries in between.
func TestPooledCallPartUsesAttemptsOthersLeft(t *testing.T) {
	for _, c := range []struct {
		paths []string
		ok    bool
	}{
		{[]string{"/slow1", "/clean", "/slow2"}, true},
		{[]string{"/slow1", "/slow2"}, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			tl := newTestLayer(t, noCache(), func(_ int, req *http.Request) (*http.Response, error) {
				mu.Lock()
				defer mu.Unlock()
				seen[req.URL.Path]++
				if req.URL.Path == "/slow1" && seen[req.URL.Path] <= 5 || req.URL.Path == "/slow2" && seen[req.URL.Path] <= 4 {
					return answer(503, "busy"), nil
				}
				return answer(206, "x", "Content-Range", "bytes 0-0/1"), nil
			})
			_, err := tl.readParts(true, c.paths...)
			if (err == nil) != c.ok {
				t.Errorf("parts %v: error %v, attempts %v; want success %v", c.paths, err, seen, c.ok)
			}
		})
	}
}

// The pool never lets a retry past what stays forbidden: no retry of a
// non-retryable answer, no retry without a budget token.
func TestPooledCallKeepsTheOtherRules(t *testing.T) {
	for _, status := range []int{404, 416, 403} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTestLayer(t, noCache(), always(status, "no"))
				rc, _ := tl.readParts(true, "/cog/red.tif")
				if tl.up.hitCount() != 1 || rc.Retries != 0 {
					t.Errorf("status %d: %d hits, receipt %+v; want one attempt", status, tl.up.hitCount(), rc)
				}
			})
		})
	}
	t.Run("budget", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tl := newTestLayer(t, noCache(), always(503, "busy"))
			b := tl.host(testHost).budget
			for b.available() > 2*budgetRetryCost {
				b.take(1)
			}
			_, err := tl.readParts(true, "/cog/red.tif")
			var d *Denial
			if !errors.As(err, &d) || d.Code != CodeBudgetExhausted || tl.up.hitCount() != 3 {
				t.Errorf("%d hits, error %v; want budget_exhausted after the 2 retries the budget paid for", tl.up.hitCount(), err)
			}
		})
	})
	t.Run("retry-after", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tl := newTestLayer(t, noCache(), failFirst(5, "Retry-After", "2"))
			if _, err := tl.readParts(true, "/cog/red.tif"); err != nil {
				t.Fatalf("pooled part: %v", err)
			}
			for _, e := range tl.logs.named(t, eventRetryAttempt) {
				if e["wait_ms"] != float64(2000) {
					t.Errorf("retry_attempt %v: want the server's Retry-After, 2000 ms", e)
				}
			}
		})
	})
}

// Writes are sent once, pooled or not.
func TestPooledCallDoesNotRetryWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "busy"))
		_, _ = tl.Run(context.Background(), "create_item", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(PoolAttempts(ctx), http.MethodPost, "https://"+testHost+"/collections/c/items", http.NoBody)
			resp, err := tl.HTTPClient().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
		if tl.up.hitCount() != 1 {
			t.Errorf("a write in a pooled call was sent %d times, want once", tl.up.hitCount())
		}
	})
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// With hedging off, attempts are cut at the attempt timeout while a retry
// can follow: a part whose pool still holds one has its 3rd attempt cut
// too (not run to the deadline as a plain read's last attempt), so three
// hung attempts and a 4th that answers make a success.
func TestPooledCallPartCutsItsThirdAttemptWithHedgingOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.Hedge = false
		p.ToolTimeout = time.Minute
		p.AttemptTimeout = 4 * time.Second
		tl := newTestLayer(t, p, func(hit int, req *http.Request) (*http.Response, error) {
			if hit <= 3 {
				return hang(hit, req)
			}
			return answer(206, "x", "Content-Range", "bytes 0-0/1"), nil
		})
		start := time.Now()
		if _, err := tl.readParts(true, "/cog/red.tif"); err != nil {
			t.Fatalf("pooled part: %v after %d hits; want success on the 4th attempt", err, tl.up.hitCount())
		}
		if tl.up.hitCount() != 4 || time.Since(start) >= 3*4*time.Second+3*800*time.Millisecond {
			t.Errorf("%d hits in %v; want 4, each hung one cut at 4 s", tl.up.hitCount(), time.Since(start))
		}
	})
}
