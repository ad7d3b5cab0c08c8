package reliability

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestToolTimeoutReturnsAtTheCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// An attempt timeout as long as the tool timeout: the first attempt
		// hangs until the cap.
		p := noCache()
		p.AttemptTimeout = p.ToolTimeout
		tl := newTestLayer(t, p, hang)
		start := time.Now()
		rc, _, err := tl.get("search_items", "/v1/search")
		elapsed := time.Since(start)

		if cap := tl.Policy().ToolTimeout; elapsed < cap || elapsed > cap+100*time.Millisecond {
			t.Errorf("returned after %v, want within 100 ms of the %v cap", elapsed, cap)
		}
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeTimeout {
			t.Fatalf("error %v, want a timeout denial", err)
		}
		if got := timeoutsOf(tl.Layer, "search_items"); got != 1 {
			t.Errorf("timeouts_total = %v, want 1", got)
		}
		aborts := tl.logs.named(t, eventTimeoutAbort)
		if len(aborts) != 1 || aborts[0]["correlation_id"] != rc.CorrelationID || aborts[0]["url_path"] != "/v1/search" ||
			aborts[0]["tool_name"] != "search_items" || aborts[0]["attempt"] != 1.0 {
			t.Errorf("timeout_abort events %v, want one for %s", aborts, rc.CorrelationID)
		}
		if rc.Attempts != tl.up.hitCount() || rc.Attempts != 1 || d.Attempts != 1 {
			t.Errorf("receipt attempts %d, denial attempts %d, hits %d, want 1 each", rc.Attempts, d.Attempts, tl.up.hitCount())
		}
		if len(tl.logs.named(t, eventRetryGiveUp)) != 0 {
			t.Error("a tool timeout also logged retry_give_up; timeout_abort is its only event")
		}
	})
	goleak.VerifyNone(t)
}

// A tool function that ignores its context still cannot hold the call past
// the cap: Run returns at the deadline and the function finishes on its own.
func TestToolTimeoutDoesNotWaitForAStuckFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.ToolTimeout = 2 * time.Second
		p.AttemptTimeout = time.Second
		tl := newTestLayer(t, p, always(200, "{}"))
		start := time.Now()
		_, err := tl.Run(context.Background(), "slow_tool", testHost, func(context.Context) error {
			time.Sleep(time.Minute)
			return nil
		})
		if elapsed := time.Since(start); elapsed != 2*time.Second+timeoutGrace {
			t.Errorf("Run returned after %v, want 2 s plus the %v grace", elapsed, timeoutGrace)
		}
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeTimeout || d.Attempts != 0 {
			t.Fatalf("error %v, want a timeout denial with 0 attempts", err)
		}
		time.Sleep(time.Minute) // let the abandoned function finish inside the bubble
	})
	goleak.VerifyNone(t)
}

func TestCallerCancellationIsNotATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), hang)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		_, err := tl.Run(ctx, "search_items", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/x", nil)
			_, err := tl.HTTPClient().Do(req)
			return err
		})
		var d *Denial
		if !errors.Is(err, context.Canceled) || errors.As(err, &d) {
			t.Fatalf("error %v, want context.Canceled and no denial", err)
		}
		if timeoutsOf(tl.Layer, "search_items") != 0 {
			t.Error("a cancelled call counted as a timeout")
		}
	})
}

// A tool that answers with what it has when its context ends keeps that
// answer: the deadline is not turned into an error behind its back.
func TestPartialResultAtTheDeadlineStands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.ToolTimeout = 2 * time.Second
		p.AttemptTimeout = time.Second
		tl := newTestLayer(t, p, always(200, "{}"))
		start := time.Now()
		_, err := tl.Run(context.Background(), "search_items", testHost, func(ctx context.Context) error {
			<-ctx.Done()
			return nil // returns the pages gathered so far, with a cursor
		})
		if err != nil || time.Since(start) != 2*time.Second {
			t.Fatalf("err %v after %v, want the tool's own success at the 2 s deadline", err, time.Since(start))
		}
		if timeoutsOf(tl.Layer, "search_items") != 0 {
			t.Error("a call that answered was counted as a timeout")
		}
	})
}

// Two requests of one call hang side by side until the deadline: the
// timeout's advice names the one the call needs (the landing page), not the
// side request sent beside it, whichever of the two the loop saw last.
func TestTimeoutAdviceNamesTheMainRequestNotASideRequest(t *testing.T) {
	for _, sideFirst := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			p := noCache()
			p.ToolTimeout = 2 * time.Second
			p.AttemptTimeout = p.ToolTimeout
			tl := newTestLayer(t, p, hang)
			_, err := tl.Run(context.Background(), "get_capabilities", testHost, func(ctx context.Context) error {
				var g sync.WaitGroup
				side := func() { _, _, _ = tl.getIn(SideRequest(ctx), "/v1/conformance") }
				main := func() { _, _, _ = tl.getIn(ctx, "/v1") }
				first, second := main, side
				if sideFirst {
					first, second = side, main
				}
				g.Go(first)
				time.Sleep(time.Millisecond)
				g.Go(second)
				g.Wait()
				return ctx.Err()
			})
			var d *Denial
			if !errors.As(err, &d) || d.Code != CodeTimeout {
				t.Fatalf("error %v, want a timeout denial", err)
			}
			if !strings.Contains(d.Next, "landing page (/v1)") {
				t.Errorf("side request sent first=%v: advice %q, want it about the landing page (/v1)", sideFirst, d.Next)
			}
		})
	}
}
