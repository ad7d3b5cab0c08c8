package cog

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/image/tiff/lzw"
)

// errTooBig is a block that decodes to more than its declared size.
var errTooBig = errors.New("decompresses to more bytes than its declared dimensions hold (refused: a decompression bomb or a corrupt file)")

// decodeBlock decompresses one block (tile or strip) of rows rows (at most
// maxRows: a last strip may be written short or full) and undoes the
// predictor. The result holds rows*rowSamples samples in the file's byte
// order (JPEG: 8-bit samples, YCbCr converted to RGB).
func (l *level) decodeBlock(raw []byte, order binary.ByteOrder, rows int) ([]byte, error) {
	rowSamples, rowBytes := l.rowSamples(), l.rowBytes()
	need := rows * rowBytes
	full := l.TileHeight * rowBytes
	var buf []byte
	var err error
	switch l.compression {
	case 1:
		if len(raw) < need {
			return nil, fmt.Errorf("uncompressed block of %d bytes, %d needed", len(raw), need)
		}
		buf = raw[:need]
	case 8, 32946:
		buf, err = inflate(raw, need, full)
	case 5:
		buf, err = readLimited(lzw.NewReader(bytes.NewReader(raw), lzw.MSB, 8), need, full)
	case 50000:
		buf, err = zstdDecode(raw, need, full)
	case 7:
		return l.decodeJPEG(raw, rows)
	default:
		err = fmt.Errorf("compression %d", l.compression)
	}
	if err != nil {
		return nil, err
	}
	buf = buf[:need]
	switch l.predictor {
	case 2:
		undoHorizontal(buf, rows, rowSamples, l.stride(), l.bytesPer, order)
	case 3:
		buf = undoFloat(buf, rows, rowSamples, l.stride(), l.bytesPer, order)
	}
	return buf, nil
}

// stride is the distance between a sample and its left neighbour's.
func (l *level) stride() int {
	if l.planar == 1 {
		return l.spp
	}
	return 1
}

// readLimited reads at least need and at most full bytes from r; a stream
// with more is refused, one with less is truncated.
func readLimited(r io.Reader, need, full int) ([]byte, error) {
	buf := make([]byte, full+1)
	n, err := io.ReadFull(io.LimitReader(r, int64(full)+1), buf)
	if n > full {
		return nil, errTooBig
	}
	if n < need {
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("decompresses to %d bytes, %d expected (truncated)", n, need)
		}
		return nil, err
	}
	return buf[:n], nil
}

// zlibPool keeps inflaters: each holds tens of KB of tables and window.
var zlibPool sync.Pool

func inflate(raw []byte, need, full int) ([]byte, error) {
	r := bytes.NewReader(raw)
	zr, _ := zlibPool.Get().(io.ReadCloser)
	if zr == nil {
		var err error
		if zr, err = zlib.NewReader(r); err != nil {
			return nil, err
		}
	} else if err := zr.(zlib.Resetter).Reset(r, nil); err != nil {
		zlibPool.Put(zr)
		return nil, err
	}
	defer zlibPool.Put(zr)
	return readLimited(zr, need, full)
}

var zstdPool sync.Pool

func zstdDecode(raw []byte, need, full int) ([]byte, error) {
	d, _ := zstdPool.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		// Single-threaded, low-memory; zstdInput makes the window fit
		// the block, and readLimited bounds the output.
		d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, err
		}
	}
	defer zstdPool.Put(d)
	if err := d.Reset(zstdInput(raw, full)); err != nil {
		return nil, err
	}
	return readLimited(d, need, full)
}

// zstdInput is a block's zstd stream with the first frame's declared
// window lowered to fit the block. libtiff compresses a block without
// telling zstd its size, so a frame declares the level's window (4 MiB at
// GDAL's default level 9, 128 MiB at level 22) and a decoder would
// allocate that much history for a tile of a few KB. A frame whose
// content is at most full bytes can reference no byte further back than
// full, so a window of full bytes (rounded up to a power of two, at least
// zstd's largest block, 128 KiB) decodes it identically; larger content
// is refused by readLimited anyway.
func zstdInput(raw []byte, full int) io.Reader {
	const magic = 0xFD2FB528
	if len(raw) < 6 || binary.LittleEndian.Uint32(raw) != magic || raw[4]&0x20 != 0 {
		return bytes.NewReader(raw) // not a frame, or single-segment: its window is its content size
	}
	exp, mant := int(raw[5]>>3), int(raw[5]&7)
	base := uint64(1) << (10 + exp)
	declared := base + base/8*uint64(mant)
	e := 7 // 1 KiB << 7 = 128 KiB
	for uint64(1)<<(10+e) < uint64(full) {
		e++
	}
	if uint64(1)<<(10+e) >= declared {
		return bytes.NewReader(raw)
	}
	head := []byte{raw[0], raw[1], raw[2], raw[3], raw[4], byte(e << 3)}
	return io.MultiReader(bytes.NewReader(head), bytes.NewReader(raw[6:]))
}

// undoHorizontal undoes predictor 2: each sample was stored as the
// difference to the one stride samples to its left in the same row.
func undoHorizontal(buf []byte, rows, rowSamples, stride, size int, order binary.ByteOrder) {
	for r := range rows {
		row := buf[r*rowSamples*size : (r+1)*rowSamples*size]
		switch size {
		case 1:
			for i := stride; i < rowSamples; i++ {
				row[i] += row[i-stride]
			}
		case 2:
			for i := stride; i < rowSamples; i++ {
				order.PutUint16(row[2*i:], order.Uint16(row[2*i:])+order.Uint16(row[2*(i-stride):]))
			}
		case 4:
			for i := stride; i < rowSamples; i++ {
				order.PutUint32(row[4*i:], order.Uint32(row[4*i:])+order.Uint32(row[4*(i-stride):]))
			}
		case 8:
			for i := stride; i < rowSamples; i++ {
				order.PutUint64(row[8*i:], order.Uint64(row[8*i:])+order.Uint64(row[8*(i-stride):]))
			}
		}
	}
}

// undoFloat undoes predictor 3 (libtiff's fpAcc): per row, the bytes were
// differenced stride bytes apart after the samples' bytes were split into
// planes, most significant first. The result is in the file's byte order.
func undoFloat(buf []byte, rows, rowSamples, stride, size int, order binary.ByteOrder) []byte {
	out := make([]byte, len(buf))
	rowBytes := rowSamples * size
	big := order == binary.BigEndian
	for r := range rows {
		row := buf[r*rowBytes : (r+1)*rowBytes]
		for i := stride; i < rowBytes; i++ {
			row[i] += row[i-stride]
		}
		dst := out[r*rowBytes : (r+1)*rowBytes]
		for s := range rowSamples {
			for b := range size {
				v := row[b*rowSamples+s] // byte b, most significant first
				if big {
					dst[s*size+b] = v
				} else {
					dst[s*size+size-1-b] = v
				}
			}
		}
	}
	return out
}

// decodeJPEG decodes a JPEG block: the JPEGTables (quantisation and
// Huffman tables) spliced before the block's own stream, as libtiff does.
func (l *level) decodeJPEG(raw []byte, rows int) ([]byte, error) {
	stream := raw
	if len(l.jpegTables) > 4 && len(raw) > 2 {
		t := l.jpegTables
		if t[len(t)-2] == 0xFF && t[len(t)-1] == 0xD9 {
			t = t[:len(t)-2] // the tables' EOI
		}
		stream = make([]byte, 0, len(t)+len(raw))
		stream = append(append(stream, t...), raw[2:]...) // the block's SOI dropped
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(stream))
	if err != nil {
		return nil, fmt.Errorf("JPEG: %w", err)
	}
	if cfg.Width != l.TileWidth || cfg.Height < rows || cfg.Height > l.TileHeight {
		return nil, fmt.Errorf("a JPEG block of %dx%d pixels where %dx%d are declared", cfg.Width, cfg.Height, l.TileWidth, rows)
	}
	img, err := jpeg.Decode(bytes.NewReader(stream))
	if err != nil {
		return nil, fmt.Errorf("JPEG: %w", err)
	}
	spp := 1
	if l.planar == 1 {
		spp = l.spp
	}
	w := l.TileWidth
	out := make([]byte, rows*w*spp)
	switch m := img.(type) {
	case *image.Gray:
		if spp != 1 {
			return nil, fmt.Errorf("a one-channel JPEG block where %d samples per pixel are declared", spp)
		}
		for y := range rows {
			copy(out[y*w:(y+1)*w], m.Pix[y*m.Stride:y*m.Stride+w])
		}
	case *image.RGBA:
		// Go's decoder converted already: an Adobe marker said RGB.
		if spp != 3 {
			return nil, fmt.Errorf("a three-channel JPEG block where %d samples per pixel are declared", spp)
		}
		for y := range rows {
			for x := range w {
				p := m.PixOffset(x, y)
				copy(out[(y*w+x)*3:(y*w+x)*3+3], m.Pix[p:p+3])
			}
		}
	case *image.YCbCr:
		if spp != 3 {
			return nil, fmt.Errorf("a three-channel JPEG block where %d samples per pixel are declared", spp)
		}
		if l.photometric == 6 {
			ycbcrToRGB(m, w, rows, out)
			break
		}
		// RGB stored as is: the three components are R, G, B.
		for y := range rows {
			for x := range w {
				yi, ci := m.YOffset(x, y), m.COffset(x, y)
				o := (y*w + x) * 3
				out[o], out[o+1], out[o+2] = m.Y[yi], m.Cb[ci], m.Cr[ci]
			}
		}
	default:
		return nil, fmt.Errorf("a JPEG block of colour model %T is not supported", img)
	}
	return out, nil
}

// sampleReader returns the function reading sample i of a decoded block.
func sampleReader(format, size int, order binary.ByteOrder) func(b []byte, i int) float64 {
	switch {
	case format == 1 && size == 1:
		return func(b []byte, i int) float64 { return float64(b[i]) }
	case format == 2 && size == 1:
		return func(b []byte, i int) float64 { return float64(int8(b[i])) }
	case format == 1 && size == 2:
		return func(b []byte, i int) float64 { return float64(order.Uint16(b[2*i:])) }
	case format == 2 && size == 2:
		return func(b []byte, i int) float64 { return float64(int16(order.Uint16(b[2*i:]))) }
	case format == 1 && size == 4:
		return func(b []byte, i int) float64 { return float64(order.Uint32(b[4*i:])) }
	case format == 2 && size == 4:
		return func(b []byte, i int) float64 { return float64(int32(order.Uint32(b[4*i:]))) }
	case format == 3 && size == 4:
		return func(b []byte, i int) float64 { return float64(math.Float32frombits(order.Uint32(b[4*i:]))) }
	case format == 3 && size == 8:
		return func(b []byte, i int) float64 { return math.Float64frombits(order.Uint64(b[8*i:])) }
	}
	return nil
}
