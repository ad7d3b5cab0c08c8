package bench

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/faultinject"
)

// Per-request times. Issue 25 asks the hung-attempt p95 to stay within 2 ×
// the fault-free p95 "for every tool whose work is one upstream request, and
// for the paging tools per page". A paging tool's call (search_items: 3
// pages, map_items: 2) meets a hang in any of its pages, so its per-call
// ratio measures something else; the per-page figure is the time of each
// page request, which the harness takes above the reliability layer, where
// the tool's catalog client sends it: from the request handed to the layer
// to the layer's answer (bulkhead wait, attempts, backoff waits, copies
// and the buffered body included; the tool's own work between pages and
// the MCP path excluded). For a one-request tool it is that request; for a
// tool whose requests are not pages (estimate_data_size's HEADs, the pixel
// tools' ranges) it is still per upstream request, reported the same way.

// sloCallKey marks the context of a measured tool call (its value is the
// call's key, "<tool>/<n>"); warm-ups do not carry it, so they are not
// timed.
type sloCallKey struct{}

// requestTimer is the catalog client's transport in the SLO harness: it
// hands every request to the layer (next) and times those of measured
// calls.
type requestTimer struct {
	next http.RoundTripper

	mu    sync.Mutex
	times []requestTime
}

// requestTime is one upstream request of a measured call.
type requestTime struct {
	call    string // the call's key, "<tool>/<n>"
	method  string
	path    string
	start   time.Time
	elapsed time.Duration
	ok      bool // answered with a status below 400
}

func (t *requestTimer) RoundTrip(req *http.Request) (*http.Response, error) {
	call, measured := req.Context().Value(sloCallKey{}).(string)
	if !measured {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	rt := requestTime{call: call, method: req.Method, path: req.URL.Path, start: start, elapsed: time.Since(start),
		ok: err == nil && resp.StatusCode < http.StatusBadRequest}
	t.mu.Lock()
	t.times = append(t.times, rt)
	t.mu.Unlock()
	return resp, err
}

// recorded returns the requests timed so far.
func (t *requestTimer) recorded() []requestTime {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]requestTime(nil), t.times...)
}

// elapsedOf is the requests' times, in the order they ended.
func elapsedOf(times []requestTime) []time.Duration {
	out := make([]time.Duration, len(times))
	for i, rt := range times {
		out[i] = rt.elapsed
	}
	return out
}

// TestSLORequestTimerTimesEachRequestOfAMeasuredCall: the per-page figure
// counts every upstream request of a measured call once, as the receipt
// counts them (search_items: 3 pages; get_root: its cold landing page), and
// none of the warm-ups. It counts, it reads no clock.
func TestSLORequestTimerTimesEachRequestOfAMeasuredCall(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"search_items", "get_root", "map_items"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			var c sloCall
			for _, sc := range sloCalls {
				if sc.tool == tool {
					c = sc
				}
			}
			h := newSLOHarness(t, sloConfig{plan: faultinject.Plan{Seed: sloSeed}, policy: sloTestPolicy()})
			outcomes := h.run(t, c, 10, 4)
			perCall := map[string][]requestTime{}
			for _, rt := range h.requests.recorded() {
				perCall[rt.call] = append(perCall[rt.call], rt)
			}
			if len(perCall) != len(outcomes) {
				t.Errorf("requests timed for %d calls, want the %d measured calls (warm-ups must not be timed; %d timed outside any call)",
					len(perCall), len(outcomes), len(perCall[""]))
			}
			for i, o := range outcomes {
				key := fmt.Sprintf("%s/%d", tool, i+1)
				got := perCall[key]
				if !o.ok || len(got) != o.receipt.UpstreamRequests || len(got) == 0 {
					t.Errorf("call %s (ok %v): %d requests timed, the receipt counts %d", key, o.ok, len(got), o.receipt.UpstreamRequests)
				}
				for _, rt := range got {
					if !rt.ok {
						t.Errorf("call %s: %s %s timed as failed in a fault-free run", key, rt.method, rt.path)
					}
				}
			}
			if tool == "search_items" && len(perCall[tool+"/1"]) != 3 {
				t.Errorf("search_items timed %d pages per call, want 3 (max_items 25, pages of 10)", len(perCall[tool+"/1"]))
			}
		})
	}
}
