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
)

func TestSuccessfulReadsAreCachedForTheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPolicy()
		p.CacheTTL = 10 * time.Second
		tl := newTestLayer(t, p, always(200, `{"id":"c"}`))
		first, _, _ := tl.get("get_collection", "/v1/collections/c")
		second, status, err := tl.get("get_collection", "/v1/collections/c")
		if err != nil || status != 200 || tl.up.hitCount() != 1 {
			t.Fatalf("second read: status %d err %v, %d hits; want a cached 200 and 1 hit", status, err, tl.up.hitCount())
		}
		if first.CacheHit || !second.CacheHit || second.Attempts != 0 || second.UpstreamRequests != 0 || first.UpstreamRequests != 1 {
			t.Errorf("receipts %+v then %+v, want a miss then a hit with 0 attempts", first, second)
		}
		time.Sleep(10 * time.Second)
		if third, _, _ := tl.get("get_collection", "/v1/collections/c"); third.CacheHit || tl.up.hitCount() != 2 {
			t.Errorf("after the TTL: cache hit %v with %d hits, want a fresh request", third.CacheHit, tl.up.hitCount())
		}
		if h := tl.Health(t.Context()); h[0].CacheLookups5m != 3 || h[0].CacheHitRate != 1.0/3 {
			t.Errorf("health cache lookups %d rate %v, want 3 and 1/3", h[0].CacheLookups5m, h[0].CacheHitRate)
		}
	})
}

func TestFailuresAreNeverCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, DefaultPolicy(), always(404, `{"description":"gone"}`))
		_, _, _ = tl.get("get_item", "/v1/collections/c/items/i")
		rc, status, _ := tl.get("get_item", "/v1/collections/c/items/i")
		if status != 404 || rc.CacheHit || tl.up.hitCount() != 2 {
			t.Errorf("second 404: cache hit %v, %d hits; want no caching", rc.CacheHit, tl.up.hitCount())
		}
	})
}

func TestCacheOffWithZeroTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(200, `{}`))
		_, _, _ = tl.get("t", "/v1/")
		if rc, _, _ := tl.get("t", "/v1/"); rc.CacheHit || tl.up.hitCount() != 2 {
			t.Errorf("TTL 0 still cached (hits %d)", tl.up.hitCount())
		}
	})
}

func TestCacheKeyCanonicalisesBodiesAndKeepsHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, DefaultPolicy(), always(200, `{"type":"FeatureCollection","features":[]}`))
		search := func(body, auth string) Receipt {
			rc, err := tl.Run(context.Background(), "search_items", testHost, func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+testHost+"/v1/search", strings.NewReader(body))
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := tl.HTTPClient().Do(req)
				if err != nil {
					return err
				}
				return resp.Body.Close()
			})
			if err != nil {
				t.Fatal(err)
			}
			return rc
		}
		search(`{"collections":["a"],"limit":5}`, "")
		if rc := search(`{ "limit": 5, "collections": ["a"] }`, ""); !rc.CacheHit {
			t.Error("the same search with keys reordered missed the cache")
		}
		if rc := search(`{"collections":["a"],"limit":6}`, ""); rc.CacheHit {
			t.Error("a different search hit the cache")
		}
		if rc := search(`{"collections":["a"],"limit":5}`, "Bearer other"); rc.CacheHit {
			t.Error("a request with other credentials hit the cache")
		}
		if tl.up.hitCount() != 3 {
			t.Errorf("%d upstream hits, want 3", tl.up.hitCount())
		}
	})
}

func TestCacheIsBoundedInBytes(t *testing.T) {
	now := time.Now()
	c := newResponseCache(time.Minute, 8192)
	body := make([]byte, 700) // 1,724 bytes per entry with overhead
	for i := range 10 {
		c.putFor(string(rune('a'+i)), "h", 0, &snapshot{status: 200, header: http.Header{}, body: body}, now, time.Minute)
		if c.bytesUsed() > 8192 {
			t.Fatalf("after %d entries the cache holds %d bytes, cap 8192", i+1, c.bytesUsed())
		}
	}
	if _, ok := c.get("a", now); ok {
		t.Error("the oldest entry survived eviction")
	}
	if _, ok := c.get("j", now); !ok {
		t.Error("the newest entry was evicted")
	}
	c.putFor("big", "h", 0, &snapshot{status: 200, header: http.Header{}, body: make([]byte, 2048)}, now, time.Minute)
	if _, ok := c.get("big", now); ok {
		t.Error("an entry over a quarter of the cache was stored")
	}
}

func TestIdenticalConcurrentReadsAreCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(int, *http.Request) (*http.Response, error) {
			time.Sleep(time.Second)
			return answer(200, `{"id":"c"}`), nil
		})
		const callers = 5
		receipts := make([]Receipt, callers)
		bodies := make([]string, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				receipts[i], _ = tl.Run(context.Background(), "get_collection", testHost, func(ctx context.Context) error {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/v1/collections/c", nil)
					var err error
					_, bodies[i], err = tl.readThrough(req)
					return err
				})
			})
		}
		wg.Wait()
		if tl.up.hitCount() != 1 {
			t.Fatalf("%d upstream hits for %d identical concurrent reads, want 1", tl.up.hitCount(), callers)
		}
		leaders := 0
		for i, rc := range receipts {
			if bodies[i] != `{"id":"c"}` {
				t.Errorf("caller %d read %q", i, bodies[i])
			}
			if !rc.Coalesced {
				leaders++
				if rc.Attempts != 1 {
					t.Errorf("leader receipt %+v, want 1 attempt", rc)
				}
			}
		}
		if leaders != 1 {
			t.Errorf("%d callers were not coalesced, want exactly 1 leader", leaders)
		}
	})
}

func TestBulkheadCapsRequestsInFlightAndHonoursTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.BulkheadMax = 2
		p.ToolTimeout = 2500 * time.Millisecond
		p.AttemptTimeout = 2 * time.Second
		var mu sync.Mutex
		inFlight, peak := 0, 0
		tl := newTestLayer(t, p, func(int, *http.Request) (*http.Response, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			mu.Unlock()
			time.Sleep(time.Second)
			mu.Lock()
			inFlight--
			mu.Unlock()
			return answer(200, "{}"), nil
		})
		errs := make([]error, 6)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, _, errs[i] = tl.get("get_item", "/v1/collections/c/items/"+string(rune('a'+i)))
			})
		}
		wg.Wait()
		time.Sleep(time.Second) // let abandoned upstream work finish
		mu.Lock()
		defer mu.Unlock()
		if peak != 2 {
			t.Errorf("peak requests in flight %d, want the bulkhead size 2", peak)
		}
		// Two at a time, one second each: four calls finish by 2 s, the last
		// two are still queued at the 2.5 s deadline.
		ok, timedOut := 0, 0
		for _, err := range errs {
			var d *Denial
			switch {
			case err == nil:
				ok++
			case errors.As(err, &d) && d.Code == CodeTimeout:
				timedOut++
			default:
				t.Errorf("unexpected error %v", err)
			}
		}
		if ok != 4 || timedOut != 2 {
			t.Errorf("%d ok and %d timed out, want 4 and 2", ok, timedOut)
		}
	})
}

// A follower whose leader times out asks again under its own deadline
// instead of inheriting the leader's timeout.
func TestCoalescedFollowerOutlivesItsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.AttemptTimeout = 3 * time.Second
		tl := newTestLayer(t, p, func(_ int, req *http.Request) (*http.Response, error) {
			select {
			case <-time.After(2 * time.Second):
				return answer(200, `{"id":"c"}`), nil
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		})
		read := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/v1/collections/c", nil)
			resp, err := tl.HTTPClient().Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		}
		leaderCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		leaderErr := make(chan error, 1)
		go func() {
			_, err := tl.Run(leaderCtx, "get_collection", testHost, read)
			leaderErr <- err
		}()
		synctest.Wait() // the leader's request is in flight
		rc, err := tl.Run(context.Background(), "get_collection", testHost, read)
		if err != nil {
			t.Fatalf("follower error %v, want success after asking again", err)
		}
		if lerr := <-leaderErr; lerr == nil {
			t.Error("the leader with a 1 s deadline succeeded against a 2 s upstream")
		}
		if rc.Coalesced || rc.Attempts != 1 || tl.up.hitCount() != 2 {
			t.Errorf("follower receipt %+v after %d hits, want its own attempt (2 hits in all)", rc, tl.up.hitCount())
		}
		synctest.Wait()
	})
}

// stacclient.Head reads Content-Length from a HEAD answer, which has no
// body: buffering must keep the header's length, and the status line.
func TestHeadKeepsContentLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), func(int, *http.Request) (*http.Response, error) {
			resp := answer(200, "")
			resp.Status = "200 OK"
			resp.ContentLength = 123456789
			return resp, nil
		})
		var resp *http.Response
		_, err := tl.Run(context.Background(), "estimate_data_size", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "https://"+testHost+"/data/a.tif", nil)
			var err error
			resp, err = tl.HTTPClient().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContentLength != 123456789 || resp.Status != "200 OK" {
			t.Fatalf("HEAD: content length %d, status %q; want 123456789 and \"200 OK\"", resp.ContentLength, resp.Status)
		}
	})
}
