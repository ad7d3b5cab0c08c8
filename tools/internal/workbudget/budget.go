// Package workbudget bounds the work the whole process does at once in the
// CPU- and memory-heavy steps of tools: decoded image pixels (previews,
// map basemaps, the pixel tools' reads and exports) and CPU-heavy calls
// (coverage geometry, map drawing, image decoding). It is not the tool-list
// budget (tools/budget_test.go), which bounds what tools/list costs a
// model's context.
//
// Each bound is a weighted semaphore (golang.org/x/sync/semaphore): a step
// reserves its cost before it starts and gives it back when it ends. A step
// that cannot have its cost at once waits in line, at most MaxWait and
// never past its context, then is refused with a *BusyError; a cost larger
// than the whole budget is refused at once with a *TooLargeError, since no
// wait would help. tools/work_budget.go makes the process's two budgets
// from the operator's settings.
//
// Counting what is downloaded is not enough: a 70 kB PNG can declare
// 4000×4000 pixels, 64 MiB once decoded, and eight such previews at once
// took a server from 250 MiB to over 1 GiB before these bounds existed.
package workbudget

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Budget is one process-wide bound. Safe for concurrent use; a nil
// *Budget bounds nothing (Acquire always succeeds).
type Budget struct {
	sem  *semaphore.Weighted
	size int64
	// MaxWait is the longest a step waits in line for its cost; 0 waits
	// as long as its context allows.
	maxWait time.Duration
	what    string             // what the budget bounds, for errors: "decoded-image budget of 32 Mpx (STAC_MCP_…)"
	busy    string             // what the other calls are doing, for errors: "decoding other images"
	format  func(int64) string // a cost in the budget's unit
	inUse   atomic.Int64
}

// Pixel budgets count pixels of 4 bytes (8-bit RGBA); a 16-bit image
// counts double.

// DefaultPixels is the default decoded-image budget: 32 Mpx, about
// 128 MiB of pixels, two of the largest previews (16 Mpx) at once or a
// hundred 512×512 thumbnails.
const DefaultPixels = 32_000_000

// NewPixels is a budget of decoded pixels. setting names where the
// operator changes it (shown in refusals); maxWait bounds a wait in line.
func NewPixels(pixels int64, setting string, maxWait time.Duration) *Budget {
	return &Budget{sem: semaphore.NewWeighted(pixels), size: pixels, maxWait: maxWait,
		what: fmt.Sprintf("decoded-image budget of %s (%s)", Megapixels(pixels), setting), busy: "decoding other images", format: Megapixels}
}

// NewSlots is a budget of n slots for CPU-heavy steps, each costing 1:
// usually GOMAXPROCS, so that calls a deadline abandoned cannot pile up
// more work than there are cores to run it.
func NewSlots(n int, maxWait time.Duration) *Budget {
	return &Budget{sem: semaphore.NewWeighted(int64(n)), size: int64(n), maxWait: maxWait,
		what: fmt.Sprintf("%d slot(s) for CPU-heavy work (one per core)", n), busy: "running other CPU-heavy calls (coverage, maps, image decoding)",
		format: func(n int64) string { return fmt.Sprintf("%d slot(s)", n) }}
}

// Size is the whole budget.
func (b *Budget) Size() int64 { return b.size }

// InUse is the cost held right now (for tests and diagnostics).
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	return b.inUse.Load()
}

// Acquire reserves cost, waiting in line (first come, first served) at
// most MaxWait and never past ctx. release gives the cost back; call it
// exactly once. Errors: *TooLargeError when cost exceeds the whole budget
// (at once, without waiting), *BusyError when the wait ended first (it
// wraps ctx's error when ctx ended).
func (b *Budget) Acquire(ctx context.Context, cost int64) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	cost = max(cost, 1)
	if cost > b.size {
		return nil, &TooLargeError{Cost: cost, Size: b.size, what: b.what, format: b.format}
	}
	if !b.sem.TryAcquire(cost) {
		wait := ctx
		if b.maxWait > 0 {
			var cancel context.CancelFunc
			wait, cancel = context.WithTimeout(ctx, b.maxWait)
			defer cancel()
		}
		if err := b.sem.Acquire(wait, cost); err != nil {
			return nil, &BusyError{Cost: cost, what: b.what, busy: b.busy, err: ctx.Err()}
		}
	}
	b.inUse.Add(cost)
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			b.inUse.Add(-cost)
			b.sem.Release(cost)
		}
	}, nil
}

// AcquireParts reserves the sum of costs at once, as Acquire does (the
// same waiting and refusals), and returns one release per part: a step
// that keeps part of what it allocated (the pixels it returns) gives back
// the rest (its scratch) as soon as it is done with it, without waiting in
// line again for what it keeps. Call each release exactly once.
func (b *Budget) AcquireParts(ctx context.Context, costs ...int64) ([]func(), error) {
	releases := make([]func(), len(costs))
	if b == nil {
		for i := range releases {
			releases[i] = func() {}
		}
		return releases, nil
	}
	parts := make([]int64, len(costs))
	total := int64(0)
	for i, c := range costs {
		parts[i] = max(c, 0)
		total += parts[i]
	}
	if len(parts) == 0 {
		return releases, nil
	}
	// Acquire charges at least 1: the first part carries the rounding.
	parts[0] += max(total, 1) - total
	if _, err := b.Acquire(ctx, total); err != nil {
		return nil, err
	}
	// Acquire's own release is not used: each part gives back its share.
	for i, part := range parts {
		var once atomic.Bool
		releases[i] = func() {
			if once.CompareAndSwap(false, true) && part > 0 {
				b.inUse.Add(-part)
				b.sem.Release(part)
			}
		}
	}
	return releases, nil
}

// BusyError is a step refused because the budget stayed spent by other
// calls while it waited: retrying in a few seconds may succeed.
type BusyError struct {
	Cost int64
	what string
	busy string
	err  error // ctx's error, when ctx ended the wait
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("the server is busy %s: its %s stayed in use while this call waited; retry in a few seconds", e.busy, e.what)
}

// Unwrap is ctx's error when the call's context ended the wait (nil when
// the wait's own limit did).
func (e *BusyError) Unwrap() error { return e.err }

// TooLargeError is a step whose cost exceeds the whole budget: it can
// never run, however long it waits.
type TooLargeError struct {
	Cost, Size int64
	what       string
	format     func(int64) string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("it needs %s, more than the whole %s", e.format(e.Cost), e.what)
}

// Megapixels formats a pixel count for messages: "16 Mpx", "0.26 Mpx".
func Megapixels(px int64) string {
	switch {
	case px >= 10_000_000:
		return fmt.Sprintf("%d Mpx", (px+500_000)/1_000_000)
	default:
		return fmt.Sprintf("%.2g Mpx", float64(px)/1e6)
	}
}
