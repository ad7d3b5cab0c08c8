package tools

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// DecodeBudgetSetting is the environment variable of Limits.DecodePixels,
// named in refusals so an operator knows what to raise.
const DecodeBudgetSetting = "STAC_MCP_DECODE_BUDGET_PIXELS"

// workBudgets are the process-wide bounds of CPU- and memory-heavy steps:
// the tool deadline ends a call's answer, not the work behind
// it, so the work itself must be bounded.
//   - cpu: one slot per core (GOMAXPROCS) for coverage geometry, map
//     drawing and image decoding. A map drawing that outlives its call
//     (it finishes into the map cache) keeps its slot until it ends, so
//     calls abandoned at their deadline cannot pile up more drawings than
//     there are cores.
//   - pixels: decoded image pixels held at once (Limits.DecodePixels).
//
// Steps take a CPU slot before reserving pixels, always in that order, so
// two steps never each hold what the other waits for.
type workBudgets struct {
	once   sync.Once
	cpu    *workbudget.Budget
	pixels *workbudget.Budget
}

// defaultBudgetWait bounds a wait in line when there is no layer to take
// the tool timeout from (tests' Deps).
const defaultBudgetWait = 4 * time.Second

// work returns the process's budgets, made on first use from d.Limits. A
// step waits in line at most half the tool timeout: long enough for the
// steps ahead of it to finish on a loaded machine (a 16 Mpx preview takes
// about half a second of CPU, several seconds of wall time on a saturated
// one), short enough that a long wait is reported as the server being busy
// and leaves the call time to do its work, rather than ending as a timeout.
func (d *Deps) work() *workBudgets {
	w := &d.budgets
	w.once.Do(func() {
		wait := defaultBudgetWait
		if d.Layer != nil {
			wait = d.Layer.Policy().ToolTimeout / 2
		}
		slots := d.Limits.CPUSlots
		if slots <= 0 {
			slots = runtime.GOMAXPROCS(0)
		}
		pixels := d.Limits.DecodePixels
		if pixels <= 0 {
			pixels = workbudget.DefaultPixels
		}
		w.cpu = workbudget.NewSlots(slots, wait)
		w.pixels = workbudget.NewPixels(pixels, DecodeBudgetSetting, wait)
	})
	return w
}

// cpuSlot takes one CPU slot (a nil *workBudgets bounds nothing).
func (w *workBudgets) cpuSlot(ctx context.Context) (release func(), err error) {
	if w == nil {
		return func() {}, nil
	}
	return w.cpu.Acquire(ctx, 1)
}

// cpuBudget is the CPU slots (nil for a nil *workBudgets).
func (w *workBudgets) cpuBudget() *workbudget.Budget {
	if w == nil {
		return nil
	}
	return w.cpu
}

// pixelBudget is the decoded-pixel budget (nil for a nil *workBudgets).
func (w *workBudgets) pixelBudget() *workbudget.Budget {
	if w == nil {
		return nil
	}
	return w.pixels
}
