package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestAlways503StopsAtThreeAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, `{"description":"overloaded"}`))
		rc, _, err := tl.get("search_items", "/v1/search")

		if got := tl.up.hitCount(); got != 3 {
			t.Fatalf("upstream hits = %d, want 3", got)
		}
		if got := retriesOf(tl.Layer, "search_items"); got != 2 {
			t.Errorf("retries_attempted_total = %v, want 2", got)
		}
		if got := exhaustedOf(tl.Layer, "search_items"); got != 1 {
			t.Errorf("retry_exhausted_total = %v, want 1", got)
		}
		giveUps := tl.logs.named(t, eventRetryGiveUp)
		if len(giveUps) != 1 || giveUps[0]["reason"] != CodeRetryExhausted {
			t.Fatalf("retry_give_up events = %v, want one with reason retry_exhausted", giveUps)
		}
		var d *Denial
		if !errors.As(err, &d) {
			t.Fatalf("error = %v, want a *Denial", err)
		}
		if d.Code != CodeRetryExhausted || d.Attempts != 3 || d.LastStatus != 503 || d.LastMessage != "overloaded" {
			t.Errorf("denial = %+v, want retry_exhausted after 3 attempts, last 503 \"overloaded\"", d)
		}
		if d.RetryAt.IsZero() || !strings.Contains(d.Error(), "HTTP 503") {
			t.Errorf("denial lacks retry time or status in text: %q", d.Error())
		}
		if rc.Attempts != 3 || rc.Retries != 2 || rc.UpstreamRequests != 1 {
			t.Errorf("receipt = %+v, want 3 attempts, 2 retries, 1 request", rc)
		}
	})
}

func TestNonRetryableStatusesAreSentOnce(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 405, 422, 501, 505} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTestLayer(t, noCache(), always(status, `{"detail":"no"}`))
				rc, got, err := tl.get("get_item", "/v1/collections/c/items/i")
				if err != nil {
					t.Fatalf("a %d answer must reach the caller as a response, got error %v", status, err)
				}
				if got != status || tl.up.hitCount() != 1 || rc.Attempts != 1 || retriesOf(tl.Layer, "get_item") != 0 {
					t.Fatalf("status %d: got status %d, %d hits, receipt %+v, want 1 hit and no retry",
						status, got, tl.up.hitCount(), rc)
				}
			})
		})
	}
}

// Bad JSON and valid JSON that is not STAC are 200 answers: the layer hands
// them over after one attempt and stacclient rejects them without a retry.
func TestUnparsableBodiesAreNotRetried(t *testing.T) {
	for name, body := range map[string]string{"bad json": `{"type":"Feature`, "not stac": `{"hello":"world"}`} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTestLayer(t, noCache(), always(200, body))
				var got []byte
				_, err := tl.Run(context.Background(), "get_item", testHost, func(ctx context.Context) error {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/v1/collections/c/items/i", nil)
					resp, err := tl.HTTPClient().Do(req)
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					got, _ = io.ReadAll(resp.Body)
					return errors.New("invalid STAC item") // what stacclient would report
				})
				if string(got) != body || tl.up.hitCount() != 1 {
					t.Fatalf("body %q after %d hits, want %q after 1", got, tl.up.hitCount(), body)
				}
				if err == nil || err.Error() != "invalid STAC item" {
					t.Fatalf("error = %v, want the tool's own parse error unchanged", err)
				}
			})
		})
	}
}

func TestPostSearchSendsIdenticalBodyOnEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(n int, _ *http.Request) (*http.Response, error) {
			if n < 3 {
				return answer(502, "bad gateway"), nil
			}
			return answer(200, `{"type":"FeatureCollection","features":[]}`), nil
		})
		body := []byte(`{"collections":["sentinel-2-l2a"],"bbox":[1,2,3,4],"limit":10}`)
		rc, err := tl.Run(context.Background(), "search_items", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+testHost+"/v1/search", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := tl.HTTPClient().Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
		if err != nil {
			t.Fatal(err)
		}
		if tl.up.hitCount() != 3 || rc.Attempts != 3 {
			t.Fatalf("hits %d, receipt attempts %d, want 3 and 3", tl.up.hitCount(), rc.Attempts)
		}
		want := sha256.Sum256(body)
		for i, b := range tl.up.bodies {
			if sha256.Sum256(b) != want {
				t.Errorf("attempt %d sent body %q, want %q", i+1, b, body)
			}
			if got := tl.up.headers[i].Get(correlationHeader); got != rc.CorrelationID {
				t.Errorf("attempt %d X-Correlation-ID = %q, want %q", i+1, got, rc.CorrelationID)
			}
		}
	})
}

func TestNonIdempotentRequestGetsOneAttempt(t *testing.T) {
	post := func(tl *testLayer, key string) (int, error) { return sendWrite(tl, http.MethodPost, key) }
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "down"))
		status, err := post(tl, "")
		if err != nil || status != 503 || tl.up.hitCount() != 1 {
			t.Fatalf("transaction POST: status %d, err %v, %d hits; want the 503 after exactly 1 hit", status, err, tl.up.hitCount())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(int, *http.Request) (*http.Response, error) {
			return nil, &netResetError{}
		})
		_, err := post(tl, "")
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeNotRetryable || tl.up.hitCount() != 1 {
			t.Fatalf("reset on a transaction POST: err %v after %d hits, want not_retryable after 1", err, tl.up.hitCount())
		}
	})
}

// TestWriteRetriesFollowTheMethodNotTheKey: an Idempotency-Key lets the
// layer retry PUT and DELETE (idempotent in HTTP terms), but never POST or
// PATCH: most catalogs ignore the header, so a retried create or patch
// could apply twice. Without a key, PUT and DELETE get one attempt too.
func TestWriteRetriesFollowTheMethodNotTheKey(t *testing.T) {
	for _, c := range []struct {
		method string
		key    string
		hits   int
	}{
		{http.MethodPost, "key-1", 1},
		{http.MethodPatch, "key-1", 1},
		{http.MethodPut, "", 1},
		{http.MethodDelete, "", 1},
		{http.MethodPut, "key-1", 3},
		{http.MethodDelete, "key-1", 3},
	} {
		synctest.Test(t, func(t *testing.T) {
			tl := newTestLayer(t, noCache(), always(503, "down"))
			status, err := sendWrite(tl, c.method, c.key)
			if got := tl.up.hitCount(); got != c.hits {
				t.Fatalf("%s with key %q: %d hits (status %d, err %v), want %d", c.method, c.key, got, status, err, c.hits)
			}
		})
	}
}

// sendWrite sends one write to the test catalog inside Run.
func sendWrite(tl *testLayer, method, key string) (int, error) {
	status := 0
	_, err := tl.Run(context.Background(), "write", testHost, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, method, "https://"+testHost+"/v1/collections/c/items/x", strings.NewReader(`{"id":"x"}`))
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := tl.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		status = resp.StatusCode
		return resp.Body.Close()
	})
	return status, err
}

// netResetError looks like a connection reset by peer.
type netResetError struct{}

func (*netResetError) Error() string   { return "read tcp: connection reset by peer" }
func (*netResetError) Timeout() bool   { return false }
func (*netResetError) Temporary() bool { return true }

// With hedging off (adr/0011's policy, kept as STAC_MCP_HEDGE=off) a hung
// attempt is cut at the attempt timeout and retried after the backoff.
func TestHungAttemptIsRetriedWithinTheToolBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.Hedge = false
		tl := newTestLayer(t, p, func(n int, req *http.Request) (*http.Response, error) {
			if n == 1 {
				return hang(n, req)
			}
			return answer(200, `{}`), nil
		})
		start := time.Now()
		rc, status, err := tl.get("get_collection", "/v1/collections/c")
		elapsed := time.Since(start)
		if err != nil || status != 200 {
			t.Fatalf("status %d err %v, want 200 on the second attempt", status, err)
		}
		p = tl.Policy()
		if elapsed < p.AttemptTimeout || elapsed >= p.AttemptTimeout+p.BackoffBase {
			t.Errorf("elapsed %v, want attempt timeout %v plus a wait under %v", elapsed, p.AttemptTimeout, p.BackoffBase)
		}
		if rc.Attempts != 2 || tl.up.hitCount() != 2 {
			t.Errorf("receipt attempts %d, hits %d, want 2", rc.Attempts, tl.up.hitCount())
		}
		if got := testutilCounter(tl.Layer.metrics.attemptTimeouts.WithLabelValues("get_collection")); got != 1 {
			t.Errorf("attempt_timeouts_total = %v, want 1", got)
		}
		if got := timeoutsOf(tl.Layer, "get_collection"); got != 0 {
			t.Errorf("timeouts_total = %v, want 0: the tool did not time out", got)
		}
	})
}

func TestRequestsOutsideRunStillGetThePolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(n int, _ *http.Request) (*http.Response, error) {
			if n == 1 {
				return answer(500, "oops"), nil
			}
			return answer(200, "ok"), nil
		})
		resp, err := tl.HTTPClient().Get("https://" + testHost + "/v1/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || tl.up.hitCount() != 2 || retriesOf(tl.Layer, "unknown") != 1 {
			t.Fatalf("status %d after %d hits, unknown-tool retries %v; want 200 after 2 hits and 1 retry",
				resp.StatusCode, tl.up.hitCount(), retriesOf(tl.Layer, "unknown"))
		}
		if tl.up.headers[0].Get(correlationHeader) == "" || tl.up.headers[0].Get(correlationHeader) != tl.up.headers[1].Get(correlationHeader) {
			t.Errorf("correlation ids %q and %q, want one id on both attempts",
				tl.up.headers[0].Get(correlationHeader), tl.up.headers[1].Get(correlationHeader))
		}
	})
}

// The base transport sees which tool call each upstream request belongs to,
// which is how the tools package proves that no tool bypasses Run.
func TestBaseTransportSeesTheCallInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type seen struct {
			tool, id string
			inside   bool
		}
		var got []seen
		tl := newTestLayer(t, noCache(), func(_ int, req *http.Request) (*http.Response, error) {
			tool, id, inside := CallInfo(req.Context())
			got = append(got, seen{tool, id, inside})
			return answer(200, "{}"), nil
		})
		rc, _, _ := tl.get("get_root", "/v1/")
		resp, err := tl.HTTPClient().Get("https://" + testHost + "/v1/conformance")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(got) != 2 || got[0] != (seen{"get_root", rc.CorrelationID, true}) || got[1].tool != "unknown" || got[1].inside {
			t.Errorf("call info seen upstream %+v, want get_root inside Run then unknown outside", got)
		}
		if correlationIDOf(context.Background()) != "" {
			t.Error("a bare context has a correlation id")
		}
	})
}
