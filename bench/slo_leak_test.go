package bench

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stacmcp/stac-mcp/faultinject"
)

// TestSLOHarnessLeavesNoGoroutines runs a small hedged, hang-faulted run and
// checks that nothing outlives it: not the servers' hung handlers, not the
// MCP session, not a cancelled hedge. It is not parallel, so it runs before
// the parallel SLO tests start and sees only its own goroutines.
func TestSLOHarnessLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t)
	policy := sloTestPolicy()
	policy.ToolTimeout = time.Second
	policy.AttemptTimeout = 300 * time.Millisecond
	policy.Hedge, policy.HedgeDelay = true, 20*time.Millisecond
	plan := faultinject.Plan{Seed: sloSeed, Rate: 0.5, Mix: faultinject.EqualMix(faultinject.Hang, faultinject.HTTP503),
		Timing: faultinject.Timing{HeaderDelayBeyond: 2 * time.Second}}
	t.Run("run", func(t *testing.T) {
		h := newSLOHarness(t, sloConfig{plan: plan, policy: policy, keepAlive: true})
		outcomes := h.run(t, sloCalls[0], 20, 4)
		s := summarize(sloCalls[0].tool, outcomes, h.injector.Journal())
		if s.hedges == 0 {
			t.Errorf("no hedge was sent in a run where half the attempts hang (%s)", s)
		}
		for _, o := range outcomes {
			if o.receipt.Attempts > policy.MaxAttempts {
				t.Errorf("a call made %d attempts; the cap is %d, hedges included", o.receipt.Attempts, policy.MaxAttempts)
			}
		}
	}) // the subtest's cleanups close the servers, the session and the transport
}
