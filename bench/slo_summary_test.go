package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/faultinject"
)

// sloSummary is what one run of one tool did, from the client's outcomes
// and the injector's journal (what the catalog saw).
type sloSummary struct {
	tool        string
	calls       int
	succeeded   int
	requests    int // distinct upstream requests (landing page, page n, HEAD x)
	attempts    int // attempts the upstream saw, net/http replays included
	faulted     int // attempts that got a fault
	retries     int // sum of receipt retries (the layer's own count)
	replays     int // sum of receipt replays (net/http's, counted by the layer: adr/0018)
	hedges      int
	denials     map[string]int // failed calls by denial code ("error" without a denial)
	maxElapsed  time.Duration
	elapsed     []time.Duration // per call at the client, in invocation order
	layerTime   []time.Duration // per call inside the layer (the receipt's elapsed_ms)
	maxAttempt  int             // highest attempt number of any request
	unkeyed     int             // attempts the key function could not attribute
	served      int             // measured requests the catalog and asset handlers served (sloHarness.served)
	receiptSent int             // attempts according to the receipts
	// requestTimes are the calls' upstream requests as the tool's catalog
	// client saw them (requestTimer): the per-page times of the paging
	// tools. Set by the benchmark runs only.
	requestTimes []time.Duration
	// budgetLeft is the lowest retry budget of the run's hosts when the run
	// ended (the benchmark runs only): copies that lose and retries spend it.
	budgetLeft int
}

func summarize(tool string, outcomes []callOutcome, journal *faultinject.Journal) sloSummary {
	s := sloSummary{tool: tool, calls: len(outcomes), denials: map[string]int{}}
	for _, o := range outcomes {
		if o.ok {
			s.succeeded++
		} else {
			code := o.denial
			if code == "" {
				code = "error"
			}
			s.denials[code]++
		}
		s.retries += o.receipt.Retries
		s.hedges += o.receipt.Hedges
		s.replays += o.receipt.Replays
		s.receiptSent += o.receipt.Attempts
		s.maxElapsed = max(s.maxElapsed, o.elapsed)
		s.elapsed = append(s.elapsed, o.elapsed)
		s.layerTime = append(s.layerTime, time.Duration(o.receipt.ElapsedMS)*time.Millisecond)
	}
	requests := map[string]bool{}
	for _, r := range journal.Records() {
		if !r.Keyed {
			s.unkeyed++
			continue
		}
		requests[r.Tool+" "+r.Invocation] = true
		s.attempts++
		if r.Kind != faultinject.None {
			s.faulted++
		}
		s.maxAttempt = max(s.maxAttempt, r.Attempt)
	}
	s.requests = len(requests)
	return s
}

func (s sloSummary) requestsPerCall() float64 { return float64(s.requests) / float64(s.calls) }

func (s sloSummary) faultRate() float64 {
	if s.attempts == 0 {
		return 0
	}
	return float64(s.faulted) / float64(s.attempts)
}

// String is one line for the test log.
func (s sloSummary) String() string {
	var failures []string
	for _, code := range slices.Sorted(maps.Keys(s.denials)) {
		failures = append(failures, fmt.Sprintf("%s×%d", code, s.denials[code]))
	}
	return fmt.Sprintf("%-18s %3d/%d succeeded; %.2f upstream requests per call; %d attempts (%.1f%% faulted, %d not in the receipts); receipts: %d retries, %d replays, %d hedges; slowest call %v; failures: [%s]",
		s.tool, s.succeeded, s.calls, s.requestsPerCall(), s.attempts, 100*s.faultRate(), s.attempts-s.receiptSent,
		s.retries, s.replays, s.hedges, s.maxElapsed.Round(time.Millisecond), strings.Join(failures, " "))
}
