package faultinject

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A server-side hang or long header delay on a POST whose body the
// handler has not read must still end when the client gives up: net/http
// only watches for a closed connection once the request body is consumed.
func TestServerHoldsOnPostEndWhenClientLeaves(t *testing.T) {
	for _, kind := range KindsOf(ClassHang) {
		t.Run(kind.String(), func(t *testing.T) {
			in := newEffectInjector(t, kind)
			handlerDone := make(chan struct{}, 1)
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				in.Middleware(upstreamHandler()).ServeHTTP(w, r)
				handlerDone <- struct{}{}
			}))
			t.Cleanup(server.Close)
			transport := &http.Transport{DisableKeepAlives: true}
			t.Cleanup(transport.CloseIdleConnections)

			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, server.URL+"/search",
				strings.NewReader(`{"collections":["sentinel-2-l2a"],"limit":10}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := (&http.Client{Transport: transport}).Do(req); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("error %v; want the client's deadline", err)
			}
			// effectTiming.HeaderDelayBeyond is a minute: returning before
			// half of it means the client's departure ended the handler
			// (the bound only ends a test whose handler never returns).
			select {
			case <-handlerDone:
			case <-time.After(effectTiming.HeaderDelayBeyond / 2):
				t.Fatalf("the handler was still running %v after the client left", effectTiming.HeaderDelayBeyond/2)
			}
		})
	}
}

// Without http.Hijacker (HTTP/2, recorders) a connection fault aborts the
// handler the way net/http understands.
func TestConnectionFaultWithoutHijackerAborts(t *testing.T) {
	in := newEffectInjector(t, ResetBeforeResponse)
	defer func() {
		if got := recover(); got != http.ErrAbortHandler { //nolint:errorlint // net/http compares the panic value itself: only http.ErrAbortHandler unwrapped aborts silently
			t.Errorf("recovered %v; want http.ErrAbortHandler", got)
		}
	}()
	in.Middleware(upstreamHandler()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	t.Error("ServeHTTP returned normally")
}

type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

// The RoundTripper contract: a request body is closed even when the
// request never reaches the base transport.
func TestRoundTripperClosesBodiesItDoesNotSend(t *testing.T) {
	for _, kind := range []Kind{HTTP503, ConnectionRefused, ResetMidBody, OversizedBody} {
		body := &closeTracker{Reader: strings.NewReader(`{}`)}
		req, err := http.NewRequest(http.MethodPost, "http://catalog.test/search", body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := newEffectInjector(t, kind).RoundTripper(okTransport{}).RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		if !body.closed {
			t.Errorf("%v left the request body open", kind)
		}
	}
}

// OversizedBody is generated while it is read: reading 32 MiB allocates a
// small, fixed amount, not the body.
func TestOversizedBodyIsStreamed(t *testing.T) {
	const size = 32 << 20
	in, err := New(Plan{Seed: 1, Rate: 1, Mix: EqualMix(OversizedBody), Timing: Timing{OversizedBytes: size}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, "http://catalog.test/search", nil)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := in.RoundTripper(okTransport{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("read %d bytes, %v; want %d", n, err, size)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > size/16 {
		t.Errorf("reading a %d-byte body allocated %d bytes; it is being buffered", size, allocated)
	}
}

type idleCloser struct {
	okTransport
	closed bool
}

func (c *idleCloser) CloseIdleConnections() { c.closed = true }

// http.Client.CloseIdleConnections must still reach the real transport
// through the wrapper (the reliability layer relies on controlling it).
func TestRoundTripperForwardsCloseIdleConnections(t *testing.T) {
	base := &idleCloser{}
	in := newEffectInjector(t, HTTP503)
	(&http.Client{Transport: in.RoundTripper(base)}).CloseIdleConnections()
	if !base.closed {
		t.Error("CloseIdleConnections did not reach the base transport")
	}
}
