package cog

import (
	"context"
	"encoding/binary"
	"errors"
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

// Bounds on what a header may declare. A tag's values are read when a
// tag is used, and no more of them than its use needs (the offsets of the
// blocks a level has, one value of a single-valued tag), as libtiff reads
// at most the strips or tiles an image has: what a tag declares beyond
// costs neither a request nor memory.
const (
	maxIFDs       = 64       // full resolution, overviews and masks (GDAL's COGs have at most about 30)
	maxIFDEntries = 1024     // tags in one IFD
	maxTagBytes   = 64 << 20 // one read of a tag's values (MaxHeaderBytes bounds them all)
	maxStringTag  = 1 << 20  // GDAL_METADATA's XML
	maxNoDataTag  = 1 << 10  // GDAL_NODATA: a number
	maxJPEGTables = 64 << 10 // JPEGTables: a few hundred bytes of quantisation and Huffman tables
	maxGeoKeys    = 512      // keys of the GeoKeyDirectory (a GeoTIFF has a dozen)
	maxStriles    = 1 << 22  // blocks of one level: 4M, 30 times those of a 100k-pixel-square image in 512 px tiles
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
	// maxRequests bounds this Open's requests; budget, when set, is
	// shared with other Opens and reads.
	maxRequests int
	budget      *RequestBudget
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
			return nil, &LimitError{Limit: "MaxHeaderBytes", Need: h.fetched + want, Max: h.max,
				what: "the header needs more bytes than Open reads"}
		}
	}
	if h.requests >= h.maxRequests {
		return nil, &LimitError{Limit: "MaxRequests", Need: int64(h.requests) + 1, Max: int64(h.maxRequests),
			what: "the header is spread over more range requests than one Open may send"}
	}
	if err := h.budget.take(1); err != nil {
		return nil, err
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

// entry is one IFD entry; its value is read when the tag is used.
type entry struct {
	tag, typ uint16
	count    uint64
	inline   []byte // the value's bytes when they fit in the entry (the file's byte order)
	off      int64  // else where they start
}

type ifd struct {
	off     int64
	entries map[uint16]*entry
}

type tiffReader struct {
	h     *headerReader
	order binary.ByteOrder
	big   bool
	ifds  []ifd
	// decoded counts the bytes of values decoded from tag values (numbers,
	// strings, tables), bounded by maxDecoded (Options.MaxHeaderDecodedBytes).
	decoded, maxDecoded int64
}

// parseTIFF reads the header and every IFD of the chain (not the tags'
// values: they are read when used).
func parseTIFF(ctx context.Context, h *headerReader) (*tiffReader, error) {
	b, err := h.at(ctx, 0, 8)
	if err != nil {
		return nil, err // the source failed, or the file has fewer than 8 bytes
	}
	t := &tiffReader{h: h}
	// The bytes are never quoted: the file may be whatever an href
	// reached, an internal service's answer included.
	const notTIFF = "not a TIFF: the file does not start with a TIFF signature (II*\\0 or MM\\0*, or BigTIFF's II+\\0 or MM\\0+)"
	switch string(b[:2]) {
	case "II":
		t.order = binary.LittleEndian
	case "MM":
		t.order = binary.BigEndian
	default:
		return nil, errors.New(notTIFF)
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
			return nil, errors.New("a BigTIFF whose offset size is not 8")
		}
		next, err = offset64(t.order.Uint64(b[8:]))
		if err != nil {
			return nil, err
		}
	default:
		return nil, errors.New(notTIFF)
	}
	seen := map[int64]bool{}
	for next != 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
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
		if ent.count <= uint64(offSize)/uint64(size) {
			ent.inline = inline[:ent.count*uint64(size)]
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
			ent.off = o
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

// raw returns the bytes of e's first n values (n at most e.count), read
// from the file when they are not in the entry.
func (t *tiffReader) raw(ctx context.Context, e *entry, n uint64) ([]byte, error) {
	n = min(n, e.count)
	size := uint64(typeSize[e.typ])
	if e.inline != nil {
		return e.inline[:n*size], nil
	}
	if n > maxTagBytes/size {
		return nil, fmt.Errorf("tag %d: %d values are more than this reader takes", e.tag, n)
	}
	b, err := t.h.at(ctx, e.off, int64(n*size))
	if err != nil {
		return nil, fmt.Errorf("tag %d: %w", e.tag, err)
	}
	return b, nil
}

// charge counts n bytes decoded from tag values against the bound.
func (t *tiffReader) charge(n int64) error {
	t.decoded += n
	if t.maxDecoded > 0 && t.decoded > t.maxDecoded {
		return &LimitError{Limit: "MaxHeaderDecodedBytes", Need: t.decoded, Max: t.maxDecoded,
			what: "the header's tag values decode to more bytes than Open takes"}
	}
	return nil
}

// ints returns an integer tag's values (BYTE, SHORT, LONG, LONG8 and their
// signed forms, IFD offsets), nil when absent; a tag of more than most
// values is refused.
func (t *tiffReader) ints(ctx context.Context, d ifd, tag uint16, most uint64) ([]uint64, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	if e.count > most {
		return nil, fmt.Errorf("tag %d has %d values, more than the %d it may have", tag, e.count, most)
	}
	return t.firstInts(ctx, e, most)
}

// firstInts decodes the first n values of an integer tag.
func (t *tiffReader) firstInts(ctx context.Context, e *entry, n uint64) ([]uint64, error) {
	switch e.typ {
	case 1, 6, 7, 3, 8, 4, 9, 13, 16, 17, 18:
	default:
		return nil, fmt.Errorf("tag %d has field type %d where integers belong", e.tag, e.typ)
	}
	raw, err := t.raw(ctx, e, n)
	if err != nil {
		return nil, err
	}
	size := typeSize[e.typ]
	if err := t.charge(int64(len(raw)/size) * 8); err != nil {
		return nil, err
	}
	out := make([]uint64, len(raw)/size)
	for i := range out {
		switch size {
		case 1:
			out[i] = uint64(raw[i])
		case 2:
			out[i] = uint64(t.order.Uint16(raw[2*i:]))
		case 4:
			out[i] = uint64(t.order.Uint32(raw[4*i:]))
		case 8:
			out[i] = t.order.Uint64(raw[8*i:])
		}
	}
	return out, nil
}

// int1 returns the first value of a single-valued integer tag (only that
// value is read), def when absent.
func (t *tiffReader) int1(ctx context.Context, d ifd, tag uint16, def uint64) (uint64, error) {
	e, ok := d.entries[tag]
	if !ok || e.count == 0 {
		return def, nil
	}
	v, err := t.firstInts(ctx, e, 1)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// floats returns up to n values of a DOUBLE or FLOAT tag (integers
// accepted too), nil when absent.
func (t *tiffReader) floats(ctx context.Context, d ifd, tag uint16, n uint64) ([]float64, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	if e.typ != 11 && e.typ != 12 {
		v, err := t.firstInts(ctx, e, n)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(v))
		for i := range out {
			out[i] = float64(v[i])
		}
		return out, nil
	}
	raw, err := t.raw(ctx, e, n)
	if err != nil {
		return nil, err
	}
	size := typeSize[e.typ]
	if err := t.charge(int64(len(raw)/size) * 8); err != nil {
		return nil, err
	}
	out := make([]float64, len(raw)/size)
	for i := range out {
		if size == 8 {
			out[i] = math.Float64frombits(t.order.Uint64(raw[8*i:]))
		} else {
			out[i] = float64(math.Float32frombits(t.order.Uint32(raw[4*i:])))
		}
	}
	return out, nil
}

// ascii returns an ASCII (or BYTE/UNDEFINED) tag of at most most bytes as
// a string without its trailing NULs.
func (t *tiffReader) ascii(ctx context.Context, d ifd, tag uint16, most uint64) (string, error) {
	e, ok := d.entries[tag]
	if !ok {
		return "", nil
	}
	if typeSize[e.typ] != 1 {
		return "", fmt.Errorf("tag %d has field type %d where text belongs", tag, e.typ)
	}
	if e.count > most {
		return "", fmt.Errorf("tag %d is %d bytes long, more than the %d read", tag, e.count, most)
	}
	raw, err := t.raw(ctx, e, e.count)
	if err != nil {
		return "", err
	}
	if err := t.charge(int64(len(raw))); err != nil {
		return "", err
	}
	s := string(raw)
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	return s, nil
}

// bytesOf returns a copy of a byte tag of at most most bytes, nil when
// absent.
func (t *tiffReader) bytesOf(ctx context.Context, d ifd, tag uint16, most uint64) ([]byte, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	if typeSize[e.typ] != 1 {
		return nil, fmt.Errorf("tag %d has field type %d where bytes belong", tag, e.typ)
	}
	if e.count > most {
		return nil, fmt.Errorf("tag %d is %d bytes long, more than the %d read", tag, e.count, most)
	}
	raw, err := t.raw(ctx, e, e.count)
	if err != nil {
		return nil, err
	}
	if err := t.charge(int64(len(raw))); err != nil {
		return nil, err
	}
	return slices.Clone(raw), nil
}

// striles are a level's block offsets or byte counts, read in place from
// the header's bytes (no copy, nothing decoded ahead): n values of size
// bytes, or, for uncompressed strips without byte counts, computed.
type striles struct {
	raw   []byte
	size  int
	order binary.ByteOrder
	calc  func(i int) uint64
}

func (s striles) at(i int) uint64 {
	if s.calc != nil {
		return s.calc(i)
	}
	switch s.size {
	case 2:
		return uint64(s.order.Uint16(s.raw[2*i:]))
	case 4:
		return uint64(s.order.Uint32(s.raw[4*i:]))
	}
	return s.order.Uint64(s.raw[8*i:])
}

// striles reads the first n values of an offsets or byte-counts tag (ok
// false when absent). As in GDAL (libtiff's on-demand strile loading),
// they are SHORT, LONG, LONG8 or (by some writers) SLONG8; an array with
// more values than the level's n blocks is read no further, as libtiff
// reads it; one with fewer is refused (GDAL fails on the missing blocks).
func (t *tiffReader) striles(ctx context.Context, d ifd, tag uint16, n int) (s striles, ok bool, err error) {
	e, ok := d.entries[tag]
	if !ok {
		return striles{}, false, nil
	}
	switch e.typ {
	case 3, 4, 16, 17:
	default:
		return striles{}, true, fmt.Errorf("tag %d (block offsets or byte counts) has field type %d; SHORT, LONG or LONG8 are valid", tag, e.typ)
	}
	if e.count < uint64(n) {
		return striles{}, true, fmt.Errorf("%d blocks need offsets and byte counts, tag %d has %d", n, tag, e.count)
	}
	raw, err := t.raw(ctx, e, uint64(n))
	if err != nil {
		return striles{}, true, err
	}
	return striles{raw: raw, size: typeSize[e.typ], order: t.order}, true, nil
}
