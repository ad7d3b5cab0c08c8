package cog

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// A builder of classic little-endian TIFFs for the hostile-file tests:
// any layout, including those no writer makes, built byte by byte.

// tEntry is one IFD entry of a built TIFF.
type tEntry struct {
	tag, typ uint16
	count    uint32
	val      []byte // the value's bytes, little-endian
	shared   bool   // the value is the file's shared blob (val unused)
}

// TIFF field types used by the tests.
const (
	tByte  = 1
	tASCII = 2
	tShort = 3
	tLong  = 4
)

func shortTag(tag uint16, vs ...uint16) tEntry {
	b := make([]byte, 2*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return tEntry{tag: tag, typ: tShort, count: uint32(len(vs)), val: b}
}

func longTag(tag uint16, vs ...uint32) tEntry {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return tEntry{tag: tag, typ: tLong, count: uint32(len(vs)), val: b}
}

func asciiTag(tag uint16, s string) tEntry {
	return tEntry{tag: tag, typ: tASCII, count: uint32(len(s) + 1), val: append([]byte(s), 0)}
}

// sharedTag is an entry whose count values of type typ are the shared blob.
func sharedTag(tag, typ uint16, count uint32) tEntry {
	return tEntry{tag: tag, typ: typ, count: count, shared: true}
}

// buildTIFF lays out: the 8-byte header, the shared blob, then per IFD its
// out-of-line values and the IFD itself, chained in order. Entries must be
// given in ascending tag order.
func buildTIFF(shared []byte, ifds ...[]tEntry) []byte {
	b := make([]byte, 8, 8+len(shared)+1024)
	copy(b, "II*\x00")
	sharedAt := uint32(len(b))
	b = append(b, shared...)
	prevNext := 4 // where the previous IFD's "next" offset goes
	for _, entries := range ifds {
		offs := make([]uint32, len(entries))
		for i, e := range entries {
			switch {
			case e.shared:
				offs[i] = sharedAt
			case len(e.val) > 4:
				if len(b)%2 == 1 {
					b = append(b, 0) // values start on a word boundary
				}
				offs[i] = uint32(len(b))
				b = append(b, e.val...)
			}
		}
		if len(b)%2 == 1 {
			b = append(b, 0)
		}
		binary.LittleEndian.PutUint32(b[prevNext:], uint32(len(b)))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(entries)))
		for i, e := range entries {
			b = binary.LittleEndian.AppendUint16(b, e.tag)
			b = binary.LittleEndian.AppendUint16(b, e.typ)
			b = binary.LittleEndian.AppendUint32(b, e.count)
			if e.shared || len(e.val) > 4 {
				b = binary.LittleEndian.AppendUint32(b, offs[i])
			} else {
				var v [4]byte
				copy(v[:], e.val)
				b = append(b, v[:]...)
			}
		}
		prevNext = len(b)
		b = binary.LittleEndian.AppendUint32(b, 0)
	}
	return b
}

// tiledIFD is the entries of an uncompressed 8-bit one-band tiled image
// (subfile type sub: 0 full resolution, 1 overview) with the given offset
// and byte-count entries.
func tiledIFD(sub uint32, w, h, tw, th int, offsets, counts tEntry) []tEntry {
	offsets.tag, counts.tag = tagTileOffsets, tagTileByteCounts
	return []tEntry{
		longTag(tagNewSubfileType, sub),
		longTag(tagImageWidth, uint32(w)),
		longTag(tagImageLength, uint32(h)),
		shortTag(tagBitsPerSample, 8),
		shortTag(tagCompression, 1),
		shortTag(tagPhotometric, 1),
		shortTag(tagSamplesPerPixel, 1),
		shortTag(tagPlanarConfig, 1),
		longTag(tagTileWidth, uint32(tw)),
		longTag(tagTileLength, uint32(th)),
		offsets,
		counts,
	}
}

// stripIFD is the entries of an uncompressed 8-bit one-band stripped image.
func stripIFD(w, h, rps int, offsets, counts tEntry) []tEntry {
	offsets.tag, counts.tag = tagStripOffsets, tagStripByteCounts
	return []tEntry{
		longTag(tagImageWidth, uint32(w)),
		longTag(tagImageLength, uint32(h)),
		shortTag(tagBitsPerSample, 8),
		shortTag(tagCompression, 1),
		shortTag(tagPhotometric, 1),
		offsets,
		shortTag(tagSamplesPerPixel, 1),
		longTag(tagRowsPerStrip, uint32(rps)),
		counts,
		shortTag(tagPlanarConfig, 1),
	}
}

// spacedBlocks are n blocks of size bytes each, placed every stride bytes
// from base: offsets and byte counts as LONG entries.
func spacedBlocks(n int, base, stride, size uint32) (offsets, counts tEntry) {
	o, c := make([]uint32, n), make([]uint32, n)
	for i := range n {
		o[i], c[i] = base+uint32(i)*stride, size
	}
	return longTag(0, o...), longTag(0, c...)
}

// virtualSource serves head, then zeros up to size bytes: a large hostile
// file without the memory. It counts the ReadRanges calls and the ranges.
type virtualSource struct {
	name          string
	head          []byte
	size          int64
	calls, ranges atomic.Int64
	bytes         atomic.Int64
	onRead        func() // called at each ReadRanges, before serving
}

func (v *virtualSource) String() string { return v.name }

func (v *virtualSource) ReadRanges(ctx context.Context, rs []Range) ([][]byte, error) {
	v.calls.Add(1)
	if v.onRead != nil {
		v.onRead()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]byte, len(rs))
	for i, r := range rs {
		v.ranges.Add(1)
		if r.Off < 0 || r.Len < 0 || r.Off > v.size {
			return nil, fmt.Errorf("range %d+%d outside %d bytes", r.Off, r.Len, v.size)
		}
		b := make([]byte, min(r.end(), v.size)-r.Off)
		if r.Off < int64(len(v.head)) {
			copy(b, v.head[r.Off:])
		}
		v.bytes.Add(int64(len(b)))
		out[i] = b
	}
	return out, nil
}
