package faultinject

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Injector applies one Plan to requests, in either form: RoundTripper
// (client side) or Middleware (server side). Both forms of one Injector
// share its attempt counters and Journal.
type Injector struct {
	schedule schedule
	keyFunc  KeyFunc
	now      func() time.Time
	journal  Journal

	mu       sync.Mutex
	attempts map[Key]callAttempts // per (tool, invocation), Attempt left 0
	unkeyed  int
	decided  uint64 // attempts decided since New or Reset
}

// callAttempts counts one call's attempts and remembers when its latest
// was decided, so a limited injector can forget calls that went quiet.
type callAttempts struct {
	count  int
	latest uint64 // the value of Injector.decided at that attempt
}

// Option configures an Injector.
type Option func(*Injector)

// WithKeyFunc replaces DefaultKeyFunc.
func WithKeyFunc(f KeyFunc) Option {
	return func(in *Injector) { in.keyFunc = f }
}

// withClock replaces time.Now for Record.Time (and the HTTP date of
// HTTP429RetryAfterDate), so a test can compare journals field for field.
func withClock(now func() time.Time) Option {
	return func(in *Injector) { in.now = now }
}

// WithJournalLimit keeps only the newest n records in the Journal (n <= 0
// keeps everything, the default), for an injector in front of a server that
// runs for days. The attempt counter of a call is forgotten together with
// its last record, so a call that retries after more than n other attempts
// starts again at attempt 1. Records then describes only the records
// held.
func WithJournalLimit(n int) Option {
	return func(in *Injector) { in.journal.limit = max(n, 0) }
}

// New validates the plan and builds an Injector.
func New(p Plan, opts ...Option) (*Injector, error) {
	s, err := p.compile()
	if err != nil {
		return nil, err
	}
	in := &Injector{schedule: s, keyFunc: DefaultKeyFunc, now: time.Now, attempts: make(map[Key]callAttempts)}
	for _, o := range opts {
		o(in)
	}
	return in, nil
}

// Journal is the log of every attempt this injector decided.
func (in *Injector) Journal() *Journal { return &in.journal }

// decideKey is the injector's pure decision for a key, without recording it.
func (in *Injector) decideKey(k Key) Kind { return in.schedule.decide(k) }

// reset clears the journal and the attempt counters, so the next run of
// the same requests repeats the same faults.
func (in *Injector) reset() {
	in.mu.Lock()
	in.attempts = make(map[Key]callAttempts)
	in.unkeyed = 0
	in.decided = 0
	in.mu.Unlock()
	in.journal.Reset()
}

// decide keys the request, numbers the attempt, draws the fault and records
// it. A request without a key becomes its own invocation "unkeyed-N",
// numbered in arrival order, and is recorded with Keyed false: faults are
// still injected at the planned rate, but which request gets which fault
// then depends on arrival order.
func (in *Injector) decide(r *http.Request) Record {
	k, keyed := in.keyFunc(r)
	in.mu.Lock()
	if !keyed {
		in.unkeyed++
		k = Key{Invocation: "unkeyed-" + strconv.Itoa(in.unkeyed)}
	}
	in.decided++
	if k.Attempt <= 0 {
		call := Key{Tool: k.Tool, Invocation: k.Invocation}
		c := in.attempts[call]
		c = callAttempts{count: c.count + 1, latest: in.decided}
		in.attempts[call] = c
		k.Attempt = c.count
	}
	in.forgetQuietCalls()
	in.mu.Unlock()
	rec := Record{
		Key:    k,
		Kind:   in.schedule.decide(k),
		Keyed:  keyed,
		Method: r.Method,
		Path:   r.URL.Path,
		Time:   in.now(),
	}
	in.journal.add(rec)
	return rec
}

// forgetQuietCalls drops, under a journal limit, the counters of calls
// whose latest attempt is older than the newest limit attempts, i.e. whose
// records have all left the journal. It sweeps only when the map has grown
// to twice the limit, so the cost per attempt stays O(1) amortised. The
// caller holds in.mu.
func (in *Injector) forgetQuietCalls() {
	limit := in.journal.limit
	if limit == 0 || len(in.attempts) < 2*limit {
		return
	}
	for call, c := range in.attempts {
		if in.decided-c.latest >= uint64(limit) {
			delete(in.attempts, call)
		}
	}
}
