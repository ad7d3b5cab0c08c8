package bench

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/reliability"
)

// The SLO tests: the policy's claim, checked through the real MCP server,
// for every network tool, with a fixed seed.
//
// The policy is the default one with the cache off (every call must reach
// the upstream) and its waits scaled down so the suite runs in seconds:
// backoff base 10 ms instead of 400 ms, Retry-After capped at 10 ms (the
// injected 429s announce 1 s and 30 s). Attempt caps, the retry budget, the
// breaker and the classification are the production ones. Keep-alives are
// off so that net/http cannot replay a request behind the layer's back:
// every attempt the catalog sees is one the layer decided to send.
//
// These tests count outcomes; they never read a clock. Latency is the
// benchmarks' business (slo_bench_test.go): on a 2-core machine running
// every package's -race tests beside a CPU hog, a wall-clock bound either
// fails for reasons that are not the code's or is too loose to mean much.

const (
	sloSeed        = 1   // fixed: a failure is replayed by rerunning the test
	sloInvocations = 200 // per tool, where a success ratio is claimed
	sloMinSuccess  = 196 // ≥ 196/200 shows ≥ 95 % success at 95 % confidence; 190/200 would not
	sloFaultRate   = 0.2 // per upstream attempt
	sloParallel    = 8   // concurrent calls per tool
	// sloPerCallInvocations is the run length of the tests whose
	// assertions hold call by call (no ratio): a quarter of the calls
	// still meets every kind of their class several times per tool, at a
	// quarter of the cost under -race.
	sloPerCallInvocations = 50
	// sloRangeReadMinSuccess is the bar of the pixel tools (sloRangeReads)
	// over their 50 calls, which make 24 to 27 requests each. Issue 26 asks
	// ≥ 99 %: their calls pool their attempts (adr/0030), so that a request
	// may take up to 6 while the call sends at most 3 a request on average;
	// the model gives 99.8 % a call (0.2⁶ × 25 reads fail). Measured with
	// seed 1: 50/50 each, and 200/200 each over 200 calls. With 3 attempts
	// a request (before adr/0030) it was 39, 46 and 50 of 50 (0.992^k, 83 %
	// for k = 22). BenchmarkSLO (scripts/slo-report.sh) measures 200 a
	// seed; bench/RESULTS.md has the rows.
	sloRangeReadMinSuccess = 49
)

// sloTestPolicy is the policy of the tests whose faults all end by
// themselves (no hang). Their attempt and tool timeouts are far above
// anything those faults need, so that a starved machine answering slowly
// is never taken for a failing catalog: the counts they assert must not
// depend on how busy the machine is. For the same reason hedging is off
// here: a copy goes out when an answer is slower than the host's learned
// p95, which on a loaded machine is a matter of scheduling, and would show
// up as a retry where these tests count none. TestSLOHangFaults sets its
// own policy, with hedging on as in production; hedged reads are proven in
// virtual time by reliability's tests and measured by BenchmarkSLO.
func sloTestPolicy() reliability.Policy {
	p := reliability.DefaultPolicy()
	p.CacheTTL = 0
	p.Hedge = false
	p.BackoffBase = 10 * time.Millisecond
	p.RetryAfterCap = 10 * time.Millisecond
	p.AttemptTimeout = time.Minute
	p.ToolTimeout = 2 * time.Minute
	return p
}

// runSLO runs every network tool in parallel subtests, each against its
// own harness, and hands check the summary and outcomes.
func runSLO(t *testing.T, plan faultinject.Plan, policy reliability.Policy, check func(t *testing.T, s sloSummary, outcomes []callOutcome, journal *faultinject.Journal)) {
	runSLOWith(t, plan, policy, sloInvocations, sloParallel, check)
}

func runSLOWith(t *testing.T, plan faultinject.Plan, policy reliability.Policy, invocations, parallel int, check func(t *testing.T, s sloSummary, outcomes []callOutcome, journal *faultinject.Journal)) {
	for _, c := range sloCalls {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			h := newSLOHarness(t, sloConfig{plan: plan, policy: policy})
			n := invocations
			if sloRangeReads[c.tool] {
				// Twenty-odd requests a call: a quarter of the calls keeps
				// -race CI within its time (sloRangeReadMinSuccess);
				// BenchmarkSLO runs 200.
				n = min(n, sloPerCallInvocations)
			}
			outcomes := h.run(t, c, n, parallel)
			h.settle()
			s := summarize(c.tool, outcomes, h.injector.Journal())
			s.served = int(h.served.Load())
			t.Logf("%s (%s)", s, c.why)
			if s.unkeyed > 0 {
				t.Errorf("%d upstream attempts carried no SLO key: the fault schedule is not reproducible", s.unkeyed)
			}
			check(t, s, outcomes, h.injector.Journal())
		})
	}
}

func TestSLOCoversEveryNetworkTool(t *testing.T) {
	var covered []string
	for _, c := range sloCalls {
		covered = append(covered, c.tool)
	}
	if want := sloNetworkTools(); !slices.Equal(covered, want) {
		t.Errorf("SLO calls cover %v; the inventory's network tools are %v: add an sloCalls entry for every network tool", covered, want)
	}
}

// TestSLORetryableFaults: at 20 % retryable faults per attempt, at least
// 196 of 200 calls of every network tool succeed.
func TestSLORetryableFaults(t *testing.T) {
	t.Parallel()
	plan := faultinject.Plan{Seed: sloSeed, Rate: sloFaultRate, Mix: faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassRetryable)...)}
	runSLO(t, plan, sloTestPolicy(), func(t *testing.T, s sloSummary, _ []callOutcome, _ *faultinject.Journal) {
		bar := sloMinSuccess
		if sloRangeReads[s.tool] {
			bar = sloRangeReadMinSuccess
		}
		if s.succeeded < bar {
			t.Errorf("%d/%d calls succeeded; the SLO needs at least %d", s.succeeded, s.calls, bar)
		}
		// The run must really have been faulted, and the faults retried.
		if r := s.faultRate(); r < 0.15 || r > 0.25 {
			t.Errorf("%.1f%% of attempts were faulted; the plan asks for %.0f%%", 100*r, 100*sloFaultRate)
		}
		if s.retries == 0 || s.maxAttempt < 2 {
			t.Errorf("no retries (receipts: %d, highest attempt %d) in a faulted run", s.retries, s.maxAttempt)
		}
	})
}

// TestSLONonRetryableFaults: answers that a retry cannot change (4xx,
// 501/505, wrong payloads, too large) are never retried.
func TestSLONonRetryableFaults(t *testing.T) {
	t.Parallel()
	plan := faultinject.Plan{Seed: sloSeed, Rate: sloFaultRate, Mix: faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassNonRetryable)...),
		Timing: faultinject.Timing{OversizedBytes: 640 << 10}}
	policy := sloTestPolicy()
	policy.MaxBodyBytes = 512 << 10 // the oversized answer (640 KiB) is over the cap; real answers here are under 200 KiB
	runSLOWith(t, plan, policy, sloPerCallInvocations, sloParallel, func(t *testing.T, s sloSummary, outcomes []callOutcome, journal *faultinject.Journal) {
		if s.faulted == 0 {
			t.Fatal("no fault was injected")
		}
		for i, o := range outcomes {
			if o.receipt.Retries != 0 {
				t.Errorf("call %d: receipt shows %d retries after a non-retryable fault", i+1, o.receipt.Retries)
			}
		}
		// Every logical request reached the catalog exactly once: per call,
		// the journal's attempts equal the receipt's attempts and requests.
		seen := map[string]int{}
		refetched := 0
		for _, r := range journal.Records() {
			n, _, _ := strings.Cut(r.Invocation, " ")
			seen[n]++
			if r.Attempt > 1 {
				refetched++ // the same URL asked again by the tool, not by the layer
			}
		}
		for i, o := range outcomes {
			n := strconv.Itoa(i + 1)
			// A cold call sends its landing page and /conformance side by
			// side; when the landing page fails for good the other request
			// is cancelled, and a cancelled request may never reach the
			// catalog although the receipt counts the attempt it started.
			// So a failed call may show one attempt the catalog did not
			// see; the catalog seeing more than the receipt (a hidden
			// replay) or a request with a second attempt is always wrong.
			unseen := o.receipt.Attempts - seen[n]
			if sloRangeReads[s.tool] {
				// Range reads go side by side: a read that fails cancels
				// its siblings, some before their attempt started (a
				// request without an attempt), some before the catalog saw
				// them. Still no retry, and no attempt the receipt missed.
				if o.receipt.Attempts > o.receipt.UpstreamRequests || unseen < 0 {
					t.Errorf("call %d (ok %v): the catalog saw %d attempts, the receipt %d attempts for %d requests; want at most one attempt per request, each in the receipt",
						i+1, o.ok, seen[n], o.receipt.Attempts, o.receipt.UpstreamRequests)
				}
				continue
			}
			if o.receipt.Attempts != o.receipt.UpstreamRequests || unseen < 0 || unseen > 1 || (unseen == 1 && o.ok) {
				t.Errorf("call %d (ok %v): the catalog saw %d attempts, the receipt %d attempts for %d requests; want one attempt per request",
					i+1, o.ok, seen[n], o.receipt.Attempts, o.receipt.UpstreamRequests)
			}
		}
		if refetched > 0 {
			t.Logf("%d requests were sent again by the tool itself within the same call, each counted as a new request (no layer retry)", refetched)
		}
	})
}

// TestSLOHangFaults: attempts that never answer are cancelled when a copy
// beside them answers (hedging on) or cut by the attempt timeout (off), and
// by the tool timeout when every attempt hangs: no hung attempt is ever
// waited out, and a call that fails ends with a typed
// denial (the tool timeout's or the deadline's when a hang used up its
// time).
//
// A delayed answer (HeadersDelayedBeyond) comes after a minute, and it is
// the catalog's real answer: a layer that waited one out would let the
// catalog serve that request, so the catalog serving more requests than
// the journal let through unharmed shows it without reading a clock (and
// the run would take minutes). How close to the 1 s cap the calls end is a
// timing promise: reliability's TestToolTimeout* tests prove "returns
// within 100 ms of the cap" in virtual time (testing/synctest), and
// BenchmarkSLOHangCap measures it end to end on a real clock (what this
// test asserted, with 400/600 ms of slack, until issue 21: on a 2-core
// machine under -race beside other test binaries no slack held).
//
// It runs twice: with hedging on (the default since adr/0023: no read is
// cut by a timer, a copy goes out beside a read slower than the learned
// delay, so calls rarely reach the cap) and off (attempts cut at the
// attempt timeout and retried, adr/0011, so some calls must end at the cap).
func TestSLOHangFaults(t *testing.T) {
	t.Parallel()
	for _, hedge := range []bool{true, false} {
		t.Run(map[bool]string{true: "hedge_on", false: "hedge_off"}[hedge], func(t *testing.T) {
			t.Parallel()
			plan, policy := sloHangSetup()
			policy.Hedge = hedge
			runSLOWith(t, plan, policy, sloPerCallInvocations, 2*sloParallel, func(t *testing.T, s sloSummary, outcomes []callOutcome, _ *faultinject.Journal) {
				if s.faulted == 0 {
					t.Fatal("no hang was injected")
				}
				// With hedging a copy the journal let through unharmed may
				// lose to another and be cancelled before the catalog served
				// it, so served may fall short of unharmed; a hang waited
				// out would still show as served above it.
				if unharmed := s.attempts - s.faulted; s.served > unharmed || !hedge && s.served != unharmed {
					t.Errorf("the catalog served %d requests, the journal let %d through unharmed: %d hung attempts were waited out instead of cut",
						s.served, unharmed, s.served-unharmed)
				}
				capped := 0
				for i, o := range outcomes {
					if !o.ok && o.denial == "" {
						t.Errorf("call %d failed without a denial: %s", i+1, o.text)
					}
					if o.denial == reliability.CodeTimeout || o.denial == reliability.CodeDeadline {
						capped++
					}
				}
				if capped == 0 && !hedge {
					t.Errorf("no call ended with a %s or %s denial: the run did not exercise the caps", reliability.CodeTimeout, reliability.CodeDeadline)
				}
				t.Logf("%d calls ended with a timeout or deadline denial", capped)
			})
		})
	}
}

// sloHangSetup is the hang run's plan and policy, shared with
// BenchmarkSLOHangCap: a 1 s tool timeout, a 600 ms attempt timeout, and
// hangs of a minute (or until the attempt is cancelled), hedging as by
// default.
func sloHangSetup() (faultinject.Plan, reliability.Policy) {
	policy := sloTestPolicy()
	policy.Hedge = reliability.DefaultPolicy().Hedge
	policy.ToolTimeout = time.Second
	policy.AttemptTimeout = 600 * time.Millisecond
	plan := faultinject.Plan{Seed: sloSeed, Rate: sloFaultRate, Mix: faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassHang)...),
		Timing: faultinject.Timing{HeaderDelayBeyond: time.Minute}}
	return plan, policy
}
