package reliability

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

func TestRetryBudgetArithmetic(t *testing.T) {
	b := newRetryBudget(nil)
	for i := range budgetCapacity / budgetRetryCost {
		if !b.take(budgetRetryCost) {
			t.Fatalf("retry %d refused with %d tokens left", i+1, b.available())
		}
	}
	if b.take(budgetRetryCost) || b.available() != 0 {
		t.Fatalf("retry allowed from an empty budget (%d tokens)", b.available())
	}
	b.succeeded(budgetTimeoutCost)
	if got := b.available(); got != budgetTimeoutCost+budgetSuccessBonus {
		t.Errorf("after a success that cost a timeout retry: %d tokens, want %d", got, budgetTimeoutCost+budgetSuccessBonus)
	}
	full := newRetryBudget(nil)
	full.succeeded(budgetRetryCost)
	if full.available() != budgetCapacity {
		t.Errorf("budget grew past capacity: %d", full.available())
	}
}

// Sustained failures spend the budget: with every attempt failing, each call
// spends two retries (10 tokens), so calls 1-50 exhaust their attempts and
// call 51 is refused its retry. Calls are three seconds apart so that the
// breaker window never holds 50 outcomes and the budget is what stops them.
func TestRetryBudgetRunsDryUnderSustainedFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "down"))
		for call := 1; call <= 51; call++ {
			_, _, err := tl.get("search_items", "/v1/search")
			var d *Denial
			if !errors.As(err, &d) {
				t.Fatalf("call %d: error %v, want a denial", call, err)
			}
			want := CodeRetryExhausted
			if call == 51 {
				want = CodeBudgetExhausted
			}
			if d.Code != want {
				t.Fatalf("call %d: denial %s, want %s (budget %d tokens)", call, d.Code, want, tl.host(testHost).budget.available())
			}
			time.Sleep(3 * time.Second)
		}
		if hits := tl.up.hitCount(); hits != 50*3+1 {
			t.Errorf("upstream hits %d, want %d", hits, 50*3+1)
		}
		if h := tl.Health(t.Context()); len(h) != 1 || h[0].BudgetTokens != 0 || h[0].Breaker != BreakerClosed {
			t.Errorf("health %+v, want an empty budget and a closed breaker", h)
		}
		g := tl.logs.named(t, eventRetryGiveUp)
		if last := g[len(g)-1]; last["reason"] != CodeBudgetExhausted {
			t.Errorf("last give-up reason %v, want budget_exhausted", last["reason"])
		}
	})
}

// faultEvery decides a fault per upstream hit from a seeded hash, so the
// schedule does not depend on timing.
func faultEvery(seed uint64, rate float64) func(int, *http.Request) (*http.Response, error) {
	return func(n int, _ *http.Request) (*http.Response, error) {
		if float64(splitmix64(seed*0x9E3779B97F4A7C15+uint64(n))>>11)/(1<<53) < rate {
			return answer(503, "injected"), nil
		}
		return answer(200, `{"type":"FeatureCollection","features":[]}`), nil
	}
}

// expectedSuccesses replays the fault schedule with unlimited budget: a call
// fails only when all three of its attempts are faults.
func expectedSuccesses(respond func(int, *http.Request) (*http.Response, error), calls int) int {
	ok, hit := 0, 0
	for range calls {
		for attempt := range 3 {
			hit++
			if resp, _ := respond(hit, nil); resp.StatusCode == 200 {
				ok++
				break
			} else if attempt == 2 {
				break
			}
		}
	}
	return ok
}

// At a steady 20 % per-attempt fault rate every call gets all the retries
// the policy allows (the success count equals the no-budget replay of the
// same seeded schedule) and the budget stays near full.
func TestRetryBudgetHoldsAtTwentyPercentFaults(t *testing.T) {
	total := 0
	seeds := []uint64{1, 2, 3, 4, 5}
	for _, seed := range seeds {
		synctest.Test(t, func(t *testing.T) {
			tl := newTestLayer(t, noCache(), faultEvery(seed, 0.2))
			ok := 0
			for call := range 200 {
				_, status, err := tl.get("search_items", "/v1/search")
				var d *Denial
				if errors.As(err, &d) && (d.Code == CodeBudgetExhausted || d.Code == CodeCircuitOpen) {
					t.Fatalf("seed %d call %d: %s at 20%% faults", seed, call, d.Code)
				}
				if err == nil && status == 200 {
					ok++
				}
			}
			if want := expectedSuccesses(faultEvery(seed, 0.2), 200); ok != want {
				t.Errorf("seed %d: %d/200 calls succeeded, the schedule allows %d: a retry was withheld", seed, ok, want)
			}
			total += ok
			if tokens := tl.host(testHost).budget.available(); tokens < budgetCapacity-50 {
				t.Errorf("seed %d: budget fell to %d tokens at 20%% faults", seed, tokens)
			}
			t.Logf("seed %d: %d/200 ok, %d retries, budget %d", seed, ok, int(retriesOf(tl.Layer, "search_items")), tl.host(testHost).budget.available())
		})
	}
	// 3 attempts at 20 % faults succeed 99.2 % of the time; over 1000 calls
	// fewer than 98 % would mean the policy is not what it claims.
	if rate := float64(total) / float64(200*len(seeds)); rate < 0.98 {
		t.Errorf("success rate %.3f over %d calls, want at least 0.98", rate, 200*len(seeds))
	}
}

// splitmix64 is a well-mixed hash of one 64-bit value.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
