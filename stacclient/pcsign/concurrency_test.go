package pcsign

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// inMemoryTransport serves requests by calling a handler in the same
// goroutine. Inside a synctest bubble a handler blocked on a channel is then
// "durably blocked", so synctest.Wait can tell when every caller is parked.
type inMemoryTransport struct{ handler http.Handler }

func (t inMemoryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	recorder := httptest.NewRecorder()
	t.handler.ServeHTTP(recorder, req)
	if err := req.Context().Err(); err != nil {
		return nil, err // as a real transport does when the call is cancelled
	}
	return recorder.Result(), nil
}

// gate holds every request until opened, or until its caller gives up.
type gate struct {
	next    http.Handler
	entered atomic.Int32
	release chan struct{}
}

func newGate(next http.Handler) *gate { return &gate{next: next, release: make(chan struct{})} }

func (g *gate) open() { close(g.release) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.entered.Add(1)
	select {
	case <-g.release:
		g.next.ServeHTTP(w, r)
	case <-r.Context().Done():
	}
}

// newGatedSigner builds a Signer over the in-memory transport whose fake
// token endpoint sits behind a closed gate, so that a test can park callers
// in the middle of a fetch and decide when it ends.
func newGatedSigner(t *testing.T) (*fakeEndpoint, *gate, *Signer) {
	t.Helper()
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	held := newGate(endpoint)
	signer, err := New(Options{
		HTTPClient: &http.Client{Transport: inMemoryTransport{held}},
		TokenURL:   "https://pc.test/api/sas/v1/token",
		Now:        clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return endpoint, held, signer
}

type signResult struct {
	href string
	ok   bool
	err  error
}

// tokenInBackground asks for a token on a goroutine of its own and delivers
// the outcome (the token's value in href) on the returned channel.
func tokenInBackground(ctx context.Context, signer *Signer, collection string) <-chan signResult {
	result := make(chan signResult, 1)
	go func() {
		token, err := signer.Token(ctx, collection)
		result <- signResult{token.Value, err == nil, err}
	}()
	return result
}

func TestConcurrentSignHrefCallsShareOneFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		endpoint, held, signer := newGatedSigner(t)

		const callers = 16
		results := make(chan signResult, callers)
		for range callers {
			go func() {
				href, ok, err := signer.signHref(context.Background(), "naip", azureHref)
				results <- signResult{href, ok, err}
			}()
		}
		synctest.Wait() // every caller is parked: one in the endpoint, the others on its flight
		if n := held.entered.Load(); n != 1 {
			t.Fatalf("%d requests reached the endpoint while %d callers waited; want 1", n, callers)
		}
		held.open()
		want := azureHref + "?" + tokenValue("naip", 1)
		for range callers {
			r := <-results
			if r.err != nil || !r.ok || r.href != want {
				t.Errorf("signHref = %q, %v, %v; want %q", r.href, r.ok, r.err, want)
			}
		}
		if n := endpoint.count("naip"); n != 1 {
			t.Errorf("token requests = %d, want 1", n)
		}
	})
}

func TestCancelledWaiterReturnsWhileFetchGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		endpoint, held, signer := newGatedSigner(t)

		leader := tokenInBackground(context.Background(), signer, "naip")
		synctest.Wait()

		waiterCtx, cancelWaiter := context.WithCancel(context.Background())
		waiter := tokenInBackground(waiterCtx, signer, "naip")
		synctest.Wait()
		cancelWaiter()

		got := <-waiter
		if !errors.Is(got.err, context.Canceled) || !errors.Is(got.err, ErrSigningFailed) {
			t.Errorf("cancelled waiter error = %v; want context.Canceled inside a signing error", got.err)
		}
		select {
		case r := <-leader:
			t.Fatalf("the fetch ended (%+v) when only a waiter was cancelled", r)
		default:
		}

		held.open()
		if r := <-leader; r.err != nil || r.href != tokenValue("naip", 1) {
			t.Errorf("leader = %+v; want the first token", r)
		}
		if n := endpoint.count("naip"); n != 1 {
			t.Errorf("token requests = %d, want 1", n)
		}
	})
}

func TestWaiterRetriesWhenTheFetchItJoinedIsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		endpoint, held, signer := newGatedSigner(t)

		leaderCtx, cancelLeader := context.WithCancel(context.Background())
		leader := tokenInBackground(leaderCtx, signer, "naip")
		synctest.Wait()

		waiter := tokenInBackground(context.Background(), signer, "naip")
		synctest.Wait()

		cancelLeader()
		if r := <-leader; !errors.Is(r.err, context.Canceled) {
			t.Errorf("cancelled leader error = %v; want context.Canceled", r.err)
		}
		synctest.Wait() // the waiter has started a fetch of its own, held at the gate
		if n := held.entered.Load(); n != 2 {
			t.Fatalf("requests = %d; want 2 (the waiter asks again under its own context)", n)
		}
		held.open()
		// The cancelled request never got past the gate, so the endpoint
		// issues its first token to the waiter's request.
		if r := <-waiter; r.err != nil || r.href != tokenValue("naip", 1) {
			t.Errorf("waiter = %+v; want a token", r)
		}
		if n := endpoint.count("naip"); n != 1 {
			t.Errorf("answered token requests = %d, want 1", n)
		}
	})
}

func TestTokenRespectsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, _, signer := newGatedSigner(t) // the gate is never opened: the endpoint hangs

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err := signer.Token(ctx, "naip")
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrSigningFailed) {
			t.Errorf("Token error = %v; want context.DeadlineExceeded inside a signing error", err)
		}
		if waited := time.Since(start); waited != 2*time.Second {
			t.Errorf("Token returned after %s; want exactly the 2s deadline", waited)
		}
	})
}

func TestTokenWithCancelledContextSendsNothing(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := signer.Token(ctx, "naip")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrSigningFailed) {
		t.Errorf("Token error = %v; want context.Canceled inside a signing error", err)
	}
	if n := endpoint.total(); n != 0 {
		t.Errorf("%d requests sent for an already cancelled call", n)
	}
}

func TestCancellationOverLoopbackIsNotCached(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	entered := make(chan struct{}, 1)
	hanging := atomic.Bool{}
	hanging.Store(true)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hanging.Load() {
			entered <- struct{}{}
			<-r.Context().Done() // until the client hangs up
			return
		}
		endpoint.ServeHTTP(w, r)
	})
	signer := startSigner(t, handler, clock, Options{})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := signer.Token(ctx, "naip")
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, ErrSigningFailed) {
		t.Fatalf("Token error = %v; want context.Canceled inside a signing error", err)
	}

	hanging.Store(false)
	token, err := signer.Token(context.Background(), "naip")
	if err != nil || token.Value != tokenValue("naip", 1) {
		t.Errorf("Token after the cancelled call = %+v, %v; want a fresh fetch", token, err)
	}
}

func TestSharedFetchFailureReachesEveryWaiterOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		endpoint, held, signer := newGatedSigner(t)
		endpoint.setRespond(func(string, int) answer { return answer{500, `{"detail":"boom"}`} })

		const callers = 4
		results := make([]<-chan signResult, callers)
		for i := range results {
			results[i] = tokenInBackground(context.Background(), signer, "naip")
		}
		synctest.Wait()
		held.open()
		for _, result := range results {
			var signErr *Error
			if r := <-result; !errors.As(r.err, &signErr) || signErr.Status != 500 {
				t.Errorf("Token error = %v; want the endpoint's HTTP 500", r.err)
			}
		}
		// An endpoint failure is shared, not retried by each waiter.
		if n := endpoint.count("naip"); n != 1 {
			t.Errorf("token requests = %d, want 1", n)
		}
	})
}
