package faultinject

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mustDecide(t *testing.T, p Plan, k Key) Kind {
	t.Helper()
	kind, err := p.decide(k)
	if err != nil {
		t.Fatalf("Decide(%+v): %v", k, err)
	}
	return kind
}

func TestDecideIsPureAndSeedDependent(t *testing.T) {
	p := Plan{Seed: 42, Rate: 0.5, Mix: EqualMix(AllKinds()...)}
	other := p
	other.Seed = 43
	differences := 0
	for i := range 500 {
		k := Key{Tool: "search_items", Invocation: strconv.Itoa(i), Attempt: 1 + i%3}
		first, second := mustDecide(t, p, k), mustDecide(t, p, k)
		if first != second {
			t.Fatalf("Decide(%+v) gave %v then %v", k, first, second)
		}
		if mustDecide(t, other, k) != first {
			differences++
		}
	}
	// Two seeds at rate 0.5 over 28 kinds agree on about half the keys
	// (both None); identical schedules would mean the seed is ignored.
	if differences < 150 {
		t.Errorf("seeds 42 and 43 differ on %d of 500 keys; want the seed to change the schedule", differences)
	}
}

func TestDecideSeparatesKeyParts(t *testing.T) {
	p := Plan{Seed: 7, Rate: 0.5, Mix: EqualMix(AllKinds()...)}
	same := 0
	for i := range 400 {
		a := Key{Tool: "ab", Invocation: "c" + strconv.Itoa(i), Attempt: 1}
		b := Key{Tool: "a", Invocation: "bc" + strconv.Itoa(i), Attempt: 1}
		if mustDecide(t, p, a) == mustDecide(t, p, b) {
			same++
		}
	}
	if same > 300 {
		t.Errorf("keys that only differ in where tool ends agree %d/400 times; the parts are not hashed separately", same)
	}
}

// The realised rate over 10 000 attempts stays within 4 standard
// deviations (±1.6 pp at 20 %) of the plan, the mix within ±3 pp, and
// attempts of one invocation are independent: all three faulted happens
// about 0.2³ = 0.8 % of the time.
func TestRealisedRateMixAndIndependence(t *testing.T) {
	const invocations, attempts = 10000, 3
	p := Plan{Seed: 2026, Rate: 0.2, Mix: map[Kind]float64{HTTP503: 3, ConnectionRefused: 1}}
	var faults, allFaulted int
	perKind := map[Kind]int{}
	for i := range invocations {
		faultedHere := 0
		for a := 1; a <= attempts; a++ {
			k := mustDecide(t, p, Key{Tool: "get_item", Invocation: strconv.Itoa(i), Attempt: a})
			if k != None {
				faults++
				faultedHere++
				perKind[k]++
			}
		}
		if faultedHere == attempts {
			allFaulted++
		}
	}
	total := float64(invocations * attempts)
	rate := float64(faults) / total
	if tolerance := 4 * math.Sqrt(0.2*0.8/total); math.Abs(rate-0.2) > tolerance {
		t.Errorf("realised fault rate %.4f over %v attempts; want 0.2 ± %.4f", rate, total, tolerance)
	}
	if share := float64(perKind[HTTP503]) / float64(faults); math.Abs(share-0.75) > 0.03 {
		t.Errorf("http_503 is %.3f of faults; want 0.75 ± 0.03 (weights 3:1)", share)
	}
	if len(perKind) != 2 {
		t.Errorf("kinds drawn: %v; want only http_503 and connection_refused", perKind)
	}
	allRate := float64(allFaulted) / invocations
	if tolerance := 4 * math.Sqrt(0.008*0.992/invocations); math.Abs(allRate-0.008) > tolerance {
		t.Errorf("%.4f of invocations had every attempt faulted; want 0.008 ± %.4f (independent attempts)", allRate, tolerance)
	}
}

func TestRateBounds(t *testing.T) {
	never := Plan{Seed: 1, Rate: 0}
	always := Plan{Seed: 1, Rate: 1, Mix: EqualMix(HTTP500)}
	for i := range 1000 {
		k := Key{Tool: "t", Invocation: strconv.Itoa(i), Attempt: 1}
		if got := mustDecide(t, never, k); got != None {
			t.Fatalf("rate 0 injected %v at %+v", got, k)
		}
		if got := mustDecide(t, always, k); got != HTTP500 {
			t.Fatalf("rate 1 with mix {http_500} gave %v at %+v", got, k)
		}
	}
}

func TestPlanValidationNamesTheParameter(t *testing.T) {
	cases := []struct {
		name string
		plan Plan
		want []string
	}{
		{"rate above 1", Plan{Rate: 1.5, Mix: EqualMix(HTTP500)}, []string{"Plan.Rate = 1.5", "[0, 1]"}},
		{"rate NaN", Plan{Rate: math.NaN(), Mix: EqualMix(HTTP500)}, []string{"Plan.Rate = NaN"}},
		{"empty mix", Plan{Rate: 0.2}, []string{"Plan.Mix is empty", "EqualMix"}},
		{"None in mix", Plan{Rate: 0.2, Mix: EqualMix(None)}, []string{"Plan.Mix holds none", "AllKinds"}},
		{"unknown kind", Plan{Rate: 0.2, Mix: EqualMix(Kind(200))}, []string{"kind(200)"}},
		{"zero weight", Plan{Rate: 0.2, Mix: map[Kind]float64{HTTP500: 0}}, []string{"Plan.Mix[http_500] = 0", "positive"}},
		{"negative delay", Plan{Rate: 0.2, Mix: EqualMix(HTTP500), Timing: Timing{HeaderDelayWithin: -time.Second}},
			[]string{"Plan.Timing.HeaderDelayWithin = -1s"}},
		{"beyond below within", Plan{Rate: 0.2, Mix: EqualMix(HTTP500), Timing: Timing{HeaderDelayWithin: time.Second, HeaderDelayBeyond: time.Millisecond}},
			[]string{"HeaderDelayBeyond (1ms)", "HeaderDelayWithin (1s)"}},
		{"fractional retry-after", Plan{Rate: 0.2, Mix: EqualMix(HTTP500), Timing: Timing{RetryAfter: 1500 * time.Millisecond}},
			[]string{"RetryAfter = 1.5s", "whole seconds"}},
		{"tiny oversized", Plan{Rate: 0.2, Mix: EqualMix(HTTP500), Timing: Timing{OversizedBytes: 10}},
			[]string{"OversizedBytes = 10", "at least"}},
		{"negative chunk", Plan{Rate: 0.2, Mix: EqualMix(HTTP500), Timing: Timing{TrickleChunk: -1}},
			[]string{"TrickleChunk = -1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.plan.validate()
			if err == nil {
				t.Fatalf("Validate accepted %+v", c.plan)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if _, err := New(c.plan); err == nil {
				t.Errorf("New accepted the plan Validate rejects")
			}
		})
	}
	if err := (Plan{Seed: 1}).validate(); err != nil {
		t.Errorf("a zero-rate plan without a mix is valid (no faults), got %v", err)
	}
}
