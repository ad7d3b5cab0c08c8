package reliability

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func TestHealthCountsTheLastFiveMinutesPerHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.ToolTimeout = 2 * time.Second
		p.AttemptTimeout = 2 * time.Second
		tl := newTestLayer(t, p, func(_ int, req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/hang" {
				return hang(0, req)
			}
			return answer(503, ""), nil
		})
		_, _, _ = tl.get("search_items", "/v1/search") // 2 retries, 1 give-up
		_, _, _ = tl.get("search_items", "/hang")      // 1 tool timeout
		other := "other.test"
		_, _ = tl.Run(context.Background(), "get_root", other, func(ctx context.Context) error { return nil })

		synctest.Wait() // the timed-out call's attempt unwinds after Run returned
		h := tl.Health(t.Context())
		if len(h) != 1 || h[0].Host != testHost {
			t.Fatalf("health %+v, want only %s (no request reached %s)", h, testHost, other)
		}
		got := h[0]
		if got.Retries5m != 2 || got.GiveUps5m != 1 || got.Timeouts5m != 1 || got.Breaker != BreakerClosed ||
			got.BudgetTokens != budgetCapacity-2*budgetRetryCost || got.BudgetCapacity != budgetCapacity || got.InFlight != 0 {
			t.Errorf("health %+v, want 2 retries, 1 give-up, 1 timeout, closed breaker, 490 tokens", got)
		}
		time.Sleep(healthWindow)
		if got := tl.Health(t.Context())[0]; got.Retries5m != 0 || got.GiveUps5m != 0 || got.Timeouts5m != 0 {
			t.Errorf("five minutes later: %+v, want the counts gone", got)
		}
	})
}

// A tool that makes several requests: the receipt adds them up and its
// attempt count equals what the upstream saw.
func TestReceiptMatchesUpstreamHitsAcrossRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(n int, _ *http.Request) (*http.Response, error) {
			if n%2 == 1 {
				return answer(502, ""), nil
			}
			return answer(200, "{}"), nil
		})
		rc, err := tl.Run(context.Background(), "search_items", testHost, func(ctx context.Context) error {
			for _, page := range []string{"/search?page=1", "/search?page=2", "/search?page=3"} {
				if _, status, err := tl.getIn(ctx, page); err != nil || status != 200 {
					t.Errorf("page %s: %d %v", page, status, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if rc.UpstreamRequests != 3 || rc.Attempts != tl.up.hitCount() || rc.Attempts != 6 || rc.Retries != 3 {
			t.Errorf("receipt %+v with %d hits, want 3 requests, 6 attempts = hits, 3 retries", rc, tl.up.hitCount())
		}
		if rc.ElapsedMS < 0 || rc.CatalogHost != testHost || rc.Tool != "search_items" || len(rc.CorrelationID) != 16 {
			t.Errorf("receipt %+v has wrong identity fields", rc)
		}
		if m := rc.meta(); m["attempts"] != 6 || m["correlation_id"] != rc.CorrelationID {
			t.Errorf("Meta() = %v", m)
		}
	})
}
