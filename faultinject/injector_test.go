package faultinject

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// okTransport answers every request with 200 in memory.
type okTransport struct{}

func (okTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
		Body: io.NopCloser(strings.NewReader(`{}`)), ContentLength: 2, Request: req}, nil
}

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestInjector(t *testing.T, p Plan, opts ...Option) *Injector {
	t.Helper()
	in, err := New(p, append([]Option{withClock(func() time.Time { return fixedTime })}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return in
}

func send(t *testing.T, rt http.RoundTripper, ctx context.Context, header http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://catalog.test/search", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := rt.RoundTrip(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

// runShuffled sends attempts attempts for each (tool, invocation) pair,
// the invocations dealt in a seeded random order to workers goroutines.
func runShuffled(t *testing.T, in *Injector, shuffleSeed uint64, workers int) []Record {
	t.Helper()
	type call struct{ tool, invocation string }
	var calls []call
	for _, tool := range []string{"search_items", "get_item", "get_collection"} {
		for i := range 60 {
			calls = append(calls, call{tool, strconv.Itoa(i)})
		}
	}
	rand.New(rand.NewPCG(shuffleSeed, 0)).Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
	rt := in.RoundTripper(okTransport{})
	work := make(chan call)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range work {
				h := http.Header{}
				h.Set(HeaderTool, c.tool)
				h.Set(HeaderInvocation, c.invocation)
				for range 4 {
					send(t, rt, context.Background(), h)
				}
			}
		})
	}
	for _, c := range calls {
		work <- c
	}
	close(work)
	wg.Wait()
	return in.Journal().Records()
}

// Instant kinds only, so the test stays fast: the point is the schedule.
var instantKinds = KindsOf(ClassRetryable, ClassNonRetryable)

func TestScheduleIndependentOfInterleaving(t *testing.T) {
	p := Plan{Seed: 99, Rate: 0.3, Mix: EqualMix(slices.DeleteFunc(slices.Clone(instantKinds),
		func(k Kind) bool { return k == OversizedBody })...)}
	sequential := runShuffled(t, newTestInjector(t, p), 1, 1)
	parallel := runShuffled(t, newTestInjector(t, p), 2, 8)
	if len(sequential) != 3*60*4 {
		t.Fatalf("journal holds %d records; want %d", len(sequential), 3*60*4)
	}
	if !slices.Equal(sequential, parallel) {
		t.Fatalf("journals differ between a sequential and a shuffled 8-goroutine run")
	}
	faults := 0
	for _, r := range parallel {
		if want := p.mustDecide(t, r.Key); r.Kind != want {
			t.Errorf("record %+v has kind %v; Plan.decide says %v", r.Key, r.Kind, want)
		}
		if !r.Keyed || r.Method != http.MethodGet || r.Path != "/search" || !r.Time.Equal(fixedTime) {
			t.Errorf("record %+v lacks its request details", r)
		}
		if r.Kind != None {
			faults++
		}
	}
	if faults == 0 || faults == len(parallel) {
		t.Errorf("%d of %d attempts faulted at rate 0.3; the schedule is degenerate", faults, len(parallel))
	}
}

func (p Plan) mustDecide(t *testing.T, k Key) Kind {
	t.Helper()
	return mustDecide(t, p, k)
}

func TestJournalCountsAndResetReplays(t *testing.T) {
	p := Plan{Seed: 5, Rate: 0.5, Mix: EqualMix(HTTP503, HTTP404)}
	in := newTestInjector(t, p)
	first := runShuffled(t, in, 3, 4)
	counts := in.Journal().counts()
	if got := counts[None] + counts[HTTP503] + counts[HTTP404]; got != len(first) || len(counts) != 3 {
		t.Errorf("Counts() = %v; want none, http_503 and http_404 summing to %d", counts, len(first))
	}
	faults := in.Journal().faults()
	if len(faults) != counts[HTTP503]+counts[HTTP404] {
		t.Errorf("Faults() has %d records; Counts() says %d", len(faults), counts[HTTP503]+counts[HTTP404])
	}
	if got := in.Journal().attempts("get_item", "7"); got != 4 {
		t.Errorf("Attempts(get_item, 7) = %d; want 4", got)
	}
	in.reset()
	if n := len(in.Journal().Records()); n != 0 {
		t.Fatalf("Reset left %d records", n)
	}
	if again := runShuffled(t, in, 4, 4); !slices.Equal(first, again) {
		t.Errorf("after Reset the same requests got different faults")
	}
}

func TestDefaultKeyFuncSources(t *testing.T) {
	in := newTestInjector(t, Plan{Seed: 1})
	rt := in.RoundTripper(okTransport{})
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	ctx := withKey(context.Background(), "ctx_tool", "ctx-call")
	send(t, rt, ctx, header(HeaderTool, "ignored", HeaderInvocation, "ignored"))
	send(t, rt, ctx, nil)
	send(t, rt, context.Background(), header(HeaderTool, "search_items", HeaderInvocation, "17", HeaderCorrelationID, "ignored"))
	send(t, rt, context.Background(), header(HeaderCorrelationID, "corr-1"))
	send(t, rt, context.Background(), header(HeaderTool, "get_item", HeaderCorrelationID, "corr-1"))
	send(t, rt, context.Background(), header(HeaderCorrelationID, "corr-1"))
	send(t, rt, context.Background(), http.Header{})
	send(t, rt, context.Background(), http.Header{})

	var got []string
	for _, r := range in.Journal().Records() {
		got = append(got, fmt.Sprintf("%s/%s/%d/%t", r.Tool, r.Invocation, r.Attempt, r.Keyed))
	}
	want := []string{
		"/corr-1/1/true",
		"/corr-1/2/true",
		"/unkeyed-1/1/false",
		"/unkeyed-2/1/false",
		"ctx_tool/ctx-call/1/true",
		"ctx_tool/ctx-call/2/true",
		"get_item/corr-1/1/true",
		"search_items/17/1/true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("keys recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestKeyFuncMayCarryTheAttempt(t *testing.T) {
	byHeader := func(r *http.Request) (Key, bool) {
		n, err := strconv.Atoi(r.Header.Get("X-Attempt"))
		return Key{Tool: "t", Invocation: "i", Attempt: n}, err == nil
	}
	in := newTestInjector(t, Plan{Seed: 1}, WithKeyFunc(byHeader))
	rt := in.RoundTripper(okTransport{})
	for _, attempt := range []string{"3", "3", "1"} {
		h := http.Header{}
		h.Set("X-Attempt", attempt)
		send(t, rt, context.Background(), h)
	}
	var attempts []int
	for _, r := range in.Journal().Records() {
		attempts = append(attempts, r.Attempt)
	}
	if !slices.Equal(attempts, []int{1, 3, 3}) {
		t.Errorf("attempts recorded %v; want the KeyFunc's own numbers [1 3 3]", attempts)
	}
}

func TestKeyByRequestCountsAttemptsPerDistinctRequest(t *testing.T) {
	in := newTestInjector(t, Plan{Seed: 1}, WithKeyFunc(KeyByRequest))
	upstream := &bodyEcho{}
	rt := in.RoundTripper(upstream)
	post := func(body string) {
		req, err := http.NewRequest(http.MethodPost, "http://catalog.test/search?limit=5", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(HeaderTool, "search_items")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	post(`{"collections":["a"]}`)
	post(`{"collections":["b"]}`)
	post(`{"collections":["a"]}`)
	records := in.Journal().Records()
	if len(records) != 3 {
		t.Fatalf("%d records; want 3", len(records))
	}
	attempts := map[string][]int{}
	for _, r := range records {
		if r.Tool != "search_items" || !strings.HasPrefix(r.Invocation, "POST /search?limit=5 body-sha256:") {
			t.Errorf("record key %+v; want tool search_items and the request as invocation", r.Key)
		}
		attempts[r.Invocation] = append(attempts[r.Invocation], r.Attempt)
	}
	if len(attempts) != 2 {
		t.Errorf("invocations %v; want one per distinct body", attempts)
	}
	for inv, got := range attempts {
		if !slices.Equal(got, []int{1, 2}) && !slices.Equal(got, []int{1}) {
			t.Errorf("attempts of %s = %v; want 1..n", inv, got)
		}
	}
	// The body still reaches the upstream whole: hashing must not eat it.
	want := []string{`{"collections":["a"]}`, `{"collections":["b"]}`, `{"collections":["a"]}`}
	if !slices.Equal(upstream.bodies, want) {
		t.Errorf("upstream received %q; want %q", upstream.bodies, want)
	}
}

// KeyByRequest on the server side, where there is no GetBody, reads the
// body and puts it back for the handler.
func TestKeyByRequestRestoresServerBodies(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "http://catalog.test/search", strings.NewReader(`{"limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = nil
	first, ok := KeyByRequest(req)
	if !ok {
		t.Fatal("no key for a readable body")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil || string(body) != `{"limit":3}` {
		t.Fatalf("body after keying = %q, %v; want it unchanged", body, err)
	}
	other, _ := http.NewRequest(http.MethodPost, "http://catalog.test/search", strings.NewReader(`{"limit":4}`))
	if second, _ := KeyByRequest(other); second == first {
		t.Errorf("different bodies got the same key %+v", first)
	}
}

// bodyEcho records the bodies it receives and answers 200.
type bodyEcho struct {
	mu     sync.Mutex
	bodies []string
}

func (b *bodyEcho) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.bodies = append(b.bodies, string(body))
	b.mu.Unlock()
	return okTransport{}.RoundTrip(req)
}
