package bench

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/reliability"
)

// BenchmarkSLO measures the policy's latency claim: per network tool and
// fault class, 200 invocations through the MCP server against an upstream
// whose latency is log-normal, once fault-free (the baseline) and once with
// faults, both with the same seed. It reports, via b.ReportMetric:
//
//	success_ratio            calls that succeeded, of the faulted run
//	base_p50_ms … p99_ms     client-side call latency, fault-free
//	p50_ms … p99_ms          the same with faults
//	added_p95_pct            (p95 − base p95) / base p95 × 100; the policy claims ≤ 35
//	p95_ratio                p95 / base p95 (the hung-attempt target: ≤ 2)
//	base_request_p95_ms, request_p95_ms, request_p95_ratio
//	                         the same per upstream request, timed where the tool's catalog client
//	                         hands it to the layer (bulkhead, attempts, backoff, copies included):
//	                         per page for the paging tools (search_items, map_items), the
//	                         "per page" figure
//	timed_requests/call      requests timed that way per call (upstream_requests/call counts
//	                         what the catalog saw; warm-ups are in neither)
//	retry_budget_left        the lowest retry budget of the hosts when the faulted run ended
//	                         (capacity 500): what copies that lost and retries spent
//	upstream_requests/call   logical upstream requests per invocation (pages, HEADs)
//	attempts/call            attempts the upstream saw per invocation
//	retries/call             the receipts' retries (after a backoff wait, hedges included)
//	replays/call             the receipts' replays: attempts net/http sent again at once on
//	                         a new connection when a reused one died (adr/0018)
//	hidden_replays/call      attempts the upstream saw that no receipt counted (0 since adr/0018)
//	hedges/call              hedged attempts (STAC_MCP_SLO_HEDGE=on)
//	base_hedges/call         the same in the fault-free baseline: what hedging costs when nothing fails
//	max_ms                   the slowest call at the client, with faults
//	over_cap_pct             calls the client saw end more than 100 ms after the tool timeout
//	                         (the layer's promise: a call returns within 100 ms of the cap)
//	layer_over_cap_pct       the same by the receipts' elapsed_ms, inside the layer
//
// The policy is DefaultPolicy with the cache off: real backoff (0.4 s base),
// real Retry-After cap (5 s), real attempt (4 s) and tool (15 s) timeouts.
// Keep-alives are on, as in production.
//
// Settings (environment, so that benchstat can compare whole runs):
//
//	STAC_MCP_SLO_UPSTREAM_P95   upstream p95 latency, e.g. 50ms (default) or 500ms
//	STAC_MCP_SLO_FAULT_RATE     faults per attempt, default 0.2
//	STAC_MCP_SLO_HEDGE          on (the policy's default since adr/0023) or off: Policy.Hedge with
//	                            the learned per-operation delay, or attempts cut at the attempt timeout
//	STAC_MCP_SLO_INVOCATIONS    calls per run, default 200
//	STAC_MCP_SLO_PARALLEL       calls at once, default 16 (the bulkhead): 8 leaves room for the
//	                            two requests a cold call sends side by side, or a read and its hedge
//	STAC_MCP_SLO_SEED           the fault schedule's and latency model's seed, default 1. One seed
//	                            fixes each tool's 200 latencies and faults, so tools differ by their
//	                            draw; runs over several seeds average that luck out
//
// Each b.N iteration is one whole run of the invocations; use -benchtime 1x
// (scripts/slo-report.sh does). Example:
//
//	STAC_MCP_SLO_UPSTREAM_P95=500ms go test -run '^$' -bench 'SLO/search_items/' -benchtime 1x ./bench/
func BenchmarkSLO(b *testing.B) {
	env := sloBenchEnvFromOS(b)
	for _, c := range sloCalls {
		b.Run(c.tool, func(b *testing.B) {
			for _, class := range sloFaultClasses {
				b.Run(class.name, func(b *testing.B) {
					base := env.baseline(b, c)
					var runs []sloSummary
					for range b.N {
						runs = append(runs, env.run(b, c, class, env.rate))
					}
					reportSLO(b, env.policy().ToolTimeout, base, runs)
				})
			}
		})
	}
}

// sloFaultClass is one benchmark fault class.
type sloFaultClass struct {
	name  string
	kinds []faultinject.Kind
	// slow: the injected answers take the upstream's latency too (the
	// latency model sits in front of the injector).
	slow bool
	// clientSide: injected in the client's transport (true ECONNREFUSED).
	clientSide bool
}

var sloFaultClasses = []sloFaultClass{
	{name: "fast", kinds: []faultinject.Kind{faultinject.ResetBeforeResponse, faultinject.ConnectionRefused,
		faultinject.HTTP500, faultinject.HTTP502, faultinject.HTTP503, faultinject.HTTP504}},
	{name: "slow5xx", kinds: []faultinject.Kind{faultinject.HTTP500, faultinject.HTTP502, faultinject.HTTP503, faultinject.HTTP504}, slow: true},
	{name: "hang", kinds: faultinject.KindsOf(faultinject.ClassHang)},
	{name: "429", kinds: []faultinject.Kind{faultinject.HTTP429RetryAfterSeconds, faultinject.HTTP429RetryAfterDate,
		faultinject.HTTP429RetryAfterInvalid, faultinject.HTTP429RetryAfterAboveCap}},
	// refused is the one connection fault the server side cannot produce
	// (it can only close an accepted connection): a true ECONNREFUSED,
	// which the layer retries at once because the request was never sent.
	{name: "refused", kinds: []faultinject.Kind{faultinject.ConnectionRefused}, clientSide: true},
}

// sloBenchEnv is the benchmark configuration read from the environment.
type sloBenchEnv struct {
	latency     latencyModel
	rate        float64
	hedge       bool
	invocations int
	parallel    int
	seed        uint64

	mu        sync.Mutex
	baselines map[string]sloSummary // per tool: fault-free runs are shared by the classes
}

func sloBenchEnvFromOS(b *testing.B) *sloBenchEnv {
	env := &sloBenchEnv{latency: latencyModel{P95: 50 * time.Millisecond, Sigma: 0.5}, rate: sloFaultRate, hedge: reliability.DefaultPolicy().Hedge,
		invocations: sloInvocations, parallel: sloBenchParallel, seed: sloSeed, baselines: map[string]sloSummary{}}
	if v, ok := os.LookupEnv("STAC_MCP_SLO_UPSTREAM_P95"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d > 10*time.Second {
			b.Fatalf("STAC_MCP_SLO_UPSTREAM_P95=%q is not valid; accepted: a duration from 1ms to 10s, e.g. 50ms or 500ms", v)
		}
		env.latency.P95 = d
	}
	if v, ok := os.LookupEnv("STAC_MCP_SLO_FAULT_RATE"); ok {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r > 1 {
			b.Fatalf("STAC_MCP_SLO_FAULT_RATE=%q is not valid; accepted: a probability from 0 to 1, e.g. 0.2", v)
		}
		env.rate = r
	}
	if v, ok := os.LookupEnv("STAC_MCP_SLO_HEDGE"); ok {
		switch strings.ToLower(v) {
		case "on":
			env.hedge = true
		case "off":
			env.hedge = false
		default:
			b.Fatalf("STAC_MCP_SLO_HEDGE=%q is not valid; accepted: on or off", v)
		}
	}
	if v, ok := os.LookupEnv("STAC_MCP_SLO_INVOCATIONS"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 20 || n > 10000 {
			b.Fatalf("STAC_MCP_SLO_INVOCATIONS=%q is not valid; accepted: an integer from 20 to 10000", v)
		}
		env.invocations = n
	}
	if v, ok := os.LookupEnv("STAC_MCP_SLO_SEED"); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			b.Fatalf("STAC_MCP_SLO_SEED=%q is not valid; accepted: a positive integer, e.g. 1 (the default) or 2", v)
		}
		env.seed = n
	}
	if v, ok := os.LookupEnv("STAC_MCP_SLO_PARALLEL"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			b.Fatalf("STAC_MCP_SLO_PARALLEL=%q is not valid; accepted: an integer from 1 to 64", v)
		}
		env.parallel = n
	}
	return env
}

// policy is the production policy with the cache off.
func (e *sloBenchEnv) policy() reliability.Policy {
	p := reliability.DefaultPolicy()
	p.CacheTTL = 0
	p.Hedge = e.hedge
	return p
}

// sloBenchParallel is how many calls run at once: enough to keep a
// 500 ms upstream busy, no more than the per-host bulkhead (16).
const sloBenchParallel = 16

// run makes one run of the invocations with the class's kinds at rate.
func (e *sloBenchEnv) run(b *testing.B, c sloCall, class sloFaultClass, rate float64) sloSummary {
	b.Helper()
	plan := faultinject.Plan{Seed: e.seed, Rate: rate}
	if rate > 0 {
		plan.Mix = faultinject.EqualMix(class.kinds...)
	}
	h := newSLOHarness(b, sloConfig{plan: plan, policy: e.policy(), latency: e.latency, slowFaults: class.slow, clientSide: class.clientSide, keepAlive: true})
	outcomes := h.run(b, c, e.invocations, e.parallel)
	s := summarize(c.tool, outcomes, h.injector.Journal())
	s.requestTimes = elapsedOf(h.requests.recorded())
	s.budgetLeft = -1
	for _, host := range h.layer.Health(context.Background()) {
		if s.budgetLeft < 0 || host.BudgetTokens < s.budgetLeft {
			s.budgetLeft = host.BudgetTokens
		}
	}
	return s
}

// baseline is the fault-free run of a tool, made once per benchmark process
// and shared by the fault classes. Its time is not part of the measurement.
func (e *sloBenchEnv) baseline(b *testing.B, c sloCall) sloSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.baselines[c.tool]; ok {
		return s
	}
	b.StopTimer()
	s := e.run(b, c, sloFaultClass{name: "none"}, 0)
	b.StartTimer()
	e.baselines[c.tool] = s
	return s
}

func reportSLO(b *testing.B, toolTimeout time.Duration, base sloSummary, runs []sloSummary) {
	var elapsed, layerTime, requestTimes []time.Duration
	var calls, succeeded, requests, attempts, retries, replays, hidden, hedges int
	budgetLeft := -1
	for _, s := range runs {
		elapsed = append(elapsed, s.elapsed...)
		layerTime = append(layerTime, s.layerTime...)
		requestTimes = append(requestTimes, s.requestTimes...)
		calls += s.calls
		succeeded += s.succeeded
		requests += s.requests
		attempts += s.attempts
		retries += s.retries
		replays += s.replays
		hidden += s.attempts - s.receiptSent
		hedges += s.hedges
		if budgetLeft < 0 || s.budgetLeft < budgetLeft {
			budgetLeft = s.budgetLeft
		}
	}
	bp50, bp95, bp99 := percentiles(base.elapsed)
	p50, p95, p99 := percentiles(elapsed)
	b.ReportMetric(float64(succeeded)/float64(calls), "success_ratio")
	b.ReportMetric(millis(bp50), "base_p50_ms")
	b.ReportMetric(millis(bp95), "base_p95_ms")
	b.ReportMetric(millis(bp99), "base_p99_ms")
	b.ReportMetric(millis(p50), "p50_ms")
	b.ReportMetric(millis(p95), "p95_ms")
	b.ReportMetric(millis(p99), "p99_ms")
	b.ReportMetric(100*(millis(p95)-millis(bp95))/millis(bp95), "added_p95_pct")
	b.ReportMetric(millis(p95)/millis(bp95), "p95_ratio")
	// Per upstream request (per page for the paging tools), as the tool's
	// catalog client saw it (requestTimer): the per-page figure.
	_, brp95, _ := percentiles(base.requestTimes)
	_, rp95, _ := percentiles(requestTimes)
	b.ReportMetric(millis(brp95), "base_request_p95_ms")
	b.ReportMetric(millis(rp95), "request_p95_ms")
	if brp95 > 0 {
		b.ReportMetric(millis(rp95)/millis(brp95), "request_p95_ratio")
	}
	b.ReportMetric(float64(len(requestTimes))/float64(calls), "timed_requests/call")
	b.ReportMetric(float64(budgetLeft), "retry_budget_left")
	b.ReportMetric(float64(requests)/float64(calls), "upstream_requests/call")
	b.ReportMetric(float64(attempts)/float64(calls), "attempts/call")
	b.ReportMetric(float64(retries)/float64(calls), "retries/call")
	b.ReportMetric(float64(replays)/float64(calls), "replays/call")
	b.ReportMetric(float64(hidden)/float64(calls), "hidden_replays/call")
	b.ReportMetric(float64(hedges)/float64(calls), "hedges/call")
	b.ReportMetric(float64(base.hedges)/float64(base.calls), "base_hedges/call")
	reportCap(b, toolTimeout, elapsed, layerTime)
	if base.succeeded != base.calls {
		b.Errorf("the fault-free baseline had %d failures of %d calls: the harness, not the policy, is broken", base.calls-base.succeeded, base.calls)
	}
}

// capGrace is how long after the tool timeout the layer promises a call
// has returned (proven in virtual time by reliability's TestToolTimeout*
// tests); the benchmarks measure it on a real clock.
const capGrace = 100 * time.Millisecond

// reportCap reports how the calls ended against the tool timeout: the
// slowest at the client, and the share of calls over the cap plus its
// grace, at the client and inside the layer (the receipts).
func reportCap(b *testing.B, toolTimeout time.Duration, client, layer []time.Duration) {
	b.ReportMetric(millis(slowest(client)), "max_ms")
	b.ReportMetric(overPct(client, toolTimeout+capGrace), "over_cap_pct")
	b.ReportMetric(overPct(layer, toolTimeout+capGrace), "layer_over_cap_pct")
}

// overPct is the share of d above bound, in percent.
func overPct(d []time.Duration, bound time.Duration) float64 {
	over := 0
	for _, e := range d {
		if e > bound {
			over++
		}
	}
	return 100 * float64(over) / float64(max(1, len(d)))
}

// slowest is the largest of d, 0 for none.
func slowest(d []time.Duration) time.Duration {
	return slices.Max(append([]time.Duration{0}, d...))
}

// BenchmarkSLOHangCap measures, on a real clock, how close to the tool
// timeout a hung call ends: every network tool, 200 calls whose upstream
// attempts hang 20 % of the time, under the short policy TestSLOHangFaults
// runs (tool timeout 1 s, attempt timeout 600 ms, sloHangSetup). Until
// issue 21 that test asserted it per call (inside the layer within the cap
// + 400 ms, at the client within the cap + 600 ms) and failed under -race
// on a loaded 2-core machine; the promise itself (within 100 ms of the cap)
// is proven in virtual time by reliability's TestToolTimeout* tests. It
// reports:
//
//	cap_ms                   the tool timeout
//	max_ms, layer_max_ms     the slowest call at the client and inside the layer
//	over_cap_pct             calls the client saw end more than 100 ms after the cap
//	layer_over_cap_pct       the same by the receipts
//	client_over_cap_600ms_pct, layer_over_cap_400ms_pct
//	                         calls over the bounds TestSLOHangFaults asserted (0 passed)
//	capped/call              calls that ended with a timeout or deadline denial
//	success_ratio            calls that succeeded
//
// It fails only if the harness breaks, never on timing. STAC_MCP_SLO_INVOCATIONS,
// STAC_MCP_SLO_PARALLEL and STAC_MCP_SLO_SEED apply as in BenchmarkSLO (the
// defaults, 200 calls 16 at a time, are the test's old run). Example:
//
//	go test -run '^$' -bench 'SLOHangCap' -benchtime 1x ./bench/
func BenchmarkSLOHangCap(b *testing.B) {
	env := sloBenchEnvFromOS(b)
	plan, policy := sloHangSetup()
	plan.Seed = env.seed
	for _, c := range sloCalls {
		b.Run(c.tool, func(b *testing.B) {
			var client, layer []time.Duration
			calls, succeeded, capped := 0, 0, 0
			for range b.N {
				h := newSLOHarness(b, sloConfig{plan: plan, policy: policy})
				outcomes := h.run(b, c, env.invocations, env.parallel)
				s := summarize(c.tool, outcomes, h.injector.Journal())
				client, layer = append(client, s.elapsed...), append(layer, s.layerTime...)
				calls += s.calls
				succeeded += s.succeeded
				capped += s.denials[reliability.CodeTimeout] + s.denials[reliability.CodeDeadline]
			}
			b.ReportMetric(millis(policy.ToolTimeout), "cap_ms")
			reportCap(b, policy.ToolTimeout, client, layer)
			b.ReportMetric(millis(slowest(layer)), "layer_max_ms")
			b.ReportMetric(overPct(client, policy.ToolTimeout+600*time.Millisecond), "client_over_cap_600ms_pct")
			b.ReportMetric(overPct(layer, policy.ToolTimeout+400*time.Millisecond), "layer_over_cap_400ms_pct")
			b.ReportMetric(float64(capped)/float64(calls), "capped/call")
			b.ReportMetric(float64(succeeded)/float64(calls), "success_ratio")
		})
	}
}

// percentiles returns p50, p95 and p99 by nearest rank.
func percentiles(d []time.Duration) (p50, p95, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(sorted)))) - 1
		return sorted[max(0, min(i, len(sorted)-1))]
	}
	return rank(0.50), rank(0.95), rank(0.99)
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
