package reliability

import (
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// ksUniform is the Kolmogorov-Smirnov statistic of samples against U[0, ceiling).
func ksUniform(samples []time.Duration, ceiling time.Duration) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := float64(x) / float64(ceiling)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	return d
}

func TestFullJitterBoundsAndDistribution(t *testing.T) {
	const draws = 10000
	// Critical value of the KS statistic at alpha = 0.01: 1.628/sqrt(n).
	critical := 1.628 / math.Sqrt(draws)
	for _, seed := range []uint64{1, 7, 42} {
		rng := newLockedRand(rand.New(rand.NewPCG(seed, 99)))
		for retry, ceiling := range map[int]time.Duration{1: 400 * time.Millisecond, 2: 800 * time.Millisecond, 3: 1600 * time.Millisecond} {
			samples := make([]time.Duration, draws)
			for i := range samples {
				samples[i] = fullJitter(rng, 400*time.Millisecond, retry)
				if samples[i] < 0 || samples[i] >= ceiling {
					t.Fatalf("seed %d retry %d: wait %v outside [0, %v)", seed, retry, samples[i], ceiling)
				}
			}
			if d := ksUniform(samples, ceiling); d > critical {
				t.Errorf("seed %d retry %d: KS statistic %.4f > %.4f: waits are not uniform on [0, %v)", seed, retry, d, critical, ceiling)
			}
		}
	}
	if got := fullJitter(newLockedRand(nil), 0, 1); got != 0 {
		t.Errorf("base 0 gives wait %v, want 0", got)
	}
}

// The waits the loop actually sleeps, measured in virtual time between
// upstream hits, fall in [0, 0.4 s) then [0, 0.8 s) and match what it logs.
func TestRetryWaitsInVirtualTime(t *testing.T) {
	var first, second []time.Duration
	for run := range 200 {
		synctest.Test(t, func(t *testing.T) {
			var at []time.Time
			tl := newTestLayer(t, noCache(), func(int, *http.Request) (*http.Response, error) {
				at = append(at, time.Now())
				return answer(503, ""), nil
			})
			tl.Layer.rng = newLockedRand(rand.New(rand.NewPCG(uint64(run), 5)))
			_, _, _ = tl.get("t", "/x")
			if len(at) != 3 {
				t.Fatalf("%d hits, want 3", len(at))
			}
			first = append(first, at[1].Sub(at[0]))
			second = append(second, at[2].Sub(at[1]))
			for i, e := range tl.logs.named(t, eventRetryAttempt) {
				if want := at[i+1].Sub(at[i]).Milliseconds(); int64(e["wait_ms"].(float64)) != want {
					t.Errorf("retry %d logged wait_ms %v, slept %d ms", i+1, e["wait_ms"], want)
				}
			}
		})
	}
	for i := range first {
		if first[i] < 0 || first[i] >= 400*time.Millisecond || second[i] < 0 || second[i] >= 800*time.Millisecond {
			t.Fatalf("run %d waited %v then %v, want [0,0.4s) then [0,0.8s)", i, first[i], second[i])
		}
	}
	// 200 runs: a loose KS bound (alpha 0.01) still catches a fixed or
	// non-jittered wait.
	critical := 1.628 / math.Sqrt(float64(len(first)))
	if d := ksUniform(first, 400*time.Millisecond); d > critical {
		t.Errorf("first waits KS %.3f > %.3f", d, critical)
	}
	if d := ksUniform(second, 800*time.Millisecond); d > critical {
		t.Errorf("second waits KS %.3f > %.3f", d, critical)
	}
}
