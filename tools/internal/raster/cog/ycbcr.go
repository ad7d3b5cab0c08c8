package cog

import (
	"image"
)

// ycbcrToRGB converts a decoded YCbCr JPEG block to interleaved RGB the
// way libjpeg (GDAL's decoder, through libtiff) does, so that our pixels
// match GDAL's: chroma upsampled with libjpeg's "fancy" triangle filter
// (jdsample.c, h2v1 and h2v2), edges replicated, then libjpeg's
// fixed-point colour conversion (jdcolor.c). What is left is the inverse
// DCT, where Go and libjpeg round differently (±1).
func ycbcrToRGB(m *image.YCbCr, w, rows int, out []byte) {
	cb := upsample(m.Cb, m.CStride, m.SubsampleRatio, m.Rect.Dx(), m.Rect.Dy())
	cr := upsample(m.Cr, m.CStride, m.SubsampleRatio, m.Rect.Dx(), m.Rect.Dy())
	W := m.Rect.Dx()
	for y := range rows {
		for x := range w {
			yy := int(m.Y[y*m.YStride+x])
			b, r := int(cb[y*W+x])-128, int(cr[y*W+x])-128
			R := yy + int((fix1402*int64(r)+oneHalf)>>16)
			G := yy + int((-fix034414*int64(b)+oneHalf-fix071414*int64(r))>>16)
			B := yy + int((fix1772*int64(b)+oneHalf)>>16)
			o := (y*w + x) * 3
			out[o], out[o+1], out[o+2] = clamp8(R), clamp8(G), clamp8(B)
		}
	}
}

const (
	oneHalf   = 1 << 15
	fix1402   = 91881  // FIX(1.40200)
	fix1772   = 116130 // FIX(1.77200)
	fix071414 = 46802  // FIX(0.71414)
	fix034414 = 22554  // FIX(0.34414)
)

func clamp8(v int) byte {
	return byte(min(max(v, 0), 255))
}

// upsample returns a full-resolution W×H chroma plane.
func upsample(c []byte, stride int, ratio image.YCbCrSubsampleRatio, W, H int) []byte {
	out := make([]byte, W*H)
	switch ratio {
	case image.YCbCrSubsampleRatio444:
		for y := range H {
			copy(out[y*W:(y+1)*W], c[y*stride:y*stride+W])
		}
	case image.YCbCrSubsampleRatio422:
		cw := (W + 1) / 2
		row := make([]byte, 2*cw)
		for y := range H {
			h2v1(c[y*stride:y*stride+cw], row)
			copy(out[y*W:(y+1)*W], row)
		}
	case image.YCbCrSubsampleRatio420:
		cw, ch := (W+1)/2, (H+1)/2
		row := make([]byte, 2*cw)
		for y := range H {
			in0 := y / 2
			in1 := in0 - 1 // the row above, for an even output row
			if y%2 == 1 {
				in1 = in0 + 1
			}
			in1 = min(max(in1, 0), ch-1) // libjpeg replicates the edge rows
			h2v2(c[in0*stride:in0*stride+cw], c[in1*stride:in1*stride+cw], row)
			copy(out[y*W:(y+1)*W], row)
		}
	default:
		// Other ratios (4:4:0, 4:1:1, 4:1:0): nearest sample, as Go does.
		m := &image.YCbCr{Cb: c, CStride: stride, SubsampleRatio: ratio, Rect: image.Rect(0, 0, W, H)}
		for y := range H {
			for x := range W {
				out[y*W+x] = c[m.COffset(x, y)]
			}
		}
	}
	return out
}

// h2v1 is libjpeg's h2v1_fancy_upsample for one row.
func h2v1(in, out []byte) {
	n := len(in)
	if n == 1 {
		out[0], out[1] = in[0], in[0]
		return
	}
	v := int(in[0])
	out[0] = in[0]
	out[1] = byte((v*3 + int(in[1]) + 2) >> 2)
	for i := 1; i < n-1; i++ {
		v := int(in[i]) * 3
		out[2*i] = byte((v + int(in[i-1]) + 1) >> 2)
		out[2*i+1] = byte((v + int(in[i+1]) + 2) >> 2)
	}
	v = int(in[n-1])
	out[2*n-2] = byte((v*3 + int(in[n-2]) + 1) >> 2)
	out[2*n-1] = in[n-1]
}

// h2v2 is one output row of libjpeg's h2v2_fancy_upsample: in0 is the
// nearest input row, in1 the next nearest.
func h2v2(in0, in1, out []byte) {
	n := len(in0)
	sum := func(i int) int { return int(in0[i])*3 + int(in1[i]) }
	if n == 1 {
		s := sum(0)
		out[0], out[1] = byte((s*4+8)>>4), byte((s*4+7)>>4)
		return
	}
	this, next := sum(0), sum(1)
	out[0] = byte((this*4 + 8) >> 4)
	out[1] = byte((this*3 + next + 7) >> 4)
	last := this
	this = next
	for i := 1; i < n-1; i++ {
		next = sum(i + 1)
		out[2*i] = byte((this*3 + last + 8) >> 4)
		out[2*i+1] = byte((this*3 + next + 7) >> 4)
		last, this = this, next
	}
	out[2*n-2] = byte((this*3 + last + 8) >> 4)
	out[2*n-1] = byte((this*4 + 7) >> 4)
}
