package cog

import (
	"context"
	"image"
	"testing"
)

// BenchmarkReadWindow reads whole 200×150 images from memory, without a
// cache: decompression, predictor and conversion throughput per layout
// (pixels/s reported as MB/s of float64 output).
func BenchmarkReadWindow(b *testing.B) {
	for _, name := range []string{"s2_u16_deflate_cog.tif", "dem_f32_lzw_pred3_cog.tif", "naip_u8_jpeg_ycbcr_cog.tif",
		"f64_zstd_pred3_pixel.tif", "u16_none_tiled_ovr.tif"} {
		b.Run(name, func(b *testing.B) {
			f, err := Open(context.Background(), BytesSource(name, readTestFile(b, name)), Options{})
			if err != nil {
				b.Fatal(err)
			}
			in := f.Info()
			b.SetBytes(int64(in.Width * in.Height * in.Bands * 8))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, in.Width, in.Height), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
