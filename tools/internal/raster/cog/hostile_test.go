package cog

import (
	"context"
	"encoding/binary"
	"errors"
	"image"
	"runtime"
	"strings"
	"testing"
)

// Hostile files: layouts built byte
// by byte that no writer makes, each the smallest form of an attack
// measured on the server. Memory is measured as the bytes allocated
// (runtime.MemStats.TotalAlloc) by one call; requests as the ranges a
// counting source served.

// allocated is the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// repeated is an entry of n values v of type typ.
func repeated(typ uint16, n int, v uint32) tEntry {
	size := map[uint16]int{tByte: 1, tShort: 2, tLong: 4}[typ]
	b := make([]byte, n*size)
	for i := range n {
		switch typ {
		case tByte:
			b[i] = byte(v)
		case tShort:
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		case tLong:
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
	}
	return tEntry{typ: typ, count: uint32(n), val: b}
}

// amplifiedHeader is the header-amplification attack: ifds levels of one
// 256 px tile each, whose TileOffsets and TileByteCounts declare count
// values of type typ, all of them the same shared blob of the file.
func amplifiedHeader(ifds, count int, typ uint16) []byte {
	size := map[uint16]int{tByte: 1, tShort: 2, tLong: 4}[typ]
	var levels [][]tEntry
	for i := range ifds {
		sub := uint32(0)
		if i > 0 {
			sub = 1
		}
		side := 256 - 8*i
		levels = append(levels, tiledIFD(sub, side, side, 256, 256, sharedTag(0, typ, uint32(count)), sharedTag(0, typ, uint32(count))))
	}
	return buildTIFF(make([]byte, count*size), levels...)
}

// Offset arrays longer than a level needs are read no further than it
// needs (as libtiff reads them), in place: eight levels of one tile each
// declaring a million LONG offsets over one shared 4 MiB range cost the
// range's first bytes, not 8 × 2 × 8 MiB of decoded arrays.
func TestLongOffsetArraysAreNotReadOrDecoded(t *testing.T) {
	file := amplifiedHeader(8, 1<<20, tLong)
	src := &countingSource{Source: BytesSource("amplified.tif", file)}
	var f *File
	var err error
	alloc := allocated(func() { f, err = Open(context.Background(), src, Options{}) })
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if n := len(f.Info().Levels); n != 8 {
		t.Errorf("%d levels, want 8", n)
	}
	if b := src.bytes.Load(); b > 64<<10 {
		t.Errorf("Open read %d bytes of a header whose levels need 8 offsets; the declared arrays were read", b)
	}
	if alloc > 1<<20 {
		t.Errorf("Open allocated %d bytes; the declared arrays were decoded", alloc)
	}
	if m := f.Info().HeaderMemory; m <= 0 || m > 128<<10 {
		t.Errorf("HeaderMemory = %d, want the few KiB read", m)
	}
}

// BYTE-typed offsets (a million values, 8 bytes each once decoded) are
// refused as GDAL refuses them ("Invalid type for [Strip|Tile]
// [Offset/ByteCount] tag", libtiff's on-demand strile loading), without
// decoding them.
func TestByteTypedOffsetsAreRefused(t *testing.T) {
	file := amplifiedHeader(4, 1<<20, tByte)
	var err error
	alloc := allocated(func() { _, err = Open(context.Background(), BytesSource("bytes.tif", file), Options{}) })
	if err == nil || !strings.Contains(err.Error(), "field type 1") {
		t.Errorf("BYTE-typed TileOffsets = %v, want refused naming the field type", err)
	}
	if alloc > 1<<20 {
		t.Errorf("refusing allocated %d bytes", alloc)
	}
	// SHORT offsets are valid (libtiff and GDAL read them).
	blob := make([]byte, 256)
	ok := buildTIFF(blob, tiledIFD(0, 64, 64, 16, 16, repeated(tShort, 16, 8), repeated(tShort, 16, 256)))
	if _, err := Open(context.Background(), BytesSource("short.tif", ok), Options{}); err != nil {
		t.Errorf("SHORT-typed offsets: %v", err)
	}
}

// An array with fewer offsets than the level has blocks is refused (GDAL
// fails on the missing blocks); one with more is read up to what the
// level needs, as libtiff and GDAL read it.
func TestOffsetArraysShorterOrLongerThanTheLevel(t *testing.T) {
	blob := make([]byte, 256)
	for i := range blob {
		blob[i] = byte(i)
	}
	short := buildTIFF(blob, tiledIFD(0, 64, 64, 16, 16, repeated(tLong, 8, 8), repeated(tLong, 8, 256)))
	if _, err := Open(context.Background(), BytesSource("short.tif", short), Options{}); err == nil || !strings.Contains(err.Error(), "16 blocks need") {
		t.Errorf("8 offsets for 16 tiles = %v", err)
	}
	long := buildTIFF(blob, tiledIFD(0, 64, 64, 16, 16, repeated(tLong, 32, 8), repeated(tLong, 32, 256)))
	f, err := Open(context.Background(), BytesSource("long.tif", long), Options{})
	if err != nil {
		t.Fatalf("32 offsets for 16 tiles: %v", err)
	}
	w, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, 64, 64), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every tile is the blob: pixel (x, y) is (y%16)*16 + x%16.
	if v := w.Bands[0][17*64+18]; v != 1*16+2 {
		t.Errorf("pixel (18,17) = %v, want 18", v)
	}
}

// The header's decoded values are bounded per Open and their size is
// known: the cache charges it, and a caller can charge it to its budget.
func TestHeaderMemoryIsBoundedAndCharged(t *testing.T) {
	cache := NewCache(64 << 20)
	src := BytesSource("s2", readTestFile(t, "s2_u16_deflate_cog.tif"))
	f, err := Open(context.Background(), src, Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	in := f.Info()
	if in.HeaderMemory < int64(in.HeaderBytes) {
		t.Errorf("HeaderMemory %d is less than the %d bytes read", in.HeaderMemory, in.HeaderBytes)
	}
	if used, _ := cache.Size(); used != in.HeaderMemory {
		t.Errorf("the cache charged %d bytes for a header of %d", used, in.HeaderMemory)
	}
	// GDAL_METADATA of 40 KB passes the default bound, not one of 64 KiB
	// (text plus its parse).
	md := "<GDALMetadata>" + strings.Repeat(`<Item name="X">0123456789012345678901234567890123456789</Item>`, 640) + "</GDALMetadata>"
	blob := make([]byte, 256)
	file := buildTIFF(blob, append(tiledIFD(0, 16, 16, 16, 16, repeated(tLong, 1, 8), repeated(tLong, 1, 256)), asciiTag(tagGDALMetadata, md)))
	if _, err := Open(context.Background(), BytesSource("md", file), Options{}); err != nil {
		t.Errorf("40 KB of GDAL_METADATA: %v", err)
	}
	_, err = Open(context.Background(), BytesSource("md", file), Options{MaxHeaderDecodedBytes: 64 << 10})
	if le, ok := errors.AsType[*LimitError](err); !ok || le.Limit != "MaxHeaderDecodedBytes" {
		t.Errorf("40 KB of GDAL_METADATA under a 64 KiB bound = %v, want a MaxHeaderDecodedBytes LimitError", err)
	}
	// The header's bytes are bounded too.
	_, err = Open(context.Background(), BytesSource("md", file), Options{HeaderBytes: 1024, MaxHeaderBytes: 8 << 10})
	if le, ok := errors.AsType[*LimitError](err); !ok || le.Limit != "MaxHeaderBytes" {
		t.Errorf("a 40 KB header under an 8 KiB bound = %v, want a MaxHeaderBytes LimitError", err)
	}
}

// Levels cut into blocks of a few pixels are refused at Open (GDAL reads
// them with a "Nonstandard tile width" warning); small images in one
// block, and blocks of 16 pixels or more, are read.
func TestDegenerateTilingsAreRefused(t *testing.T) {
	blob := make([]byte, 256)
	for _, c := range []struct {
		name string
		file []byte
		ok   bool
	}{
		{"1x1 tiles", buildTIFF(blob, tiledIFD(0, 64, 64, 1, 1, repeated(tLong, 4096, 8), repeated(tLong, 4096, 1))), false},
		{"8x8 tiles", buildTIFF(blob, tiledIFD(0, 64, 64, 8, 8, repeated(tLong, 64, 8), repeated(tLong, 64, 64))), false},
		{"64x1 tiles", buildTIFF(blob, tiledIFD(0, 64, 64, 64, 1, repeated(tLong, 64, 8), repeated(tLong, 64, 64))), false},
		{"1-pixel strips", buildTIFF(blob, stripIFD(1, 4096, 1, repeated(tLong, 4096, 8), repeated(tLong, 4096, 1))), false},
		{"1-row strips of 100 px", buildTIFF(blob, stripIFD(100, 64, 1, repeated(tLong, 64, 8), repeated(tLong, 64, 100))), false},
		{"an 8x8 image in one 8x8 tile", buildTIFF(blob, tiledIFD(0, 8, 8, 8, 8, repeated(tLong, 1, 8), repeated(tLong, 1, 64))), true},
		{"a 64x8 image in 16x8 tiles", buildTIFF(blob, tiledIFD(0, 64, 8, 16, 8, repeated(tLong, 4, 8), repeated(tLong, 4, 128))), true},
		{"16x16 tiles", buildTIFF(blob, tiledIFD(0, 64, 64, 16, 16, repeated(tLong, 16, 8), repeated(tLong, 16, 256))), true},
		{"1-row strips of 256 px", buildTIFF(blob, stripIFD(256, 4, 1, repeated(tLong, 4, 8), repeated(tLong, 4, 256))), true},
		{"one strip of 3x2 px", buildTIFF(blob, stripIFD(3, 2, 2, repeated(tLong, 1, 8), repeated(tLong, 1, 6))), true},
	} {
		_, err := Open(context.Background(), BytesSource(c.name, c.file), Options{})
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "this reader takes")) {
			t.Errorf("%s = %v, want refused", c.name, err)
		}
	}
}

// spacedTiles is a 4096×4096 uint8 image of 16×16-pixel tiles (256 bytes
// each), tile i at base + i*stride of a virtual file.
func spacedTiles(stride uint32) *virtualSource {
	const side, tile = 4096, 16
	n := (side / tile) * (side / tile)
	base := uint32(1 << 20)
	offsets, counts := spacedBlocks(n, base, stride, tile*tile)
	head := buildTIFF(nil, tiledIFD(0, side, side, tile, tile, offsets, counts))
	return &virtualSource{name: "spaced", head: head, size: int64(base) + int64(n)*int64(stride)}
}

// A read whose blocks lie in more separate ranges than MaxRequests is
// refused before its first request and before its window is allocated;
// one whose blocks are adjacent (a COG's) is merged and read.
func TestReadWindowBoundsItsRequests(t *testing.T) {
	ctx := context.Background()
	src := spacedTiles(32 << 10) // 32 KiB apart: never merged
	f, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sent := src.ranges.Load()
	var rerr error
	alloc := allocated(func() { _, rerr = f.ReadWindow(ctx, 0, image.Rect(0, 0, 1024, 1024), nil) })
	le, ok := errors.AsType[*LimitError](rerr)
	if !ok || le.Limit != "MaxRequests" || le.Need != 4096 || le.Max != 128 {
		t.Fatalf("a window of 4096 separate tiles = %v, want a MaxRequests LimitError (4096 of 128)", rerr)
	}
	if n := src.ranges.Load() - sent; n != 0 {
		t.Errorf("the refused read sent %d range requests", n)
	}
	if alloc > 4<<20 {
		t.Errorf("the refused read allocated %d bytes (its window is 8 MiB)", alloc)
	}
	// Its cost said so before: WindowCost refuses it the same way.
	if _, err := f.WindowCost(0, image.Rect(0, 0, 1024, 1024), nil); !errors.As(err, &le) || le.Limit != "MaxRequests" {
		t.Errorf("WindowCost = %v", err)
	}
	// 64 of them is within the bound: 64 requests.
	w, err := f.ReadWindow(ctx, 0, image.Rect(0, 0, 128, 128), nil)
	if err != nil || w.Requests != 64 || w.Blocks != 64 {
		t.Errorf("a window of 64 separate tiles: %v requests, %v", w, err)
	}
	// The same window of tiles stored one after the other is one request.
	cog := spacedTiles(256)
	f, err = Open(ctx, cog, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err = f.ReadWindow(ctx, 0, image.Rect(0, 0, 1024, 1024), nil)
	if err != nil {
		t.Fatal(err)
	}
	// 64 rows of 64 tiles, each row one range (the rows are 4096 tiles
	// apart): 64 requests, 4096 blocks.
	if w.Requests != 64 || w.Blocks != 4096 {
		t.Errorf("adjacent tiles: %d requests, %d blocks; want 64, 4096", w.Requests, w.Blocks)
	}
}

// A read of more blocks than MaxBlocks is refused before listing them,
// requesting or allocating anything in proportion.
func TestReadWindowBoundsItsBlocks(t *testing.T) {
	ctx := context.Background()
	src := spacedTiles(256)
	f, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sent := src.ranges.Load()
	var rerr error
	alloc := allocated(func() { _, rerr = f.ReadWindow(ctx, 0, image.Rect(0, 0, 4096, 4096), nil) })
	le, ok := errors.AsType[*LimitError](rerr)
	if !ok || le.Limit != "MaxBlocks" || le.Need != 65536 || le.Max != 16384 {
		t.Fatalf("a window of 65536 tiles = %v, want a MaxBlocks LimitError", rerr)
	}
	if n := src.ranges.Load() - sent; n != 0 {
		t.Errorf("the refused read sent %d range requests", n)
	}
	if alloc > 64<<10 {
		t.Errorf("the refused read allocated %d bytes", alloc)
	}
	c, err := f.WindowCost(0, image.Rect(0, 0, 2048, 2048), nil)
	if err != nil || c.Blocks != 16384 || c.Values != 2048*2048 {
		t.Errorf("WindowCost of 16384 tiles = %+v, %v", c, err)
	}
}

// A RequestBudget shared by a call's Opens and reads refuses the read that
// would pass it, before sending any of its requests.
func TestRequestBudgetIsSharedAndTakenBeforeSending(t *testing.T) {
	ctx := context.Background()
	budget := NewRequestBudget(100)
	src := spacedTiles(32 << 10)
	f, err := Open(ctx, src, Options{Requests: budget})
	if err != nil {
		t.Fatal(err)
	}
	if budget.Used() != int(src.ranges.Load()) {
		t.Errorf("the budget took %d requests for Open's %d", budget.Used(), src.ranges.Load())
	}
	if _, err := f.ReadWindow(ctx, 0, image.Rect(0, 0, 128, 128), nil); err != nil { // 64
		t.Fatal(err)
	}
	g, err := Open(ctx, src, Options{Requests: budget}) // another file of the same call
	if err != nil {
		t.Fatal(err)
	}
	sent := src.ranges.Load()
	_, err = g.ReadWindow(ctx, 0, image.Rect(0, 0, 128, 128), nil)
	if le, ok := errors.AsType[*LimitError](err); !ok || le.Limit != "RequestBudget" {
		t.Errorf("a read past the call's budget = %v", err)
	}
	if n := src.ranges.Load() - sent; n != 0 {
		t.Errorf("the refused read sent %d requests", n)
	}
	if budget.Used() > budget.Max() {
		t.Errorf("the budget counts %d of %d", budget.Used(), budget.Max())
	}
	// Open's header requests are bounded too.
	if _, err := Open(ctx, src, Options{Requests: NewRequestBudget(0)}); !errors.As(err, new(*LimitError)) {
		t.Errorf("Open with no requests left = %v", err)
	}
}

// A read whose call ends starts no more requests: of 64 separate ranges,
// read two at a time, none is requested after the first one cancels the
// call (today's reader started all 64).
func TestCancelledReadStartsNoMoreRequests(t *testing.T) {
	src := spacedTiles(32 << 10)
	f, err := Open(context.Background(), src, Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := src.calls.Load()
	src.onRead = cancel
	_, err = f.ReadWindow(ctx, 0, image.Rect(0, 0, 128, 128), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("read = %v, want context.Canceled", err)
	}
	if n := src.calls.Load() - before; n > 2 {
		t.Errorf("%d of 64 requests were started, want at most the 2 in flight when the call ended", n)
	}
}

// A file's bytes are never quoted in an error: an href may reach an
// internal service, whose answer would otherwise show through (the
// "SE" of "SECRET…").
func TestNonTIFFBytesAreNotEchoed(t *testing.T) {
	bigtiffBadOffsetSize := []byte("II+\x00QZ\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	blob := make([]byte, 256)
	nodata := buildTIFF(blob, append(tiledIFD(0, 16, 16, 16, 16, repeated(tLong, 1, 8), repeated(tLong, 1, 256)), asciiTag(tagGDALNoData, "QZSECRET")))
	badXML := buildTIFF(blob, append(tiledIFD(0, 16, 16, 16, 16, repeated(tLong, 1, 8), repeated(tLong, 1, 256)), asciiTag(tagGDALMetadata, "<QZSECRET></QZOTHER>")))
	scale := buildTIFF(blob, append(tiledIFD(0, 16, 16, 16, 16, repeated(tLong, 1, 8), repeated(tLong, 1, 256)),
		asciiTag(tagGDALMetadata, `<GDALMetadata><Item name="SCALE" sample="0" role="scale">QZSECRET</Item></GDALMetadata>`)))
	for name, b := range map[string][]byte{
		"text":               []byte("QZSECRET-TOKEN=abcdef0123456789"),
		"byte order, no 42":  []byte("IIQZSECRET-TOKEN"),
		"BigTIFF":            bigtiffBadOffsetSize,
		"GDAL_NODATA":        nodata,
		"GDAL_METADATA":      badXML,
		"GDAL_METADATA item": scale,
	} {
		_, err := Open(context.Background(), BytesSource("http://10.0.0.1/x.tif", b), Options{})
		if err == nil {
			t.Errorf("%s: opened", name)
			continue
		}
		msg := err.Error()
		// "QZ" as text, and as the number a version or size read from it
		// would be (0x5A51 little-endian).
		if strings.Contains(msg, "QZ") || strings.Contains(msg, "23121") || strings.Contains(msg, "SECRET") {
			t.Errorf("%s: the error quotes the file: %s", name, msg)
		}
		if name == "text" && !strings.Contains(msg, "not a TIFF") {
			t.Errorf("%s: %s, want it said plainly that it is not a TIFF", name, msg)
		}
	}
}

// A block the cache keeps is a copy of its bytes, not a window into the
// merged request's buffer, which the cache would otherwise keep whole
// while counting only the block.
func TestCachedBlocksDoNotPinMergedBuffers(t *testing.T) {
	cache := NewCache(64 << 20)
	f, err := Open(context.Background(), BytesSource("s2", readTestFile(t, "s2_u16_deflate_cog.tif")), Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, 200, 150), nil)
	if err != nil || w.Requests != 1 {
		t.Fatalf("read: %d requests, %v", w.Requests, err)
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	blocks := 0
	for e := cache.ll.Front(); e != nil; e = e.Next() {
		ent := e.Value.(*cacheEntry)
		if b, ok := ent.val.([]byte); ok {
			blocks++
			if cap(b) > len(b)+len(b)/4 || ent.size < int64(cap(b)) {
				t.Errorf("cached block %q holds %d bytes of capacity for %d, charged %d", ent.key, cap(b), len(b), ent.size)
			}
		}
	}
	if blocks != 12 {
		t.Errorf("%d blocks cached, want 12", blocks)
	}
}

// WindowCost is what the read takes: the same blocks, no fewer requests
// or bytes than a cold read sends, and no less memory than it holds: all
// it allocates, but for the garbage of the blocks decoded beyond the
// Concurrency decoded at once (plan.allocated counts those too).
func TestWindowCostBoundsTheRead(t *testing.T) {
	for _, name := range []string{"s2_u16_deflate_cog.tif", "f64_zstd_pred3_pixel.tif", "naip_u8_jpeg_ycbcr_cog.tif",
		"u8_strips_mask.tif", "f32_deflate_pred3_band_be.tif", "u8_none_strips_pixel.tif", "u8_deflate_sparse.tif"} {
		f := openFile(t, "testdata/"+name)
		in := f.Info()
		for _, c := range []struct {
			lvl   int
			win   image.Rectangle
			bands []int
		}{
			{0, image.Rect(0, 0, in.Width, in.Height), nil},
			{0, image.Rect(70, 30, 140, 100), []int{0}},
			{len(in.Levels) - 1, image.Rect(0, 0, 1000, 1000), nil},
		} {
			cost, err := f.WindowCost(c.lvl, c.win, c.bands)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_, _ = f.ReadWindow(context.Background(), c.lvl, c.win, c.bands) // the decoders' pools filled
			var w *Window
			alloc := allocated(func() { w, err = f.ReadWindow(context.Background(), c.lvl, c.win, c.bands) })
			if err != nil {
				t.Fatal(err)
			}
			if cost.Rect != w.Rect || cost.Blocks != w.Blocks || cost.Requests < w.Requests || cost.FetchBytes < int64(w.Bytes) ||
				cost.Values != int64(len(w.Bands))*int64(len(w.Bands[0])) {
				t.Errorf("%s %v: cost %+v, read %v: %d blocks, %d requests, %d bytes", name, c.win, cost, w.Rect, w.Blocks, w.Requests, w.Bytes)
			}
			p, _ := f.plan(context.Background(), c.lvl, c.win, c.bands, false)
			if int64(alloc) > p.allocated() {
				t.Errorf("%s %v: the read allocated %d bytes, its cost says at most %d (%d held at once)", name, c.win, alloc, p.allocated(), cost.Bytes)
			}
			if p.decoding == int64(cost.Blocks) && int64(alloc) > cost.Bytes {
				t.Errorf("%s %v: the read of %d blocks, decoded at once, allocated %d bytes; its cost says at most %d", name, c.win, cost.Blocks, alloc, cost.Bytes)
			}
		}
	}
}

// FitLevel finds the finest level at or above a minimum whose window fits.
func TestFitLevel(t *testing.T) {
	f := openFile(t, "testdata/s2_u16_deflate_cog.tif") // 200×150, 100×75, 50×37
	whole := image.Rect(0, 0, 200, 150)
	for _, c := range []struct {
		max, min, level int
		ok              bool
	}{
		{30000, 0, 0, true},
		{30000, 1, 1, true},
		{7500, 0, 1, true},
		{1850, 0, 2, true},
		{100, 0, 2, false},
		{30000, 7, 2, true},
	} {
		lvl, win, ok := f.FitLevel(whole, c.max, c.min)
		if lvl != c.level || ok != c.ok || win != f.LevelWindow(whole, lvl) {
			t.Errorf("FitLevel(whole, %d, %d) = %d %v %v, want %d %v", c.max, c.min, lvl, win, ok, c.level, c.ok)
		}
	}
}

// hostileSeeds are the layouts above, for the fuzzer's corpus.
func hostileSeeds() [][]byte {
	blob := make([]byte, 256)
	return [][]byte{
		amplifiedHeader(4, 4096, tLong),
		amplifiedHeader(2, 4096, tByte),
		buildTIFF(blob, tiledIFD(0, 64, 64, 1, 1, repeated(tLong, 4096, 8), repeated(tLong, 4096, 1))),
		buildTIFF(blob, stripIFD(1, 4096, 1, repeated(tLong, 4096, 8), repeated(tLong, 4096, 1))),
		buildTIFF(blob, tiledIFD(0, 64, 64, 16, 16, repeated(tLong, 32, 8), repeated(tLong, 32, 256))),
		buildTIFF(blob, tiledIFD(0, 64, 64, 16, 16, repeated(tShort, 16, 8), repeated(tShort, 16, 256))),
		spacedTiles(32 << 10).head,
	}
}
