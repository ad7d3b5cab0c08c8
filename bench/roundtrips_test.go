package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/faultinject"
)

// roundTripLatency is what the upstream adds to every request in
// BenchmarkRoundTrips: fixed, so that a call's time divided by it counts the
// round trips on the call's critical path.
const roundTripLatency = 300 * time.Millisecond

// roundTripInvocations is how many calls each BenchmarkRoundTrips
// sub-benchmark makes (in parallel: they wait, they do not compute).
const roundTripInvocations = 8

// BenchmarkRoundTrips counts, per network tool, the upstream round trips a
// call waits for one after the other, cold (a new catalog client: landing
// page and conformance not known yet) and warm (every call after the first
// of a session). The upstream adds a fixed 300 ms to every request and
// injects no faults; the policy is the production one with the cache off.
// It reports:
//
//	sequential_round_trips   median call time / 300 ms: the round trips on the critical path
//	upstream_requests/call   distinct requests the catalog saw per call
//	repeated_requests/call   requests the catalog saw more than once within one call
//
//	go test -run '^$' -bench RoundTrips -benchtime 1x ./bench/
func BenchmarkRoundTrips(b *testing.B) {
	policy := (&sloBenchEnv{}).policy()
	// The SLO calls, and a search_items that fits one page: the issue's
	// "landing page, conformance, search".
	onePage := sloCall{tool: "search_items", args: map[string]any{"collections": []string{"joplin"}, "max_items": 5}}
	for i, c := range append(slices.Clone(sloCalls), onePage) {
		label := c.tool
		if i == len(sloCalls) {
			label = "search_items_one_page"
		}
		for _, cold := range []bool{true, false} {
			name := label + "/warm"
			if cold {
				name = label + "/cold"
			}
			b.Run(name, func(b *testing.B) {
				call := c
				call.cold = cold
				var elapsed []time.Duration
				var calls, requests, repeated int
				for range b.N {
					h := newSLOHarness(b, sloConfig{plan: faultinject.Plan{Seed: sloSeed}, policy: policy,
						latency: latencyModel{P95: roundTripLatency}, keepAlive: true})
					for i, o := range h.run(b, call, roundTripInvocations, roundTripInvocations) {
						if !o.ok {
							b.Fatalf("%s #%d failed without faults: %s", call.tool, i+1, o.text)
						}
						elapsed = append(elapsed, o.elapsed)
					}
					seen := map[string]bool{}
					for _, r := range h.injector.Journal().Records() {
						key := r.Tool + " " + r.Invocation
						if seen[key] {
							repeated++
						} else {
							seen[key] = true
							requests++
						}
					}
					calls += roundTripInvocations
				}
				slices.Sort(elapsed)
				b.ReportMetric(float64(elapsed[len(elapsed)/2])/float64(roundTripLatency), "sequential_round_trips")
				b.ReportMetric(float64(requests)/float64(calls), "upstream_requests/call")
				b.ReportMetric(float64(repeated)/float64(calls), "repeated_requests/call")
			})
		}
	}
}
