package reliability

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// getWith GETs path inside one tool call with the given request headers.
func (tl *testLayer) getWith(path string, header ...string) (Receipt, error) {
	return tl.Run(context.Background(), "t", testHost, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		_, _, err := tl.readThrough(req)
		return err
	})
}

func TestResponsesSayingNoStoreOrNoCacheAreNotCached(t *testing.T) {
	for _, cc := range []string{"no-store", "no-cache", "private, max-age=600", "max-age=0", "max-age=oops"} {
		t.Run(cc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := DefaultPolicy()
				p.CacheTTL = time.Minute
				tl := newTestLayer(t, p, always(200, `{"token":"t"}`, "Cache-Control", cc))
				_, _ = tl.getWith("/token/c")
				second, err := tl.getWith("/token/c")
				if err != nil || second.CacheHit || tl.up.hitCount() != 2 {
					t.Errorf("Cache-Control %q: second read cache hit %v, upstream hits %d, err %v; want 2 upstream hits", cc, second.CacheHit, tl.up.hitCount(), err)
				}
			})
		})
	}
}

func TestPragmaNoCacheWithoutCacheControlIsNotCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = time.Minute
		tl := newTestLayer(t, p, always(200, `{}`, "Pragma", "no-cache"))
		_, _ = tl.getWith("/x")
		if rc, _ := tl.getWith("/x"); rc.CacheHit || tl.up.hitCount() != 2 {
			t.Errorf("Pragma: no-cache answer was reused (hits %d)", tl.up.hitCount())
		}
	})
}

func TestResponseMaxAgeShortensTheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = time.Minute
		tl := newTestLayer(t, p, always(200, `{}`, "Cache-Control", "public, max-age=5"))
		_, _ = tl.getWith("/c")
		time.Sleep(4 * time.Second)
		if rc, _ := tl.getWith("/c"); !rc.CacheHit {
			t.Fatalf("within max-age=5: want a cache hit, got a miss (hits %d)", tl.up.hitCount())
		}
		time.Sleep(2 * time.Second) // 6 s: past max-age, well inside CacheTTL
		if rc, _ := tl.getWith("/c"); rc.CacheHit || tl.up.hitCount() != 2 {
			t.Errorf("past max-age=5 but inside the 1 min TTL: cache hit %v, upstream hits %d; want a fresh request", rc.CacheHit, tl.up.hitCount())
		}
	})
}

func TestLongerMaxAgeDoesNotExtendTheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = 10 * time.Second
		tl := newTestLayer(t, p, always(200, `{}`, "Cache-Control", "max-age=3600"))
		_, _ = tl.getWith("/c")
		time.Sleep(11 * time.Second)
		if rc, _ := tl.getWith("/c"); rc.CacheHit {
			t.Errorf("max-age=3600 kept the answer past the 10 s policy TTL")
		}
	})
}

func TestRequestNoCacheSkipsTheCachedAnswerAndRefreshesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = time.Minute
		tl := newTestLayer(t, p, func(n int, _ *http.Request) (*http.Response, error) {
			return answer(200, `{"n":`+itoa(n)+`}`), nil
		})
		_, _ = tl.getWith("/token/c") // cached: n=1
		fresh, err := tl.getWith("/token/c", "Cache-Control", "no-cache")
		if err != nil || fresh.CacheHit || tl.up.hitCount() != 2 {
			t.Fatalf("no-cache request: cache hit %v, upstream hits %d, err %v; want a request upstream", fresh.CacheHit, tl.up.hitCount(), err)
		}
		if fresh.UpstreamRequests != 1 {
			t.Errorf("no-cache request receipt counts %d upstream requests, want 1", fresh.UpstreamRequests)
		}
		// The fresh answer replaced the old one for callers that accept the cache.
		var body string
		_, err = tl.Run(context.Background(), "t", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/token/c", nil)
			var err error
			_, body, err = tl.readThrough(req)
			return err
		})
		if err != nil || body != `{"n":2}` || tl.up.hitCount() != 2 {
			t.Errorf("after the no-cache refresh a plain read got %q (hits %d, err %v), want the refreshed {\"n\":2} from the cache", body, tl.up.hitCount(), err)
		}
	})
}

func TestRequestNoStoreIsNeitherServedFromNorStoredInTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = time.Minute
		tl := newTestLayer(t, p, always(200, `{}`))
		_, _ = tl.getWith("/c", "Cache-Control", "no-store")
		if rc, _ := tl.getWith("/c"); rc.CacheHit || tl.up.hitCount() != 2 {
			t.Errorf("answer to a no-store request was cached (hits %d)", tl.up.hitCount())
		}
	})
}

func TestParseCacheControl(t *testing.T) {
	cases := []struct {
		header  string
		noStore bool
		maxAge  time.Duration
		hasAge  bool
	}{
		{"", false, 0, false},
		{"public, max-age=30", false, 30 * time.Second, true},
		{"max-age=30, s-maxage=10", false, 10 * time.Second, true},
		{"NO-CACHE", true, 0, false},
		{`max-age="7"`, false, 7 * time.Second, true},
		{"max-age=-1", false, 0, true},
		{"must-revalidate", false, 0, false},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.header != "" {
			h.Set("Cache-Control", c.header)
		}
		d := parseCacheControl(h)
		if d.noStore != c.noStore || d.maxAge != c.maxAge || d.hasAge != c.hasAge {
			t.Errorf("Cache-Control %q: got %+v, want noStore=%v maxAge=%v hasAge=%v", c.header, d, c.noStore, c.maxAge, c.hasAge)
		}
	}
}
