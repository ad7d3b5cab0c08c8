package reliability

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestEarthSearch403ThrottleExplainsItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(403, `{"message":"Forbidden"}`, "Content-Type", "application/json"))
		_, status, err := tl.get("search_items", "/v1/search")
		// get() itself succeeded (403 is a response); a tool turns it into an
		// error, which Run then explains.
		if err != nil || status != 403 || tl.up.hitCount() != 1 {
			t.Fatalf("status %d err %v after %d hits, want the 403 after 1 hit", status, err, tl.up.hitCount())
		}
		_, err = tl.Run(t.Context(), "search_items", "earth-search.aws.element84.com", func(ctx contextLike) error {
			_, status, _ := tl.getIn(ctx, "/v1/search")
			return errors.New("catalog refused the search: HTTP " + itoa(status))
		})
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeNotRetryable || d.LastStatus != 403 || d.LastMessage != "Forbidden" {
			t.Fatalf("error %v, want a not_retryable denial with 403 Forbidden", err)
		}
		if !strings.Contains(d.Next, "throttles") || !strings.Contains(d.Error(), "wait 10-30 seconds") {
			t.Errorf("denial text %q does not tell the model this 403 is throttling and to wait", d.Error())
		}
		if tl.up.hitCount() != 2 || retriesOf(tl.Layer, "search_items") != 0 {
			t.Error("a 403 was retried")
		}
		if d.Unwrap() == nil || !strings.Contains(d.Unwrap().Error(), "HTTP 403") {
			t.Errorf("denial does not wrap the tool's own error: %v", d.Unwrap())
		}
	})
}

func TestOrdinary4xxErrorsPassThroughUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(403, `{"message":"Missing Authentication Token"}`))
		toolErr := errors.New("unauthorized")
		_, err := tl.Run(t.Context(), "get_item", testHost, func(ctx contextLike) error {
			_, _, _ = tl.getIn(ctx, "/v1/x")
			return toolErr
		})
		if err != toolErr { //nolint:errorlint // the tool's own error unchanged, not wrapped
			t.Fatalf("error %v, want the tool's own error unchanged", err)
		}
	})
}

func TestDenialTextIsACompleteSentence(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Denial{Code: CodeRetryExhausted, Host: "example.org", Attempts: 3, ElapsedMS: 1234, LastStatus: 503,
		LastMessage: "busy", RetryAfterMS: 2000, RetryAt: now.Add(2 * time.Second)}
	d.Next = testAdvice(d, Situation{Now: now, ToolTimeout: DefaultPolicy().ToolTimeout})
	want := `The catalog request to example.org was given up (retry_exhausted): the catalog kept failing on every allowed attempt; ` +
		`3 attempt(s) in 1234 ms; last upstream answer HTTP 503 "busy"; the catalog asked to wait 2000 ms (Retry-After). ` +
		`The catalog looks unhealthy or overloaded: wait before calling the tool again (about 2s from now, at 2026-01-01T00:00:02Z), or try another catalog.`
	if got := d.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	for _, code := range []string{CodeRetryExhausted, CodeTimeout, CodeCircuitOpen, CodeBudgetExhausted, CodeNotRetryable, CodeDeadline} {
		if codeSummaries[code] == "" || testAdvice(&Denial{Code: code}, Situation{Now: now, ToolTimeout: DefaultPolicy().ToolTimeout}) == "" {
			t.Errorf("code %s has no summary or next step", code)
		}
	}
}
