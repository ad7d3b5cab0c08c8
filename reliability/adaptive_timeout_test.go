package reliability

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// slowAnswer answers 200 after took, unless the attempt is cut first.
func slowAnswer(took time.Duration) func(int, *http.Request) (*http.Response, error) {
	return func(_ int, req *http.Request) (*http.Response, error) {
		select {
		case <-time.After(took):
			return answer(200, `{"type":"FeatureCollection","features":[]}`), nil
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

func policyFromEnv(t *testing.T, env map[string]string) Policy {
	t.Helper()
	p, err := PolicyFromEnv(lookupFrom(env))
	if err != nil {
		t.Fatal(err)
	}
	p.CacheTTL = 0
	return p
}

// A catalog whose search takes 6 s answers when the user raised the tool
// timeout to 60 s: the attempt timeout follows it (on the old
// code every attempt was cut at 4 s and the call never answered).
func TestSlowCatalogAnswersWhenTheToolTimeoutIsRaised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, policyFromEnv(t, map[string]string{EnvToolTimeout: "60"}), slowAnswer(6*time.Second))
		start := time.Now()
		rc, status, err := tl.get("search_items", "/v1/search")
		if err != nil || status != 200 {
			t.Fatalf("status %d err %v, want the 6 s answer", status, err)
		}
		if elapsed := time.Since(start); elapsed != 6*time.Second || rc.Attempts != 1 {
			t.Errorf("answered after %v in %d attempt(s), want 6 s and one attempt", elapsed, rc.Attempts)
		}
	})
}

// With hedging off (adr/0011's policy) and an explicit short attempt
// timeout the last attempt still gets the rest
// of the call's deadline, so a slow catalog answers instead of being cut at
// the attempt timeout three times.
func TestLastAttemptGetsTheRestOfTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := policyFromEnv(t, map[string]string{EnvToolTimeout: "60", envAttemptTimeout: "4", envHedge: "off"})
		tl := newTestLayer(t, p, slowAnswer(6*time.Second))
		rc, status, err := tl.get("search_items", "/v1/search")
		if err != nil || status != 200 {
			t.Fatalf("status %d err %v, want the answer on the last attempt", status, err)
		}
		if rc.Attempts != 3 || testutilCounter(tl.metrics.attemptTimeouts.WithLabelValues("search_items")) != 2 {
			t.Errorf("%d attempts, %v attempt timeouts; want 3 attempts, the first two cut at 4 s", rc.Attempts,
				testutilCounter(tl.metrics.attemptTimeouts.WithLabelValues("search_items")))
		}
	})
}

// With hedging off (adr/0011's policy), at the default 15 s a 5 s search
// answers on its last attempt; the host is
// then known to be slow, and the next call's first attempt waits long
// enough for it (never more than half the time left, so a hung attempt
// would still leave room for another).
func TestSlowHostStretchesLaterAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.Hedge = false
		tl := newTestLayer(t, p, slowAnswer(5*time.Second))
		rc, status, err := tl.get("search_items", "/v1/search")
		if err != nil || status != 200 || rc.Attempts != 3 {
			t.Fatalf("first call: status %d err %v after %d attempts, want the answer on the third", status, err, rc.Attempts)
		}
		start := time.Now()
		rc, status, err = tl.get("search_items", "/v1/search")
		if err != nil || status != 200 || rc.Attempts != 1 || time.Since(start) != 5*time.Second {
			t.Fatalf("second call: status %d err %v, %d attempts in %v; want one 5 s attempt", status, err, rc.Attempts, time.Since(start))
		}
		// The stretch is forgotten once the host has not been slow for a while.
		time.Sleep(slowMemory + time.Second)
		if _, ok := tl.host(testHost).slow.recent(tl.now()); ok {
			t.Error("the slow answer was still remembered after slowMemory")
		}
	})
}

// A hung catalog at the default policy still gets its three attempts (the
// first two cut at 4 s), and the call ends at the 15 s cap with a timeout
// whose advice fits what hung.
func TestHungCatalogAdviceNamesWhatTimedOut(t *testing.T) {
	cases := []struct {
		path       string
		want, deny []string
	}{
		{"/v1/search", []string{"search (/v1/search)", "narrower bbox", EnvToolTimeout}, nil},
		{"/v1", []string{"landing page (/v1)", "would not help", "catalog_url", EnvToolTimeout}, []string{"bbox"}},
		{"/v1/conformance", []string{"conformance page", EnvToolTimeout}, []string{"bbox"}},
	}
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			tl := newTestLayer(t, noCache(), hang)
			start := time.Now()
			rc, _, err := tl.get("search_items", c.path)
			var d *Denial
			if !errors.As(err, &d) || d.Code != CodeTimeout {
				t.Fatalf("%s: error %v, want a timeout denial", c.path, err)
			}
			if elapsed := time.Since(start); elapsed != tl.Policy().ToolTimeout || rc.Attempts != 3 {
				t.Errorf("%s: ended after %v and %d attempts, want the 15 s cap and 3 attempts", c.path, elapsed, rc.Attempts)
			}
			for _, w := range c.want {
				if !strings.Contains(d.Next, w) {
					t.Errorf("%s: advice %q does not mention %q", c.path, d.Next, w)
				}
			}
			for _, w := range c.deny {
				if strings.Contains(d.Next, w) {
					t.Errorf("%s: advice %q mentions %q", c.path, d.Next, w)
				}
			}
		})
	}
}

// When an asset host (not the catalog) hangs, the advice says so.
func TestTimeoutAdviceNamesAnAssetHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), hang)
		_, err := tl.Run(t.Context(), "estimate_data_size", testHost, func(ctx contextLike) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "https://assets.test/B04.tif", nil)
			_, _, err := tl.readThrough(req)
			return err
		})
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeTimeout || !strings.Contains(d.Next, "assets.test (not the catalog)") {
			t.Fatalf("error %v, want a timeout naming the asset host", err)
		}
	})
}

// A write is sent once and keeps the attempt timeout: its caller needs the
// rest of the call to look a lost answer up (adr/0014), so the attempt is
// not open-ended like the last attempt of a read.
func TestAWriteKeepsTheAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), hang)
		start := time.Now()
		_, err := tl.Run(t.Context(), "create_item", testHost, func(ctx contextLike) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+testHost+"/v1/collections/c/items", strings.NewReader(`{}`))
			_, _, err := tl.readThrough(req)
			return err
		})
		if elapsed := time.Since(start); elapsed != tl.Policy().AttemptTimeout || tl.up.hitCount() != 1 {
			t.Errorf("write ended after %v and %d attempt(s) (%v), want one attempt cut at the %v attempt timeout",
				elapsed, tl.up.hitCount(), err, tl.Policy().AttemptTimeout)
		}
	})
}

// A host that is not the catalog's (an asset host probed by HEAD) that
// does not answer is not blamed on catalog_url (estimate_data_size
// told the user to "check catalog_url" when an asset host failed).
func TestAssetHostFailureDoesNotBlameTheCatalog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(int, *http.Request) (*http.Response, error) {
			return nil, errors.New("dial tcp: connect: network is unreachable")
		})
		_, err := tl.Run(t.Context(), "estimate_data_size", testHost, func(ctx contextLike) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "https://assets.test/B04.tif", nil)
			_, _, err := tl.readThrough(req)
			return err
		})
		var d *Denial
		if !errors.As(err, &d) || !d.AssetHost || d.Host != "assets.test" {
			t.Fatalf("error %v, want a denial marked as an asset host's", err)
		}
		if text := d.Error(); strings.Contains(text, "check catalog_url") || strings.Contains(text, "The catalog request") ||
			!strings.Contains(text, "not the catalog's host") {
			t.Errorf("denial %q blames the catalog for an asset host", text)
		}
		// The catalog's own host keeps the catalog advice.
		_, err = tl.Run(t.Context(), "get_root", testHost, func(ctx contextLike) error {
			_, _, err := tl.getIn(ctx, "/v1")
			return err
		})
		if !errors.As(err, &d) || d.AssetHost || !strings.Contains(d.Next, "check catalog_url") {
			t.Errorf("catalog failure %v lost its catalog_url advice", err)
		}
	})
}
