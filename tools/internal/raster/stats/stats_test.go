package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarizeAgreesWithHandComputedValues(t *testing.T) {
	t.Parallel()
	// 1..10 plus values that must not count: a masked 1000, a NaN, an Inf.
	values := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1000, math.NaN(), math.Inf(1)}
	keep := []bool{true, true, true, true, true, true, true, true, true, true, false, true, true}
	s := Summarize(values, keep, 3)
	if s.Pixels != 13 || s.Valid != 10 || !near(s.ValidShare, 10.0/13) {
		t.Fatalf("counts: %+v", s)
	}
	if s.Min != 1 || s.Max != 10 || !near(s.Mean, 5.5) {
		t.Fatalf("min/max/mean: %+v", s)
	}
	// Population std of 1..10 is sqrt(8.25).
	if !near(s.Std, math.Sqrt(8.25)) {
		t.Fatalf("std %v", s.Std)
	}
	// numpy.percentile([1..10], [2, 50, 98]) = 1.18, 5.5, 9.82
	if !near(s.P2, 1.18) || !near(s.P50, 5.5) || !near(s.P98, 9.82) {
		t.Fatalf("percentiles %v %v %v", s.P2, s.P50, s.P98)
	}
	// Bins [1,4), [4,7), [7,10]: 3, 3, 4.
	if got := s.Histogram.Counts; len(got) != 3 || got[0] != 3 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("histogram %v", got)
	}
}

func TestSummarizeWithNothingValid(t *testing.T) {
	t.Parallel()
	s := Summarize([]float64{math.NaN(), 3}, []bool{true, false}, 0)
	if s.Valid != 0 || s.Pixels != 2 || s.ValidShare != 0 || s.Histogram.Counts != nil {
		t.Fatalf("%+v", s)
	}
	if s := Summarize(nil, nil, 0); s.Pixels != 0 || s.ValidShare != 0 {
		t.Fatalf("%+v", s)
	}
}

func TestConstantBandHasOneFullBin(t *testing.T) {
	t.Parallel()
	s := Summarize([]float64{7, 7, 7}, nil, 4)
	if s.Std != 0 || s.P2 != 7 || s.P98 != 7 || s.Histogram.Counts[0] != 3 {
		t.Fatalf("%+v", s)
	}
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	got := Percentiles([]float64{4, 1, 3, 2}, nil, 0, 100, 50)
	if got[0] != 1 || got[1] != 4 || got[2] != 2.5 {
		t.Fatalf("%v", got)
	}
	if v := Percentiles(nil, nil, 50)[0]; !math.IsNaN(v) {
		t.Fatalf("%v", v)
	}
}
