// Package picturetest compares images with golden files, with a tolerance,
// for the tests of the packages that draw or re-encode images.
package picturetest

import (
	"bytes"
	"errors"
	"image"
	"image/draw"
	_ "image/jpeg" // golden files are JPEG or PNG
	_ "image/png"
	"os"
	"testing"
)

// CompareGolden decodes got and the golden file at path and fails t when
// their sizes differ or their mean absolute difference per channel exceeds
// tolerance (in 8-bit levels). Encoders and resamplers may change a little
// between Go releases; what a viewer sees must not. It never writes:
// go generate ./... (tools/internal/gen) writes the golden files listed in
// tools/internal/golden.
func CompareGolden(t testing.TB, path string, got []byte, tolerance float64) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (go generate ./... writes it)", path, err)
	}
	if WithinTolerance(want, got, tolerance) {
		return
	}
	d, err := MeanAbsDiff(got, want)
	if err != nil {
		t.Fatalf("comparing with %s: %v; run go generate ./... and look at it", path, err)
	}
	t.Errorf("differs from %s by %.2f levels on average (tolerance %.1f); run go generate ./... and look at it", path, d, tolerance)
}

// WithinTolerance reports whether got is the golden image committed (nil:
// there is none) within tolerance: what CompareGolden accepts, and so what
// the generator leaves alone.
func WithinTolerance(committed, got []byte, tolerance float64) bool {
	if committed == nil {
		return false
	}
	d, err := MeanAbsDiff(got, committed)
	return err == nil && d <= tolerance
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
	na, nb := toNRGBA(ia), toNRGBA(ib)
	var sum float64
	for i := range na.Pix {
		d := int(na.Pix[i]) - int(nb.Pix[i])
		sum += float64(max(d, -d))
	}
	return sum / float64(len(na.Pix)), nil
}

// toNRGBA converts img to non-premultiplied RGBA with origin (0, 0).
func toNRGBA(img image.Image) *image.NRGBA {
	out := image.NewNRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
	return out
}
