package sharedstate

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"go.uber.org/goleak"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend is one Redis the store tests run against: miniredis (always)
// and a real redis-server (when installed; required with CI=true).
type backend struct {
	name string
	url  string
	mini *miniredis.Miniredis // nil for the real server
}

func backends(t *testing.T) []backend {
	t.Helper()
	mini := miniredis.RunT(t)
	out := []backend{{name: "miniredis", url: "redis://" + mini.Addr() + "/0", mini: mini}}
	if testing.Short() {
		return out
	}
	real := redistest.Start(t)
	return append(out, backend{name: "redis-server", url: real.URL})
}

// open returns a store on b, closed when the test ends. Each call is a
// new client, as each replica has its own.
func (b backend) open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(b.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// ctxT is the context of a test's store operations; its bound only ends
// a test that hangs on Redis (it is shared by all of the test's operations,
// which a loaded machine may take seconds to run).
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Two replicas spending one host's budget concurrently get exactly one
// budget's worth of retries between them.
func TestBudgetIsOneBucketForAllReplicas(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			replicas := []*Store{b.open(t), b.open(t), b.open(t)}
			var mu sync.Mutex
			taken := 0
			var wg sync.WaitGroup
			for _, s := range replicas {
				wg.Go(func() {
					for range 60 {
						ok, _, err := s.BudgetTake(ctx, "down.test", 5, 500)
						if err != nil {
							t.Error(err)
							return
						}
						if ok {
							mu.Lock()
							taken++
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			if taken != 100 {
				t.Fatalf("%d retries taken by 3 replicas from a 500-token budget at 5 each, want 100", taken)
			}
			if ok, left, _ := replicas[0].BudgetTake(ctx, "down.test", 5, 500); ok || left != 0 {
				t.Errorf("take from a spent budget: ok=%v left=%d", ok, left)
			}
			if ok, left, _ := replicas[0].BudgetTake(ctx, "other.test", 5, 500); !ok || left != 495 {
				t.Errorf("another host's budget: ok=%v left=%d, want its own 495", ok, left)
			}
			tokens, err := replicas[1].BudgetRefund(ctx, "down.test", 6, 500)
			if err != nil || tokens != 6 {
				t.Fatalf("refund: %d, %v; want 6", tokens, err)
			}
			for range 200 {
				tokens, _ = replicas[2].BudgetRefund(ctx, "down.test", 6, 500)
			}
			if tokens != 500 {
				t.Errorf("refunds past capacity: %d tokens, want 500", tokens)
			}
		})
	}
}

func testRules() reliability.BreakerRules {
	return reliability.BreakerRules{Window: 30 * time.Second, Buckets: 10, MinCalls: 50, FailureRate: 0.5, Probes: 3, ProbeLease: 15 * time.Second}
}

// The shared breaker opens on outcomes reported by several replicas, is
// open for all of them, lets through at most Probes probes at a time once
// its time is over, re-opens on a failed probe, and closes after Probes
// successes with a fresh window.
func TestBreakerOpensForAllReplicasAndRecovers(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			r := testRules()
			a, c := b.open(t), b.open(t)
			now := time.UnixMilli(1_800_000_000_000)
			record := func(s *Store, o reliability.BreakerOutcome) reliability.BreakerView {
				t.Helper()
				v, err := s.BreakerRecord(ctx, "flaky.test", o, now, 10*time.Second, r)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			// 24 failures and 25 successes from two replicas: 49 outcomes, closed.
			for i := range 49 {
				s := []*Store{a, c}[i%2]
				if v := record(s, reliability.BreakerOutcome{Failed: i < 24}); v.State != reliability.BreakerClosed {
					t.Fatalf("outcome %d: %s, want closed below MinCalls", i+1, v.State)
				}
			}
			// Neutral outcomes count nothing.
			record(a, reliability.BreakerOutcome{Neutral: true, Failed: true})
			v := record(c, reliability.BreakerOutcome{Failed: true}) // 50 outcomes, 25 failures
			if v.State != reliability.BreakerOpen || !v.OpenUntil.Equal(now.Add(10*time.Second)) {
				t.Fatalf("after 25 of 50 failed: %+v, want open for 10 s", v)
			}
			if ok, _, v, err := a.BreakerAllow(ctx, "flaky.test", now.Add(9*time.Second), r); err != nil || ok || v.State != reliability.BreakerOpen {
				t.Fatalf("the other replica during the open period: admitted=%v %+v %v", ok, v, err)
			}
			// Half-open: three probes, no fourth.
			now = now.Add(10 * time.Second)
			for i := range 3 {
				s := []*Store{a, c}[i%2]
				ok, probe, v, err := s.BreakerAllow(ctx, "flaky.test", now, r)
				if err != nil || !ok || !probe || v.State != reliability.BreakerHalfOpen {
					t.Fatalf("probe %d: admitted=%v probe=%v %+v %v", i+1, ok, probe, v, err)
				}
			}
			if ok, _, _, _ := c.BreakerAllow(ctx, "flaky.test", now, r); ok {
				t.Fatal("a fourth attempt admitted while three probes are out")
			}
			// A late non-probe outcome changes nothing; a failed probe re-opens.
			if v := record(a, reliability.BreakerOutcome{Failed: true}); v.State != reliability.BreakerHalfOpen {
				t.Fatalf("late outcome moved the breaker to %s", v.State)
			}
			if v := record(a, reliability.BreakerOutcome{Probe: true, Failed: true}); v.State != reliability.BreakerOpen {
				t.Fatalf("failed probe: %s, want open", v.State)
			}
			// Next half-open period: three successful probes close it.
			now = now.Add(11 * time.Second)
			for i := range 3 {
				if ok, probe, _, _ := c.BreakerAllow(ctx, "flaky.test", now, r); !ok || !probe {
					t.Fatalf("probe %d not admitted", i+1)
				}
			}
			for i := range 3 {
				want := reliability.BreakerHalfOpen
				if i == 2 {
					want = reliability.BreakerClosed
				}
				if v := record(a, reliability.BreakerOutcome{Probe: true}); v.State != want {
					t.Fatalf("successful probe %d: %s, want %s", i+1, v.State, want)
				}
			}
			// Closed with a fresh window: one failure does not re-open it.
			if v := record(c, reliability.BreakerOutcome{Failed: true}); v.State != reliability.BreakerClosed {
				t.Fatalf("first failure after closing: %s", v.State)
			}
			views, _, err := a.Peek(ctx, []string{"flaky.test", "never.test"}, 500)
			if err != nil || views[0].State != reliability.BreakerClosed || views[1].State != reliability.BreakerClosed {
				t.Errorf("peek: %+v %v", views, err)
			}
		})
	}
}

// Outcomes older than the window no longer count: after 49 failures, one
// more in the window's last bucket opens the breaker, one a window later
// does not.
func TestBreakerWindowSlides(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			r := testRules()
			s := b.open(t)
			now := time.UnixMilli(1_800_000_000_000)
			lastBucket := r.Window - r.Window/time.Duration(r.Buckets)
			for host, later := range map[string]time.Duration{"inside": lastBucket, "outside": r.Window} {
				for range 49 {
					if _, err := s.BreakerRecord(ctx, host, reliability.BreakerOutcome{Failed: true}, now, 10*time.Second, r); err != nil {
						t.Fatal(err)
					}
				}
				v, err := s.BreakerRecord(ctx, host, reliability.BreakerOutcome{Failed: true}, now.Add(later), 10*time.Second, r)
				want := map[string]string{"inside": reliability.BreakerOpen, "outside": reliability.BreakerClosed}[host]
				if err != nil || v.State != want {
					t.Errorf("one failure %v after 49: %+v %v, want %s", later, v, err, want)
				}
			}
		})
	}
}

// Probes whose outcome never comes back (their replica died) free their
// slots after the lease.
func TestBreakerLostProbesLapse(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			r := testRules()
			s := b.open(t)
			now := time.UnixMilli(1_800_000_000_000)
			for range 50 {
				_, _ = s.BreakerRecord(ctx, "h", reliability.BreakerOutcome{Failed: true}, now, time.Second, r)
			}
			now = now.Add(time.Second)
			for range 3 {
				_, _, _, _ = s.BreakerAllow(ctx, "h", now, r)
			}
			if ok, _, _, _ := s.BreakerAllow(ctx, "h", now.Add(r.ProbeLease-time.Millisecond), r); ok {
				t.Fatal("a probe admitted while three are out and their lease runs")
			}
			if ok, probe, _, _ := s.BreakerAllow(ctx, "h", now.Add(r.ProbeLease), r); !ok || !probe {
				t.Fatal("no probe admitted once the lost probes' lease ran out")
			}
		})
	}
}

// An entry is served in the generation it was stored in only; a write
// (Invalidate) moves the host on, for every replica, and a read that
// started before it cannot store its answer after it.
func TestCacheGenerations(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			a, c := b.open(t), b.open(t)
			gen, entry, err := a.CacheRead(ctx, "cat.test", "k1")
			if err != nil || gen != "0.0" || entry != nil {
				t.Fatalf("empty cache: %q %q %v", gen, entry, err)
			}
			if ok, err := a.CacheWrite(ctx, "cat.test", "k1", gen, []byte(gen+"\nanswer"), time.Minute, 1<<20); !ok || err != nil {
				t.Fatalf("write: %v %v", ok, err)
			}
			if g, e, _ := c.CacheRead(ctx, "cat.test", "k1"); g != gen || string(e) != gen+"\nanswer" {
				t.Fatalf("other replica reads %q %q", g, e)
			}
			if err := c.Invalidate(ctx, []string{"cat.test"}, false); err != nil {
				t.Fatal(err)
			}
			g2, e2, _ := a.CacheRead(ctx, "cat.test", "k1")
			if g2 == gen || !bytes.HasPrefix(e2, []byte(gen+"\n")) {
				t.Fatalf("after a write: gen %q (was %q), entry %q", g2, gen, e2)
			}
			if ok, _ := a.CacheWrite(ctx, "cat.test", "k2", gen, []byte("late"), time.Minute, 1<<20); ok {
				t.Fatal("a read from before the write stored its answer after it")
			}
			if g, _, _ := a.CacheRead(ctx, "other.test", ""); g != "0.0" {
				t.Errorf("another host's generation moved: %q", g)
			}
			if err := a.Invalidate(ctx, nil, true); err != nil {
				t.Fatal(err)
			}
			if g, _, _ := c.CacheRead(ctx, "other.test", ""); g != "1.0" {
				t.Errorf("after invalidating all: other host's generation %q, want 1.0", g)
			}
		})
	}
}

// The cache holds at most maxBytes of entries, evicting those that expire
// first, and its accounting forgets entries once they expired.
func TestCacheSizeBound(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			s := b.open(t)
			entry := func(i int) []byte { return []byte(fmt.Sprintf("0.0\n%03d%s", i, strings.Repeat("x", 96))) } // 103 bytes
			for i := range 20 {
				ttl := time.Minute + time.Duration(i)*time.Second // later entries expire later
				if ok, err := s.CacheWrite(ctx, "h", fmt.Sprint(i), "0.0", entry(i), ttl, 1000); !ok || err != nil {
					t.Fatalf("write %d: %v %v", i, ok, err)
				}
			}
			used, _ := s.cacheBytes(ctx)
			if used > 1000 || used != 9*103 {
				t.Fatalf("%d bytes accounted after 20 entries of 103 under a 1000-byte bound, want %d", used, 9*103)
			}
			for i := range 20 {
				_, e, _ := s.CacheRead(ctx, "h", fmt.Sprint(i))
				if kept := e != nil; kept != (i >= 11) {
					t.Errorf("entry %d kept=%v; want the 9 latest-expiring kept", i, kept)
				}
			}
			// Rewriting an entry replaces its size rather than adding to it.
			_, _ = s.CacheWrite(ctx, "h", "19", "0.0", entry(19), time.Hour, 1000)
			if used, _ := s.cacheBytes(ctx); used != 9*103 {
				t.Errorf("after rewriting one entry: %d bytes, want %d", used, 9*103)
			}
		})
	}
}

func TestCacheForgetsExpiredEntries(t *testing.T) {
	ctx := ctxT(t)
	mini := miniredis.RunT(t)
	start := time.Now()
	mini.SetTime(start)
	s := backend{url: "redis://" + mini.Addr()}.open(t)
	for i := range 5 {
		_, _ = s.CacheWrite(ctx, "h", fmt.Sprint(i), "0.0", []byte("0.0\n0123456789"), time.Second, 1000)
	}
	if used, _ := s.cacheBytes(ctx); used != 5*14 {
		t.Fatalf("%d bytes, want %d", used, 5*14)
	}
	mini.SetTime(start.Add(2 * time.Second))
	mini.FastForward(2 * time.Second)
	_, _ = s.CacheWrite(ctx, "h", "new", "0.0", []byte("0.0\nabc"), time.Second, 1000)
	if used, _ := s.cacheBytes(ctx); used != 7 {
		t.Errorf("after the entries expired and one more was written: %d bytes, want 7", used)
	}
	if n, _ := mini.ZMembers("stac-mcp:cache:index"); len(n) != 1 {
		t.Errorf("index still lists %d entries, want 1", len(n))
	}
}

// A generation key outlives every entry stored under it: a write's
// generation lasts a day, and each cache write extends it to its entry's
// TTL, so it never falls back to 0 while an entry from before a write is
// alive.
func TestGenerationKeysOutliveEntries(t *testing.T) {
	ctx := ctxT(t)
	mini := miniredis.RunT(t)
	s := backend{url: "redis://" + mini.Addr()}.open(t)
	_ = s.Invalidate(ctx, []string{"h"}, false)
	if ttl := mini.TTL("stac-mcp:cache:gen:h"); ttl < 24*time.Hour {
		t.Fatalf("generation key lives %v after a write, want at least a day", ttl)
	}
	mini.FastForward(23 * time.Hour)
	_, _ = s.CacheWrite(ctx, "h", "k", "0.1", []byte("0.1\nx"), 20*time.Hour, 1000)
	if ttl, entry := mini.TTL("stac-mcp:cache:gen:h"), mini.TTL("stac-mcp:cache:entry:k"); ttl <= entry {
		t.Errorf("generation key expires in %v, before its entry (%v)", ttl, entry)
	}
}

// One replica leads a read; the others see the claim until it is
// released or expires, and only the holder's token releases it.
func TestLead(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			a, c := b.open(t), b.open(t)
			if ok, err := a.Lead(ctx, "k@0.0", "ta", time.Minute); !ok || err != nil {
				t.Fatalf("first lead: %v %v", ok, err)
			}
			if ok, _ := c.Lead(ctx, "k@0.0", "tc", time.Minute); ok {
				t.Fatal("second replica led a claimed read")
			}
			_ = c.Unlead(ctx, "k@0.0", "tc")
			if ok, _ := c.Lead(ctx, "k@0.0", "tc", time.Minute); ok {
				t.Fatal("a foreign token released the claim")
			}
			_ = a.Unlead(ctx, "k@0.0", "ta")
			if ok, _ := c.Lead(ctx, "k@0.0", "tc", time.Minute); !ok {
				t.Fatal("claim not free after its holder released it")
			}
		})
	}
}

// Replicas agree on one cursor key, which survives the loss of Redis's
// data as long as one replica puts it back.
func TestCursorKeyShared(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := ctxT(t)
			a, c := b.open(t), b.open(t)
			ka, err := a.CursorKey(ctx, bytes.Repeat([]byte{1}, 32))
			if err != nil {
				t.Fatal(err)
			}
			kc, err := c.CursorKey(ctx, bytes.Repeat([]byte{2}, 32))
			if err != nil || !bytes.Equal(ka, kc) || !bytes.Equal(ka, bytes.Repeat([]byte{1}, 32)) {
				t.Fatalf("replicas got %x and %x (%v), want the first one's", ka, kc, err)
			}
			_ = a.client.FlushDB(ctx).Err()
			if k, _ := a.CursorKey(ctx, ka); !bytes.Equal(k, ka) {
				t.Fatal("the key in use was not put back after Redis lost it")
			}
			if k, _ := c.CursorKey(ctx, bytes.Repeat([]byte{3}, 32)); !bytes.Equal(k, ka) {
				t.Fatal("a new replica did not get the restored key")
			}
			_ = a.client.Set(ctx, "stac-mcp:cursor-key", "short", 0).Err()
			if _, err := c.CursorKey(ctx, ka); err == nil || !strings.Contains(err.Error(), "does not hold a cursor key") {
				t.Errorf("damaged key: %v", err)
			}
		})
	}
}

// Open applies short timeouts unless the URL sets its own, and never
// shows the password in an error.
func TestOpen(t *testing.T) {
	s, err := Open("redis://:secret@127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := s.client.Options()
	if o.DialTimeout != defaultDialTimeout || o.ReadTimeout != defaultIOTimeout || o.MaxRetries > 0 || o.DialerRetries != 1 || !o.ContextTimeoutEnabled {
		t.Errorf("defaults: dial %v read %v retries %d ctx %v", o.DialTimeout, o.ReadTimeout, o.MaxRetries, o.ContextTimeoutEnabled)
	}
	s2, err := Open("redis://127.0.0.1:1/0?dial_timeout=3s&read_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if o := s2.client.Options(); o.DialTimeout != 3*time.Second || o.ReadTimeout != 2*time.Second {
		t.Errorf("URL timeouts ignored: dial %v read %v", o.DialTimeout, o.ReadTimeout)
	}
	// Nothing listens on port 1: the ping fails (bounded by the options
	// checked above, not by a clock) without showing the password.
	err = s.Ping(context.Background())
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("ping of a closed port: %v", err)
	}
	if _, err := Open("http://:secret@x/"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad URL: %v", err)
	}
}
