// Package index computes spectral indices from surface reflectance. Bands
// are named by their eo:bands common name (red, nir, swir16…), never by a
// catalog's asset key: Earth Search calls the red band "red", the
// Planetary Computer "B04".
package index

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Index is one spectral index.
type Index struct {
	Name    string // lower case: ndvi
	Title   string // "Normalized Difference Vegetation Index"
	Formula string // in common names
	// Bands are the roles the formula reads, each with the common names
	// that may fill it, preferred first (nir: nir, then nir08).
	Bands []Role
	// Low and High are the range the colour map spans.
	Low, High float64
	// Ramp names the colour map: "vegetation" (brown → green) or
	// "water" (brown → blue).
	Ramp string
	f    func(b []float64) float64
}

// Role is one band a formula reads.
type Role struct {
	Name        string   // as the formula writes it
	CommonNames []string // eo:bands common names that may fill it
}

var nir = Role{"nir", []string{"nir", "nir08"}}

var indices = []Index{
	{Name: "ndvi", Title: "Normalized Difference Vegetation Index", Formula: "(nir − red) / (nir + red)",
		Bands: []Role{nir, {"red", []string{"red"}}}, Low: -0.2, High: 0.9, Ramp: "vegetation",
		f: func(b []float64) float64 { return nd(b[0], b[1]) }},
	{Name: "ndwi", Title: "Normalized Difference Water Index (McFeeters)", Formula: "(green − nir) / (green + nir)",
		Bands: []Role{{"green", []string{"green"}}, nir}, Low: -0.8, High: 0.8, Ramp: "water",
		f: func(b []float64) float64 { return nd(b[0], b[1]) }},
	{Name: "ndbi", Title: "Normalized Difference Built-up Index", Formula: "(swir16 − nir) / (swir16 + nir)",
		Bands: []Role{{"swir16", []string{"swir16"}}, nir}, Low: -0.6, High: 0.6, Ramp: "built",
		f: func(b []float64) float64 { return nd(b[0], b[1]) }},
	{Name: "nbr", Title: "Normalized Burn Ratio", Formula: "(nir − swir22) / (nir + swir22)",
		Bands: []Role{nir, {"swir22", []string{"swir22"}}}, Low: -0.5, High: 0.9, Ramp: "vegetation",
		f: func(b []float64) float64 { return nd(b[0], b[1]) }},
	{Name: "evi", Title: "Enhanced Vegetation Index", Formula: "2.5 (nir − red) / (nir + 6 red − 7.5 blue + 1)",
		Bands: []Role{nir, {"red", []string{"red"}}, {"blue", []string{"blue"}}}, Low: -0.2, High: 0.9, Ramp: "vegetation",
		f: func(b []float64) float64 { return ratio(2.5*(b[0]-b[1]), b[0]+6*b[1]-7.5*b[2]+1) }},
	{Name: "savi", Title: "Soil Adjusted Vegetation Index (L = 0.5)", Formula: "1.5 (nir − red) / (nir + red + 0.5)",
		Bands: []Role{nir, {"red", []string{"red"}}}, Low: -0.2, High: 0.9, Ramp: "vegetation",
		f: func(b []float64) float64 { return ratio(1.5*(b[0]-b[1]), b[0]+b[1]+0.5) }},
}

func nd(a, b float64) float64 { return ratio(a-b, a+b) }

// ratio is n/d, NaN when d is 0 (an index of two dark pixels is unknown,
// not infinite).
func ratio(n, d float64) float64 {
	if d == 0 {
		return math.NaN()
	}
	return n / d
}

// Lookup finds an index by name, case-insensitively.
func Lookup(name string) (Index, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, ix := range indices {
		if ix.Name == name {
			return ix, nil
		}
	}
	return Index{}, fmt.Errorf("unknown index %q; indices: %s", name, strings.Join(Names(), ", "))
}

// Names lists the indices.
func Names() []string {
	out := make([]string, len(indices))
	for i, ix := range indices {
		out[i] = ix.Name
	}
	sort.Strings(out)
	return out
}

// Compute evaluates the index per pixel: bands[k] holds role k's
// reflectance (Bands order), keep (nil: all) the pixels to compute. A
// pixel not kept, with a NaN band, or with a zero denominator is NaN.
func (ix Index) Compute(bands [][]float64, keep []bool) ([]float64, error) {
	if len(bands) != len(ix.Bands) {
		return nil, fmt.Errorf("%s reads %d bands, got %d", ix.Name, len(ix.Bands), len(bands))
	}
	n := len(bands[0])
	for k, b := range bands {
		if len(b) != n {
			return nil, fmt.Errorf("%s: band %s has %d pixels, band %s %d", ix.Name, ix.Bands[k].Name, len(b), ix.Bands[0].Name, n)
		}
	}
	out := make([]float64, n)
	px := make([]float64, len(bands))
	for i := range out {
		if keep != nil && !keep[i] {
			out[i] = math.NaN()
			continue
		}
		for k, b := range bands {
			px[k] = b[i]
		}
		out[i] = ix.f(px) // NaN in, NaN out
	}
	return out, nil
}

// At evaluates the index for one pixel: px[k] is role k's reflectance
// (Bands order). NaN in, NaN out; a zero denominator is NaN.
func (ix Index) At(px []float64) float64 { return ix.f(px) }
