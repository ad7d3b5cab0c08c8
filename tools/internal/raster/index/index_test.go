package index

import (
	"math"
	"testing"
)

func TestIndicesOnKnownReflectances(t *testing.T) {
	t.Parallel()
	// Healthy vegetation: blue 0.04, green 0.08, red 0.05, nir 0.45,
	// swir16 0.25, swir22 0.12.
	bands := map[string]float64{"blue": 0.04, "green": 0.08, "red": 0.05, "nir": 0.45, "swir16": 0.25, "swir22": 0.12}
	want := map[string]float64{
		"ndvi": 0.4 / 0.5,
		"ndwi": -0.37 / 0.53,
		"ndbi": -0.2 / 0.7,
		"nbr":  0.33 / 0.57,
		"evi":  2.5 * 0.4 / (0.45 + 0.3 - 0.3 + 1),
		"savi": 1.5 * 0.4 / 1.0,
	}
	for _, name := range Names() {
		ix, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		var in [][]float64
		for _, r := range ix.Bands {
			in = append(in, []float64{bands[r.CommonNames[0]]})
		}
		got, err := ix.Compute(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-want[name]) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got[0], want[name])
		}
	}
}

func TestComputeMarksUnknownPixels(t *testing.T) {
	t.Parallel()
	ix, _ := Lookup("NDVI")
	got, err := ix.Compute([][]float64{{0, 0.5, math.NaN(), 0.3}, {0, 0.1, 0.1, 0.1}}, []bool{true, true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(got[0]) || math.Abs(got[1]-0.4/0.6) > 1e-12 || !math.IsNaN(got[2]) || !math.IsNaN(got[3]) {
		t.Fatalf("%v", got)
	}
	if _, err := ix.Compute([][]float64{{1}}, nil); err == nil {
		t.Fatal("one band accepted for ndvi")
	}
	if _, err := Lookup("ndxi"); err == nil || err.Error() != `unknown index "ndxi"; indices: evi, nbr, ndbi, ndvi, ndwi, savi` {
		t.Fatalf("%v", err)
	}
}
