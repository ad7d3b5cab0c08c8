package faultinject

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Record is one attempt the injector saw, faulted or not.
type Record struct {
	Key
	Kind   Kind // None when the request passed through untouched
	Keyed  bool // false when no key was found and one was assigned (see Injector)
	Method string
	Path   string
	Time   time.Time
}

// Journal is the goroutine-safe log of the attempts an Injector decided.
// By default it keeps every record until Reset, which suits a test run;
// a long-running server should build its Injector WithJournalLimit, so the
// journal keeps only the newest records.
type Journal struct {
	mu      sync.Mutex
	limit   int // 0: keep everything
	records []Record
}

// add appends r. A limited journal lets the slice grow to twice its limit
// before dropping the oldest records in one copy, so adding stays O(1)
// amortised; held hides the surplus meanwhile.
func (j *Journal) add(r Record) {
	j.mu.Lock()
	j.records = append(j.records, r)
	if j.limit > 0 && len(j.records) >= 2*j.limit {
		j.records = slices.Clone(j.held())
	}
	j.mu.Unlock()
}

// held is the records the journal reports: all of them, or the newest
// limit. The caller holds j.mu.
func (j *Journal) held() []Record {
	if j.limit > 0 && len(j.records) > j.limit {
		return j.records[len(j.records)-j.limit:]
	}
	return j.records
}

// Records returns every attempt held (see WithJournalLimit), sorted by tool, invocation, attempt (then
// method and path), so two runs of one plan compare equal whatever order
// their requests arrived in.
func (j *Journal) Records() []Record {
	j.mu.Lock()
	out := slices.Clone(j.held())
	j.mu.Unlock()
	slices.SortStableFunc(out, compareRecords)
	return out
}

// faults returns the records whose Kind is not None, in Records order.
func (j *Journal) faults() []Record {
	return slices.DeleteFunc(j.Records(), func(r Record) bool { return r.Kind == None })
}

// counts returns how many attempts held got each kind; None counts the attempts
// that passed through.
func (j *Journal) counts() map[Kind]int {
	counts := make(map[Kind]int)
	j.mu.Lock()
	for _, r := range j.held() {
		counts[r.Kind]++
	}
	j.mu.Unlock()
	return counts
}

// attempts returns how many requests of one tool call the journal holds:
// all it made, unless a journal limit dropped the oldest.
func (j *Journal) attempts(tool, invocation string) int {
	n := 0
	j.mu.Lock()
	for _, r := range j.held() {
		if r.Tool == tool && r.Invocation == invocation {
			n++
		}
	}
	j.mu.Unlock()
	return n
}

// Reset forgets every record.
func (j *Journal) Reset() {
	j.mu.Lock()
	j.records = nil
	j.mu.Unlock()
}

func compareRecords(a, b Record) int {
	return cmp.Or(
		cmp.Compare(a.Tool, b.Tool),
		cmp.Compare(a.Invocation, b.Invocation),
		cmp.Compare(a.Attempt, b.Attempt),
		cmp.Compare(a.Method, b.Method),
		cmp.Compare(a.Path, b.Path),
	)
}
