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

// Journal is the goroutine-safe log of every attempt an Injector decided.
// It keeps every record until Reset: size it to the run, not to a server
// left running for days.
type Journal struct {
	mu      sync.Mutex
	records []Record
}

func (j *Journal) add(r Record) {
	j.mu.Lock()
	j.records = append(j.records, r)
	j.mu.Unlock()
}

// Records returns every attempt, sorted by tool, invocation, attempt (then
// method and path), so two runs of one plan compare equal whatever order
// their requests arrived in.
func (j *Journal) Records() []Record {
	j.mu.Lock()
	out := slices.Clone(j.records)
	j.mu.Unlock()
	slices.SortStableFunc(out, compareRecords)
	return out
}

// Faults returns the records whose Kind is not None, in Records order.
func (j *Journal) Faults() []Record {
	return slices.DeleteFunc(j.Records(), func(r Record) bool { return r.Kind == None })
}

// Counts returns how many attempts got each kind; None counts the attempts
// that passed through.
func (j *Journal) Counts() map[Kind]int {
	counts := make(map[Kind]int)
	j.mu.Lock()
	for _, r := range j.records {
		counts[r.Kind]++
	}
	j.mu.Unlock()
	return counts
}

// Attempts returns how many requests one tool call made.
func (j *Journal) Attempts(tool, invocation string) int {
	n := 0
	j.mu.Lock()
	for _, r := range j.records {
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
