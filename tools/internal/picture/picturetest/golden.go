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
