package bench

import (
	"testing"
	"time"
)

// TestWriteProof: for every way a write's answer can be lost, 200 seeded
// logical writes, each retried by the model 1 to 3 times (sequentially or
// concurrently) with the same key: every write is applied exactly once
// and every call resolves to the outcome, a duplicate of it, or a typed
// denial. See writes_harness_test.go for the setup.
//
// Not parallel with the other tests of the package: its classes run side
// by side, and its writes are cut by a real 300 ms attempt timeout, so it
// runs before the SLO tests start rather than beside them.
func TestWriteProof(t *testing.T) {
	for _, class := range writeFaultClasses {
		t.Run(class.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			s := runWriteProof(t, class, writeProofSeed, writeProofInvocations, writeProofParallel)
			t.Logf("%s: %s (%v)", class.name, s, time.Since(start).Round(time.Millisecond))
			for i, p := range s.problems {
				if i == 10 {
					t.Errorf("… and %d more", len(s.problems)-10)
					break
				}
				t.Error(p)
			}
			if s.sideEffectsPerWrite() != 1 {
				t.Errorf("side effects per logical write %.3f, want exactly 1.000", s.sideEffectsPerWrite())
			}
			// The run must exercise what it claims to: lost answers resolved
			// by a lookup (or, for the control class, by one replay), and
			// retries that met the first call's outcome.
			want := "looked-up"
			if class.name == "lost_before_applied" {
				want = "replayed"
			}
			if s.decisions[want] == 0 || s.kinds[callDuplicate] == 0 {
				t.Errorf("no %s outcome or no duplicate in %d calls: the faults did not bite", want, s.calls)
			}
		})
	}
}
