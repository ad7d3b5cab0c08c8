package bench

import (
	"testing"
	"time"
)

// BenchmarkWriteSideEffects runs b.N seeded logical writes per fault class
// through the write proof's harness (writes_harness_test.go) and reports
// side_effects/logical_write, which must be exactly 1.000: the catalog
// applied each write once, however its answer was lost and however often
// (and how concurrently) the model called again with the same key.
//
//	go test -run '^$' -bench WriteSideEffects -benchtime 200x ./bench/
func BenchmarkWriteSideEffects(b *testing.B) {
	for _, class := range writeFaultClasses {
		b.Run(class.name, func(b *testing.B) {
			start := time.Now()
			s := runWriteProof(b, class, writeProofSeed, b.N, writeProofParallel)
			elapsed := time.Since(start)
			for _, p := range s.problems {
				b.Error(p)
			}
			p50, _, p99 := percentiles(s.elapsed)
			b.ReportMetric(s.sideEffectsPerWrite(), "side_effects/logical_write")
			b.ReportMetric(float64(s.calls)/float64(s.logical), "calls/logical_write")
			b.ReportMetric(float64(s.kinds[callDuplicate])/float64(s.logical), "duplicates/logical_write")
			b.ReportMetric(float64(s.kinds[callDenied])/float64(s.logical), "denials/logical_write")
			b.ReportMetric(float64(s.posts)/float64(s.logical), "posts_seen/logical_write")
			b.ReportMetric(millis(p50), "p50_ms/logical_write")
			b.ReportMetric(millis(p99), "p99_ms/logical_write")
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/op")
		})
	}
}
