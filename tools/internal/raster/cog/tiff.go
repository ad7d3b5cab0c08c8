package cog

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// TIFF tags the reader uses.
const (
	tagNewSubfileType   = 254
	tagImageWidth       = 256
	tagImageLength      = 257
	tagBitsPerSample    = 258
	tagCompression      = 259
	tagPhotometric      = 262
	tagStripOffsets     = 273
	tagSamplesPerPixel  = 277
	tagRowsPerStrip     = 278
	tagStripByteCounts  = 279
	tagPlanarConfig     = 284
	tagPredictor        = 317
	tagTileWidth        = 322
	tagTileLength       = 323
	tagTileOffsets      = 324
	tagTileByteCounts   = 325
	tagExtraSamples     = 338
	tagSampleFormat     = 339
	tagJPEGTables       = 347
	tagYCbCrSubsampling = 530
	tagPixelScale       = 33550
	tagTiepoint         = 33922
	tagTransformation   = 34264
	tagGeoKeyDirectory  = 34735
	tagGeoDoubleParams  = 34736
	tagGeoASCIIParams   = 34737
	tagGDALMetadata     = 42112
	tagGDALNoData       = 42113
)

// wantedTags are the tags whose values are read; the others are skipped
// without fetching their values.
var wantedTags = map[uint16]bool{
	tagNewSubfileType: true, tagImageWidth: true, tagImageLength: true, tagBitsPerSample: true,
	tagCompression: true, tagPhotometric: true, tagStripOffsets: true, tagSamplesPerPixel: true,
	tagRowsPerStrip: true, tagStripByteCounts: true, tagPlanarConfig: true, tagPredictor: true,
	tagTileWidth: true, tagTileLength: true, tagTileOffsets: true, tagTileByteCounts: true,
	tagSampleFormat: true, tagJPEGTables: true, tagYCbCrSubsampling: true, tagPixelScale: true,
	tagTiepoint: true, tagTransformation: true, tagGeoKeyDirectory: true, tagGeoDoubleParams: true,
	tagGeoASCIIParams: true, tagGDALMetadata: true, tagGDALNoData: true, tagExtraSamples: true,
}

// Bounds on what a header may declare.
const (
	maxIFDs       = 64       // full resolution, overviews and masks
	maxIFDEntries = 1024     // tags in one IFD
	maxTagBytes   = 64 << 20 // one tag's value (offset arrays of a huge file)
	maxStringTag  = 1 << 20  // ASCII and XML tags
	maxInts       = 1 << 22  // values of an integer tag: 4M tiles, 30 times those of a 100k-pixel-square image
)

// tiffType sizes, by TIFF field type.
var typeSize = map[uint16]int{
	1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4, 16: 8, 17: 8, 18: 8,
}

// headerReader serves header reads from the bytes fetched so far, fetching
// more (in chunks of at least Options.HeaderBytes) when a read lies
// beyond, within Options.MaxHeaderBytes in all.
type headerReader struct {
	src      Source
	chunks   []chunk
	chunk    int64
	fetched  int64
	max      int64
	requests int
	size     int64 // the file's size when a read came back short (-1 unknown)
}

type chunk struct {
	off  int64
	data []byte
}

func (h *headerReader) at(ctx context.Context, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || n > maxTagBytes || off > math.MaxInt64-n {
		return nil, fmt.Errorf("the header points at bytes %d+%d, which no file has", off, n)
	}
	for _, c := range h.chunks {
		if off >= c.off && off+n <= c.off+int64(len(c.data)) {
			return c.data[off-c.off : off-c.off+n], nil
		}
	}
	if h.size >= 0 && off+n > h.size {
		return nil, fmt.Errorf("the header points at bytes %d+%d, past the end of the %d-byte file", off, n, h.size)
	}
	want := max(n, h.chunk)
	if h.fetched+want > h.max {
		want = n
		if h.fetched+want > h.max {
			return nil, fmt.Errorf("the header needs more than %d bytes (Options.MaxHeaderBytes); not read", h.max)
		}
	}
	bs, err := h.src.ReadRanges(ctx, []Range{{off, want}})
	if err != nil {
		return nil, fmt.Errorf("reading the header (bytes %d+%d): %w", off, want, err)
	}
	h.requests++
	b := bs[0]
	h.fetched += int64(len(b))
	if int64(len(b)) < want {
		h.size = off + int64(len(b))
	}
	if int64(len(b)) < n {
		return nil, fmt.Errorf("the header points at bytes %d+%d, past the end of the file (%d bytes)", off, n, off+int64(len(b)))
	}
	h.chunks = append(h.chunks, chunk{off, b})
	return b[:n], nil
}

// entry is one IFD entry, its value read when the tag is wanted.
type entry struct {
	tag, typ uint16
	count    uint64
	raw      []byte // the value's bytes, in the file's byte order
}

type ifd struct {
	off     int64
	entries map[uint16]*entry
}

type tiffReader struct {
	h       *headerReader
	order   binary.ByteOrder
	big     bool
	ifds    []ifd
	tagRead int64 // bytes of tag values read, for the header cache's size
}

// parseTIFF reads the header and every IFD of the chain.
func parseTIFF(ctx context.Context, h *headerReader) (*tiffReader, error) {
	b, err := h.at(ctx, 0, 8)
	if err != nil {
		return nil, err // the source failed, or the file has fewer than 8 bytes
	}
	t := &tiffReader{h: h}
	switch string(b[:2]) {
	case "II":
		t.order = binary.LittleEndian
	case "MM":
		t.order = binary.BigEndian
	default:
		return nil, fmt.Errorf("not a TIFF (the file starts %q, not II or MM)", b[:2])
	}
	var next int64
	switch t.order.Uint16(b[2:]) {
	case 42:
		next = int64(t.order.Uint32(b[4:]))
	case 43:
		t.big = true
		b, err = h.at(ctx, 0, 16)
		if err != nil {
			return nil, err
		}
		if t.order.Uint16(b[4:]) != 8 || t.order.Uint16(b[6:]) != 0 {
			return nil, fmt.Errorf("a BigTIFF with offset size %d, not 8", t.order.Uint16(b[4:]))
		}
		next, err = offset64(t.order.Uint64(b[8:]))
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("not a TIFF (version %d, not 42 or 43)", t.order.Uint16(b[2:]))
	}
	seen := map[int64]bool{}
	for next != 0 {
		if len(t.ifds) >= maxIFDs {
			return nil, fmt.Errorf("more than %d IFDs; not read", maxIFDs)
		}
		if seen[next] {
			return nil, fmt.Errorf("the IFD chain loops back to offset %d", next)
		}
		seen[next] = true
		d, nxt, err := t.readIFD(ctx, next)
		if err != nil {
			return nil, fmt.Errorf("IFD %d at offset %d: %w", len(t.ifds), next, err)
		}
		t.ifds = append(t.ifds, d)
		next = nxt
	}
	if len(t.ifds) == 0 {
		return nil, fmt.Errorf("a TIFF without images (no IFD)")
	}
	return t, nil
}

func offset64(v uint64) (int64, error) {
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("offset %d is beyond any file", v)
	}
	return int64(v), nil
}

func (t *tiffReader) readIFD(ctx context.Context, off int64) (ifd, int64, error) {
	cntSize, entSize, offSize := int64(2), int64(12), int64(4)
	if t.big {
		cntSize, entSize, offSize = 8, 20, 8
	}
	b, err := t.h.at(ctx, off, cntSize)
	if err != nil {
		return ifd{}, 0, err
	}
	var n uint64
	if t.big {
		n = t.order.Uint64(b)
	} else {
		n = uint64(t.order.Uint16(b))
	}
	if n == 0 || n > maxIFDEntries {
		return ifd{}, 0, fmt.Errorf("%d entries (a TIFF IFD has 1 to %d here)", n, maxIFDEntries)
	}
	b, err = t.h.at(ctx, off+cntSize, int64(n)*entSize+offSize)
	if err != nil {
		return ifd{}, 0, err
	}
	d := ifd{off: off, entries: map[uint16]*entry{}}
	for i := range int64(n) {
		e := b[i*entSize : (i+1)*entSize]
		ent := &entry{tag: t.order.Uint16(e), typ: t.order.Uint16(e[2:])}
		var inline []byte
		if t.big {
			ent.count = t.order.Uint64(e[4:])
			inline = e[12:20]
		} else {
			ent.count = uint64(t.order.Uint32(e[4:]))
			inline = e[8:12]
		}
		if !wantedTags[ent.tag] {
			continue
		}
		size, ok := typeSize[ent.typ]
		if !ok {
			return ifd{}, 0, fmt.Errorf("tag %d has unknown field type %d", ent.tag, ent.typ)
		}
		if ent.count > maxTagBytes/uint64(size) {
			return ifd{}, 0, fmt.Errorf("tag %d declares %d values, more than this reader takes", ent.tag, ent.count)
		}
		total := int64(ent.count) * int64(size)
		if total <= offSize {
			ent.raw = inline[:total]
		} else {
			var vo uint64
			if t.big {
				vo = t.order.Uint64(inline)
			} else {
				vo = uint64(t.order.Uint32(inline))
			}
			o, err := offset64(vo)
			if err != nil {
				return ifd{}, 0, fmt.Errorf("tag %d: %w", ent.tag, err)
			}
			raw, err := t.h.at(ctx, o, total)
			if err != nil {
				return ifd{}, 0, fmt.Errorf("tag %d: %w", ent.tag, err)
			}
			ent.raw = raw
			t.tagRead += total
		}
		d.entries[ent.tag] = ent
	}
	nb := b[int64(n)*entSize:]
	var next uint64
	if t.big {
		next = t.order.Uint64(nb)
	} else {
		next = uint64(t.order.Uint32(nb))
	}
	nxt, err := offset64(next)
	return d, nxt, err
}

// ints returns an integer tag's values (BYTE, SHORT, LONG, LONG8 and their
// signed forms, IFD offsets), nil when absent.
func (t *tiffReader) ints(d ifd, tag uint16) ([]uint64, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	if e.count > maxInts {
		return nil, fmt.Errorf("tag %d has %d values, more than the %d this reader takes", tag, e.count, maxInts)
	}
	out := make([]uint64, e.count)
	for i := range out {
		switch e.typ {
		case 1, 6, 7:
			out[i] = uint64(e.raw[i])
		case 3, 8:
			out[i] = uint64(t.order.Uint16(e.raw[2*i:]))
		case 4, 9, 13:
			out[i] = uint64(t.order.Uint32(e.raw[4*i:]))
		case 16, 17, 18:
			out[i] = t.order.Uint64(e.raw[8*i:])
		default:
			return nil, fmt.Errorf("tag %d has field type %d where integers belong", tag, e.typ)
		}
	}
	return out, nil
}

// int1 returns a single-valued integer tag, def when absent.
func (t *tiffReader) int1(d ifd, tag uint16, def uint64) (uint64, error) {
	v, err := t.ints(d, tag)
	if err != nil {
		return 0, err
	}
	if len(v) == 0 {
		return def, nil
	}
	return v[0], nil
}

// floats returns a DOUBLE or FLOAT tag's values (integers accepted too).
func (t *tiffReader) floats(d ifd, tag uint16) ([]float64, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	out := make([]float64, e.count)
	switch e.typ {
	case 12:
		for i := range out {
			out[i] = math.Float64frombits(t.order.Uint64(e.raw[8*i:]))
		}
	case 11:
		for i := range out {
			out[i] = float64(math.Float32frombits(t.order.Uint32(e.raw[4*i:])))
		}
	default:
		v, err := t.ints(d, tag)
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = float64(v[i])
		}
	}
	return out, nil
}

// ascii returns an ASCII (or BYTE/UNDEFINED) tag as a string without its
// trailing NULs.
func (t *tiffReader) ascii(d ifd, tag uint16) (string, error) {
	e, ok := d.entries[tag]
	if !ok {
		return "", nil
	}
	if len(e.raw) > maxStringTag {
		return "", fmt.Errorf("tag %d is %d bytes long, more than the %d read", tag, len(e.raw), maxStringTag)
	}
	s := string(e.raw)
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	return s, nil
}

func (t *tiffReader) bytesOf(d ifd, tag uint16) []byte {
	if e, ok := d.entries[tag]; ok {
		return slices.Clone(e.raw)
	}
	return nil
}
