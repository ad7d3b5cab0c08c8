package faultinject

import (
	"fmt"
	"math"
	"slices"
)

// Plan says how often to inject faults and which ones.
//
// Every decision is a pure function of (Seed, tool, invocation, attempt).
// The same plan therefore produces the same faults on the
// same requests whatever the goroutine interleaving or the traffic of other
// tools.
type Plan struct {
	// Seed selects the schedule. Log it so a failing run can be replayed.
	Seed uint64
	// Rate is the probability, in [0, 1], that one attempt is faulted.
	Rate float64
	// Mix weighs the kinds a faulted attempt draws from. Weights are
	// relative (they need not sum to 1) and must be positive. Required when
	// Rate > 0. EqualMix builds an even mix.
	Mix map[Kind]float64
	// Timing tunes delays and sizes; zero fields take DefaultTiming.
	Timing Timing
}

// EqualMix weighs every given kind equally.
func EqualMix(kinds ...Kind) map[Kind]float64 {
	mix := make(map[Kind]float64, len(kinds))
	for _, k := range kinds {
		mix[k] = 1
	}
	return mix
}

// Key identifies one upstream attempt: the n-th request (Attempt, from 1)
// that one tool call (Tool, Invocation) made.
type Key struct {
	Tool       string
	Invocation string
	Attempt    int
}

// validate reports the first setting no injector can run with.
func (p Plan) validate() error {
	_, err := p.compile()
	return err
}

// decide returns the fault for one attempt, or None. It is pure: the same
// plan and key always give the same answer. It validates the plan on every
// call; Injector.decideKey gives the same answers from a plan validated once.
func (p Plan) decide(k Key) (Kind, error) {
	s, err := p.compile()
	if err != nil {
		return None, err
	}
	return s.decide(k), nil
}

// schedule is a validated Plan with its mix turned into cumulative weights
// in Kind order, so that map iteration order never influences a decision.
type schedule struct {
	seed       uint64
	rate       float64
	kinds      []Kind
	cumulative []float64 // cumulative[i] = sum of weights of kinds[:i+1]
	timing     Timing
}

func (p Plan) compile() (schedule, error) {
	if math.IsNaN(p.Rate) || p.Rate < 0 || p.Rate > 1 {
		return schedule{}, fmt.Errorf("faultinject: Plan.Rate = %v; accepted: a probability in [0, 1] (0.2 faults one attempt in five)", p.Rate)
	}
	kinds := make([]Kind, 0, len(p.Mix))
	for k, w := range p.Mix {
		if k == None || !k.Valid() {
			return schedule{}, fmt.Errorf("faultinject: Plan.Mix holds %v; accepted: the kinds listed by AllKinds()", k)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) || w <= 0 {
			return schedule{}, fmt.Errorf("faultinject: Plan.Mix[%v] = %v; accepted: a positive, finite weight (leave a kind out to exclude it)", k, w)
		}
		kinds = append(kinds, k)
	}
	if p.Rate > 0 && len(kinds) == 0 {
		return schedule{}, fmt.Errorf("faultinject: Plan.Mix is empty but Plan.Rate = %v; accepted: at least one kind with a positive weight, e.g. EqualMix(KindsOf(ClassRetryable)...)", p.Rate)
	}
	timing := p.Timing.withDefaults()
	if err := timing.validate(); err != nil {
		return schedule{}, err
	}
	slices.Sort(kinds)
	cumulative := make([]float64, len(kinds))
	var total float64
	for i, k := range kinds {
		total += p.Mix[k]
		cumulative[i] = total
	}
	return schedule{seed: p.Seed, rate: p.Rate, kinds: kinds, cumulative: cumulative, timing: timing}, nil
}

// decide draws two independent uniform numbers from the hash of the key:
// one for "fault or not", one for "which kind".
func (s schedule) decide(k Key) Kind {
	h := hashKey(s.seed, k)
	if unitFloat(h) >= s.rate {
		return None
	}
	pick := unitFloat(splitmix64(h^kindStream)) * s.cumulative[len(s.cumulative)-1]
	i, _ := slices.BinarySearchFunc(s.cumulative, pick, func(c, target float64) int {
		if c <= target {
			return -1
		}
		return 1
	})
	return s.kinds[min(i, len(s.kinds)-1)]
}
