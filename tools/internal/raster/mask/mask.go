// Package mask turns a band's raw numbers into physical values and keeps
// only the pixels worth measuring: nodata, scale and offset (raster:bands,
// or the file's own GDAL metadata), and the cloud/shadow masks of the big
// collections: Sentinel-2 L2A scene classification (SCL) and Landsat
// Collection 2 QA_PIXEL bits.
package mask

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Calibration maps raw numbers to physical values: value = raw × Scale +
// Offset; a raw value equal to NoData is no value at all.
type Calibration struct {
	Scale, Offset float64
	NoData        *float64
}

// Identity is no scaling and no nodata.
var Identity = Calibration{Scale: 1}

// String is the calibration in words, e.g. "× 0.0001 − 0.1, nodata 0".
func (c Calibration) String() string {
	parts := []string{}
	if c.Scale != 1 {
		parts = append(parts, "× "+trim(c.Scale))
	}
	switch {
	case c.Offset > 0:
		parts = append(parts, "+ "+trim(c.Offset))
	case c.Offset < 0:
		parts = append(parts, "− "+trim(-c.Offset))
	}
	s := strings.Join(parts, " ")
	if s == "" {
		s = "unscaled"
	}
	if c.NoData != nil {
		s += ", nodata " + trim(*c.NoData)
	}
	return s
}

// trim writes v in plain decimals (Landsat's 0.0000275, not 2.75e-05).
func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Apply calibrates raw in place and returns which pixels hold a value:
// valid (nil: all) minus nodata and NaN. A NaN nodata matches NaN.
func (c Calibration) Apply(raw []float64, valid []bool) []bool {
	scale := c.Scale
	if scale == 0 {
		scale = 1 // a missing scale is 1, never 0 (which would erase the band)
	}
	out := make([]bool, len(raw))
	for i, v := range raw {
		ok := (valid == nil || valid[i]) && !math.IsNaN(v)
		if ok && c.NoData != nil && v == *c.NoData {
			ok = false
		}
		out[i] = ok
		if ok {
			raw[i] = v*scale + c.Offset
		} else {
			raw[i] = math.NaN()
		}
	}
	return out
}

// Kind is a collection's cloud mask.
type Kind string

const (
	// SCL is Sentinel-2 L2A's scene classification layer (20 m).
	SCL Kind = "scl"
	// QAPixel is Landsat Collection 2's QA_PIXEL bit field.
	QAPixel Kind = "qa_pixel"
)

// Counted is one reason pixels were removed, and how many.
type Counted struct {
	Class  string `json:"class"`
	Pixels int    `json:"pixels"`
}

// Result is a mask applied to an area's pixels.
type Result struct {
	// Keep says which pixels are clear (to measure).
	Keep []bool
	// Masked lists each class or flag that removed pixels, with counts,
	// in the mask's order; classes that removed none are left out.
	Masked []Counted
	// Rule names the classes or bits removed, in words.
	Rule string
	// Considered is how many pixels the mask was read for (inside the
	// area and with a mask value); Clear how many it kept.
	Considered, Clear int
}

// sclNames are the SCL classes (ESA's Sentinel-2 L2A product definition).
var sclNames = map[int]string{
	0: "no data", 1: "saturated or defective", 2: "dark area / topographic shadow", 3: "cloud shadow",
	4: "vegetation", 5: "not vegetated", 6: "water", 7: "unclassified", 8: "cloud medium probability",
	9: "cloud high probability", 10: "thin cirrus", 11: "snow or ice",
}

// SCLMasked are the classes removed by default: no data, defective,
// cloud shadow, clouds and cirrus (the usual "clear" rule; dark areas and
// snow are kept, since they are ground).
var SCLMasked = []int{0, 1, 3, 8, 9, 10}

// SCLName is an SCL class's name.
func SCLName(code int) string {
	if n, ok := sclNames[code]; ok {
		return fmt.Sprintf("%d %s", code, n)
	}
	return fmt.Sprintf("%d unknown class", code)
}

// ApplySCL masks the pixels whose SCL class is in masked (nil:
// SCLMasked). within (nil: all) says which pixels are in the area; a pixel
// without an SCL value (invalid in sclValid) is removed as "no data".
func ApplySCL(scl []float64, sclValid, within []bool, masked []int) Result {
	if masked == nil {
		masked = SCLMasked
	}
	counts := map[int]int{}
	r := Result{Keep: make([]bool, len(scl))}
	for i, v := range scl {
		if within != nil && !within[i] {
			continue
		}
		r.Considered++
		code := 0
		if (sclValid == nil || sclValid[i]) && !math.IsNaN(v) {
			code = int(v)
		}
		if slices.Contains(masked, code) {
			counts[code]++
			continue
		}
		r.Keep[i] = true
		r.Clear++
	}
	names := []string{}
	for _, code := range masked {
		names = append(names, SCLName(code))
		if counts[code] > 0 {
			r.Masked = append(r.Masked, Counted{Class: "SCL " + SCLName(code), Pixels: counts[code]})
		}
	}
	r.Rule = "SCL classes removed: " + strings.Join(names, ", ")
	return r
}

// qaFlags are the QA_PIXEL bits that remove a pixel, in the order a pixel
// is counted (a cloudy pixel that is also dilated counts as cloud).
var qaFlags = []struct {
	bit  uint
	name string
}{
	{0, "fill"}, {3, "cloud"}, {1, "dilated cloud"}, {2, "cirrus"}, {4, "cloud shadow"},
}

// ApplyQAPixel masks the pixels whose Landsat C2 QA_PIXEL value has the
// fill, dilated cloud, cirrus, cloud or cloud shadow bit set (bits 0–4).
// A pixel without a QA value counts as fill.
func ApplyQAPixel(qa []float64, qaValid, within []bool) Result {
	counts := make([]int, len(qaFlags))
	r := Result{Keep: make([]bool, len(qa))}
	for i, v := range qa {
		if within != nil && !within[i] {
			continue
		}
		r.Considered++
		bits := uint64(1) // fill
		if (qaValid == nil || qaValid[i]) && !math.IsNaN(v) && v >= 0 {
			bits = uint64(v)
		}
		removed := false
		for k, f := range qaFlags {
			if bits&(1<<f.bit) != 0 {
				counts[k]++
				removed = true
				break
			}
		}
		if !removed {
			r.Keep[i] = true
			r.Clear++
		}
	}
	names := []string{}
	for k, f := range qaFlags {
		names = append(names, fmt.Sprintf("bit %d %s", f.bit, f.name))
		if counts[k] > 0 {
			r.Masked = append(r.Masked, Counted{Class: fmt.Sprintf("QA_PIXEL bit %d %s", f.bit, f.name), Pixels: counts[k]})
		}
	}
	r.Rule = "QA_PIXEL pixels removed with " + strings.Join(names, ", ") + " set"
	return r
}
