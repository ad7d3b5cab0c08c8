package faultinject

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// sendCalls sends one attempt per invocation name, in order, for tool "t".
func sendCalls(t *testing.T, in *Injector, invocations ...string) {
	t.Helper()
	rt := in.RoundTripper(okTransport{})
	for _, inv := range invocations {
		send(t, rt, withKey(context.Background(), "t", inv), http.Header{})
	}
}

func numbered(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("call-%02d", i))
	}
	return out
}

func TestJournalLimitKeepsTheNewestRecords(t *testing.T) {
	p := Plan{Seed: 11, Rate: 0.5, Mix: EqualMix(HTTP503, HTTP404)}
	unlimited := newTestInjector(t, p)
	limited := newTestInjector(t, p, WithJournalLimit(5))
	// 23 attempts: past twice the limit, so the journal has compacted once.
	sendCalls(t, unlimited, numbered(0, 23)...)
	sendCalls(t, limited, numbered(0, 23)...)

	all := unlimited.Journal().Records()
	if len(all) != 23 {
		t.Fatalf("the unlimited journal holds %d records; want 23", len(all))
	}
	got := limited.Journal().Records()
	if want := all[len(all)-5:]; !slices.Equal(got, want) {
		t.Errorf("limited Records() = %+v;\nwant the newest five %+v", got, want)
	}
	counts := limited.Journal().counts()
	if n := counts[None] + counts[HTTP503] + counts[HTTP404]; n != 5 {
		t.Errorf("Counts() = %v sums to %d; want 5, the records held", counts, n)
	}
	if n := limited.Journal().attempts("t", "call-00"); n != 0 {
		t.Errorf("Attempts of a dropped call = %d; want 0", n)
	}
	if n := limited.Journal().attempts("t", "call-22"); n != 1 {
		t.Errorf("Attempts of the newest call = %d; want 1", n)
	}
}

func TestJournalLimitForgetsAttemptCountersWithTheirRecords(t *testing.T) {
	in := newTestInjector(t, Plan{Seed: 1}, WithJournalLimit(3))
	sendCalls(t, in, "busy", "quiet", "busy")
	// Ten other calls push every record of "quiet" out of the journal and
	// fill the counters to twice the limit, so the quiet call is forgotten.
	sendCalls(t, in, numbered(0, 10)...)
	sendCalls(t, in, "quiet", "quiet")
	recs := in.Journal().Records()
	var attempts []int
	for _, r := range recs {
		if r.Invocation == "quiet" {
			attempts = append(attempts, r.Attempt)
		}
	}
	if !slices.Equal(attempts, []int{1, 2}) {
		t.Errorf("attempts of the returning call = %v; want [1 2], counted afresh after its records left", attempts)
	}
	if len(in.attempts) > 2*3 {
		t.Errorf("the injector holds %d attempt counters; want at most twice the limit (6)", len(in.attempts))
	}

	// Without a limit the same sequence keeps counting.
	unlimited := newTestInjector(t, Plan{Seed: 1})
	sendCalls(t, unlimited, "quiet")
	sendCalls(t, unlimited, numbered(0, 10)...)
	sendCalls(t, unlimited, "quiet")
	if n := unlimited.Journal().attempts("t", "quiet"); n != 2 {
		t.Errorf("unlimited Attempts(quiet) = %d; want 2", n)
	}
	if r := unlimited.Journal().Records(); r[len(r)-1].Attempt != 2 {
		t.Errorf("unlimited: the returning call's attempt = %d; want 2", r[len(r)-1].Attempt)
	}
}
