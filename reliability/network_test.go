package reliability

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
)

// These tests use real loopback sockets to check the classification of
// genuine network failures; everything timing-related lives in synctest.

func loopbackLayer(t *testing.T, srv *httptest.Server) *Layer {
	t.Helper()
	p := noCache()
	p.BackoffBase = time.Millisecond // keep real-time waits short
	log := zerolog.Nop()
	var rt http.RoundTripper
	if srv != nil {
		rt = srv.Client().Transport
	}
	return New(p, Options{Transport: rt, Logger: &log, Advice: testAdvice})
}

func TestResetMidBodyIsRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			// Promise 100 bytes, send 10, then drop the connection.
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			w.Write([]byte(`{"type":"F`))
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
			return
		}
		w.Write([]byte(`{"type":"Feature"}`))
	}))
	defer srv.Close()
	l := loopbackLayer(t, srv)
	rc, err := l.Run(t.Context(), "get_item", "loopback", func(ctx contextLike) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/item", nil)
		resp, err := l.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.ContentLength != int64(len(`{"type":"Feature"}`)) {
			t.Errorf("buffered body length %d", resp.ContentLength)
		}
		return nil
	})
	if err != nil || hits.Load() != 2 || rc.Attempts != 2 || rc.Retries != 1 {
		t.Fatalf("err %v, %d hits, receipt %+v; want success on the second attempt", err, hits.Load(), rc)
	}
}

// refusingHost answers every dial as a remote host refusing the connection
// (a loopback refusal is not retried: TestLoopbackRefusalIsNotRetried).
type refusingHost struct{}

func (refusingHost) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 80},
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func TestConnectionRefusedIsRetriedAtOnce(t *testing.T) {
	addr := "192.0.2.1:80"
	p := noCache()
	p.BackoffBase = 10 * time.Second // a jittered wait would show in the logged wait_ms
	var logs syncBuffer
	log := zerolog.New(&logs)
	l := New(p, Options{Logger: &log, Advice: testAdvice, Transport: refusingHost{}})
	_, err := l.Run(t.Context(), "get_root", addr, func(ctx contextLike) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		_, err := l.HTTPClient().Do(req)
		return err
	})
	var d *Denial
	if !errors.As(err, &d) || d.Code != CodeRetryExhausted || d.Attempts != 3 || d.ErrorClass != classNeverSent {
		t.Fatalf("error %v, want retry_exhausted after 3 connect failures", err)
	}
	// With a 10 s base, a jittered backoff would be drawn from up to 10 s
	// and 20 s; the layer chose no wait at all because the request never
	// reached a server. The logged decision shows it, whatever the load on
	// the machine running the test.
	retries := logs.named(t, eventRetryAttempt)
	if len(retries) != 2 {
		t.Fatalf("%d %s events, want 2 (attempts 2 and 3)", len(retries), eventRetryAttempt)
	}
	for _, e := range retries {
		if e["wait_ms"] != 0.0 || e["error_class"] != classNeverSent {
			t.Errorf("retry of attempt %v waited %v ms after error class %v; want an immediate retry after %q", e["attempt"], e["wait_ms"], e["error_class"], classNeverSent)
		}
	}
	// No HTTP answer at all: the advice is to check the address, not to
	// wait for an overloaded catalog.
	if !strings.Contains(d.Next, "No HTTP answer came back: check catalog_url") || strings.Contains(d.Next, "overloaded") {
		t.Errorf("advice %q, want it to point at catalog_url and the network", d.Next)
	}
}

// Nothing listens on a loopback port (a stopped local catalog, a
// mistyped port); retrying, or telling the model to call again in 1.6 s,
// does not change that.
func TestLoopbackRefusalIsNotRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	l := New(noCache(), Options{Advice: testAdvice})
	_, err = l.Run(t.Context(), "get_root", addr, func(ctx contextLike) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		_, err := l.HTTPClient().Do(req)
		return err
	})
	var d *Denial
	if !errors.As(err, &d) || d.Code != CodeNotRetryable || d.Attempts != 1 || d.ErrorClass != classNeverSent || !d.RetryAt.IsZero() {
		t.Fatalf("error %v, want not_retryable after 1 attempt, no retry time", err)
	}
	if !strings.Contains(d.Next, "check catalog_url") || strings.Contains(d.Next, "from now") {
		t.Errorf("advice %q, want catalog_url checked and no time to call again", d.Next)
	}
}

func TestTLSFailureIsNotRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	l := loopbackLayer(t, nil) // our own transport does not trust the test certificate
	// The call's catalog host is the server's: a failure on another host
	// would get asset-host advice instead of catalog_url.
	rc, err := l.Run(t.Context(), "get_root", srv.Listener.Addr().String(), func(ctx contextLike) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/", nil)
		_, err := l.HTTPClient().Do(req)
		return err
	})
	var d *Denial
	if !errors.As(err, &d) || d.Code != CodeNotRetryable || d.ErrorClass != classTLS {
		t.Fatalf("error %v, want not_retryable with class tls", err)
	}
	if !strings.Contains(d.Next, "check catalog_url") {
		t.Errorf("advice %q, want it to point at catalog_url", d.Next)
	}
	if rc.Attempts != 1 || hits.Load() != 0 || retriesOf(l, "get_root") != 0 {
		t.Errorf("receipt %+v, handler hits %d: want exactly one attempt and no retry", rc, hits.Load())
	}
}

func TestOversizedBodyIsRefusedWithoutRetry(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write(make([]byte, 4096))
	}))
	defer srv.Close()
	p := noCache()
	p.MaxBodyBytes = 2048
	log := zerolog.Nop()
	l := New(p, Options{Transport: srv.Client().Transport, Logger: &log, Advice: testAdvice})
	_, err := l.Run(t.Context(), "get_item", "loopback", func(ctx contextLike) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/", nil)
		_, err := l.HTTPClient().Do(req)
		return err
	})
	var d *Denial
	if !errors.As(err, &d) || d.ErrorClass != classTooLarge || hits.Load() != 1 {
		t.Fatalf("error %v after %d hits, want a too_large denial after 1", err, hits.Load())
	}
}

// A POST search is a read: when the keep-alive connection it went out on
// dies before the answer, net/http sends it again at once on a new
// connection, as it does for a GET, and the receipt, the metric and the log
// count that replay (adr/0018). Before, the search waited out the backoff.
func TestADeadKeepAliveConnectionReplaysASearchAndCountsIt(t *testing.T) {
	var hits atomic.Int32
	var sentKey atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["Idempotency-Key"]; ok {
			sentKey.Store(true)
		}
		body, _ := io.ReadAll(r.Body)
		if hits.Add(1) == 2 {
			// The second request is the search, on the connection the
			// first one left idle: read it, then drop the connection.
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
			return
		}
		if r.Method == http.MethodPost && string(body) != `{"limit":1}` {
			t.Errorf("replayed body %q", body)
		}
		w.Write([]byte(`{"type":"FeatureCollection","features":[]}`))
	}))
	defer srv.Close()
	p := noCache()
	p.BackoffBase = 10 * time.Second // a layer retry would wait (and show in the receipt's retries)
	var logs syncBuffer
	log := zerolog.New(&logs)
	l := New(p, Options{Transport: srv.Client().Transport, Logger: &log, Advice: testAdvice})
	call := func(tool, method, body string) Receipt {
		t.Helper()
		rc, err := l.Run(t.Context(), tool, "loopback", func(ctx contextLike) error {
			req, _ := http.NewRequestWithContext(ctx, method, srv.URL+"/search", strings.NewReader(body))
			if body == "" {
				req.Body = http.NoBody
			}
			resp, err := l.HTTPClient().Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return rc
	}
	call("get_root", http.MethodGet, "") // leaves a keep-alive connection idle
	// Replayed at once by net/http, not retried by the layer after a
	// backoff: the receipt's retries (0) and replays (1) tell them apart.
	rc := call("search_items", http.MethodPost, `{"limit":1}`)
	if hits.Load() != 3 || rc.Attempts != 2 || rc.Replays != 1 || rc.Retries != 0 {
		t.Errorf("%d requests reached the server, receipt %+v; want 3, and 2 attempts of which 1 replay, 0 retries", hits.Load(), rc)
	}
	if sentKey.Load() {
		t.Error("an Idempotency-Key header went on the wire; the empty key only marks the read for net/http")
	}
	if got := testutil.ToFloat64(l.metrics.replays.WithLabelValues("search_items")); got != 1 {
		t.Errorf("connection_replays_total{tool_name=search_items} = %v, want 1", got)
	}
	if ev := logs.named(t, eventReplay); len(ev) != 1 || ev[0]["tool_name"] != "search_items" || ev[0]["url_path"] != "/search" {
		t.Errorf("replay log events %v, want one for search_items /search", ev)
	}
}
