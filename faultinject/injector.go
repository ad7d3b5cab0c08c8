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
	attempts map[Key]int // per (tool, invocation), Attempt left 0
	unkeyed  int
}

// Option configures an Injector.
type Option func(*Injector)

// WithKeyFunc replaces DefaultKeyFunc.
func WithKeyFunc(f KeyFunc) Option {
	return func(in *Injector) { in.keyFunc = f }
}

// WithClock replaces time.Now for Record.Time (and the HTTP date of
// HTTP429RetryAfterDate), so a test can compare journals field for field.
func WithClock(now func() time.Time) Option {
	return func(in *Injector) { in.now = now }
}

// New validates the plan and builds an Injector.
func New(p Plan, opts ...Option) (*Injector, error) {
	s, err := p.compile()
	if err != nil {
		return nil, err
	}
	in := &Injector{schedule: s, keyFunc: DefaultKeyFunc, now: time.Now, attempts: make(map[Key]int)}
	for _, o := range opts {
		o(in)
	}
	return in, nil
}

// Journal is the log of every attempt this injector decided.
func (in *Injector) Journal() *Journal { return &in.journal }

// Decide is the injector's pure decision for a key, without recording it.
func (in *Injector) Decide(k Key) Kind { return in.schedule.decide(k) }

// Reset clears the journal and the attempt counters, so the next run of
// the same requests repeats the same faults.
func (in *Injector) Reset() {
	in.mu.Lock()
	in.attempts = make(map[Key]int)
	in.unkeyed = 0
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
	if k.Attempt <= 0 {
		call := Key{Tool: k.Tool, Invocation: k.Invocation}
		in.attempts[call]++
		k.Attempt = in.attempts[call]
	}
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
