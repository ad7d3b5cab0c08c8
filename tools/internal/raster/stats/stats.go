// Package stats summarises the pixels of one band inside an area: how many
// are valid, their range, mean, standard deviation, percentiles and a
// histogram. It knows nothing of files or masks: callers pass values and
// say which pixels count.
package stats

import (
	"math"
	"slices"
)

// Summary describes the pixels of one band that count.
type Summary struct {
	// Pixels is how many pixels were considered (the area's pixels);
	// Valid how many of them had a value and were kept.
	Pixels, Valid int
	// ValidShare is Valid / Pixels (0 when Pixels is 0).
	ValidShare float64
	// The rest is meaningful only when Valid > 0.
	Min, Max, Mean float64
	// Std is the population standard deviation (as GDAL's statistics).
	Std float64
	// P2, P50 and P98 are percentiles, linearly interpolated between the
	// closest ranks (numpy's default).
	P2, P50, P98 float64
	Histogram    Histogram
}

// Histogram counts values in equal-width bins from Min to Max; the last
// bin includes Max.
type Histogram struct {
	Min, Max float64
	Counts   []int
}

// DefaultBins is the histogram size when a caller does not choose one.
const DefaultBins = 16

// Summarize summarises values[i] for every i where keep is nil or
// keep[i] is true; NaN and infinite values never count. bins <= 0 means
// DefaultBins.
func Summarize(values []float64, keep []bool, bins int) Summary {
	if bins <= 0 {
		bins = DefaultBins
	}
	s := Summary{Pixels: len(values)}
	kept := make([]float64, 0, len(values))
	for i, v := range values {
		if keep != nil && (i >= len(keep) || !keep[i]) {
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		kept = append(kept, v)
	}
	s.Valid = len(kept)
	if s.Pixels > 0 {
		s.ValidShare = float64(s.Valid) / float64(s.Pixels)
	}
	if s.Valid == 0 {
		return s
	}
	slices.Sort(kept)
	s.Min, s.Max = kept[0], kept[len(kept)-1]
	// Two passes (mean, then squared deviations) keep the variance exact
	// enough for reflectances near 0.1 summed over a million pixels.
	var sum float64
	for _, v := range kept {
		sum += v
	}
	s.Mean = sum / float64(len(kept))
	var sq float64
	for _, v := range kept {
		d := v - s.Mean
		sq += d * d
	}
	s.Std = math.Sqrt(sq / float64(len(kept)))
	s.P2, s.P50, s.P98 = Percentile(kept, 2), Percentile(kept, 50), Percentile(kept, 98)
	s.Histogram = histogram(kept, s.Min, s.Max, bins)
	return s
}

// Percentile is the p-th percentile (0..100) of sorted values, linearly
// interpolated between the closest ranks; NaN for no values.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	p = math.Min(math.Max(p, 0), 100)
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	f := pos - float64(lo)
	return sorted[lo] + f*(sorted[hi]-sorted[lo])
}

// Percentiles returns the given percentiles of the values that count
// (see Summarize for which count), NaN for each when none does.
func Percentiles(values []float64, keep []bool, ps ...float64) []float64 {
	kept := make([]float64, 0, len(values))
	for i, v := range values {
		if (keep == nil || (i < len(keep) && keep[i])) && !math.IsNaN(v) && !math.IsInf(v, 0) {
			kept = append(kept, v)
		}
	}
	slices.Sort(kept)
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = Percentile(kept, p)
	}
	return out
}

func histogram(sorted []float64, lo, hi float64, bins int) Histogram {
	h := Histogram{Min: lo, Max: hi, Counts: make([]int, bins)}
	width := (hi - lo) / float64(bins)
	for _, v := range sorted {
		i := 0
		if width > 0 {
			i = min(int((v-lo)/width), bins-1)
		}
		h.Counts[i]++
	}
	return h
}
