package cogwrite

import (
	"context"
	"io"
	"testing"
)

// BenchmarkWriteOneBandAtTheReadBudget writes what one band of the pixel
// tools' default read budget gives (1024×1024 float32, with overviews):
// the largest single-band GeoTIFF an export makes by default.
func BenchmarkWriteOneBandAtTheReadBudget(b *testing.B) {
	r := testRaster(1024, 1024, 1, Float32, 32613)
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		var err error
		if n, err = Write(context.Background(), io.Discard, r, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "file-bytes")
}
