package cog

import (
	"fmt"
	"sync/atomic"
)

// LimitError is an Open or a read refused because it would pass one of
// its bounds (an Options field or a RequestBudget), before the memory or
// the requests were spent: the file may be sound, but reading it as asked
// costs more than allowed. A read refused so may succeed at a coarser
// level or over a smaller window.
type LimitError struct {
	// Limit names the bound: MaxHeaderBytes, MaxHeaderDecodedBytes,
	// MaxWindowValues, MaxBlocks, MaxRequests or RequestBudget.
	Limit string
	// Need is what the Open or read needed (at least), Max the bound.
	Need, Max int64
	what      string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %d where at most %d are allowed (%s)", e.what, e.Need, e.Max, e.Limit)
}

// RequestBudget bounds the range requests of several Opens and reads (a
// tool call's, say, that opens three assets and reads a window of each).
// Each Open takes its requests one at a time as it sends them; each
// ReadWindow takes all of its own at once, before sending the first.
// Safe for concurrent use; a nil *RequestBudget bounds nothing.
type RequestBudget struct {
	max  int64
	used atomic.Int64
}

// NewRequestBudget is a budget of max requests.
func NewRequestBudget(max int) *RequestBudget { return &RequestBudget{max: int64(max)} }

// Used is the requests taken so far: sent, or about to be.
func (b *RequestBudget) Used() int {
	if b == nil {
		return 0
	}
	return int(b.used.Load())
}

// Max is the budget's bound.
func (b *RequestBudget) Max() int {
	if b == nil {
		return 0
	}
	return int(b.max)
}

// take reserves n requests, or none when they would pass the bound.
func (b *RequestBudget) take(n int) error {
	if b == nil || n <= 0 {
		return nil
	}
	for {
		used := b.used.Load()
		if used+int64(n) > b.max {
			return &LimitError{Limit: "RequestBudget", Need: used + int64(n), Max: b.max,
				what: "the range requests of this call would pass its budget"}
		}
		if b.used.CompareAndSwap(used, used+int64(n)) {
			return nil
		}
	}
}
