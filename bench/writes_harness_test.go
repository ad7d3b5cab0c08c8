package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools"
)

// The write proof: exactly one side effect per logical write, whatever the
// catalog does to the answer and however the model retries.
//
// Each logical write is one create_item of a new item, under its own
// idempotency key. The first send of every write meets the class's fault
// (faultinject.Middleware with Rate 1): the catalog applies it and then
// resets the connection, never answers, or answers 503; or (the control
// class) the connection resets before the catalog sees it. The lookups a
// write makes meet 20 % seeded retryable faults, so some lookups fail too
// and the write ends "outcome unknown" until a later call resolves it.
//
// The model, seeded per invocation, calls again with the same key 1 to 3
// times, sequentially or concurrently with the first call, and finally
// once more after everything settled (as a patient model would), until
// that call is not a transient denial. Every call must resolve to the
// original outcome, a duplicate of it, or a typed denial; the catalog must
// have applied the write exactly once.

// writeFaultClass is one way the answer to a write is lost.
type writeFaultClass struct {
	name string
	kind faultinject.Kind
}

var writeFaultClasses = []writeFaultClass{
	{"applied_then_reset", faultinject.AppliedThenReset},
	{"applied_then_hang", faultinject.AppliedThenHang},
	{"applied_then_503", faultinject.AppliedThen503},
	// Control: the write never reaches the catalog, so it must be replayed.
	{"lost_before_applied", faultinject.ResetBeforeResponse},
}

const (
	writeProofSeed        = 1
	writeProofInvocations = 200 // per fault class
	writeProofParallel    = 8
	writeLookupFaultRate  = 0.2
	// writePatience is how long the patient model's last call keeps
	// repeating transient denials.
	writePatience = time.Minute
)

// writeProofPolicy is the production policy with waits scaled down: a hung
// write is cut after 300 ms instead of 4 s.
func writeProofPolicy() reliability.Policy {
	p := reliability.DefaultPolicy()
	p.BackoffBase = 10 * time.Millisecond
	p.RetryAfterCap = 10 * time.Millisecond
	p.AttemptTimeout = 300 * time.Millisecond
	p.ToolTimeout = 3 * time.Second
	p.MinUsefulAttempt = 20 * time.Millisecond
	return p
}

// writeHarness is one catalog with its fault router and one MCP server.
//
// Every logical write reaches the catalog through a listener of its own
// (its own host:port), so each has its own circuit breaker. The breaker
// would rightly open on one host that loses the answer to every write it
// is sent, and then this would be a test of the breaker.
type writeHarness struct {
	session *mcp.ClientSession
	router  http.Handler
	mu      sync.Mutex
	applied map[string]int // item id → changes the catalog applied
	posts   map[string]int // item id → POSTs the catalog saw (after the fault router)
}

func newWriteHarness(tb testing.TB, class writeFaultClass, seed uint64) *writeHarness {
	tb.Helper()
	h := &writeHarness{applied: map[string]int{}, posts: map[string]int{}}
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"proof","description":"writes","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[]}`)); err != nil {
		tb.Fatal(err)
	}
	api := stacserver.New(store, stacserver.Options{Writes: &stacserver.WriteOptions{OnApplied: func(r *http.Request) {
		h.mu.Lock()
		h.applied[r.Header.Get("X-Proof-Item")]++
		h.mu.Unlock()
	}}})
	writes, err := faultinject.New(faultinject.Plan{Seed: seed, Rate: 1, Mix: faultinject.EqualMix(class.kind)})
	if err != nil {
		tb.Fatal(err)
	}
	reads, err := faultinject.New(faultinject.Plan{Seed: seed, Rate: writeLookupFaultRate, Mix: faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassRetryable)...)},
		faultinject.WithKeyFunc(faultinject.KeyByRequest))
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	var seenMu sync.Mutex
	faultyWrite, faultyRead := writes.Middleware(api), reads.Middleware(api)
	router := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/items"):
			item := proofItemOf(r)
			r.Header.Set("X-Proof-Item", item)
			h.mu.Lock()
			h.posts[item]++
			h.mu.Unlock()
			seenMu.Lock()
			first := !seen[item]
			seen[item] = true
			seenMu.Unlock()
			if first {
				faultyWrite.ServeHTTP(w, r)
				return
			}
			api.ServeHTTP(w, r)
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/items/"):
			faultyRead.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
	h.router = router
	deps := newBenchDeps(tb, tools.DemoCatalog, writeProofPolicy(), nil, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100})
	ist, err := idempotency.OpenSQLite(tb.Context(), tb.TempDir(), idempotency.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ist.Close() })
	deps.Writes = &tools.Writes{Store: ist}
	h.session = connectInMemory(tb, tools.NewServer(deps, "bench"), "write-proof")
	return h
}

// proofItemOf is the item id of a create request, read from its body,
// which is put back for the catalog.
func proofItemOf(r *http.Request) string {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	var doc struct {
		ID string `json:"id"`
	}
	if err == nil {
		_ = json.Unmarshal(body, &doc)
	}
	return doc.ID
}

// callKind is how one call resolved.
type callKind string

const (
	callOriginal  callKind = "original"  // the outcome, reached by this call
	callDuplicate callKind = "duplicate" // the stored outcome of another call
	callDenied    callKind = "denied"    // a typed denial (its code in the result)
	callViolation callKind = "violation" // anything else: the proof fails
)

type writeCallResult struct {
	kind     callKind
	code     string // denial code
	decision string // replay decision of an original
	corrID   string // correlation id of the outcome (original or duplicated)
	detail   string
}

// writeLogical is what happened to one logical write.
type writeLogical struct {
	item    string
	retries int
	conc    bool
	calls   []writeCallResult
	applied int
	posts   int
	elapsed time.Duration
}

// runLogicalWrite makes one logical write as the seeded model would.
func (h *writeHarness) runLogicalWrite(tb testing.TB, seed uint64, n int) writeLogical {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	lw := writeLogical{item: fmt.Sprintf("w-%04d", n), retries: 1 + rng.IntN(3), conc: rng.IntN(2) == 0}
	catalog := httptest.NewServer(h.router)
	defer catalog.Close()
	args := map[string]any{
		"catalog_url":     catalog.URL,
		"collection_id":   "proof",
		"idempotency_key": fmt.Sprintf("proof-%d-%d", seed, n),
		"item": map[string]any{"type": "Feature", "stac_version": "1.0.0", "id": lw.item,
			"geometry":   map[string]any{"type": "Point", "coordinates": []float64{float64(n%360) - 180, 10}},
			"bbox":       []float64{float64(n%360) - 180, 10, float64(n%360) - 180, 10},
			"properties": map[string]any{"datetime": "2024-06-01T10:00:00Z"}, "assets": map[string]any{}},
	}
	delays := make([]time.Duration, lw.retries)
	for i := range delays {
		delays[i] = time.Duration(rng.IntN(60)) * time.Millisecond
	}
	start := time.Now()
	var mu sync.Mutex
	record := func(r writeCallResult) { mu.Lock(); lw.calls = append(lw.calls, r); mu.Unlock() }
	if lw.conc {
		var wg sync.WaitGroup
		wg.Go(func() { record(h.call(tb, args)) })
		for _, d := range delays {
			wg.Go(func() { time.Sleep(d); record(h.call(tb, args)) })
		}
		wg.Wait()
	} else {
		record(h.call(tb, args))
		for _, d := range delays {
			time.Sleep(d)
			record(h.call(tb, args))
		}
	}
	// The patient model's last call: repeat transient denials (a little
	// later) until the outcome comes back. How many repeats that takes
	// depends on how busy the machine is (a starved lookup meets the 300 ms
	// attempt timeout and the outcome stays unknown a little longer), so
	// the model is patient by the clock, not by a count; the bound only
	// ends a run whose outcome never comes back.
	for giveUp := time.Now().Add(writePatience); ; {
		r := h.call(tb, args)
		record(r)
		if r.kind != callDenied || time.Now().After(giveUp) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	lw.elapsed = time.Since(start)
	h.mu.Lock()
	lw.applied, lw.posts = h.applied[lw.item], h.posts[lw.item]
	h.mu.Unlock()
	return lw
}

// call makes one create_item call and says how it resolved.
func (h *writeHarness) call(tb testing.TB, args map[string]any) writeCallResult {
	res, err := h.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_item", Arguments: args})
	if err != nil {
		return writeCallResult{kind: callViolation, detail: "protocol error: " + err.Error()}
	}
	if d, ok := res.Meta[tools.MetaDenial]; ok && res.IsError {
		var den reliability.Denial
		raw, _ := json.Marshal(d)
		if json.Unmarshal(raw, &den) == nil && den.Code != "" && den.Recovery != "" {
			return writeCallResult{kind: callDenied, code: den.Code}
		}
		return writeCallResult{kind: callViolation, detail: "untyped denial: " + string(raw)}
	}
	var out tools.WriteOut
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || json.Unmarshal(raw, &out) != nil || out.Status != "created" {
		return writeCallResult{kind: callViolation, detail: fmt.Sprintf("isError %v: %s", res.IsError, textOf(res))}
	}
	if out.Duplicate {
		return writeCallResult{kind: callDuplicate, corrID: out.CorrelationID, decision: out.ReplayDecision}
	}
	return writeCallResult{kind: callOriginal, corrID: out.CorrelationID, decision: out.ReplayDecision}
}

// check lists what breaks the proof for one logical write: it must be
// applied exactly once; every call must be the outcome, a duplicate of it
// or a typed denial; at most one call reaches the outcome itself (none
// when that call's own answer was a timeout denial while its write went
// on to finish), and every call that returns the outcome names the same
// call as the one that made it.
func (lw writeLogical) check() []string {
	var problems []string
	if lw.applied != 1 {
		problems = append(problems, fmt.Sprintf("applied %d times", lw.applied))
	}
	originals, outcomes := 0, map[string]bool{}
	for _, c := range lw.calls {
		switch c.kind {
		case callOriginal:
			originals++
			outcomes[c.corrID] = true
		case callDuplicate:
			outcomes[c.corrID] = true
		case callViolation:
			problems = append(problems, "a call resolved to neither the outcome, a duplicate nor a typed denial: "+c.detail)
		}
	}
	if originals > 1 {
		problems = append(problems, fmt.Sprintf("%d calls reached an outcome themselves, want one", originals))
	}
	if len(outcomes) != 1 {
		problems = append(problems, fmt.Sprintf("the calls returned %d different outcomes (by correlation id), want one", len(outcomes)))
	}
	return problems
}

// writeProofSummary aggregates one class's run.
type writeProofSummary struct {
	logical, calls, applied, posts int
	kinds                          map[callKind]int
	denials, decisions             map[string]int
	problems                       []string
	elapsed                        []time.Duration
}

func (s writeProofSummary) sideEffectsPerWrite() float64 {
	return float64(s.applied) / float64(s.logical)
}

func (s writeProofSummary) String() string {
	keys := func(m map[string]int) string {
		var parts []string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	}
	p50, _, p99 := percentiles(s.elapsed)
	return fmt.Sprintf("%d logical writes, %d calls: side effects per logical write %.3f (%d applied, %d POSTs reached the catalog); "+
		"calls: %d original, %d duplicate, %d denied (%s), %d violations; outcomes reached by: %s; time per logical write p50 %v, p99 %v",
		s.logical, s.calls, s.sideEffectsPerWrite(), s.applied, s.posts,
		s.kinds[callOriginal], s.kinds[callDuplicate], s.kinds[callDenied], keys(s.denials), s.kinds[callViolation], keys(s.decisions),
		p50.Round(time.Millisecond), p99.Round(time.Millisecond))
}

// runWriteProof runs n logical writes of one class, parallel at a time.
func runWriteProof(tb testing.TB, class writeFaultClass, seed uint64, n, parallel int) writeProofSummary {
	h := newWriteHarness(tb, class, seed)
	results := make([]writeLogical, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range next {
				results[i] = h.runLogicalWrite(tb, seed, i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	s := writeProofSummary{logical: n, kinds: map[callKind]int{}, denials: map[string]int{}, decisions: map[string]int{}}
	for _, lw := range results {
		s.applied += lw.applied
		s.posts += lw.posts
		s.elapsed = append(s.elapsed, lw.elapsed)
		for _, c := range lw.calls {
			s.calls++
			s.kinds[c.kind]++
			if c.kind == callDenied {
				s.denials[c.code]++
			}
			if c.kind == callOriginal {
				s.decisions[c.decision]++
			}
		}
		for _, p := range lw.check() {
			s.problems = append(s.problems, fmt.Sprintf("%s (retries %d, concurrent %v): %s", lw.item, lw.retries, lw.conc, p))
		}
	}
	return s
}
