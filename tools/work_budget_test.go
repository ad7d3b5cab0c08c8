package tools

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// Map drawings that outlive their calls (they finish into the map cache)
// hold a CPU slot until they end: 8 calls abandoned at their deadline start
// at most as many drawings as there are slots; the others are refused
// without drawing. Before the slots, all 8 drew at once.
func TestAbandonedMapDrawingsCannotPileUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &Deps{Limits: Limits{CPUSlots: 2}}
		var started atomic.Int32
		gate := make(chan struct{})
		c := &mapCache{drawHook: func() { started.Add(1); <-gate }}
		errs := make(chan error, 8)
		for i := range 8 {
			spec := mapimage.Spec{Title: fmt.Sprint("map ", i), AOI: orb.MultiPolygon{orb.Bound{Min: orb.Point{10, 45}, Max: orb.Point{11, 46}}.ToPolygon()}}
			go func() {
				ctx, cancel := context.WithTimeout(t.Context(), time.Second) // the call's deadline
				defer cancel()
				_, err := c.renderWithin(ctx, spec, d.work())
				errs <- err
			}()
		}
		synctest.Wait()
		if n := started.Load(); n != 2 {
			t.Fatalf("%d drawings started at once, want the 2 slots", n)
		}
		time.Sleep(2 * time.Second) // every call's deadline passes
		for range 8 {
			if err := <-errs; err == nil {
				t.Error("a call got a map while every drawing was held")
			}
		}
		close(gate)
		synctest.Wait()
		if n := started.Load(); n != 2 {
			t.Errorf("%d drawings ran in all, want 2: calls refused in line must not draw later", n)
		}
		if n := d.work().cpu.InUse(); n != 0 {
			t.Errorf("%d CPU slots still held after the drawings ended", n)
		}
	})
}

// circleRing is a GeoJSON ring of n vertices round (cx, cy).
func circleRing(cx, cy, r float64, n int) string {
	pts := make([]string, 0, n+1)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		pts = append(pts, fmt.Sprintf("[%.6f,%.6f]", cx+r*math.Cos(a), cy+r*math.Sin(a)))
	}
	pts = append(pts, pts[0])
	return "[" + strings.Join(pts, ",") + "]"
}

// heavyFootprints serves n items whose footprints have vertices vertices
// each, all over [10,45,11,46].
func heavyFootprints(t *testing.T, n, vertices int) string {
	t.Helper()
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"heavy","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[10,45,11,46]]},"temporal":{"interval":[["2024-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"i%02d","collection":"heavy","bbox":[10,45,11,46],
			"geometry":{"type":"Polygon","coordinates":[%s]},"properties":{"datetime":"2024-06-01T00:00:00Z"},"links":[],"assets":{}}`,
			i, circleRing(10.5, 45.5, 0.4+0.005*float64(i), vertices))
		if err := store.AddItem([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	return serveStore(t, store, stacserver.Options{})
}

// 13 footprints of 4,000 vertices are refused before any geometry, with
// the limit and what to do named (100 × 4,000 took 353 s of CPU).
func TestCheckCoverageRefusesFootprintsWithTooManyVertices(t *testing.T) {
	t.Parallel()
	p := roomyPolicy()
	cs := newTestSession(t, testSessionOptions{CatalogURL: heavyFootprints(t, 13, 4000), Policy: &p})
	msg := callErr(t, cs, "check_coverage", map[string]any{"bbox": "10,45,11,46", "max_items": 13})
	for _, want := range []string{"check_coverage:", "13 footprint(s)", fmt.Sprint(footprint.MaxVertices), "max_items"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
}

// check_coverage takes a CPU slot for its geometry: with every slot held
// (calls still stopping after their deadline, say) a new call waits in
// line, then is refused saying the server is busy, instead of adding to
// the pile.
func TestCheckCoverageWaitsForACPUSlot(t *testing.T) {
	t.Parallel()
	p := roomyPolicy()
	d := newTestDeps(t, testSessionOptions{CatalogURL: heavyFootprints(t, 2, 20), Limits: Limits{CPUSlots: 1}, Policy: &p})
	shortWaitInLine(d)
	cs := connect(t, newServer(d, "test", Tools(d)))
	release, err := d.work().cpu.Acquire(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	msg := callErr(t, cs, "check_coverage", map[string]any{"bbox": "10,45,11,46"})
	if !strings.Contains(msg, "busy") || !strings.Contains(msg, "retry") {
		t.Errorf("with every CPU slot held: %q, want a busy refusal that says to retry", msg)
	}
	release()
	callOK(t, cs, "check_coverage", map[string]any{"bbox": "10,45,11,46"})
}

// A preview whose decoded size exceeds the whole pixel budget is refused
// from its header, saying which setting bounds it; one that fits is shown
// and gives its pixels back.
func TestGetItemPreviewRespectsTheDecodeBudget(t *testing.T) {
	t.Parallel()
	catalogURL, _, _ := newPreviewCatalog(t)
	d := newTestDeps(t, testSessionOptions{CatalogURL: catalogURL, Limits: Limits{DecodePixels: 640*480 - 1}})
	cs := connect(t, newServer(d, "test", Tools(d)))
	res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "thumb-jpeg"})
	out := structured[GetItemPreviewOut](t, res)
	if out.Available || len(out.Tried) != 1 || !strings.Contains(out.Tried[0].Outcome, "refused before decoding") ||
		!strings.Contains(out.Tried[0].Outcome, DecodeBudgetSetting) {
		t.Fatalf("640×480 JPEG over a budget one pixel short: %+v", out)
	}

	d = newTestDeps(t, testSessionOptions{CatalogURL: catalogURL, Limits: Limits{DecodePixels: 640 * 480}})
	cs = connect(t, newServer(d, "test", Tools(d)))
	res = callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "thumb-jpeg"})
	if out := structured[GetItemPreviewOut](t, res); !out.Available {
		t.Fatalf("at exactly its size: %+v", out)
	}
	if n := d.work().pixels.InUse(); n != 0 {
		t.Errorf("%d pixels still reserved after the preview", n)
	}
}

// While other images hold the budget, a preview waits in line, then the
// call fails saying the server is busy decoding and to retry, with an
// "overloaded" denial in its _meta.
func TestGetItemPreviewWaitsForThePixelBudget(t *testing.T) {
	t.Parallel()
	catalogURL, _, _ := newPreviewCatalog(t)
	p := roomyPolicy()
	d := newTestDeps(t, testSessionOptions{CatalogURL: catalogURL, Policy: &p})
	shortWaitInLine(d)
	cs := connect(t, newServer(d, "test", Tools(d)))
	hold, err := d.work().pixels.Acquire(t.Context(), d.work().pixels.Size())
	if err != nil {
		t.Fatal(err)
	}
	res := callTool(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "thumb-jpeg"})
	msg := resultText(res)
	if !res.IsError || !strings.Contains(msg, "busy decoding other images") || !strings.Contains(msg, "retry") || !strings.Contains(msg, DecodeBudgetSetting) {
		t.Errorf("with the budget spent (isError %v): %q", res.IsError, msg)
	}
	// The refusal carries the denial a limit of this server gives, so a
	// client reads "retry" from _meta as it does for the layer's refusals.
	if d := denialOf(t, res); d.Code != reliability.CodeOverloaded || d.Recovery != reliability.RecoveryRetry || d.Next == "" {
		t.Errorf("denial %+v; want code %s, recovery %s and a next step", d, reliability.CodeOverloaded, reliability.RecoveryRetry)
	}
	hold()
	callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "thumb-jpeg"})
}

// roomyPolicy gives a call a minute: these tests count refusals, and on a
// machine busy enough to slow a race-built fetch past the usual 10 s the
// call would end in a timeout before it reached the budget it tests.
func roomyPolicy() reliability.Policy {
	p := testPolicy()
	p.ToolTimeout = time.Minute
	return p
}

// shortWaitInLine replaces d's budgets (same sizes) with ones whose wait
// in line is 200 ms, so a test of the busy refusal waits that long rather
// than half of roomyPolicy's minute. Call it before the server is built.
func shortWaitInLine(d *Deps) {
	w := d.work()
	w.cpu = workbudget.NewSlots(int(w.cpu.Size()), 200*time.Millisecond)
	w.pixels = workbudget.NewPixels(w.pixels.Size(), DecodeBudgetSetting, 200*time.Millisecond)
}
