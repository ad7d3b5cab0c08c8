package cog

import (
	"context"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Options tune a File. The zero value is usable.
type Options struct {
	// Cache keeps headers and tiles across Opens and reads; nil caches
	// nothing beyond the File itself.
	Cache *Cache
	// HeaderBytes is the first read at open (default 16 KiB, like GDAL's
	// 16 KiB chunks); a COG's IFDs and offset arrays usually fit in it.
	HeaderBytes int64
	// MaxHeaderBytes bounds the header bytes Open reads, and keeps, in all
	// (default 4 MiB: the offsets of some 250,000 blocks; a Sentinel-2
	// or Landsat COG's header fits in its first 16 KiB).
	MaxHeaderBytes int64
	// MaxHeaderDecodedBytes bounds what Open decodes from the header's tag
	// values in all: numbers (8 bytes each), strings and their parsing,
	// JPEG tables (default 4 MiB: a 1 MiB GDAL_METADATA, the most read,
	// with its XML parse). Block offsets and byte counts are read in place,
	// never decoded ahead, and only as many as a level has blocks.
	MaxHeaderDecodedBytes int64
	// MaxBlockBytes bounds a tile's or strip's decoded size and its
	// compressed byte count (default 16 MiB: twice a 512×512 tile of 4
	// float64 bands; Concurrency blocks may be decoded at once).
	MaxBlockBytes int64
	// MergeGap is the largest gap between two ranges read as one request
	// (default 16 KiB: GDAL reads 16 KiB chunks, so it reads such gaps too).
	MergeGap int64
	// MaxMergeBytes bounds one merged request (default 8 MiB).
	MaxMergeBytes int64
	// Concurrency bounds the requests (and decodes) of one read in flight
	// at once (default 8).
	Concurrency int
	// MaxWindowValues bounds pixels × bands of one ReadWindow (default
	// 1<<25, 256 MiB of float64).
	MaxWindowValues int
	// MaxBlocks bounds the tiles or strips (the mask's included) one
	// ReadWindow decodes (default 16384: a 1-row-strip file's window of
	// 16384 rows, 256 tiles of 1024 px).
	MaxBlocks int
	// MaxRequests bounds the range requests of one Open and of one
	// ReadWindow, counted after merging and before the first is sent
	// (default 128; a COG read needs about one per row of tiles).
	MaxRequests int
	// Requests, when set, is shared by several Opens and reads (one tool
	// call's): each takes its requests from it before sending them, and
	// is refused, sending nothing, when they would pass its bound.
	Requests *RequestBudget
}

func (o Options) withDefaults() Options {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.HeaderBytes, 16<<10)
	def(&o.MaxHeaderBytes, 4<<20)
	def(&o.MaxHeaderDecodedBytes, 4<<20)
	def(&o.MaxBlockBytes, 16<<20)
	if o.MergeGap < 0 {
		o.MergeGap = 0
	} else if o.MergeGap == 0 {
		o.MergeGap = 16 << 10
	}
	def(&o.MaxMergeBytes, 8<<20)
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.MaxWindowValues <= 0 {
		o.MaxWindowValues = 1 << 25
	}
	if o.MaxBlocks <= 0 {
		o.MaxBlocks = 16384
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = 128
	}
	return o
}

// Info describes a file.
type Info struct {
	Width, Height, Bands int
	// DataType is uint8, int8, uint16, int16, uint32, int32, float32 or float64.
	DataType string
	NoData   *float64 // GDAL_NODATA; nil when the file has none
	// Scale and Offset are per band, from GDAL_METADATA (1 and 0 when absent).
	Scale, Offset []float64
	// Descriptions are the bands' descriptions from GDAL_METADATA ("" when absent).
	Descriptions []string
	// EPSG is from the GeoKeys (ProjectedCSType, else GeographicType); 0 when unknown.
	EPSG int
	// GeoTransform is in GDAL order: x0, pixel width, row rotation, y0,
	// column rotation, pixel height (negative for north-up). Without
	// georeferencing it is GDAL's default (0, 1, 0, 0, 0, 1).
	GeoTransform  [6]float64
	Georeferenced bool
	// Levels are 0 = full resolution, then the overviews by decreasing size.
	Levels []Level
	// Compression is none, deflate, lzw, zstd or jpeg; Interleave pixel or band.
	Compression, Interleave string
	// Photometric is TIFF's name for the samples' colour model
	// (minisblack, rgb, palette, ycbcr, ...); ycbcr JPEG is read as RGB.
	Photometric string
	BigTIFF     bool
	// Mask says the file has an internal mask (GDAL's per-dataset mask,
	// NewSubfileType 4): ReadWindow marks pixels invalid where it is 0.
	Mask bool
	// Alpha is the 1-based number of the alpha band (ExtraSamples 1 or 2,
	// associated or unassociated alpha), 0 when there is none. As in GDAL,
	// where it is 0 a pixel has no value: ReadWindow marks it invalid in
	// every band read, whether or not the alpha band is among them.
	Alpha int
	// HeaderRequests and HeaderBytes count the reads Open made and the
	// bytes they returned (0 when the header was cached).
	HeaderRequests, HeaderBytes int
	// HeaderMemory bounds the memory the parsed header holds: the bytes
	// Open read (kept: blocks inside them are not fetched again), what it
	// decoded from them, and 1 KiB per IFD; at most MaxHeaderBytes +
	// MaxHeaderDecodedBytes + 64 KiB. The cache charges it; it is the
	// same whether or not the header came from the cache (then
	// HeaderRequests is 0).
	HeaderMemory int64
}

// Level is one resolution: its size and its tile (for strips: the full
// width by RowsPerStrip).
type Level struct{ Width, Height, TileWidth, TileHeight int }

// File is an opened GeoTIFF. Its methods are safe for concurrent use.
type File struct {
	src          Source
	opts         Options
	h            *header
	hreq, hbytes int
}

// header is what Open parses; immutable, shared through the cache.
type header struct {
	info   Info
	levels []*level
	order  binary.ByteOrder
	// read are the bytes Open read (HeaderBytes and more): a block that
	// lies inside them is taken from them, not requested again, as GDAL
	// takes it from the bytes it ingested at open.
	read []chunk
}

// headerBytes returns the bytes of r when Open read them all already.
func (h *header) headerBytes(r Range) ([]byte, bool) {
	for _, c := range h.read {
		if r.Off >= c.off && r.end() <= c.off+int64(len(c.data)) {
			return c.data[r.Off-c.off : r.end()-c.off], true
		}
	}
	return nil, false
}

// headerHead returns the first bytes of r that Open read, when r starts
// inside them and runs past their end (nil otherwise).
func (h *header) headerHead(r Range) []byte {
	for _, c := range h.read {
		end := c.off + int64(len(c.data))
		if r.Off >= c.off && r.Off < end && r.end() > end {
			return c.data[r.Off-c.off:]
		}
	}
	return nil
}

// level is one IFD's layout.
type level struct {
	Level
	ifd                   int // index in the IFD chain
	tiled                 bool
	across, down          int // blocks per plane
	offsets, counts       striles
	compression           int
	predictor             int
	photometric           int
	jpegTables            []byte
	planar                int    // 1 pixel, 2 band
	bits                  int    // bits per sample: 8 × bytesPer, or 1 (masks)
	mask                  *level // the internal mask of this level's size (GDAL's per-dataset mask), or nil
	spp, bytesPer, format int    // format: 1 uint, 2 int, 3 float
}

var compressionNames = map[uint64]string{
	1: "none", 5: "lzw", 7: "jpeg", 8: "deflate", 32946: "deflate", 50000: "zstd",
}

var unsupportedCompression = map[uint64]string{
	2: "CCITT RLE", 3: "CCITT Group 3 fax", 4: "CCITT Group 4 fax", 6: "old-style JPEG", 32773: "PackBits",
	34712: "JPEG 2000", 34887: "LERC", 34925: "LZMA", 50001: "WebP", 50002: "JPEG XL", 52546: "JPEG XL",
}

var photometricNames = map[uint64]string{
	0: "miniswhite", 1: "minisblack", 2: "rgb", 3: "palette", 4: "mask", 5: "separated", 6: "ycbcr", 8: "cielab",
}

// Open reads the header of src: every IFD, the GeoTIFF keys and the GDAL
// tags. It fails, naming the feature, on layouts this reader cannot decode.
func Open(ctx context.Context, src Source, opts Options) (*File, error) {
	opts = opts.withDefaults()
	key := "h\x00" + src.String()
	if v, ok := opts.Cache.get(key); ok {
		return &File{src: src, opts: opts, h: v.(*header)}, nil
	}
	hr := &headerReader{src: src, chunk: opts.HeaderBytes, max: opts.MaxHeaderBytes, size: -1,
		maxRequests: opts.MaxRequests, budget: opts.Requests}
	t, err := parseTIFF(ctx, hr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	t.maxDecoded = opts.MaxHeaderDecodedBytes
	h, err := buildHeader(ctx, t, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	h.info.HeaderRequests, h.info.HeaderBytes = hr.requests, int(hr.fetched)
	h.read = hr.chunks
	h.info.HeaderMemory = hr.fetched + t.decoded + int64(len(t.ifds))*ifdOverhead
	opts.Cache.put(key, h, h.info.HeaderMemory)
	return &File{src: src, opts: opts, h: h, hreq: hr.requests, hbytes: int(hr.fetched)}, nil
}

// ifdOverhead is an IFD's share of a parsed header beyond its tag values:
// its entries and its level (measured: about 600 bytes).
const ifdOverhead = 1024

func buildHeader(ctx context.Context, t *tiffReader, opts Options) (*header, error) {
	h := &header{order: t.order}
	var full *level
	var overviews, masks []*level
	for i, d := range t.ifds {
		sub, err := t.int1(ctx, d, tagNewSubfileType, 0)
		if err != nil {
			return nil, err
		}
		if sub&4 != 0 {
			// A mask (GDAL's internal per-dataset mask): not a band; it
			// marks the pixels of the level of its size invalid where 0.
			// One this reader cannot decode is an error, not ignored:
			// the pixels it masks would count as valid.
			if m, err := parseLevel(ctx, t, d, opts, true); err == nil && m.spp == 1 && m.format == 1 && (m.bits == 1 || m.bits == 8) {
				m.ifd = i
				masks = append(masks, m)
			} else if err == nil {
				err = fmt.Errorf("a mask of %d %d-bit samples", m.spp, m.bits)
				return nil, fmt.Errorf("mask IFD %d: %w", i, err)
			} else {
				return nil, fmt.Errorf("mask IFD %d: %w", i, err)
			}
			continue
		}
		if i > 0 && sub&1 == 0 {
			continue // a further page, not an overview: only the first image is read
		}
		lv, err := parseLevel(ctx, t, d, opts, false)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("overview IFD %d: %w", i, err)
		}
		lv.ifd = i
		if i == 0 {
			full = lv
			continue
		}
		overviews = append(overviews, lv)
	}
	if full == nil {
		return nil, fmt.Errorf("the first IFD is a mask, not an image")
	}
	h.levels = append(h.levels, full)
	slices.SortStableFunc(overviews, func(a, b *level) int { return b.Width - a.Width })
	for _, o := range overviews {
		if o.spp != full.spp || o.bytesPer != full.bytesPer || o.format != full.format || o.planar != full.planar {
			return nil, fmt.Errorf("an overview (%dx%d) has another sample layout than the full resolution", o.Width, o.Height)
		}
		if o.Width >= h.levels[len(h.levels)-1].Width {
			continue // a duplicate size: the first one wins, as in GDAL
		}
		h.levels = append(h.levels, o)
	}
	in := &h.info
	in.Width, in.Height, in.Bands = full.Width, full.Height, full.spp
	in.DataType = dataTypeName(full.format, full.bytesPer)
	in.Compression = compressionNames[uint64(full.compression)]
	in.Interleave = map[int]string{1: "pixel", 2: "band"}[full.planar]
	if full.spp == 1 {
		in.Interleave = "band" // GDAL reports a single band as band-interleaved
	}
	in.Photometric = photometricNames[uint64(full.photometric)]
	in.BigTIFF = t.big
	for _, l := range h.levels {
		for _, m := range masks {
			if m.Width == l.Width && m.Height == l.Height && l.mask == nil {
				l.mask = m
			}
		}
	}
	in.Mask = full.mask != nil
	var extra []uint64 // more ExtraSamples than samples: ignored, as before
	if e, ok := t.ifds[0].entries[tagExtraSamples]; ok && e.count <= uint64(full.spp) {
		var err error
		if extra, err = t.ints(ctx, t.ifds[0], tagExtraSamples, uint64(full.spp)); err != nil {
			return nil, err
		}
	}
	for i, e := range extra {
		if e == 1 || e == 2 {
			in.Alpha = full.spp - len(extra) + i + 1
			break
		}
	}
	for _, l := range h.levels {
		in.Levels = append(in.Levels, l.Level)
	}
	d := t.ifds[0]
	nd, err := t.ascii(ctx, d, tagGDALNoData, maxNoDataTag)
	if err != nil {
		return nil, err
	}
	if s := strings.TrimSpace(nd); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			// Not quoted: the file's bytes are not echoed.
			return nil, fmt.Errorf("GDAL_NODATA (%d bytes) is not a number", len(s))
		}
		in.NoData = &v
	}
	in.Scale, in.Offset, in.Descriptions = make([]float64, in.Bands), make([]float64, in.Bands), make([]string, in.Bands)
	for i := range in.Scale {
		in.Scale[i] = 1
	}
	md, err := t.ascii(ctx, d, tagGDALMetadata, maxStringTag)
	if err != nil {
		return nil, err
	}
	// Parsing the XML allocates a few times its size, for a moment.
	if err := t.charge(3 * int64(len(md))); err != nil {
		return nil, err
	}
	if err := parseGDALMetadata(md, in); err != nil {
		return nil, err
	}
	if err := parseGeo(ctx, t, d, in); err != nil {
		return nil, err
	}
	return h, nil
}

func dataTypeName(format, bytesPer int) string {
	switch format {
	case 1:
		return map[int]string{1: "uint8", 2: "uint16", 4: "uint32"}[bytesPer]
	case 2:
		return map[int]string{1: "int8", 2: "int16", 4: "int32"}[bytesPer]
	case 3:
		return map[int]string{4: "float32", 8: "float64"}[bytesPer]
	}
	return ""
}

func parseLevel(ctx context.Context, t *tiffReader, d ifd, opts Options, isMask bool) (*level, error) {
	var gerr error // the first error of get
	get := func(tag uint16, def uint64) int {
		if gerr != nil {
			return 0
		}
		v, err := t.int1(ctx, d, tag, def)
		if err != nil {
			gerr = err
			return 0
		}
		if v > math.MaxInt32 {
			gerr = fmt.Errorf("tag %d is %d, larger than this reader takes", tag, v)
			return 0
		}
		return int(v)
	}
	lv := &level{}
	lv.Width, lv.Height = get(tagImageWidth, 0), get(tagImageLength, 0)
	lv.spp = get(tagSamplesPerPixel, 1)
	comp := get(tagCompression, 1)
	lv.compression = comp
	lv.predictor = get(tagPredictor, 1)
	lv.photometric = get(tagPhotometric, 1)
	lv.planar = get(tagPlanarConfig, 1)
	if gerr != nil {
		return nil, gerr
	}
	if lv.Width <= 0 || lv.Height <= 0 || lv.Width > maxSide || lv.Height > maxSide {
		return nil, fmt.Errorf("image size %dx%d (this reader takes 1 to %d pixels a side)", lv.Width, lv.Height, maxSide)
	}
	if lv.spp < 1 || lv.spp > maxBands {
		return nil, fmt.Errorf("%d samples per pixel", lv.spp)
	}
	if _, ok := compressionNames[uint64(comp)]; !ok {
		name := unsupportedCompression[uint64(comp)]
		if name == "" {
			name = "unknown"
		}
		return nil, fmt.Errorf("compression %s (%d) is not supported; this reader decodes none, deflate, LZW, zstd and JPEG", name, comp)
	}
	if lv.planar != 1 && lv.planar != 2 {
		return nil, fmt.Errorf("PlanarConfiguration %d (1 or 2 are defined)", lv.planar)
	}
	bits, err := t.ints(ctx, d, tagBitsPerSample, maxBands)
	if err != nil {
		return nil, err
	}
	formats, err := t.ints(ctx, d, tagSampleFormat, maxBands)
	if err != nil {
		return nil, err
	}
	bps, format := uint64(1), uint64(1)
	if len(bits) > 0 {
		bps = bits[0]
	}
	if len(formats) > 0 {
		format = formats[0]
	}
	for _, b := range bits {
		if b != bps {
			return nil, fmt.Errorf("bands of different bit depths (%v) are not supported", bits)
		}
	}
	for _, f := range formats {
		if f != format {
			return nil, fmt.Errorf("bands of different sample formats (%v) are not supported", formats)
		}
	}
	if isMask && bps == 1 && lv.spp == 1 {
		// GDAL's internal masks are 1-bit: rows padded to whole bytes,
		// the first pixel in the most significant bit.
		lv.bits, lv.format = 1, 1
		if lv.predictor != 1 || comp == 7 {
			return nil, fmt.Errorf("a 1-bit mask with predictor %d or JPEG", lv.predictor)
		}
		return lv.blocks(ctx, t, d, opts, get, &gerr)
	}
	if bps%8 != 0 || bps == 0 {
		return nil, fmt.Errorf("%d-bit samples are not supported (8, 16, 32 and 64 are)", bps)
	}
	lv.bytesPer, lv.format = int(bps/8), int(format)
	if lv.format == 4 {
		lv.format = 1 // "undefined" data: GDAL reads it as unsigned
	}
	if dataTypeName(lv.format, lv.bytesPer) == "" {
		kind := map[int]string{1: "unsigned integer", 2: "signed integer", 3: "floating point", 5: "complex integer", 6: "complex float"}[lv.format]
		if kind == "" {
			kind = fmt.Sprintf("SampleFormat %d", lv.format)
		}
		return nil, fmt.Errorf("%d-bit %s samples are not supported (uint8/16/32, int8/16/32, float32/64 are)", bps, kind)
	}
	switch lv.predictor {
	case 1:
	case 2:
		if lv.format == 3 {
			return nil, fmt.Errorf("predictor 2 on floating-point samples is not supported")
		}
	case 3:
		if lv.format != 3 {
			return nil, fmt.Errorf("predictor 3 (floating point) on integer samples")
		}
	default:
		return nil, fmt.Errorf("predictor %d is not supported (1, 2 and 3 are)", lv.predictor)
	}
	if comp == 7 {
		if lv.bytesPer != 1 || lv.format != 1 {
			return nil, fmt.Errorf("JPEG with %d-bit samples is not supported (8-bit is)", bps)
		}
		if lv.planar == 1 && lv.spp != 1 && lv.spp != 3 {
			return nil, fmt.Errorf("JPEG with %d samples per pixel is not supported (1 or 3 are)", lv.spp)
		}
		if lv.photometric == 6 && (lv.planar != 1 || lv.spp != 3) {
			return nil, fmt.Errorf("YCbCr JPEG with %d band-interleaved samples is not supported", lv.spp)
		}
		if lv.jpegTables, err = t.bytesOf(ctx, d, tagJPEGTables, maxJPEGTables); err != nil {
			return nil, err
		}
	} else if lv.photometric == 6 {
		return nil, fmt.Errorf("YCbCr samples are supported only JPEG-compressed")
	}

	lv.bits = 8 * lv.bytesPer
	return lv.blocks(ctx, t, d, opts, get, &gerr)
}

// blocks reads the tile or strip layout and the blocks' offsets.
func (lv *level) blocks(ctx context.Context, t *tiffReader, d ifd, opts Options, get func(uint16, uint64) int, gerr *error) (*level, error) {
	tw, th := get(tagTileWidth, 0), get(tagTileLength, 0)
	rps := get(tagRowsPerStrip, uint64(lv.Height))
	if *gerr != nil {
		return nil, *gerr
	}
	var offTag, countTag uint16 = tagStripOffsets, tagStripByteCounts
	if _, ok := d.entries[tagTileOffsets]; ok {
		lv.tiled = true
		offTag, countTag = tagTileOffsets, tagTileByteCounts
		if tw <= 0 || th <= 0 || tw > maxSide || th > maxSide {
			return nil, fmt.Errorf("tiles of %dx%d pixels", tw, th)
		}
		lv.TileWidth, lv.TileHeight = tw, th
	} else {
		rps = min(max(rps, 1), lv.Height)
		lv.TileWidth, lv.TileHeight = lv.Width, rps
	}
	lv.across = (lv.Width + lv.TileWidth - 1) / lv.TileWidth
	lv.down = (lv.Height + lv.TileHeight - 1) / lv.TileHeight
	if err := lv.degenerate(); err != nil {
		return nil, err
	}
	planes := 1
	if lv.planar == 2 {
		planes = lv.spp
	}
	if int64(lv.across)*int64(lv.down)*int64(planes) > maxStriles {
		return nil, fmt.Errorf("%dx%d blocks of %dx%d pixels in %d planes: more than the %d blocks a level may have here",
			lv.across, lv.down, lv.TileWidth, lv.TileHeight, planes, maxStriles)
	}
	n := lv.across * lv.down * planes
	if int64(lv.TileHeight)*int64(lv.rowBytes()) > opts.MaxBlockBytes {
		return nil, fmt.Errorf("blocks of %dx%d pixels are larger than the %d-byte limit", lv.TileWidth, lv.TileHeight, opts.MaxBlockBytes)
	}
	offsets, ok, err := t.striles(ctx, d, offTag, n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no block offsets (tag %d)", offTag)
	}
	counts, ok, err := t.striles(ctx, d, countTag, n)
	if err != nil {
		return nil, err
	}
	if !ok {
		if lv.tiled || lv.compression != 1 {
			return nil, fmt.Errorf("no block byte counts (tag %d)", countTag)
		}
		// Some writers omit StripByteCounts of uncompressed strips; like
		// libtiff, take each strip's size from the layout.
		down, rps, rowBytes := lv.down, lv.TileHeight, uint64(lv.rowBytes())
		counts = striles{calc: func(i int) uint64 {
			return uint64(min(rps, lv.Height-(i%down)*rps)) * rowBytes
		}}
	}
	lv.offsets, lv.counts = offsets, counts
	return lv, nil
}

// Smallest blocks: TIFF 6 requires tiles in multiples of 16 pixels a
// side. libtiff and GDAL read smaller ones (warning "Nonstandard tile
// width"), but a level cut into blocks of a few pixels costs a request
// and a decode per few pixels: 1x1-pixel tiles made one read thousands of
// range requests. A block smaller than this is refused unless the level
// has only one block that way (a small image in one tile or strip).
const (
	minTileSide    = 16
	minStripPixels = minTileSide * minTileSide
)

// degenerate refuses a level cut into blocks too small to be worth a
// request each.
func (lv *level) degenerate() error {
	if lv.tiled {
		if (lv.TileWidth < minTileSide && lv.across > 1) || (lv.TileHeight < minTileSide && lv.down > 1) {
			return fmt.Errorf("tiles of %dx%d pixels (TIFF requires multiples of 16; this reader takes tiles of at least %d pixels a side)",
				lv.TileWidth, lv.TileHeight, minTileSide)
		}
		return nil
	}
	if lv.down > 1 && lv.TileWidth*lv.TileHeight < minStripPixels {
		return fmt.Errorf("strips of %d row(s) of %d pixels (this reader takes strips of at least %d pixels)",
			lv.TileHeight, lv.TileWidth, minStripPixels)
	}
	return nil
}

// Bounds that keep every size computation far from overflowing.
const (
	maxSide  = 1 << 24
	maxBands = 1024
)

// rowSamples is the samples of one row of a block.
func (l *level) rowSamples() int {
	if l.planar == 1 {
		return l.TileWidth * l.spp
	}
	return l.TileWidth
}

// rowBytes is the bytes of one row of a block (1-bit rows end on a byte).
func (l *level) rowBytes() int {
	if l.bits == 1 {
		return (l.rowSamples() + 7) / 8
	}
	return l.rowSamples() * l.bytesPer
}

// parseGDALMetadata reads per-band scale, offset and description from the
// GDAL_METADATA XML.
func parseGDALMetadata(md string, in *Info) error {
	if strings.TrimSpace(md) == "" {
		return nil
	}
	var doc struct {
		Items []struct {
			Name   string `xml:"name,attr"`
			Sample *int   `xml:"sample,attr"`
			Role   string `xml:"role,attr"`
			Value  string `xml:",chardata"`
		} `xml:"Item"`
	}
	if err := xml.Unmarshal([]byte(md), &doc); err != nil {
		// Said without the parser's message, which quotes the file's text.
		if se, ok := errors.AsType[*xml.SyntaxError](err); ok {
			return fmt.Errorf("GDAL_METADATA is not the XML GDAL writes (a syntax error on line %d)", se.Line)
		}
		return errors.New("GDAL_METADATA is not the XML GDAL writes")
	}
	for _, it := range doc.Items {
		if it.Sample == nil || *it.Sample < 0 || *it.Sample >= in.Bands {
			continue // dataset-level metadata, or a band the file lacks
		}
		b := *it.Sample
		v := strings.TrimSpace(unescapeGDALXML(it.Value))
		switch it.Role {
		case "scale", "offset":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("GDAL_METADATA band %d %s is not a number", b+1, it.Role)
			}
			if it.Role == "scale" {
				in.Scale[b] = f
			} else {
				in.Offset[b] = f
			}
		case "description":
			in.Descriptions[b] = v
		}
	}
	return nil
}

// unescapeGDALXML undoes the escaping GDAL applies to a GDAL_METADATA
// value before its XML writer escapes it again (CPLEscapeString with
// CPLES_XML): the XML parser undid the second, this the first, as GDAL's
// CPLUnescapeString does: &lt; &gt; &amp; &apos; &quot; in any case,
// &#xHH; and &#NN;, and an unknown '&' kept as it is.
func unescapeGDALXML(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '&' {
			b.WriteByte(s[i])
			i++
			continue
		}
		rest := s[i:]
		matched := false
		for _, e := range [...]struct{ name, to string }{{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}, {"&apos;", "'"}, {"&quot;", "\""}} {
			if len(rest) >= len(e.name) && strings.EqualFold(rest[:len(e.name)], e.name) {
				b.WriteString(e.to)
				i += len(e.name)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		if r, n := numericEntity(rest); n > 0 {
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte('&')
		i++
	}
	return b.String()
}

// numericEntity reads &#xHH; or &#NN; at the start of s: the character and
// the entity's length, 0 when s starts with neither (or names no
// character).
func numericEntity(s string) (rune, int) {
	if !strings.HasPrefix(s, "&#") {
		return 0, 0
	}
	// Only the longest entity's length is looked at: a metadata string of
	// many '&#' without ';' stays linear to unescape.
	end := strings.IndexByte(s[:min(len(s), 13)], ';')
	if end < 3 {
		return 0, 0
	}
	digits, base := s[2:end], 10
	if digits[0] == 'x' || digits[0] == 'X' {
		digits, base = digits[1:], 16
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil || v == 0 || v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
		return 0, 0
	}
	return rune(v), end + 1
}

// GeoKey ids.
const (
	keyModelType     = 1024
	keyRasterType    = 1025
	keyGeographic    = 2048
	keyProjected     = 3072
	userDefined      = 32767
	rasterPixelPoint = 2
)

func parseGeo(ctx context.Context, t *tiffReader, d ifd, in *Info) error {
	in.GeoTransform = [6]float64{0, 1, 0, 0, 0, 1}
	keys, err := t.ints(ctx, d, tagGeoKeyDirectory, 4*(1+maxGeoKeys))
	if err != nil {
		return err
	}
	gk := map[uint64]uint64{}
	if len(keys) >= 4 {
		n := keys[3]
		for i := uint64(0); i < n && 4+4*i+3 < uint64(len(keys)); i++ {
			k := keys[4+4*i:]
			if k[1] == 0 { // the value is the short itself
				gk[k[0]] = k[3]
			}
		}
	}
	switch {
	case gk[keyProjected] != 0 && gk[keyProjected] != userDefined:
		in.EPSG = int(gk[keyProjected])
	case gk[keyModelType] != 1 && gk[keyGeographic] != 0 && gk[keyGeographic] != userDefined:
		in.EPSG = int(gk[keyGeographic])
	}
	// Only the values used are read: a scale, the first tiepoint, a matrix.
	scale, err := t.floats(ctx, d, tagPixelScale, 3)
	if err != nil {
		return err
	}
	tie, err := t.floats(ctx, d, tagTiepoint, 6)
	if err != nil {
		return err
	}
	m, err := t.floats(ctx, d, tagTransformation, 16)
	if err != nil {
		return err
	}
	switch {
	case len(m) >= 16:
		in.GeoTransform = [6]float64{m[3], m[0], m[1], m[7], m[4], m[5]}
		in.Georeferenced = true
	case len(tie) >= 6 && len(scale) >= 2:
		in.GeoTransform = [6]float64{tie[3] - tie[0]*scale[0], scale[0], 0, tie[4] + tie[1]*scale[1], 0, -scale[1]}
		in.Georeferenced = true
	}
	if in.Georeferenced && gk[keyRasterType] == rasterPixelPoint {
		// GDAL's default (GTIFF_POINT_GEO_IGNORE=NO): the model point is
		// the pixel's centre, so the corner is half a pixel up and left.
		g := &in.GeoTransform
		g[0] -= (g[1] + g[2]) / 2
		g[3] -= (g[4] + g[5]) / 2
	}
	return nil
}

// Info describes the file.
func (f *File) Info() Info {
	in := f.h.info
	in.HeaderRequests, in.HeaderBytes = f.hreq, f.hbytes
	in.Levels = slices.Clone(in.Levels)
	in.Scale, in.Offset, in.Descriptions = slices.Clone(in.Scale), slices.Clone(in.Offset), slices.Clone(in.Descriptions)
	if in.NoData != nil {
		v := *in.NoData
		in.NoData = &v
	}
	return in
}

// ChooseLevel picks the finest level whose window covering win0 (a
// full-resolution window) has at most maxPixels pixels, and that window;
// when none does, the coarsest level.
func (f *File) ChooseLevel(win0 image.Rectangle, maxPixels int) (int, image.Rectangle) {
	full := f.h.levels[0]
	var win image.Rectangle
	for i, l := range f.h.levels {
		win = scaleWindow(win0, full.Width, full.Height, l.Width, l.Height)
		if win.Dx()*win.Dy() <= maxPixels {
			return i, win
		}
	}
	return len(f.h.levels) - 1, win
}

// FitLevel is the finest level, minLevel or coarser, whose window
// covering win0 (a full-resolution window) has at most maxPixels pixels,
// and that window; ok is false when no level's does (then the coarsest
// level and its window are returned, to say how large it is). A band
// resampled to another grid is read so: minLevel the level nearest the
// grid's pixel size, maxPixels a small multiple of the grid's pixels, so
// that a finer band (or a mask 50 times finer) is not read whole.
func (f *File) FitLevel(win0 image.Rectangle, maxPixels, minLevel int) (lvl int, win image.Rectangle, ok bool) {
	full := f.h.levels[0]
	for i := min(max(minLevel, 0), len(f.h.levels)-1); i < len(f.h.levels); i++ {
		l := f.h.levels[i]
		win = scaleWindow(win0, full.Width, full.Height, l.Width, l.Height)
		if int64(win.Dx())*int64(win.Dy()) <= int64(maxPixels) {
			return i, win, true
		}
	}
	return len(f.h.levels) - 1, win, false
}

// LevelWindow is win0 (a full-resolution window) in level's pixels: the
// smallest window covering it, clipped to the level.
func (f *File) LevelWindow(win0 image.Rectangle, lvl int) image.Rectangle {
	full, l := f.h.levels[0], f.h.levels[min(max(lvl, 0), len(f.h.levels)-1)]
	return scaleWindow(win0, full.Width, full.Height, l.Width, l.Height)
}

func scaleWindow(w image.Rectangle, fw, fh, lw, lh int) image.Rectangle {
	w = w.Intersect(image.Rect(0, 0, fw, fh))
	x0 := int(math.Floor(float64(w.Min.X) * float64(lw) / float64(fw)))
	y0 := int(math.Floor(float64(w.Min.Y) * float64(lh) / float64(fh)))
	x1 := int(math.Ceil(float64(w.Max.X) * float64(lw) / float64(fw)))
	y1 := int(math.Ceil(float64(w.Max.Y) * float64(lh) / float64(fh)))
	return image.Rect(x0, y0, x1, y1).Intersect(image.Rect(0, 0, lw, lh))
}

// LevelGeoTransform is the geotransform of a level's pixels, as GDAL
// gives an overview: the full resolution's, with the pixel sizes (and
// rotations) scaled by the ratio of the full size to the level's.
func (f *File) LevelGeoTransform(lvl int) [6]float64 {
	gt := f.h.info.GeoTransform
	full, l := f.h.levels[0], f.h.levels[min(max(lvl, 0), len(f.h.levels)-1)]
	sx, sy := float64(full.Width)/float64(l.Width), float64(full.Height)/float64(l.Height)
	gt[1] *= sx
	gt[4] *= sx
	gt[2] *= sy
	gt[5] *= sy
	return gt
}
