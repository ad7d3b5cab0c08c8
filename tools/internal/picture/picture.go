// Package picture turns an untrusted image (a STAC thumbnail or overview)
// into a small image a model can look at: the size is checked before any
// pixel is decoded, the image is decoded with the standard library and
// golang.org/x/image (PNG, JPEG, GIF, WebP, baseline TIFF), scaled down to a
// bounded long side and re-encoded as JPEG or PNG under a byte budget.
//
// Re-encoding is deliberate even when the source is already small: what
// leaves the server is always pixels we encoded, never bytes a remote host
// chose (no metadata, no polyglot files, a predictable size).
package picture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // registered for DecodeConfig/Decode
	"image/jpeg"
	"image/png"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/tiff" // GeoTIFF thumbnails (baseline TIFF: 8/16-bit, uncompressed, LZW, Deflate, PackBits)
	_ "golang.org/x/image/webp"

	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// Output media types.
const (
	MIMEJPEG = "image/jpeg"
	MIMEPNG  = "image/png"
)

// Options bound the work and the output. The zero value means the defaults.
type Options struct {
	// MaxPixels is the decoded size refused before decoding, in pixels of
	// 4 bytes (a 16-bit image counts double): the defence against
	// decompression bombs, where a few kilobytes declare a gigapixel image.
	MaxPixels int
	// MaxSide is the longest side of the output, in pixels; smaller images
	// are not enlarged.
	MaxSide int
	// MaxBytes is the size the encoded output must stay under.
	MaxBytes int
	// Pixels is the process-wide budget of decoded pixels the decode
	// reserves its cost in (MaxPixels bounds one image, Pixels all the
	// images decoded at once); nil bounds only the one image.
	Pixels *workbudget.Budget
}

// Defaults.
const (
	// 16 Mpx (4000×4000) is four times the largest thumbnail seen in the big
	// catalogs, and bounds decoding to about 64 MiB (up to ~100 MiB for a
	// progressive JPEG, whose decoder keeps every coefficient).
	DefaultMaxPixels = 16_000_000
	DefaultMaxSide   = 512
	DefaultMaxBytes  = 150_000
)

func (o Options) withDefaults() Options {
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.MaxSide <= 0 {
		o.MaxSide = DefaultMaxSide
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	return o
}

// Picture is an encoded output image and what it was made from.
type Picture struct {
	Data         []byte
	MIMEType     string // MIMEJPEG or MIMEPNG
	Width        int
	Height       int
	SourceFormat string // "jpeg", "png", "gif", "webp" or "tiff"
	SourceWidth  int
	SourceHeight int
	// Stretch is set when 16-bit samples were mapped to 8 bits by their
	// 2nd–98th percentiles (raw sensor values use a small part of the range
	// and would show black); nil for 8-bit sources, which are shown as they are.
	Stretch *Stretch
}

// Stretch is the 16-bit sample range mapped to 0–255.
type Stretch struct{ Low, High uint16 }

// ErrUnknownFormat is an input none of the registered decoders recognises.
var ErrUnknownFormat = errors.New("not an image format this server decodes (PNG, JPEG, GIF, WebP, TIFF)")

// TooLargeError is an image refused before decoding because of its size.
type TooLargeError struct {
	Width, Height int
	Format        string
	MaxPixels     int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the %s image is %d×%d pixels, over the %d-pixel decoding budget", e.Format, e.Width, e.Height, e.MaxPixels)
}

// Make is MakeContext without a context (and so without waiting for a
// Pixels budget: it waits as long as it takes).
func Make(data []byte, opts Options) (*Picture, error) {
	return MakeContext(context.Background(), data, opts)
}

// MakeContext decodes data and returns it scaled to fit opts.MaxSide and
// encoded under opts.MaxBytes. Its decoded size is read from the header
// and reserved in opts.Pixels before any pixel is decoded (waiting in line
// while other images hold the budget), and given back once the image is
// scaled down: only the small copy is kept for encoding. None of the
// decoders can decode at a reduced size (image/jpeg has no DCT scaling),
// so the full image is decoded once, and never copied at full size.
// Errors: ErrUnknownFormat (wrapped), *TooLargeError, the budget's
// *workbudget.TooLargeError or *workbudget.BusyError, ctx's error, or a decoding
// error of the format's decoder.
func MakeContext(ctx context.Context, data []byte, opts Options) (*Picture, error) {
	opts = opts.withDefaults()
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if errors.Is(err, image.ErrFormat) {
		return nil, ErrUnknownFormat
	}
	if err != nil {
		return nil, fmt.Errorf("reading the image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("the %s image declares no pixels (%d×%d)", format, cfg.Width, cfg.Height)
	}
	if decodedCost(cfg) > int64(opts.MaxPixels) {
		return nil, &TooLargeError{Width: cfg.Width, Height: cfg.Height, Format: format, MaxPixels: opts.MaxPixels}
	}
	release, err := opts.Pixels.Acquire(ctx, budgetCost(cfg, format, data))
	if err != nil {
		return nil, fmt.Errorf("the %s image is %d×%d pixels: %w", format, cfg.Width, cfg.Height, err)
	}
	defer release() // also released early, once the image is scaled down
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the %s image: %w", format, err)
	}
	b := src.Bounds()
	if b.Dx() > cfg.Width || b.Dy() > cfg.Height {
		// The header promised one size and the decoder produced a larger
		// one: the budget check above would not have been about this image.
		// (Smaller is fine: a GIF's first frame may cover part of its screen.)
		return nil, fmt.Errorf("the %s image decoded to %d×%d, larger than the %d×%d its header declares", format, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // out of time: scaling a large image is work nobody will receive
	}
	var small image.Image
	var stretch *Stretch
	if deep, ok := src.(deepImage); ok && is16Bit(deep) {
		small, stretch, err = stretch16(ctx, deep, opts.MaxSide)
		if err != nil {
			return nil, err
		}
	} else {
		small = Fit(src, opts.MaxSide)
	}
	// src is not used past this point, so the collector may take the
	// full-size image now: its budget goes back.
	release()
	p, err := encode(ctx, small, opts)
	if err != nil {
		return nil, err
	}
	p.SourceFormat, p.SourceWidth, p.SourceHeight, p.Stretch = format, cfg.Width, cfg.Height, stretch
	return p, nil
}

// decodedCost is the decoded size in 4-byte pixels: 16-bit colour models
// count double.
func decodedCost(cfg image.Config) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	switch cfg.ColorModel {
	case color.RGBA64Model, color.NRGBA64Model:
		return 2 * px
	}
	return px
}

// budgetCost is what a decode reserves in the process's pixel budget, in
// 4-byte pixels: the decoded image; for a progressive JPEG also the
// coefficients image/jpeg keeps for every sample until the last scan (4
// bytes a sample: a 3-component 4000×4000 progressive JPEG holds 180 MiB
// more than its pixels), one more unit per component; for a TIFF, twice
// the image.
func budgetCost(cfg image.Config, format string, data []byte) int64 {
	cost := decodedCost(cfg)
	switch format {
	case "jpeg":
		if comps, progressive := jpegFrame(data); progressive {
			cost += int64(cfg.Width) * int64(cfg.Height) * int64(comps)
		}
	case "tiff":
		// golang.org/x/image/tiff decompresses a whole strip or tile into
		// a buffer before converting it: a TIFF written as one strip holds
		// its pixels twice.
		cost *= 2
	}
	return cost
}

// jpegFrame reads a JPEG's frame header: its component count and whether
// it is progressive (SOF2). Marker segments before it are skipped by their
// lengths; anything malformed reads as baseline (the decoder then fails on
// it by itself).
func jpegFrame(data []byte) (comps int, progressive bool) {
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return 0, false
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			return 0, false
		}
		marker := data[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		n := int(data[i+2])<<8 | int(data[i+3])
		switch marker {
		case 0xc0, 0xc1, 0xc2: // the frames image/jpeg decodes
			if i+9 >= len(data) {
				return 0, false
			}
			return int(data[i+9]), marker == 0xc2
		case 0xda, 0xd9: // a scan or the end before any frame
			return 0, false
		}
		i += 2 + n
	}
	return 0, false
}

// Encode scales img to fit opts.MaxSide and encodes it under opts.MaxBytes:
// PNG when it has transparent pixels and PNG fits, else JPEG (transparent
// parts over white) at falling quality, then at smaller sizes.
func Encode(img image.Image, opts Options) (*Picture, error) {
	return encode(context.Background(), img, opts)
}

// encode is Encode that stops with ctx's error between attempts.
func encode(ctx context.Context, img image.Image, opts Options) (*Picture, error) {
	opts = opts.withDefaults()
	side := opts.MaxSide
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		scaled := Fit(img, side)
		if hasTransparency(scaled) {
			if data, err := encodePNG(scaled, png.DefaultCompression); err == nil && len(data) <= opts.MaxBytes {
				return picture(data, MIMEPNG, scaled), nil
			}
		}
		flat := flatten(scaled)
		for _, q := range []int{85, 75, 60, 45} {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, flat, &jpeg.Options{Quality: q}); err != nil {
				return nil, fmt.Errorf("encoding JPEG: %w", err)
			}
			if buf.Len() <= opts.MaxBytes {
				return picture(buf.Bytes(), MIMEJPEG, flat), nil
			}
		}
		if side <= 64 {
			return nil, fmt.Errorf("could not encode the image under %d bytes even at %d pixels", opts.MaxBytes, side)
		}
		side = side * 3 / 4
	}
}

func picture(data []byte, mime string, img image.Image) *Picture {
	b := img.Bounds()
	return &Picture{Data: data, MIMEType: mime, Width: b.Dx(), Height: b.Dy()}
}

// EncodePNG encodes a picture we drew ourselves (a map) as PNG: maps are
// flat colours, where PNG is small and exact. It uses the fastest level: on
// an 800-pixel map it is three times faster than the default for 2 % more
// bytes (the best level saves another 5 % at 20 times the time).
func EncodePNG(img image.Image) ([]byte, error) { return encodePNG(img, png.BestSpeed) }

func encodePNG(img image.Image, level png.CompressionLevel) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: level}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// Fit returns img scaled so its longest side is at most maxSide (never
// enlarged), as an NRGBA image with origin (0, 0). Catmull-Rom resampling
// averages every source pixel under a target pixel, so fine detail does not
// alias into noise.
func Fit(img image.Image, maxSide int) *image.NRGBA {
	b := img.Bounds()
	w, h := fitSize(b.Dx(), b.Dy(), maxSide)
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	fitInto(dst, img)
	return dst
}

// fitInto draws img into dst, whose size fitSize chose: copied when the
// sizes match, else shrunk and Catmull-Rom resampled.
func fitInto(dst draw.Image, img image.Image) {
	b, w, h := img.Bounds(), dst.Bounds().Dx(), dst.Bounds().Dy()
	if w == b.Dx() && h == b.Dy() {
		draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
		return
	}
	src := shrink(img, w, h)
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Src, nil)
}

// shrink averages img over blocks of k×k pixels, k the largest whole
// factor that keeps it at least w×h, when k is 2 or more (else it returns
// img). Catmull-Rom scaling keeps a buffer of 32 bytes for every output
// column times every source row (64 MiB from 4000×4000 to 512 wide, as
// much as the decoded image): shrinking first by averaging, which is what
// the filter would do over so many pixels anyway, brings both the buffer
// and the image it reads down to about the output's size.
func shrink(img image.Image, w, h int) image.Image {
	b := img.Bounds()
	k := min(b.Dx()/w, b.Dy()/h)
	if k < 2 {
		return img
	}
	src, ok := img.(image.RGBA64Image)
	if !ok {
		return img
	}
	sw, sh := (b.Dx()+k-1)/k, (b.Dy()+k-1)/k
	out := image.NewRGBA64(image.Rect(0, 0, sw, sh))
	sums := make([][4]uint64, sw)
	for oy := range sh {
		clear(sums)
		y0, y1 := b.Min.Y+oy*k, min(b.Min.Y+(oy+1)*k, b.Max.Y)
		for y := y0; y < y1; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := src.RGBA64At(x, y) // premultiplied: averaging keeps edges of transparency right
				s := &sums[(x-b.Min.X)/k]
				s[0] += uint64(c.R)
				s[1] += uint64(c.G)
				s[2] += uint64(c.B)
				s[3] += uint64(c.A)
			}
		}
		for ox := range sw {
			n := uint64(y1-y0) * uint64(min(b.Min.X+(ox+1)*k, b.Max.X)-(b.Min.X+ox*k))
			s := sums[ox]
			out.SetRGBA64(ox, oy, color.RGBA64{uint16(s[0] / n), uint16(s[1] / n), uint16(s[2] / n), uint16(s[3] / n)})
		}
	}
	return out
}

// fitSize is w×h scaled so the longest side is at most maxSide.
func fitSize(w, h, maxSide int) (int, int) {
	if long := max(w, h); long > maxSide {
		w = max(1, int(float64(w)*float64(maxSide)/float64(long)+0.5))
		h = max(1, int(float64(h)*float64(maxSide)/float64(long)+0.5))
	}
	return w, h
}

func hasTransparency(img *image.NRGBA) bool {
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 0xff {
			return true
		}
	}
	return false
}

// flatten composes img over white, for JPEG (which has no alpha).
func flatten(img *image.NRGBA) *image.RGBA {
	dst := image.NewRGBA(img.Bounds())
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), img, img.Bounds().Min, draw.Over)
	return dst
}

// deepImage is a decoded image with 16-bit samples (TIFF decodes 16-bit
// rasters to these).
type deepImage interface {
	image.Image
	RGBA64At(x, y int) color.RGBA64
}

// is16Bit reports whether img holds 16-bit samples: only Gray16, RGBA64
// and NRGBA64 do; other models implementing RGBA64At hold 8-bit data.
func is16Bit(img deepImage) bool {
	switch img.(type) {
	case *image.Gray16, *image.RGBA64, *image.NRGBA64:
		return true
	}
	return false
}

// stretch16 maps a 16-bit image to 8 bits linearly between the 2nd and
// 98th percentiles of its colour samples (alpha is kept as it is), scaled
// to fit maxSide. The percentiles are those of every source pixel; the
// image is scaled down (in 16 bits) before it is mapped, so no full-size
// copy is made. It stops with ctx's error between rows.
func stretch16(ctx context.Context, img deepImage, maxSide int) (image.Image, *Stretch, error) {
	b := img.Bounds()
	var hist [65536]int
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBA64Model.Convert(img.At(x, y)).(color.NRGBA64)
			if c.A == 0 {
				continue // nodata
			}
			hist[c.R]++
			hist[c.G]++
			hist[c.B]++
			n += 3
		}
	}
	small := fit64(img, maxSide)
	if n == 0 {
		return small, nil, nil
	}
	percentile := func(p float64) uint16 {
		target, seen := int(p*float64(n)), 0
		for v, count := range hist {
			seen += count
			if seen > target {
				return uint16(v)
			}
		}
		return 65535
	}
	lo, hi := percentile(0.02), percentile(0.98)
	if hi <= lo {
		hi = lo + 1
	}
	scale := func(v uint16) uint8 {
		f := (float64(v) - float64(lo)) / float64(hi-lo) * 255
		return uint8(min(max(f, 0), 255) + 0.5)
	}
	sb := small.Bounds()
	out := image.NewNRGBA(sb)
	for y := sb.Min.Y; y < sb.Max.Y; y++ {
		for x := sb.Min.X; x < sb.Max.X; x++ {
			c := small.NRGBA64At(x, y)
			out.SetNRGBA(x, y, color.NRGBA{scale(c.R), scale(c.G), scale(c.B), uint8(c.A >> 8)})
		}
	}
	return out, &Stretch{Low: lo, High: hi}, nil
}

// fit64 is Fit keeping 16-bit samples.
func fit64(img image.Image, maxSide int) *image.NRGBA64 {
	b := img.Bounds()
	w, h := fitSize(b.Dx(), b.Dy(), maxSide)
	dst := image.NewNRGBA64(image.Rect(0, 0, w, h))
	fitInto(dst, img)
	return dst
}
