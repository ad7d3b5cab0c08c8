package faultinject

import (
	"fmt"
	"time"
)

// Timing holds the durations and sizes the faults use. Zero fields take the
// defaults listed with each field, so a test sets only what it cares about.
// The injector does not know the caller's attempt or tool timeouts: set
// HeaderDelayWithin below and HeaderDelayBeyond above the attempt timeout
// under test.
type Timing struct {
	// HeaderDelayWithin delays the headers of HeadersDelayedWithin. 50 ms.
	HeaderDelayWithin time.Duration
	// HeaderDelayBeyond delays the headers of HeadersDelayedBeyond. 6 s,
	// just above the default 5 s attempt timeout.
	HeaderDelayBeyond time.Duration
	// TrickleChunk is how many body bytes SlowBody sends at a time. 64.
	TrickleChunk int
	// TrickleInterval is the pause before each SlowBody chunk. 10 ms.
	TrickleInterval time.Duration
	// RetryAfter is the wait announced by HTTP429RetryAfterSeconds and
	// HTTP429RetryAfterDate, in whole seconds on the wire. 1 s.
	RetryAfter time.Duration
	// RetryAfterAboveCap is the wait announced by HTTP429RetryAfterAboveCap;
	// keep it above the client's Retry-After cap. 30 s.
	RetryAfterAboveCap time.Duration
	// OversizedBytes is the exact size of the OversizedBody answer. It is
	// generated while it is written, never held in memory. 64 MiB.
	OversizedBytes int64
	// ResetPause is how long ResetMidBody waits between the partial body and
	// the reset, so the client has read the headers before the RST arrives
	// (server side only). 20 ms.
	ResetPause time.Duration
}

// DefaultTiming is the Timing used for every zero field.
func DefaultTiming() Timing {
	return Timing{
		HeaderDelayWithin:  50 * time.Millisecond,
		HeaderDelayBeyond:  6 * time.Second,
		TrickleChunk:       64,
		TrickleInterval:    10 * time.Millisecond,
		RetryAfter:         time.Second,
		RetryAfterAboveCap: 30 * time.Second,
		OversizedBytes:     64 << 20,
		ResetPause:         20 * time.Millisecond,
	}
}

// withDefaults fills zero fields from DefaultTiming.
func (t Timing) withDefaults() Timing {
	d := DefaultTiming()
	setIfZero(&t.HeaderDelayWithin, d.HeaderDelayWithin)
	setIfZero(&t.HeaderDelayBeyond, d.HeaderDelayBeyond)
	setIfZero(&t.TrickleChunk, d.TrickleChunk)
	setIfZero(&t.TrickleInterval, d.TrickleInterval)
	setIfZero(&t.RetryAfter, d.RetryAfter)
	setIfZero(&t.RetryAfterAboveCap, d.RetryAfterAboveCap)
	setIfZero(&t.OversizedBytes, d.OversizedBytes)
	setIfZero(&t.ResetPause, d.ResetPause)
	return t
}

func setIfZero[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}

// validate rejects values no fault can honour. It runs after withDefaults.
func (t Timing) validate() error {
	durations := []struct {
		name  string
		value time.Duration
	}{
		{"HeaderDelayWithin", t.HeaderDelayWithin},
		{"HeaderDelayBeyond", t.HeaderDelayBeyond},
		{"TrickleInterval", t.TrickleInterval},
		{"RetryAfter", t.RetryAfter},
		{"RetryAfterAboveCap", t.RetryAfterAboveCap},
		{"ResetPause", t.ResetPause},
	}
	for _, d := range durations {
		if d.value < 0 {
			return fmt.Errorf("faultinject: Plan.Timing.%s = %v; accepted: a positive duration, or 0 for the default", d.name, d.value)
		}
	}
	if t.HeaderDelayBeyond < t.HeaderDelayWithin {
		return fmt.Errorf("faultinject: Plan.Timing.HeaderDelayBeyond (%v) is shorter than HeaderDelayWithin (%v); accepted: Beyond ≥ Within, set on either side of the attempt timeout", t.HeaderDelayBeyond, t.HeaderDelayWithin)
	}
	if t.TrickleChunk < 0 {
		return fmt.Errorf("faultinject: Plan.Timing.TrickleChunk = %d; accepted: a positive byte count, or 0 for the default", t.TrickleChunk)
	}
	if t.RetryAfter%time.Second != 0 || t.RetryAfterAboveCap%time.Second != 0 {
		return fmt.Errorf("faultinject: Plan.Timing.RetryAfter = %v, RetryAfterAboveCap = %v; accepted: whole seconds, because Retry-After carries whole seconds", t.RetryAfter, t.RetryAfterAboveCap)
	}
	if t.OversizedBytes < int64(minOversizedBytes) {
		return fmt.Errorf("faultinject: Plan.Timing.OversizedBytes = %d; accepted: at least %d bytes (the JSON envelope), or 0 for the default", t.OversizedBytes, minOversizedBytes)
	}
	return nil
}
