package reliability

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// gapBeforeRetry runs one call whose first answer is resp and whose second
// is a 200, and returns the virtual time between the two hits.
func gapBeforeRetry(t *testing.T, first func() *http.Response) time.Duration {
	t.Helper()
	var gap time.Duration
	synctest.Test(t, func(t *testing.T) {
		var at []time.Time
		tl := newTestLayer(t, noCache(), func(n int, _ *http.Request) (*http.Response, error) {
			at = append(at, time.Now())
			if n == 1 {
				return first(), nil
			}
			return answer(200, "{}"), nil
		})
		if _, status, err := tl.get("search_items", "/v1/search"); err != nil || status != 200 || len(at) != 2 {
			t.Fatalf("status %d err %v after %d hits, want 200 after 2", status, err, len(at))
		}
		gap = at[1].Sub(at[0])
	})
	return gap
}

func TestRetryAfterIsHonouredAndCapped(t *testing.T) {
	jitterCeiling := 400 * time.Millisecond
	cases := []struct {
		name     string
		first    func() *http.Response
		min, max time.Duration
	}{
		{"seconds", func() *http.Response { return answer(429, "", "Retry-After", "2") }, 2 * time.Second, 2 * time.Second},
		{"503 seconds", func() *http.Response { return answer(503, "", "Retry-After", "1") }, time.Second, time.Second},
		{"http date", func() *http.Response {
			return answer(429, "", "Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
		}, 2 * time.Second, 3 * time.Second},
		{"over the cap", func() *http.Response { return answer(429, "", "Retry-After", "3600") }, 5 * time.Second, 5 * time.Second},
		{"invalid", func() *http.Response { return answer(429, "", "Retry-After", "later please") }, 0, jitterCeiling - 1},
		{"ignored on 500", func() *http.Response { return answer(500, "", "Retry-After", "4") }, 0, jitterCeiling - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if gap := gapBeforeRetry(t, c.first); gap < c.min || gap > c.max {
				t.Errorf("waited %v, want between %v and %v", gap, c.min, c.max)
			}
		})
	}
}

func TestRetryAfterLongerThanTheDeadlineGivesUpAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.ToolTimeout = 4 * time.Second
		tl := newTestLayer(t, p, always(429, `{"message":"slow down"}`, "Retry-After", "5"))
		start := time.Now()
		_, _, err := tl.get("search_items", "/v1/search")
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeDeadline {
			t.Fatalf("error %v, want a deadline denial", err)
		}
		if elapsed := time.Since(start); elapsed != 0 {
			t.Errorf("gave up after %v, want at once", elapsed)
		}
		if tl.up.hitCount() != 1 || d.RetryAfterMS != 5000 || d.LastStatus != 429 || d.LastMessage != "slow down" {
			t.Errorf("hits %d, denial %+v; want 1 hit, retry_after_ms 5000, last 429 \"slow down\"", tl.up.hitCount(), d)
		}
		if !d.RetryAt.Equal(time.Now().Add(5 * time.Second)) {
			t.Errorf("retry_at %v, want now + 5 s", d.RetryAt)
		}
		g := tl.logs.named(t, eventRetryGiveUp)
		if len(g) != 1 || g[0]["reason"] != CodeDeadline {
			t.Errorf("give-up events %v, want one with reason deadline", g)
		}
	})
}
