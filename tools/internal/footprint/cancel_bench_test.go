package footprint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/paulmach/orb"
)

// BenchmarkMeasureCancelLag measures the CPU a coverage measurement burns
// after its context is cancelled (the tool deadline passing mid-work), at
// the vertex limit: 100 overlapping footprints of 495 vertices (49,605
// with their closing vertices and the area's). The
// set operations cannot be interrupted, so the lag is the longest step in
// progress; MaxVertices bounds it. Reported: cpu-s-after-cancel, the
// worst over cancellations at 0.5, 1.5 and 3 s of CPU into the work
// (each a fresh measurement; on 2 idle cores the whole takes about 4.5 s
// of CPU).
//
//	go test -run '^$' -bench MeasureCancelLag -benchtime 1x ./tools/internal/footprint/
func BenchmarkMeasureCancelLag(b *testing.B) {
	for _, c := range []struct{ n, v int }{{100, 495}} {
		b.Run(fmt.Sprintf("%dx%d", c.n, c.v), func(b *testing.B) {
			area, _ := FromBBox([]float64{10, 45, 12, 47})
			items := wavyItems(c.n, c.v)
			worst := 0.0
			for range b.N {
				for _, at := range []float64{0.5, 1.5, 3} {
					ctx, cancel := context.WithCancel(context.Background())
					start := cpuSeconds()
					done := make(chan error, 1)
					go func() { _, err := Measure(ctx, area, items, Options{}); done <- err }()
					var err error
				wait:
					for {
						select {
						case err = <-done:
							break wait
						case <-time.After(10 * time.Millisecond):
							if cpuSeconds()-start >= at {
								cancelled := cpuSeconds()
								cancel()
								err = <-done
								worst = max(worst, cpuSeconds()-cancelled)
								break wait
							}
						}
					}
					cancel()
					if err != nil && !errors.Is(err, context.Canceled) {
						b.Fatal(err)
					}
					if err == nil {
						break // finished before this cancellation point
					}
				}
			}
			b.ReportMetric(worst, "cpu-s-after-cancel")
		})
	}
}

func wavyItems(n, v int) []Item {
	items := make([]Item, n)
	for i := range items {
		cx, cy := 10.3+0.14*float64(i%10), 45.3+0.14*float64(i/10%10)
		ring := make(orb.Ring, 0, v+1)
		for j := range v {
			a := 2 * math.Pi * float64(j) / float64(v)
			r := 0.6 * (1 + 0.05*math.Sin(7*a+float64(i)))
			ring = append(ring, orb.Point{cx + r*math.Cos(a), cy + r*math.Sin(a)})
		}
		ring = append(ring, ring[0])
		cc := float64(i % 37)
		items[i] = Item{ID: fmt.Sprintf("i%03d", i), Shape: Shape{Polygons: orb.MultiPolygon{{ring}}},
			Time: time.Date(2024, 6, 1+i%28, 0, 0, 0, 0, time.UTC), CloudCover: &cc}
	}
	return items
}

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
