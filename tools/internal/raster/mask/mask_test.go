package mask

import (
	"math"
	"reflect"
	"testing"
)

func TestCalibrationAppliesScaleOffsetAndNodata(t *testing.T) {
	t.Parallel()
	zero := 0.0
	// Sentinel-2 L2A baseline 04.00: (DN − 1000) / 10000, nodata 0.
	c := Calibration{Scale: 0.0001, Offset: -0.1, NoData: &zero}
	raw := []float64{0, 1000, 3000, math.NaN(), 5000}
	valid := c.Apply(raw, []bool{true, true, true, true, false})
	if !reflect.DeepEqual(valid, []bool{false, true, true, false, false}) {
		t.Fatalf("valid %v", valid)
	}
	if math.Abs(raw[1]) > 1e-12 || math.Abs(raw[2]-0.2) > 1e-12 || !math.IsNaN(raw[0]) || !math.IsNaN(raw[4]) {
		t.Fatalf("values %v", raw)
	}
	if got := c.String(); got != "× 0.0001 − 0.1, nodata 0" {
		t.Fatalf("%q", got)
	}
	// A zero scale (absent) is 1.
	raw = []float64{7}
	Calibration{}.Apply(raw, nil)
	if raw[0] != 7 {
		t.Fatalf("%v", raw)
	}
}

func TestSCLRemovesCloudsShadowsAndNodata(t *testing.T) {
	t.Parallel()
	scl := []float64{4, 8, 9, 3, 6, 0, 10, 11, 2, 5}
	within := []bool{true, true, true, true, true, true, true, true, true, false}
	r := ApplySCL(scl, []bool{true, true, true, true, false, true, true, true, true, true}, within, nil)
	// Pixel 4 (water) has no SCL value: removed as no data. Pixel 9 is
	// outside the area.
	want := []bool{true, false, false, false, false, false, false, true, true, false}
	if !reflect.DeepEqual(r.Keep, want) {
		t.Fatalf("keep %v", r.Keep)
	}
	if r.Considered != 9 || r.Clear != 3 {
		t.Fatalf("%+v", r)
	}
	wantMasked := []Counted{{"SCL 0 no data", 2}, {"SCL 3 cloud shadow", 1}, {"SCL 8 cloud medium probability", 1},
		{"SCL 9 cloud high probability", 1}, {"SCL 10 thin cirrus", 1}}
	if !reflect.DeepEqual(r.Masked, wantMasked) {
		t.Fatalf("masked %v", r.Masked)
	}
}

func TestQAPixelBits(t *testing.T) {
	t.Parallel()
	// 21824 clear land (bits 6, 8, 10, 12, 14), 1 fill, 22280 cloud (bit
	// 3), 23888 cloud shadow (bit 4), 54596 cirrus (bit 2), 21952 clear
	// water (bits 6, 7).
	qa := []float64{21824, 1, 22280, 23888, 54596, 21952}
	r := ApplyQAPixel(qa, nil, nil)
	want := []bool{true, false, false, false, false, true}
	if !reflect.DeepEqual(r.Keep, want) {
		t.Fatalf("keep %v", r.Keep)
	}
	wantMasked := []Counted{{"QA_PIXEL bit 0 fill", 1}, {"QA_PIXEL bit 3 cloud", 1}, {"QA_PIXEL bit 2 cirrus", 1}, {"QA_PIXEL bit 4 cloud shadow", 1}}
	if !reflect.DeepEqual(r.Masked, wantMasked) {
		t.Fatalf("masked %v", r.Masked)
	}
}
