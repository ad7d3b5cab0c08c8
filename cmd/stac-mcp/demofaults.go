package main

import (
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/tools"
)

// demoJournalLimit bounds the fault journal (and attempt counters) of a
// long-running demo: nobody reads this one.
const demoJournalLimit = 10000

// demoFaults returns the wrapper that injects transient faults into the
// demo catalog's in-process server (STAC_MCP_DEMO_FAULT_RATE), or nil when
// the rate is 0. This is the one place production code uses faultinject:
// it lets a person watch retries, Retry-After waits and give-ups happen in
// a real client. The faults are the retryable kinds only (5xx, resets,
// 429), drawn per attempt keyed by the reliability layer's correlation id.
// A zero seed is taken from the clock and logged, so a run can be replayed
// with STAC_MCP_DEMO_FAULT_SEED.
func demoFaults(rate float64, seed uint64, logger *zerolog.Logger) func(http.Handler) http.Handler {
	if rate <= 0 {
		return nil
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	inj, err := faultinject.New(faultinject.Plan{
		Seed: seed,
		Rate: rate,
		Mix:  faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassRetryable)...),
	}, faultinject.WithJournalLimit(demoJournalLimit))
	if err != nil {
		// The rate was validated by loadConfig and the mix is fixed, so
		// this is a programming error.
		panic("demo fault plan: " + err.Error())
	}
	logger.Warn().Float64("rate", rate).Uint64("seed", seed).Str("catalog", tools.DemoCatalog).
		Msg("demo fault injection on: upstream attempts to the demo catalog fail on purpose")
	return inj.Middleware
}
