// Package picturetest compares images with golden files, with a tolerance,
// for the tests of the packages that draw or re-encode images.
package picturetest

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg" // golden files are JPEG or PNG
	_ "image/png"
	"os"
	"path/filepath"
	"testing"
)

// CompareGolden decodes got and the golden file at path and fails t when
// their sizes differ or their mean absolute difference per channel exceeds
// tolerance (in 8-bit levels). Encoders and resamplers may change a little
// between Go releases; what a viewer sees must not.
//
// With UPDATE_GOLDEN=true in the environment it writes the golden file
// instead (review the image before committing it).
func CompareGolden(t testing.TB, path string, got []byte, tolerance float64) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "true" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (UPDATE_GOLDEN=true go test writes it)", path, err)
	}
	d, err := MeanAbsDiff(got, want)
	if err != nil {
		t.Fatalf("comparing with %s: %v", path, err)
	}
	if d > tolerance {
		t.Errorf("differs from %s by %.2f levels on average (tolerance %.1f); UPDATE_GOLDEN=true rewrites it", path, d, tolerance)
	}
}

// MeanAbsDiff decodes two images and returns their mean absolute
// difference per channel (alpha included) in 8-bit levels; an error when
// either does not decode or their sizes differ.
func MeanAbsDiff(a, b []byte) (float64, error) {
	ia, _, err := image.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, err
	}
	ib, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	ra, rb := ia.Bounds(), ib.Bounds()
	if ra.Size() != rb.Size() {
		return 0, errors.New("sizes differ: " + ra.String() + " vs " + rb.String())
	}
	var sum float64
	for y := 0; y < ra.Dy(); y++ {
		for x := 0; x < ra.Dx(); x++ {
			ca := color.NRGBAModel.Convert(ia.At(ra.Min.X+x, ra.Min.Y+y)).(color.NRGBA)
			cb := color.NRGBAModel.Convert(ib.At(rb.Min.X+x, rb.Min.Y+y)).(color.NRGBA)
			for _, d := range [4]int{int(ca.R) - int(cb.R), int(ca.G) - int(cb.G), int(ca.B) - int(cb.B), int(ca.A) - int(cb.A)} {
				sum += float64(max(d, -d))
			}
		}
	}
	return sum / float64(4*ra.Dx()*ra.Dy()), nil
}
