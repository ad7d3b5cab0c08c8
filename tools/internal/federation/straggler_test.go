package federation

import (
	"fmt"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
)

type fixedLatency struct {
	p95 time.Duration
	n   int
}

func (f fixedLatency) SearchAnswerTime(string, float64) (time.Duration, int) { return f.p95, f.n }

func TestPageTimesLearnForgetAndMarkUnresponsive(t *testing.T) {
	p := &PageTimes{Fallback: fixedLatency{p95: time.Second, n: 7}}
	if d, n := p.SearchAnswerTime("a", 0.95); d != time.Second || n != 7 {
		t.Errorf("cold host: %s, %d; want the fallback's", d, n)
	}
	for i := 1; i <= 20; i++ {
		p.Observe("a", time.Duration(i)*time.Millisecond)
	}
	if d, n := p.SearchAnswerTime("a", 0.95); d != 19*time.Millisecond || n != 20 {
		t.Errorf("p95 of 1..20 ms: %s of %d", d, n)
	}
	// Cut twice without a page: unresponsive, after one probe.
	p.Cut("a")
	if p.Unresponsive("a") {
		t.Error("unresponsive after one cut")
	}
	p.Cut("a")
	if p.Unresponsive("a") {
		t.Error("the first judgement after two cuts is not a probe")
	}
	if !p.Unresponsive("a") {
		t.Error("not unresponsive after two cuts and a probe")
	}
	p.Observe("a", time.Millisecond)
	if p.Unresponsive("a") {
		t.Error("still unresponsive after a page")
	}
	// At most maxPageHosts hosts: the least recently used goes.
	for i := range maxPageHosts {
		p.Observe(fmt.Sprintf("h%d", i), time.Millisecond)
	}
	if _, n := p.SearchAnswerTime("a", 0.95); n != 7 {
		t.Errorf("host a kept past %d others (%d samples)", maxPageHosts, n)
	}
}

// The cut: the later of the others' end plus half their time and, from the
// last sign of life, 3 × the member's p95 or the others' time; only the
// first once the member stopped answering.
func TestCutAt(t *testing.T) {
	start := time.Unix(1000, 0)
	othersEnd := start.Add(100 * time.Millisecond)
	others := 100 * time.Millisecond
	lat := fixedLatency{p95: 80 * time.Millisecond, n: 10}
	if got := cutAt(lat, "h", start, new(progressStub).progress(), othersEnd, others, time.Second, false); got != start.Add(240*time.Millisecond) {
		t.Errorf("learned: cut at +%s, want +240ms (3 × 80)", got.Sub(start))
	}
	if got := cutAt(lat, "h", start, new(progressStub).progress(), othersEnd, others, time.Second, true); got != start.Add(150*time.Millisecond) {
		t.Errorf("unresponsive: cut at +%s, want +150ms (the others' end and half their time)", got.Sub(start))
	}
	if got := cutAt(fixedLatency{}, "h", start, new(progressStub).progress(), othersEnd, others, time.Second, false); got != start.Add(150*time.Millisecond) {
		t.Errorf("never answered: cut at +%s, want +150ms", got.Sub(start))
	}
}

type progressStub struct{}

func (progressStub) progress() *reliability.Progress { return &reliability.Progress{} }
