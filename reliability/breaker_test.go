package reliability

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestBreakerOpensFailsFastAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var healthy atomic.Bool
		tl := newTestLayer(t, noCache(), func(int, *http.Request) (*http.Response, error) {
			if healthy.Load() {
				return answer(200, "{}"), nil
			}
			return answer(503, "down"), nil
		})
		// 3 failed attempts per call: outcome 50 arrives on call 17.
		var d *Denial
		calls := 0
		for ; calls < 30; calls++ {
			_, _, err := tl.get("search_items", "/v1/search")
			if errors.As(err, &d) && d.Code == CodeCircuitOpen {
				break
			}
		}
		if calls != 16 || tl.up.hitCount() != breakerMinCalls {
			t.Fatalf("breaker opened on call %d after %d hits, want call 17 after %d", calls+1, tl.up.hitCount(), breakerMinCalls)
		}
		state := testutil.ToFloat64(tl.metrics.breakerState.WithLabelValues(testHost))
		if state != 2 {
			t.Errorf("breaker_state gauge %v, want 2 (open)", state)
		}

		hitsBefore, retriesBefore, tokensBefore := tl.up.hitCount(), retriesOf(tl.Layer, "search_items"), tl.host(testHost).budget.available()
		start := time.Now()
		rc, _, err := tl.get("search_items", "/v1/search")
		if !errors.As(err, &d) || d.Code != CodeCircuitOpen || d.Attempts != 0 {
			t.Fatalf("call while open: %v, want circuit_open with 0 attempts", err)
		}
		if time.Since(start) != 0 || tl.up.hitCount() != hitsBefore || retriesOf(tl.Layer, "search_items") != retriesBefore ||
			tl.host(testHost).budget.available() != tokensBefore || rc.Attempts != 0 {
			t.Errorf("open breaker still cost time %v, hits +%d, retries +%v or tokens; want nothing spent",
				time.Since(start), tl.up.hitCount()-hitsBefore, retriesOf(tl.Layer, "search_items")-retriesBefore)
		}
		if d.RetryAt.Before(time.Now().Add(breakerOpenFor-time.Second)) || d.RetryAt.After(time.Now().Add(breakerOpenFor+breakerOpenJitter)) {
			t.Errorf("retry_at %v, want the end of the jittered open period", d.RetryAt)
		}

		healthy.Store(true)
		time.Sleep(breakerOpenFor + breakerOpenJitter)
		for probe := range breakerProbes {
			if _, status, err := tl.get("search_items", "/v1/search"); err != nil || status != 200 {
				t.Fatalf("half-open probe %d: status %d err %v", probe+1, status, err)
			}
		}
		if h := tl.Health(t.Context()); h[0].Breaker != BreakerClosed {
			t.Errorf("after %d good probes the breaker is %s, want closed", breakerProbes, h[0].Breaker)
		}
		if state := testutil.ToFloat64(tl.metrics.breakerState.WithLabelValues(testHost)); state != 0 {
			t.Errorf("breaker_state gauge %v, want 0 (closed)", state)
		}
	})
}

func TestBreakerReopensWhenAProbeFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "down"))
		b := tl.host(testHost).breaker
		for range breakerMinCalls {
			b.allow()
			b.record(noProbe, true, false)
		}
		if s, _ := b.status(); s != BreakerOpen {
			t.Fatalf("state %s after %d failures, want open", s, breakerMinCalls)
		}
		time.Sleep(breakerOpenFor + breakerOpenJitter)
		admitted, probe := b.allow()
		if !admitted || probe == noProbe {
			t.Fatal("no probe admitted after the open period")
		}
		// A late result of an attempt admitted before the trip is not a probe.
		b.record(noProbe, false, false)
		if s, _ := b.status(); s != BreakerHalfOpen {
			t.Fatalf("a non-probe success moved the breaker to %s", s)
		}
		b.record(probe, true, false)
		if s, until := b.status(); s != BreakerOpen || !until.After(time.Now().Add(breakerOpenFor-time.Nanosecond)) {
			t.Errorf("after a failed probe: %s until %v, want open for another period", s, until)
		}
	})
}

func TestBreakerIgnoresClientErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(404, `{"description":"no such item"}`))
		for range 100 {
			if _, status, err := tl.get("get_item", "/v1/collections/c/items/x"); err != nil || status != 404 {
				t.Fatalf("status %d err %v, want the 404", status, err)
			}
		}
		if s, _ := tl.host(testHost).breaker.status(); s != BreakerClosed || tl.up.hitCount() != 100 {
			t.Errorf("after 100 404s the breaker is %s with %d hits, want closed and 100", s, tl.up.hitCount())
		}
	})
}
