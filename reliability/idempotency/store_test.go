package idempotency

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"go.uber.org/goleak"

	"github.com/stacmcp/stac-mcp/reliability/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable clock shared by a store and its test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// opener opens a store on the given clock; the test closes it.
type opener func(t *testing.T, clock *fakeClock) Store

// storesWith are every implementation the contract runs against, with the
// bounds of o.
func storesWith(o Options) map[string]opener {
	return map[string]opener{
		"sqlite": func(t *testing.T, clock *fakeClock) Store {
			s, err := OpenSQLite(t.Context(), t.TempDir(), Options{TTL: time.Hour, Now: clock.Now, MaxPerCaller: o.MaxPerCaller, MaxTotal: o.MaxTotal})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"miniredis": func(t *testing.T, clock *fakeClock) Store {
			mr := miniredis.RunT(t)
			s, err := OpenRedis("redis://"+mr.Addr()+"/0", Options{TTL: time.Hour, Now: clock.Now, MaxPerCaller: o.MaxPerCaller, MaxTotal: o.MaxTotal})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis-server": func(t *testing.T, clock *fakeClock) Store {
			srv := redistest.Start(t)
			s, err := OpenRedis(srv.URL, Options{TTL: time.Hour, Now: clock.Now, MaxPerCaller: o.MaxPerCaller, MaxTotal: o.MaxTotal})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// forEachStore runs the contract test against every store.
func forEachStore(t *testing.T, test func(t *testing.T, s Store, clock *fakeClock)) {
	forEachStoreWith(t, Options{}, test)
}

func forEachStoreWith(t *testing.T, o Options, test func(t *testing.T, s Store, clock *fakeClock)) {
	for name, open := range storesWith(o) {
		t.Run(name, func(t *testing.T) {
			clock := newClock()
			test(t, open(t, clock), clock)
		})
	}
}

var testKey = Key{Caller: "stdio", Tool: "create_item", Key: "0b6e7d8a-3f1e-4c55-9a3a-1f0f8e4c2d11"}

const lease = 20 * time.Second

func begin(t *testing.T, s Store, k Key, fp string) Claim {
	t.Helper()
	c, err := s.Begin(context.Background(), k, fp, lease)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	return c
}

func TestStoreFirstCallClaimsRepeatsWaitOtherArgumentsConflict(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		c := begin(t, s, testKey, "fp-a")
		if c.Status != Claimed || c.Token == "" {
			t.Fatalf("first Begin = %+v, want Claimed with a token", c)
		}
		busy := begin(t, s, testKey, "fp-a")
		if busy.Status != Busy || !busy.Record.LeaseUntil.Equal(clock.Now().Add(lease)) || busy.Token != "" {
			t.Fatalf("repeat while in flight = %+v, want Busy until now+lease", busy)
		}
		if got := begin(t, s, testKey, "fp-b"); got.Status != Conflict {
			t.Fatalf("other arguments = %v, want Conflict", got.Status)
		}
		// Keys are scoped by caller and tool.
		for _, other := range []Key{{Caller: "token:ab", Tool: testKey.Tool, Key: testKey.Key}, {Caller: testKey.Caller, Tool: "update_item", Key: testKey.Key}} {
			if got := begin(t, s, other, "fp-b"); got.Status != Claimed {
				t.Errorf("%+v = %v, want its own Claimed", other, got.Status)
			}
		}
	})
}

func TestStoreFinishedOutcomeIsReturnedUnchanged(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		c := begin(t, s, testKey, "fp")
		outcome := []byte(`{"status":"created","item_id":"x"}`)
		if err := s.Finish(context.Background(), testKey, c.Token, outcome, 0); err != nil {
			t.Fatal(err)
		}
		clock.Add(59 * time.Minute)
		got := begin(t, s, testKey, "fp")
		if got.Status != Completed || string(got.Record.Outcome) != string(outcome) {
			t.Fatalf("Begin after Finish = %+v, want Completed with the outcome", got)
		}
		if got := begin(t, s, testKey, "other"); got.Status != Conflict {
			t.Errorf("other arguments after Finish = %v, want Conflict", got.Status)
		}
		if err := s.Finish(context.Background(), testKey, c.Token, []byte("again"), 0); !errors.Is(err, ErrNotHolder) {
			t.Errorf("second Finish = %v, want ErrNotHolder", err)
		}
		// The TTL runs from Finish: past it the key is new again.
		clock.Add(2 * time.Minute)
		if got := begin(t, s, testKey, "other"); got.Status != Claimed || got.Record.State != "" {
			t.Errorf("Begin after the TTL = %+v, want a fresh Claimed", got)
		}
	})
}

func TestStoreAbandonedWriteIsRecoveredByTheNextCall(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		first := begin(t, s, testKey, "fp")
		if err := s.Abandon(context.Background(), testKey, first.Token); err != nil {
			t.Fatal(err)
		}
		second := begin(t, s, testKey, "fp")
		if second.Status != Recovering || second.Record.State != Unknown || second.Token == first.Token {
			t.Fatalf("Begin after Abandon = %+v, want Recovering an unknown record with a new token", second)
		}
		if got := begin(t, s, testKey, "fp"); got.Status != Busy {
			t.Fatalf("a third call while the second recovers = %v, want Busy", got.Status)
		}
		if err := s.Finish(context.Background(), testKey, first.Token, []byte("x"), 0); !errors.Is(err, ErrNotHolder) {
			t.Errorf("the abandoning call's Finish = %v, want ErrNotHolder", err)
		}
		if err := s.Finish(context.Background(), testKey, second.Token, []byte("ok"), 0); err != nil {
			t.Fatal(err)
		}
		if got := begin(t, s, testKey, "fp"); got.Status != Completed || string(got.Record.Outcome) != "ok" {
			t.Errorf("after recovery = %+v", got)
		}
	})
}

func TestStoreLapsedLeaseIsTakenOverAndTheOldHolderLosesIt(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		first := begin(t, s, testKey, "fp")
		clock.Add(lease + time.Second) // the first holder died
		second := begin(t, s, testKey, "fp")
		if second.Status != Recovering || second.Record.State != InFlight {
			t.Fatalf("Begin after the lease = %+v, want Recovering the in-flight record", second)
		}
		for name, err := range map[string]error{
			"Finish":  s.Finish(context.Background(), testKey, first.Token, []byte("late"), 0),
			"Abandon": s.Abandon(context.Background(), testKey, first.Token),
			"Release": s.Release(context.Background(), testKey, first.Token),
		} {
			if !errors.Is(err, ErrNotHolder) {
				t.Errorf("old holder's %s = %v, want ErrNotHolder", name, err)
			}
		}
	})
}

func TestStoreReleaseFreesTheKey(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		c := begin(t, s, testKey, "fp")
		if err := s.Release(context.Background(), testKey, c.Token); err != nil {
			t.Fatal(err)
		}
		if got := begin(t, s, testKey, "other arguments now"); got.Status != Claimed {
			t.Fatalf("Begin after Release = %v, want Claimed (even with other arguments)", got.Status)
		}
	})
}

func TestStoreConcurrentBeginsClaimOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		const n = 16
		statuses := make(chan Status, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				c, err := s.Begin(context.Background(), testKey, "fp", lease)
				if err != nil {
					t.Error(err)
					return
				}
				statuses <- c.Status
			})
		}
		wg.Wait()
		close(statuses)
		count := map[Status]int{}
		for st := range statuses {
			count[st]++
		}
		if count[Claimed] != 1 || count[Busy] != n-1 {
			t.Fatalf("statuses %v, want one Claimed and %d Busy", count, n-1)
		}
	})
}

func TestStoreRejectsBadKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, _ *fakeClock) {
		for _, k := range []Key{
			{Caller: "stdio", Tool: "create_item", Key: ""},
			{Caller: "stdio", Tool: "create_item", Key: strings.Repeat("k", MaxKeyLength+1)},
			{Caller: "", Tool: "create_item", Key: "k"},
		} {
			if _, err := s.Begin(context.Background(), k, "fp", lease); err == nil {
				t.Errorf("Begin(%q/%q, key of %d bytes) accepted", k.Caller, k.Tool, len(k.Key))
			}
		}
		if c, err := s.Begin(context.Background(), Key{Caller: "stdio", Tool: "t", Key: strings.Repeat("k", MaxKeyLength)}, "fp", lease); err != nil || c.Status != Claimed {
			t.Errorf("a key of exactly %d bytes: %v %v", MaxKeyLength, c.Status, err)
		}
	})
}

// TestSQLiteOutcomeSurvivesARestart: the point of the embedded store. A
// new store on the same directory (a restarted process) finds the outcome.
func TestSQLiteOutcomeSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	first, err := OpenSQLite(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := begin(t, first, testKey, "fp")
	if err := first.Finish(context.Background(), testKey, c.Token, []byte("created"), 0); err != nil {
		t.Fatal(err)
	}
	pending := Key{Caller: "stdio", Tool: "create_item", Key: "pending"}
	p := begin(t, first, pending, "fp")
	if err := first.Abandon(context.Background(), pending, p.Token); err != nil {
		t.Fatal(err)
	}
	first.Close()

	second, err := OpenSQLite(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if got := begin(t, second, testKey, "fp"); got.Status != Completed || string(got.Record.Outcome) != "created" {
		t.Fatalf("after a restart: %+v, want the stored outcome", got)
	}
	if got := begin(t, second, pending, "fp"); got.Status != Recovering {
		t.Fatalf("an abandoned write after a restart: %v, want Recovering", got.Status)
	}
}

// TestSQLiteTwoProcessesClaimOnce: two stores on one file (two stac-mcp
// processes of one user) never both claim a key.
func TestSQLiteTwoProcessesClaimOnce(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenSQLite(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSQLite(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	results := make(chan Status, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		s := Store(a)
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			c, err := s.Begin(context.Background(), testKey, "fp", lease)
			if err != nil {
				t.Error(err)
				return
			}
			results <- c.Status
		})
	}
	wg.Wait()
	close(results)
	claims := 0
	for st := range results {
		if st == Claimed {
			claims++
		}
	}
	if claims != 1 {
		t.Fatalf("%d claims across two processes, want 1", claims)
	}
}

func TestSQLitePurgesExpiredRecords(t *testing.T) {
	clock := newClock()
	s, err := OpenSQLite(t.Context(), t.TempDir(), Options{TTL: time.Minute, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 5 {
		k := testKey
		k.Key = "k" + string(rune('a'+i))
		c := begin(t, s, k, "fp")
		if err := s.Finish(context.Background(), k, c.Token, []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(purgeEvery + time.Minute)
	begin(t, s, Key{Caller: "stdio", Tool: "t", Key: "trigger"}, "fp")
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM idempotency`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d records left, want 1 (the expired five purged)", n)
	}
}

func TestSQLiteStateDirectoryIsPrivate(t *testing.T) {
	dir := t.TempDir() + "/state/stac-mcp"
	s, err := OpenSQLite(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for path, want := range map[string]string{dir: "drwx------", s.Path(): "-rw-------"} {
		info, err := statMode(path)
		if err != nil {
			t.Fatal(err)
		}
		if info != want {
			t.Errorf("%s mode %s, want %s", path, info, want)
		}
	}
}

// TestRedisKeysAreHashedAndExpire: a shared Redis holds no caller's key in
// clear, and every record carries an expiry.
func TestRedisKeysAreHashedAndExpire(t *testing.T) {
	mr := miniredis.RunT(t)
	s, err := OpenRedis("redis://"+mr.Addr(), Options{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := Key{Caller: "token:secretish", Tool: "create_item", Key: "my-key"}
	begin(t, s, k, "fp")
	// The record, and the sets that count the caller's and the store's
	// records (bounds).
	keys := mr.Keys()
	if len(keys) != 3 {
		t.Fatalf("Redis keys %v, want the record and two counting sets", keys)
	}
	for _, key := range keys {
		if !strings.HasPrefix(key, redisKeyPrefix) || strings.Contains(key, "my-key") || strings.Contains(key, "secretish") {
			t.Errorf("Redis key %q", key)
		}
		if ttl := mr.TTL(key); ttl <= 0 || ttl > time.Hour {
			t.Errorf("%s: TTL %v, want (0, 1h]", key, ttl)
		}
	}
	mr.FastForward(time.Hour + time.Second)
	if len(mr.Keys()) != 0 {
		t.Error("the record outlived its TTL in Redis")
	}
}

// TestRedisStoreDownFailsFast: with Redis gone, Begin fails instead of
// hanging the tool call, and what bounds it is the client's configuration:
// a dial and an I/O timeout on every operation and one retry, so at most
// 2 × (dial + I/O) even against a Redis that accepts and never answers.
// The test checks that configuration, not a clock: on a loaded machine a
// measured duration says more about the machine than about the store.
func TestRedisStoreDownFailsFast(t *testing.T) {
	srv := redistest.Start(t)
	s, err := OpenRedis(srv.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	begin(t, s, testKey, "fp")
	srv.Stop()
	_, err = s.Begin(context.Background(), Key{Caller: "stdio", Tool: "t", Key: "after"}, "fp", lease)
	if err == nil {
		t.Fatal("Begin succeeded with Redis stopped")
	}
	if o := s.client.Options(); o.DialTimeout != redisDialTimeout || o.ReadTimeout != redisIOTimeout || o.WriteTimeout != redisIOTimeout || o.MaxRetries != 1 {
		t.Errorf("client options: dial %v, read %v, write %v, %d retries; want %v, %v, %v and 1 retry",
			o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries, redisDialTimeout, redisIOTimeout, redisIOTimeout)
	}
}

// The password of a Redis URL never reaches an error (redact and
// redisconn test the URL's redaction itself).
func TestOpenRedisHidesThePassword(t *testing.T) {
	_, err := OpenRedis("redis://user:hunter2@h:notaport/0", Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("OpenRedis error %v: want an error without the password", err)
	}
}

// TestStoreBoundsRecords: a new key beyond the caller's bound, or the
// store's, is a LimitError that records nothing; repeats of kept keys are
// still answered, other callers still claim (up to the store's bound), and
// records that expire make room again.
func TestStoreBoundsRecords(t *testing.T) {
	forEachStoreWith(t, Options{MaxPerCaller: 3, MaxTotal: 5}, func(t *testing.T, s Store, clock *fakeClock) {
		key := func(caller string, i int) Key {
			return Key{Caller: caller, Tool: "create_item", Key: fmt.Sprintf("k-%d", i)}
		}
		for i := range 3 {
			c := begin(t, s, key("a", i), "fp")
			if err := s.Finish(context.Background(), key("a", i), c.Token, []byte("ok"), 0); err != nil {
				t.Fatal(err)
			}
		}
		var limit *LimitError
		if _, err := s.Begin(context.Background(), key("a", 3), "fp", lease); !errors.As(err, &limit) || limit.Scope != "caller" || limit.Max != 3 {
			t.Fatalf("a 4th key of caller a: %v, want a LimitError of the caller", err)
		}
		if got := begin(t, s, key("a", 0), "fp"); got.Status != Completed {
			t.Errorf("a kept key after the refusal: %v", got.Status)
		}
		begin(t, s, key("b", 0), "fp")
		begin(t, s, key("c", 0), "fp")
		if _, err := s.Begin(context.Background(), key("d", 0), "fp", lease); !errors.As(err, &limit) || limit.Scope != "store" {
			t.Fatalf("a 6th record in the store: %v, want a LimitError of the store", err)
		}
		clock.Add(time.Hour + time.Second)
		if got := begin(t, s, key("a", 3), "fp"); got.Status != Claimed {
			t.Errorf("after the records expired: %v", got.Status)
		}
	})
}

// TestStoreRefusalIsKeptBriefly: an outcome finished with a short TTL (a
// refused write) is a duplicate right after, and forgotten after the TTL.
func TestStoreRefusalIsKeptBriefly(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store, clock *fakeClock) {
		c := begin(t, s, testKey, "fp")
		if err := s.Finish(context.Background(), testKey, c.Token, []byte("refused"), FailureTTL); err != nil {
			t.Fatal(err)
		}
		if got := begin(t, s, testKey, "fp"); got.Status != Completed {
			t.Fatalf("right after: %v", got.Status)
		}
		clock.Add(FailureTTL + time.Second)
		if got := begin(t, s, testKey, "fp"); got.Status != Claimed {
			t.Errorf("after FailureTTL: %v, want the key free again", got.Status)
		}
	})
}
