package faultinject

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Short durations keep the suite fast. The effects are checked by what the
// client received and, for the timing kinds, by lower bounds only (the
// answer came no sooner than the injected delay): a loaded machine can
// only make a delay longer, so none of these checks depends on the load.
// HeaderDelayBeyond is long so that no hang can end on its own while a
// test waits for the client's deadline or departure to end it.
var effectTiming = Timing{
	HeaderDelayWithin:  40 * time.Millisecond,
	HeaderDelayBeyond:  time.Minute,
	TrickleChunk:       16,
	TrickleInterval:    5 * time.Millisecond,
	RetryAfter:         2 * time.Second,
	RetryAfterAboveCap: 30 * time.Second,
	OversizedBytes:     1 << 20,
	ResetPause:         20 * time.Millisecond,
}

// attemptTimeout stands in for the reliability layer's per-attempt timeout
// in the hang tests: HeaderDelayWithin < attemptTimeout < HeaderDelayBeyond.
const attemptTimeout = 200 * time.Millisecond

// notAHangDeadline bounds requests whose fault is expected to end by
// itself; it only fires if a fault hangs by mistake (and is far beyond what
// a loaded machine needs for one loopback request).
const notAHangDeadline = time.Minute

const upstreamBody = `{"type":"Catalog","id":"upstream","stac_version":"1.0.0","description":"the real answer","links":[]}`

func upstreamHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(upstreamBody)))
		_, _ = io.WriteString(w, upstreamBody)
	})
}

// observation is everything a plain http.Client saw for one request.
type observation struct {
	start     time.Time
	resp      *http.Response
	doErr     error
	body      []byte
	bodyErr   error
	headersAt time.Duration
	doneAt    time.Duration
}

func (o observation) header(name string) string {
	if o.resp == nil {
		return ""
	}
	return o.resp.Header.Get(name)
}

// form builds a client that reaches the upstream through one of the two
// injector forms. Keep-alives are off so that net/http never replays a
// request transparently and each request is exactly one attempt.
type form struct {
	name  string
	build func(t *testing.T, in *Injector) (client *http.Client, url string)
}

var forms = []form{
	{"client", func(t *testing.T, in *Injector) (*http.Client, string) {
		upstream := httptest.NewServer(upstreamHandler())
		t.Cleanup(upstream.Close)
		base := &http.Transport{DisableKeepAlives: true}
		t.Cleanup(base.CloseIdleConnections)
		return &http.Client{Transport: in.RoundTripper(base)}, upstream.URL
	}},
	{"server", func(t *testing.T, in *Injector) (*http.Client, string) {
		server := httptest.NewServer(in.Middleware(upstreamHandler()))
		t.Cleanup(server.Close)
		base := &http.Transport{DisableKeepAlives: true}
		t.Cleanup(base.CloseIdleConnections)
		return &http.Client{Transport: base}, server.URL
	}},
}

// observe sends one request and reads the whole answer within timeout.
func observe(t *testing.T, client *http.Client, method, url string, timeout time.Duration) observation {
	t.Helper()
	// The clock starts before the deadline is set, so that a request ended
	// by its deadline measures at least timeout (wantTimedOut).
	o := observation{start: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url+"/collections/sentinel-2-l2a", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(HeaderTool, "get_collection")
	req.Header.Set(HeaderInvocation, "1")
	o.resp, o.doErr = client.Do(req)
	o.headersAt = time.Since(o.start)
	if o.doErr == nil {
		o.body, o.bodyErr = io.ReadAll(o.resp.Body)
		_ = o.resp.Body.Close()
	}
	o.doneAt = time.Since(o.start)
	return o
}

// expect is what a kind must look like to the client; form is "client"
// or "server" for the few effects that differ.
type expect func(t *testing.T, form string, o observation)

func TestEachKindHasItsObservableEffect(t *testing.T) {
	for _, kind := range AllKinds() {
		check, ok := effects[kind]
		if !ok {
			t.Errorf("kind %v has no effect test", kind)
			continue
		}
		for _, f := range forms {
			t.Run(kind.String()+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				in := newEffectInjector(t, kind)
				client, url := f.build(t, in)
				// Only the hang kinds meet the attempt timeout; the others get
				// a deadline that a loaded machine cannot reach.
				timeout := notAHangDeadline
				if kind.Class() == ClassHang || kind == AppliedThenHang {
					timeout = attemptTimeout
				}
				o := observe(t, client, http.MethodGet, url, timeout)
				check(t, f.name, o)
				wantInjectedHeader(t, kind, o)
				if faults := in.Journal().faults(); len(faults) != 1 || faults[0].Kind != kind ||
					faults[0].Tool != "get_collection" || faults[0].Path != "/collections/sentinel-2-l2a" {
					t.Errorf("journal faults = %+v; want exactly one %v on get_collection", faults, kind)
				}
			})
		}
	}
}

func newEffectInjector(t *testing.T, kind Kind) *Injector {
	t.Helper()
	in, err := New(Plan{Seed: 1, Rate: 1, Mix: EqualMix(kind), Timing: effectTiming})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

var effects = map[Kind]expect{
	HTTP500: stacErrorStatus(500), HTTP502: stacErrorStatus(502), HTTP503: stacErrorStatus(503),
	HTTP504: stacErrorStatus(504), HTTP501: stacErrorStatus(501), HTTP505: stacErrorStatus(505),
	HTTP400: stacErrorStatus(400), HTTP404: stacErrorStatus(404), HTTP422: stacErrorStatus(422),
	HTTP429RetryAfterSeconds:  retryAfter(func(t *testing.T, o observation, v string) { wantEqual(t, "Retry-After", v, "2") }),
	HTTP429RetryAfterAboveCap: retryAfter(func(t *testing.T, o observation, v string) { wantEqual(t, "Retry-After", v, "30") }),
	HTTP429RetryAfterInvalid: retryAfter(func(t *testing.T, o observation, v string) {
		if _, err := strconv.Atoi(v); err == nil {
			t.Errorf("invalid Retry-After %q parses as seconds", v)
		}
		if _, err := http.ParseTime(v); err == nil {
			t.Errorf("invalid Retry-After %q parses as a date", v)
		}
	}),
	HTTP429RetryAfterDate: retryAfter(func(t *testing.T, o observation, v string) {
		at, err := http.ParseTime(v)
		if err != nil {
			t.Fatalf("Retry-After %q is not an HTTP date: %v", v, err)
		}
		earliest := o.start.Add(effectTiming.RetryAfter)
		latest := o.start.Add(o.doneAt + effectTiming.RetryAfter + time.Second)
		if at.Before(earliest) || at.After(latest) {
			t.Errorf("Retry-After %v; want between %v and %v", at, earliest, latest)
		}
	}),
	HTTP403Throttle: func(t *testing.T, _ string, o observation) {
		wantResponse(t, o, 403, "application/json")
		wantEqual(t, "body", string(o.body), `{"message":"Forbidden"}`)
	},
	ConnectionRefused: func(t *testing.T, form string, o observation) {
		if form == "client" {
			wantTransportError(t, o, syscall.ECONNREFUSED)
			var op *net.OpError
			if !errors.As(o.doErr, &op) || op.Op != "dial" {
				t.Errorf("error %v is not a dial *net.OpError", o.doErr)
			}
			return
		}
		wantTransportError(t, o, io.EOF) // the documented server-side approximation
	},
	ResetBeforeResponse: func(t *testing.T, _ string, o observation) { wantTransportError(t, o, syscall.ECONNRESET) },
	ResetMidBody: func(t *testing.T, form string, o observation) {
		wantCutShort(t, o, syscall.ECONNRESET, len(PartialBody)/2, form == "server")
	},
	EOFAfterHeaders: func(t *testing.T, _ string, o observation) { wantCutShort(t, o, io.ErrUnexpectedEOF, 0, false) },
	TruncatedBody: func(t *testing.T, _ string, o observation) {
		wantCutShort(t, o, io.ErrUnexpectedEOF, len(PartialBody)/2, false)
	},
	HeadersDelayedWithin: func(t *testing.T, _ string, o observation) {
		wantUpstream(t, o)
		if o.headersAt < effectTiming.HeaderDelayWithin {
			t.Errorf("headers after %v; want at least %v", o.headersAt, effectTiming.HeaderDelayWithin)
		}
	},
	HeadersDelayedBeyond: wantTimedOut,
	Hang:                 wantTimedOut,
	SlowBody: func(t *testing.T, _ string, o observation) {
		wantUpstream(t, o)
		chunks := (len(upstreamBody) + effectTiming.TrickleChunk - 1) / effectTiming.TrickleChunk
		if minimum := time.Duration(chunks) * effectTiming.TrickleInterval; o.doneAt < minimum {
			t.Errorf("body done after %v; want at least %d chunks × %v = %v", o.doneAt, chunks, effectTiming.TrickleInterval, minimum)
		}
	},
	MalformedJSON: func(t *testing.T, _ string, o observation) {
		wantResponse(t, o, 200, "application/geo+json")
		if json.Valid(o.body) {
			t.Errorf("malformed body %q is valid JSON", o.body)
		}
	},
	WrongContentType: func(t *testing.T, _ string, o observation) {
		wantResponse(t, o, 200, "text/html; charset=utf-8")
		wantEqual(t, "body", string(o.body), HTMLBody)
	},
	NotSTACJSON: func(t *testing.T, _ string, o observation) {
		wantResponse(t, o, 200, "application/json")
		wantEqual(t, "body", string(o.body), `{"hello":"world"}`)
	},
	AppliedThenReset: func(t *testing.T, _ string, o observation) { wantTransportError(t, o, syscall.ECONNRESET) },
	AppliedThenHang:  wantTimedOut,
	AppliedThen503:   stacErrorStatus(503),
	OversizedBody: func(t *testing.T, _ string, o observation) {
		wantResponse(t, o, 200, "application/geo+json")
		if int64(len(o.body)) != effectTiming.OversizedBytes || o.resp.ContentLength != effectTiming.OversizedBytes {
			t.Errorf("body %d bytes, Content-Length %d; want both %d", len(o.body), o.resp.ContentLength, effectTiming.OversizedBytes)
		}
		var doc struct{ Type string }
		if err := json.Unmarshal(o.body, &doc); err != nil || doc.Type != "FeatureCollection" {
			t.Errorf("oversized body is not a valid FeatureCollection: type %q, %v", doc.Type, err)
		}
	},
}

func wantEqual(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %q; want %q", what, got, want)
	}
}

func wantResponse(t *testing.T, o observation, status int, contentType string) {
	t.Helper()
	if o.doErr != nil || o.bodyErr != nil {
		t.Fatalf("request failed: %v / body: %v", o.doErr, o.bodyErr)
	}
	if o.resp.StatusCode != status {
		t.Errorf("status %d; want %d", o.resp.StatusCode, status)
	}
	wantEqual(t, "Content-Type", o.header("Content-Type"), contentType)
}

// wantInjectedHeader: every synthetic answer names its kind; the real
// answers that timing faults delay carry no such header.
func wantInjectedHeader(t *testing.T, kind Kind, o observation) {
	t.Helper()
	if o.resp == nil {
		return
	}
	want := kind.String()
	if kind.Class() == ClassSlow {
		want = ""
	}
	wantEqual(t, HeaderInjected, o.header(HeaderInjected), want)
}

func stacErrorStatus(status int) expect {
	return func(t *testing.T, _ string, o observation) {
		wantResponse(t, o, status, "application/json")
		var body struct{ Code, Description string }
		if err := json.Unmarshal(o.body, &body); err != nil || body.Code == "" || body.Description == "" {
			t.Errorf("body %q is not a STAC error {code, description}: %v", o.body, err)
		}
	}
}

func retryAfter(checkValue func(t *testing.T, o observation, value string)) expect {
	return func(t *testing.T, form string, o observation) {
		stacErrorStatus(429)(t, form, o)
		if o.resp != nil {
			checkValue(t, o, o.header("Retry-After"))
		}
	}
}

func wantTransportError(t *testing.T, o observation, target error) {
	t.Helper()
	if o.doErr == nil {
		t.Fatalf("request succeeded with status %d; want an error matching %v", o.resp.StatusCode, target)
	}
	if !errors.Is(o.doErr, target) {
		t.Errorf("error %v does not match %v", o.doErr, target)
	}
}

// wantCutShort checks headers arrived, then the body read failed with
// target after exactly sent bytes (or at most sent when atMost: an RST may
// overtake data the client had not read yet).
func wantCutShort(t *testing.T, o observation, target error, sent int, atMost bool) {
	t.Helper()
	if o.doErr != nil {
		t.Fatalf("headers did not arrive: %v", o.doErr)
	}
	if o.resp.StatusCode != 200 || o.resp.ContentLength != int64(len(PartialBody)) {
		t.Errorf("status %d, Content-Length %d; want 200 declaring %d bytes", o.resp.StatusCode, o.resp.ContentLength, len(PartialBody))
	}
	if !errors.Is(o.bodyErr, target) {
		t.Errorf("body read error %v; want %v", o.bodyErr, target)
	}
	if len(o.body) > sent || (!atMost && len(o.body) != sent) {
		t.Errorf("read %d body bytes before the failure; want %d", len(o.body), sent)
	}
}

func wantUpstream(t *testing.T, o observation) {
	t.Helper()
	if o.doErr != nil || o.bodyErr != nil {
		t.Fatalf("request failed: %v / body: %v", o.doErr, o.bodyErr)
	}
	if o.resp.StatusCode != 200 || string(o.body) != upstreamBody {
		t.Errorf("got %d %q; want the upstream's real answer", o.resp.StatusCode, o.body)
	}
	if o.header(HeaderInjected) != "" {
		t.Errorf("a delayed real answer carries %s", HeaderInjected)
	}
}

// wantTimedOut: the request context (the attempt timeout) ends the fault,
// well before HeaderDelayBeyond.
func wantTimedOut(t *testing.T, _ string, o observation) {
	t.Helper()
	if !errors.Is(o.doErr, context.DeadlineExceeded) {
		t.Errorf("error %v; want the request context's deadline", o.doErr)
	}
	// The deadline error above says the client's deadline ended it (the
	// delayed answer comes after a minute); the hang lasted at least until
	// then.
	if o.doneAt < attemptTimeout {
		t.Errorf("ended after %v; want no sooner than the %v deadline", o.doneAt, attemptTimeout)
	}
}

// A HEAD answer has no body, so body-only faults leave it unharmed in both
// forms, as they would on a real server.
func TestBodyOnlyKindsLeaveHEADUnharmed(t *testing.T) {
	for _, kind := range AllKinds() {
		if !kind.bodyOnly() {
			continue
		}
		for _, f := range forms {
			t.Run(kind.String()+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				client, url := f.build(t, newEffectInjector(t, kind))
				o := observe(t, client, http.MethodHead, url, notAHangDeadline)
				if o.doErr != nil || o.bodyErr != nil || o.resp.StatusCode != http.StatusOK || len(o.body) != 0 {
					t.Errorf("HEAD got %v / %v / %v, %d body bytes; want a clean 200 without body", o.doErr, o.bodyErr, o.resp, len(o.body))
				}
			})
		}
	}
}

// One plan gives the same journal whether it runs client side in memory or
// server side over real sockets from 6 goroutines.
func TestBothFormsProduceTheSameJournal(t *testing.T) {
	p := Plan{Seed: 31, Rate: 0.4, Mix: EqualMix(slices.DeleteFunc(slices.Clone(instantKinds),
		func(k Kind) bool { return k == OversizedBody })...)}
	journals := map[string][]Record{}
	for _, f := range forms {
		in := newTestInjector(t, p)
		client, url := f.build(t, in)
		var wg sync.WaitGroup
		for worker := range 6 {
			wg.Go(func() {
				for inv := worker; inv < 30; inv += 6 {
					for range 3 {
						req, err := http.NewRequest(http.MethodGet, url+"/search", nil)
						if err != nil {
							t.Error(err)
							return
						}
						req.Header.Set(HeaderTool, "search_items")
						req.Header.Set(HeaderInvocation, strconv.Itoa(inv))
						if resp, err := client.Do(req); err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							_ = resp.Body.Close()
						}
					}
				}
			})
		}
		wg.Wait()
		journals[f.name] = in.Journal().Records()
	}
	if len(journals["client"]) != 90 || !slices.Equal(journals["client"], journals["server"]) {
		t.Errorf("client journal (%d records) and server journal (%d records) differ",
			len(journals["client"]), len(journals["server"]))
	}
}

// TestAppliedKindsReachTheUpstreamOnce: the applied faults let the request
// through, exactly once, before they lose its answer; no other fault lets
// a faulted request reach the upstream (timing faults delay a real answer).
func TestAppliedKindsReachTheUpstreamOnce(t *testing.T) {
	for _, kind := range AllKinds() {
		for _, f := range []string{"client", "server"} {
			t.Run(kind.String()+"/"+f, func(t *testing.T) {
				t.Parallel()
				var hits atomic.Int32
				reached := make(chan struct{}, 1)
				upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					hits.Add(1)
					select {
					case reached <- struct{}{}:
					default: // a second hit is reported by the count below
					}
					w.WriteHeader(http.StatusCreated)
				})
				in := newEffectInjector(t, kind)
				base := &http.Transport{DisableKeepAlives: true}
				t.Cleanup(base.CloseIdleConnections)
				client := &http.Client{Transport: base}
				var srv *httptest.Server
				if f == "client" {
					srv = httptest.NewServer(upstream)
					client.Transport = in.RoundTripper(base)
				} else {
					srv = httptest.NewServer(in.Middleware(upstream))
				}
				t.Cleanup(srv.Close)
				// A deadline ends the kinds that never reach the upstream and
				// hang (whether it fires early or late, the upstream saw
				// nothing). AppliedThenHang is ended once the upstream has
				// the request, and every other kind ends by itself: a short
				// deadline would race the delayed kinds on a loaded machine.
				timeout := notAHangDeadline
				if kind.Class() == ClassHang {
					timeout = attemptTimeout
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				if kind == AppliedThenHang {
					go func() {
						select {
						case <-reached:
							cancel()
						case <-ctx.Done():
						}
					}()
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/collections/c/items", strings.NewReader(`{"id":"x"}`))
				req.Header.Set(HeaderTool, "create_item")
				req.Header.Set(HeaderInvocation, "1")
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				want := int32(0)
				if kind.Class() == ClassApplied || kind.Class() == ClassSlow {
					want = 1
				}
				if kind == HeadersDelayedBeyond {
					return // the deadline ends it before the delay; whether it reached the upstream is not its point
				}
				if got := hits.Load(); got != want {
					t.Errorf("the upstream saw the request %d times, want %d", got, want)
				}
				if kind.Class() == ClassApplied && err == nil && resp.StatusCode == http.StatusCreated {
					t.Error("the upstream's answer reached the client")
				}
			})
		}
	}
}
