package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// TestWritesAreNotReplayedByNetHTTPOnAReusedConnection: net/http replays a
// request whose reused keep-alive connection dies before the answer when
// it can rewind the body and the request looks idempotent, which an
// Idempotency-Key header makes any write look. A write the layer sends
// once (a POST; a keyed DELETE under OneAttempt, which has no body to
// withhold) must reach the catalog once even then.
func TestWritesAreNotReplayedByNetHTTPOnAReusedConnection(t *testing.T) {
	for _, c := range []struct {
		method string
		body   string
		once   bool
	}{
		{http.MethodPost, `{"id":"x"}`, false},
		{http.MethodDelete, "", true},
	} {
		t.Run(c.method, func(t *testing.T) {
			var writes atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					_, _ = io.WriteString(w, `{}`)
					return
				}
				writes.Add(1)
				_, _ = io.Copy(io.Discard, r.Body)
				// The catalog read the write, then the connection died
				// before any answer: a reset on a reused connection.
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				_ = conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}))
			defer srv.Close()
			l := loopbackLayer(t, srv)
			_, err := l.Run(t.Context(), "write", "loopback", func(ctx context.Context) error {
				// A read first, so the write goes out on a reused connection.
				get, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/", nil)
				resp, err := l.HTTPClient().Do(get)
				if err != nil {
					return err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if c.once {
					ctx = OneAttempt(ctx)
				}
				var body io.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				req, _ := http.NewRequestWithContext(ctx, c.method, srv.URL+"/collections/c/items/x", body)
				req.Header.Set("Idempotency-Key", "k-1")
				resp, err = l.HTTPClient().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			})
			if err == nil {
				t.Fatal("the write's connection died without an answer, yet the call succeeded")
			}
			if n := writes.Load(); n != 1 {
				t.Fatalf("the catalog saw the %s %d times, want exactly 1", c.method, n)
			}
		})
	}
}

// TestWriteMakesCachedReadsOfItsHostStale: the response cache keeps GETs
// for 30 s, but a read after a write to the same host must see the write.
func TestWriteMakesCachedReadsOfItsHostStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		version := atomic.Int32{}
		tl := newTestLayer(t, DefaultPolicy(), func(_ int, req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPut {
				version.Add(1)
				return answer(200, `{}`), nil
			}
			return answer(200, `{"v":`+itoa(int(version.Load()))+`}`), nil
		})
		read := func() string {
			var body string
			_, err := tl.Run(context.Background(), "get_item", testHost, func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/collections/c/items/x", nil)
				var err error
				_, body, err = tl.readThrough(req)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return body
		}
		if got := read(); got != `{"v":0}` {
			t.Fatalf("first read %s", got)
		}
		if got := read(); got != `{"v":0}` || tl.up.hitCount() != 1 {
			t.Fatalf("second read %s after %d hits; want a cache hit", got, tl.up.hitCount())
		}
		if _, err := sendWrite(tl, http.MethodPut, "k"); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != `{"v":1}` {
			t.Fatalf("read after the write returned %s from the cache, want the written version {\"v\":1}", got)
		}
		// The fresh answer is cached again for later reads.
		hits := tl.up.hitCount()
		if got := read(); got != `{"v":1}` || tl.up.hitCount() != hits {
			t.Fatalf("read %s after %d hits (was %d); want the new answer from the cache", got, tl.up.hitCount(), hits)
		}
	})
}

// TestReadInFlightDuringAWriteIsNotCached: an answer to a read that began
// before a write may show the state before it, so it is not stored.
func TestReadInFlightDuringAWriteIsNotCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var once sync.Once
		tl := newTestLayer(t, DefaultPolicy(), func(n int, req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && n == 1 {
				<-release // the first read is answered only after the write
				return answer(200, `"old"`), nil
			}
			if req.Method == http.MethodGet {
				return answer(200, `"new"`), nil
			}
			once.Do(func() { close(release) })
			return answer(200, `{}`), nil
		})
		done := make(chan string)
		go func() {
			_, body, _ := readOnce(tl)
			done <- body
		}()
		synctest.Wait() // the first read is waiting for its answer
		if _, err := sendWrite(tl, http.MethodPut, "k"); err != nil {
			t.Fatal(err)
		}
		if got := <-done; got != `"old"` {
			t.Fatalf("the read begun before the write got %s", got)
		}
		if _, body, _ := readOnce(tl); body != `"new"` {
			t.Fatalf("a read after the write got %s: the answer from before the write was cached", body)
		}
	})
}

func readOnce(tl *testLayer) (Receipt, string, error) {
	var body string
	rc, err := tl.Run(context.Background(), "get_item", testHost, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/collections/c/items/x", nil)
		var err error
		_, body, err = tl.readThrough(req)
		return err
	})
	return rc, body, err
}

// TestReceiptAndDenialCarryTheWrite: a write's receipt names its side
// effect, key and replay decision; a read's says "read"; a write's layer
// denial allows only a retry with the same key.
func TestReceiptAndDenialCarryTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "down"))
		rc, _, _ := tl.get("get_item", "/x")
		if rc.SideEffect != SideEffectRead || rc.IdempotencyKey != "" || rc.ReplayDecision != "" {
			t.Errorf("read receipt %+v", rc)
		}
		rc, err := tl.Run(context.Background(), "update_item", testHost, func(ctx context.Context) error {
			NoteWrite(ctx, WriteNote{SideEffect: SideEffectUpdate, IdempotencyKey: "k-7", ReplayDecision: "executed"})
			if now, ok := CurrentReceipt(ctx); !ok || now.IdempotencyKey != "k-7" || now.CorrelationID == "" {
				t.Errorf("CurrentReceipt = %+v, %v", now, ok)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "https://"+testHost+"/collections/c/items/x", strings.NewReader(`{}`))
			req.Header.Set("Idempotency-Key", "k-7")
			_, _, err := tl.readThrough(req)
			return err
		})
		if rc.SideEffect != SideEffectUpdate || rc.IdempotencyKey != "k-7" || rc.ReplayDecision != "executed" {
			t.Errorf("write receipt %+v", rc)
		}
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeRetryExhausted {
			t.Fatalf("err %v, want retry_exhausted", err)
		}
		if d.Recovery != RecoveryRetrySameKey || d.IdempotencyKey != "k-7" || d.SideEffect != SideEffectUpdate ||
			!strings.Contains(d.Error(), "same idempotency_key") {
			t.Errorf("write denial %+v: want recovery retry_same_key, the key and the side effect", d)
		}
		m := rc.meta()
		if m["side_effect"] != SideEffectUpdate || m["idempotency_key"] != "k-7" || m["replay_decision"] != "executed" {
			t.Errorf("Meta() = %v", m)
		}
		raw, _ := json.Marshal(d)
		if !strings.Contains(string(raw), `"recovery":"retry_same_key"`) {
			t.Errorf("denial JSON %s has no recovery", raw)
		}
	})
}

func TestReadDenialAllowsAPlainRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "down"))
		_, _, err := tl.get("get_item", "/x")
		var d *Denial
		if !errors.As(err, &d) || d.Recovery != RecoveryRetry || d.SideEffect != SideEffectRead {
			t.Fatalf("denial %+v, want recovery retry for a read", d)
		}
		tl2 := newTestLayer(t, noCache(), always(400, "bad"))
		_, err = tl2.Run(context.Background(), "t", testHost, func(context.Context) error {
			return &Denial{Code: CodeNotRetryable}
		})
		if !errors.As(err, &d) || d.Code != CodeNotRetryable {
			t.Fatalf("err %v", err)
		}
	})
}

func TestWriteMetrics(t *testing.T) {
	log := zerolog.Nop()
	l := New(noCache(), Options{Logger: &log, Advice: testAdvice})
	run := func(note WriteNote, err error) {
		_, _ = l.Run(context.Background(), "create_item", "h", func(ctx context.Context) error {
			NoteWrite(ctx, note)
			return err
		})
	}
	run(WriteNote{SideEffect: SideEffectCreate, IdempotencyKey: "a", ReplayDecision: "executed"}, nil)
	run(WriteNote{SideEffect: SideEffectCreate, IdempotencyKey: "a", ReplayDecision: "looked-up"}, nil)
	run(WriteNote{SideEffect: SideEffectCreate, IdempotencyKey: "a", ReplayDecision: "duplicate", Duplicate: true}, nil)
	run(WriteNote{SideEffect: SideEffectCreate, IdempotencyKey: "a"}, &Denial{Code: CodeIdempotencyConflict})
	run(WriteNote{SideEffect: SideEffectCreate, IdempotencyKey: "a"}, &Denial{Code: CodeInFlight})
	_, _ = l.Run(context.Background(), "get_item", "h", func(context.Context) error { return nil })

	m := l.metrics
	for name, c := range map[string]float64{
		"duplicates":         testutil.ToFloat64(m.idempotencyDuplicates.WithLabelValues("create_item")),
		"conflicts":          testutil.ToFloat64(m.idempotencyConflicts.WithLabelValues("create_item")),
		"writes ok executed": testutil.ToFloat64(m.writes.WithLabelValues("create_item", "ok", "executed")),
		"writes ok lookedup": testutil.ToFloat64(m.writes.WithLabelValues("create_item", "ok", "looked-up")),
	} {
		if c != 1 {
			t.Errorf("%s = %v, want 1", name, c)
		}
	}
	if n := testutil.CollectAndCount(m.writes); n != 2 {
		t.Errorf("writes_total has %d series, want 2 (a read, a duplicate, a conflict and an in_flight denial are not writes)", n)
	}
}

func TestNotSent(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&Denial{Code: CodeCircuitOpen, Attempts: 0}, true},
		{&Denial{Code: CodeNotRetryable, Attempts: 1, ErrorClass: classNeverSent}, true},
		{&Denial{Code: CodeNotRetryable, Attempts: 1, ErrorClass: classTransport}, false},
		{&Denial{Code: CodeTimeout, Attempts: 1}, false},
		{errors.New("x"), false},
	} {
		if got := NotSent(c.err); got != c.want {
			t.Errorf("NotSent(%v) = %v", c.err, got)
		}
	}
}

// TestOneAttemptSendsAKeyedPUTOnce: a caller that recovers lost answers
// itself can ask for one attempt even where the policy would retry.
func TestOneAttemptSendsAKeyedPUTOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "down"))
		_, err := tl.Run(context.Background(), "update_item", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(OneAttempt(ctx), http.MethodPut, "https://"+testHost+"/collections/c/items/x", strings.NewReader(`{}`))
			req.Header.Set("Idempotency-Key", "k")
			status, _, err := tl.readThrough(req)
			if status != 503 {
				t.Errorf("status %d, want the 503 handed back", status)
			}
			return err
		})
		if err != nil || tl.up.hitCount() != 1 {
			t.Fatalf("err %v after %d hits, want the answer after exactly 1", err, tl.up.hitCount())
		}
	})
}

// TestWriteGenerationsAreBounded: writes to ever new hosts do not grow the
// cache's generation table without limit, and forgetting it never makes a
// stale entry current again.
func TestWriteGenerationsAreBounded(t *testing.T) {
	c := newResponseCache(time.Minute, 1<<20)
	now := time.Now()
	snap := &snapshot{status: 200, header: http.Header{}, body: []byte("old")}
	c.putFor("k", "written", c.generation("written"), snap, now, time.Minute)
	c.invalidate("written") // the entry is stale from here on
	for i := range maxGenerationHosts + 10 {
		c.invalidate("host-" + itoa(i))
	}
	if len(c.gens) > maxGenerationHosts {
		t.Fatalf("%d generations kept, at most %d", len(c.gens), maxGenerationHosts)
	}
	if _, ok := c.get("k", now); ok {
		t.Fatal("an entry from before a write is served again after the generations were forgotten")
	}
}
