package cog

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/stacmcp/stac-mcp/stacclient"
)

func readTestFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countingSource counts the requests and bytes a Source serves.
type countingSource struct {
	Source
	requests, bytes atomic.Int64
}

func (c *countingSource) ReadRanges(ctx context.Context, rs []Range) ([][]byte, error) {
	out, err := c.Source.ReadRanges(ctx, rs)
	for _, b := range out {
		c.requests.Add(1)
		c.bytes.Add(int64(len(b)))
	}
	return out, err
}

func TestOpenCOGReadsTheHeaderInOneRequest(t *testing.T) {
	src := &countingSource{Source: BytesSource("s2", readTestFile(t, "s2_u16_deflate_cog.tif"))}
	f, err := Open(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := f.Info()
	if src.requests.Load() != 1 || in.HeaderRequests != 1 {
		t.Errorf("Open sent %d requests, want 1 (the first 16 KiB hold every IFD of a COG)", src.requests.Load())
	}
	if in.HeaderBytes == 0 || int64(in.HeaderBytes) != src.bytes.Load() {
		t.Errorf("Info says Open read %d bytes; the source served %d", in.HeaderBytes, src.bytes.Load())
	}
	// Opened again from the cache, the file fetched nothing.
	cache := NewCache(1 << 20)
	if _, err := Open(context.Background(), src, Options{Cache: cache}); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), src, Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if in := again.Info(); in.HeaderRequests != 0 || in.HeaderBytes != 0 {
		t.Errorf("a cached header counts %d requests, %d bytes; want 0", in.HeaderRequests, in.HeaderBytes)
	}
	if in.EPSG != 32633 || in.DataType != "uint16" || in.NoData == nil || *in.NoData != 0 || in.Scale[0] != 0.0001 || in.Offset[0] != -0.1 {
		t.Errorf("Info = %+v", in)
	}
	if len(in.Levels) != 3 || in.Levels[1].Width != 100 || in.Levels[2].Width != 50 {
		t.Errorf("levels %+v", in.Levels)
	}
}

func TestReadWindowMergesAdjacentTilesAndCaches(t *testing.T) {
	src := &countingSource{Source: BytesSource("s2", readTestFile(t, "s2_u16_deflate_cog.tif"))}
	cache := NewCache(8 << 20)
	f, err := Open(context.Background(), src, Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, 200, 150), nil)
	if err != nil {
		t.Fatal(err)
	}
	// 4×3 tiles of a COG are stored one after the other: one request.
	if w.Requests != 1 || w.Bytes == 0 {
		t.Errorf("whole-image read: %d requests, %d bytes; want 1 merged request", w.Requests, w.Bytes)
	}
	w2, err := f.ReadWindow(context.Background(), 0, image.Rect(10, 10, 150, 100), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w2.Requests != 0 || w2.Bytes != 0 {
		t.Errorf("a read of cached tiles sent %d requests", w2.Requests)
	}
	// The header is cached too: a second Open sends nothing.
	before := src.requests.Load()
	if _, err := Open(context.Background(), src, Options{Cache: cache}); err != nil || src.requests.Load() != before {
		t.Errorf("second Open: %v, %d requests", err, src.requests.Load()-before)
	}
	// Without merging, one request per tile.
	f3, _ := Open(context.Background(), src, Options{MergeGap: -1, MaxMergeBytes: 1})
	w3, err := f3.ReadWindow(context.Background(), 0, image.Rect(0, 0, 200, 150), nil)
	if err != nil || w3.Requests != 12 {
		t.Errorf("unmerged read: %d requests, %v; want 12 tiles", w3.Requests, err)
	}
	if w.Valid == nil || w.Valid[0] {
		// The pattern has no zeros; the nodata block is 20..40 × 10..25.
		if w.Valid == nil || !w.Valid[0] {
			t.Errorf("validity: nil=%v", w.Valid == nil)
		}
	}
	if w.Valid[10*200+20] || !w.Valid[10*200+19] {
		t.Errorf("nodata pixel (20,10) valid=%v, (19,10) valid=%v", w.Valid[10*200+20], w.Valid[10*200+19])
	}
}

func TestReadWindowBandsAndClipping(t *testing.T) {
	f := openFile(t, "testdata/u8_lzw_strips_band_be.tif")
	all, err := f.ReadWindow(context.Background(), 0, image.Rect(190, 140, 230, 170), nil)
	if err != nil {
		t.Fatal(err)
	}
	if all.Rect != image.Rect(190, 140, 200, 150) || len(all.Bands) != 3 || len(all.Bands[0]) != 100 {
		t.Fatalf("clipped read: rect %v, %d bands", all.Rect, len(all.Bands))
	}
	one, err := f.ReadWindow(context.Background(), 0, image.Rect(190, 140, 230, 170), []int{2, 0})
	if err != nil {
		t.Fatal(err)
	}
	for i := range one.Bands[0] {
		if one.Bands[0][i] != all.Bands[2][i] || one.Bands[1][i] != all.Bands[0][i] {
			t.Fatalf("bands [2 0] differ from bands 2 and 0 of the full read at %d", i)
		}
	}
	if _, err := f.ReadWindow(context.Background(), 0, image.Rect(300, 300, 310, 310), nil); !errors.Is(err, ErrEmptyWindow) {
		t.Errorf("window outside = %v, want ErrEmptyWindow", err)
	}
	if _, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, 10, 10), []int{3}); err == nil || !strings.Contains(err.Error(), "band 3") {
		t.Errorf("band 3 of 3 = %v", err)
	}
	if _, err := f.ReadWindow(context.Background(), 5, image.Rect(0, 0, 10, 10), nil); err == nil {
		t.Errorf("level 5 of 1 was read")
	}
	big, _ := Open(context.Background(), BytesSource("x", readTestFile(t, "u8_lzw_strips_band_be.tif")), Options{MaxWindowValues: 1000})
	if _, err := big.ReadWindow(context.Background(), 0, image.Rect(0, 0, 100, 100), nil); err == nil || !strings.Contains(err.Error(), "ChooseLevel") {
		t.Errorf("window over MaxWindowValues = %v", err)
	}
}

func TestChooseLevel(t *testing.T) {
	f := openFile(t, "testdata/s2_u16_deflate_cog.tif") // 200×150, 100×75, 50×37
	for _, c := range []struct {
		max, level int
		win        image.Rectangle
	}{
		{30000, 0, image.Rect(0, 0, 200, 150)},
		{29999, 1, image.Rect(0, 0, 100, 75)},
		{7500, 1, image.Rect(0, 0, 100, 75)},
		{7499, 2, image.Rect(0, 0, 50, 37)},
		{1, 2, image.Rect(0, 0, 50, 37)},
	} {
		lvl, win := f.ChooseLevel(image.Rect(0, 0, 200, 150), c.max)
		if lvl != c.level || win != c.win {
			t.Errorf("ChooseLevel(whole, %d) = %d %v, want %d %v", c.max, lvl, win, c.level, c.win)
		}
	}
	// A window maps outward: (3,3)-(7,7) is covered by (1,1)-(4,4) of the half-size level.
	if lvl, win := f.ChooseLevel(image.Rect(3, 3, 7, 7), 9); lvl != 1 || win != image.Rect(1, 1, 4, 4) {
		t.Errorf("ChooseLevel(small, 4) = %d %v", lvl, win)
	}
}

func TestSparseBlocksReadAsNodata(t *testing.T) {
	f := openFile(t, "testdata/u8_deflate_sparse.tif")
	w, err := f.ReadWindow(context.Background(), 0, image.Rect(150, 100, 200, 150), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range w.Bands[0] {
		if v != 7 || w.Valid[i] {
			t.Fatalf("sparse pixel %d = %v valid=%v, want nodata 7, invalid", i, v, w.Valid[i])
		}
	}
}

func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func TestDecodeBlockRefusesMoreOrLessThanDeclared(t *testing.T) {
	l := &level{Level: Level{Width: 8, Height: 8, TileWidth: 8, TileHeight: 8}, tiled: true, spp: 1, bytesPer: 1, format: 1, planar: 1, predictor: 1}
	enc, _ := zstd.NewWriter(nil)
	for _, c := range []struct {
		comp int
		raw  func([]byte) []byte
	}{
		{8, zlibBytes},
		{50000, func(b []byte) []byte { return enc.EncodeAll(b, nil) }},
	} {
		l.compression = c.comp
		if _, err := l.decodeBlock(c.raw(make([]byte, 64)), binary.LittleEndian, 8); err != nil {
			t.Errorf("compression %d: a block of its declared size: %v", c.comp, err)
		}
		// A bomb: 1 MiB of zeros behind a block declared as 8×8.
		if _, err := l.decodeBlock(c.raw(make([]byte, 1<<20)), binary.LittleEndian, 8); !errors.Is(err, errTooBig) {
			t.Errorf("compression %d: a block decompressing to 1 MiB = %v, want refused", c.comp, err)
		}
		if _, err := l.decodeBlock(c.raw(make([]byte, 63)), binary.LittleEndian, 8); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("compression %d: a short block = %v, want truncated", c.comp, err)
		}
	}
	l.compression = 1
	if _, err := l.decodeBlock(make([]byte, 10), binary.LittleEndian, 8); err == nil {
		t.Error("an uncompressed block of 10 bytes for 64 was read")
	}
}

func TestUnsupportedLayoutsAreNamed(t *testing.T) {
	b := readTestFile(t, "s2_u16_deflate_cog.tif")
	// Patch the first IFD's Compression value (SHORT, inline) to 34887 (LERC).
	patched := patchTag(t, b, tagCompression, 34887)
	_, err := Open(context.Background(), BytesSource("lerc.tif", patched), Options{})
	if err == nil || !strings.Contains(err.Error(), "LERC (34887) is not supported") || !strings.Contains(err.Error(), "lerc.tif") {
		t.Errorf("LERC = %v", err)
	}
	patched = patchTag(t, b, tagBitsPerSample, 12)
	if _, err := Open(context.Background(), BytesSource("x", patched), Options{}); err == nil || !strings.Contains(err.Error(), "12-bit") {
		t.Errorf("12-bit = %v", err)
	}
	if _, err := Open(context.Background(), BytesSource("x", []byte("GIF89a....")), Options{}); err == nil || !strings.Contains(err.Error(), "not a TIFF") {
		t.Errorf("GIF = %v", err)
	}
}

func TestStripsWithoutByteCounts(t *testing.T) {
	b := readTestFile(t, "u8_none_strips_pixel.tif")
	want, err := openFile(t, "testdata/u8_none_strips_pixel.tif").ReadWindow(context.Background(), 0, image.Rect(0, 0, 200, 150), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Renumber StripByteCounts (279) to a tag nobody reads: the file then
	// has none, as some writers of uncompressed strips do.
	patched := renumberTag(t, b, tagStripByteCounts, 65000)
	f, err := Open(context.Background(), BytesSource("nocounts", patched), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadWindow(context.Background(), 0, image.Rect(0, 0, 200, 150), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want.Bands {
		if !slices.Equal(got.Bands[k], want.Bands[k]) {
			t.Fatalf("band %d differs without StripByteCounts", k)
		}
	}
}

func renumberTag(t *testing.T, b []byte, tag, to uint16) []byte {
	t.Helper()
	b = bytes.Clone(b)
	off := binary.LittleEndian.Uint32(b[4:])
	n := int(binary.LittleEndian.Uint16(b[off:]))
	for i := range n {
		e := b[int(off)+2+12*i:]
		if binary.LittleEndian.Uint16(e) == tag {
			binary.LittleEndian.PutUint16(e, to)
			return b
		}
	}
	t.Fatalf("tag %d not in the first IFD", tag)
	return nil
}

// patchTag sets a SHORT tag's inline value in the first IFD of a classic
// little-endian TIFF.
func patchTag(t *testing.T, b []byte, tag uint16, v uint16) []byte {
	t.Helper()
	b = bytes.Clone(b)
	off := binary.LittleEndian.Uint32(b[4:])
	n := int(binary.LittleEndian.Uint16(b[off:]))
	for i := range n {
		e := b[int(off)+2+12*i:]
		if binary.LittleEndian.Uint16(e) == tag {
			binary.LittleEndian.PutUint16(e[8:], v)
			return b
		}
	}
	t.Fatalf("tag %d not in the first IFD", tag)
	return nil
}

func TestHTTPSourceThroughStacclient(t *testing.T) {
	file := readTestFile(t, "s2_u16_deflate_cog.tif")
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.ServeContent(w, r, "s2.tif", time.Time{}, bytes.NewReader(file))
	}))
	defer srv.Close()
	c, err := stacclient.New(srv.URL, stacclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := Open(ctx, HTTPSource(c, srv.URL+"/s2.tif?token=secret", srv.URL+"/s2.tif"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 1 {
		t.Errorf("Open over HTTP: %d requests, want 1", requests.Load())
	}
	got, err := f.ReadWindow(ctx, 0, image.Rect(30, 20, 170, 140), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := openFile(t, "testdata/s2_u16_deflate_cog.tif").ReadWindow(ctx, 0, image.Rect(30, 20, 170, 140), nil)
	for i := range want.Bands[0] {
		if got.Bands[0][i] != want.Bands[0][i] {
			t.Fatalf("pixel %d over HTTP %v, from bytes %v", i, got.Bands[0][i], want.Bands[0][i])
		}
	}
	if int64(got.Requests)+1 != requests.Load() {
		t.Errorf("window reported %d requests, the server saw %d after the header's", got.Requests, requests.Load()-1)
	}
	// A server that ignores Range is refused, not read whole.
	ignoring := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(file) }))
	defer ignoring.Close()
	_, err = Open(ctx, HTTPSource(c, ignoring.URL+"/s2.tif", ignoring.URL+"/s2.tif"), Options{})
	if err == nil || !strings.Contains(err.Error(), "ignored the Range request") {
		t.Errorf("Open from a server ignoring Range = %v", err)
	}
}

func TestReaderAtSourceReadsALocalFile(t *testing.T) {
	path := filepath.Join("testdata", "s2_u16_deflate_cog.tif")
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	f, err := Open(context.Background(), ReaderAtSource(path, fh, st.Size()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadWindow(context.Background(), 1, image.Rect(0, 0, 100, 75), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := openFile(t, path).ReadWindow(context.Background(), 1, image.Rect(0, 0, 100, 75), nil)
	if !slices.Equal(got.Bands[0], want.Bands[0]) {
		t.Error("a local file read through ReaderAtSource differs from its bytes read whole")
	}
	// A range past the end gives what there is, as over HTTP.
	bs, err := ReaderAtSource(path, fh, st.Size()).ReadRanges(context.Background(), []Range{{st.Size() - 10, 100}})
	if err != nil || len(bs[0]) != 10 {
		t.Errorf("range past the end: %d bytes, %v", len(bs[0]), err)
	}
}

func TestReadWindowStopsWithItsContext(t *testing.T) {
	f := openFile(t, "testdata/s2_u16_deflate_cog.tif")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.ReadWindow(ctx, 0, image.Rect(0, 0, 200, 150), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read = %v", err)
	}
}

func TestCacheEvictsByBytes(t *testing.T) {
	c := NewCache(1000)
	for i := range 10 {
		c.put(string(rune('a'+i)), i, 200)
	}
	if n, _ := c.Size(); n > 1000 {
		t.Errorf("cache holds %d bytes over its 1000", n)
	}
	if _, ok := c.get("a"); ok {
		t.Error("the oldest entry survived")
	}
	if _, ok := c.get("j"); !ok {
		t.Error("the newest entry was evicted")
	}
	c.put("huge", 1, 900) // over a quarter of the cache: not kept
	if _, ok := c.get("huge"); ok {
		t.Error("an entry of most of the cache was kept")
	}
}

func FuzzOpenRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.tif")
	more, _ := filepath.Glob("testdata/rasterio/*.tif")
	for _, p := range append(files, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 64<<10)]) // the header part: where the fuzzer finds most
	}
	for _, b := range hostileSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		// Small limits keep an execution short: a mutated 1-row-strip
		// file may make every row of the window a block of the limit.
		file, err := Open(ctx, BytesSource("fuzz", b), Options{MaxHeaderBytes: 1 << 20, MaxBlockBytes: 64 << 10, MaxWindowValues: 1 << 14})
		if err != nil {
			return
		}
		in := file.Info()
		for _, lvl := range []int{0, len(in.Levels) - 1} {
			_, _ = file.ReadWindow(ctx, lvl, image.Rect(0, 0, 64, 64), nil)
		}
	})
}

// GDAL_METADATA values are escaped twice by GDAL; the second unescaping
// is CPLUnescapeString's (CPLES_XML).
func TestUnescapeGDALXML(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                              "plain",
		"a &amp; b":                          "a & b",
		"&lt;b4/b8&gt; &quot;q&quot; &apos;": `<b4/b8> "q" '`,
		"&AMP;amp; &Lt;":                     "&amp; <",
		"&#233;&#xE9;&#XE9;":                 "ééé",
		"&foo; & &#; &#x; &#0; &#xZZ; &#1114112;": "&foo; & &#; &#x; &#0; &#xZZ; &#1114112;",
		"trailing &": "trailing &",
	} {
		if got := unescapeGDALXML(in); got != want {
			t.Errorf("unescapeGDALXML(%q) = %q, want %q", in, got, want)
		}
	}
	// A file GDAL wrote: its band description is what GDAL reads.
	f := openFile(t, "testdata/u8_description_escaped.tif")
	if got, want := f.Info().Descriptions[0], `red & nir <b4/b8> "ratio" &amp; é`; got != want {
		t.Errorf("description %q, want %q", got, want)
	}
}
