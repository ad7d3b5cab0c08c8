// Package cogwrite writes Cloud-Optimized GeoTIFFs laid out as GDAL's COG
// driver lays them out, so that GDAL reports LAYOUT=COG and its
// validate_cloud_optimized_geotiff.py finds nothing to say:
//
//   - a classic little-endian TIFF whose first IFD follows GDAL's "ghost"
//     structural metadata (LAYOUT=IFDS_BEFORE_DATA, BLOCK_ORDER=ROW_MAJOR,
//     BLOCK_LEADER=SIZE_AS_UINT4, BLOCK_TRAILER=LAST_4_BYTES_REPEATED);
//   - every IFD (full resolution, then the overviews by decreasing size)
//     and its tag values before any pixel;
//   - the tiles of the smallest overview first and of the full resolution
//     last, row-major within a level, each preceded by its byte count and
//     followed by its last four bytes again;
//   - tiles of TileSize pixels, DEFLATE (zlib) with the horizontal
//     predictor for integers and the floating-point predictor for floats,
//     pixel-interleaved; overviews halve the size (rounded up, as GDAL
//     does) until the level fits one tile, each pixel the mean of the
//     valid pixels it covers;
//   - the GeoKeys of an EPSG code, the geotransform (ModelPixelScale and
//     ModelTiepoint, or ModelTransformation when rotated), GDAL_NODATA, and
//     GDAL_METADATA with band descriptions and metadata items.
//
// No third-party Go library writes COGs without cgo (the Go TIFF encoders
// in golang.org/x/image and others write strips, no overviews, no GeoKeys);
// this one writes only what the exports need.
package cogwrite

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zlib"
)

// DataType is a sample type the writer encodes.
type DataType string

// The sample types.
const (
	Uint8   DataType = "uint8"
	Int8    DataType = "int8"
	Uint16  DataType = "uint16"
	Int16   DataType = "int16"
	Uint32  DataType = "uint32"
	Int32   DataType = "int32"
	Float32 DataType = "float32"
	Float64 DataType = "float64"
)

// bytesPer is the size of one sample.
func (t DataType) bytesPer() int {
	switch t {
	case Uint8, Int8:
		return 1
	case Uint16, Int16:
		return 2
	case Uint32, Int32, Float32:
		return 4
	case Float64:
		return 8
	}
	return 0
}

// sampleFormat is TIFF's SampleFormat: 1 unsigned, 2 signed, 3 float.
func (t DataType) sampleFormat() uint16 {
	switch t {
	case Int8, Int16, Int32:
		return 2
	case Float32, Float64:
		return 3
	}
	return 1
}

// Float says the type holds floating-point numbers.
func (t DataType) Float() bool { return t == Float32 || t == Float64 }

// Raster is what to write: bands of values on one grid.
type Raster struct {
	Width, Height int
	DataType      DataType
	// Bands holds each band's values, row by row. NaN (or NoData) is no
	// value; an integer type's values are rounded to it and must fit it.
	Bands [][]float64
	// NoData is the value written where a pixel has none: NaN for float
	// types when nil, required for integer types.
	NoData *float64
	// EPSG is the CRS (a projected or geographic EPSG code).
	EPSG int
	// Geographic says EPSG is a geographic CRS (longitude/latitude).
	Geographic bool
	// GeoTransform maps pixel corners to CRS coordinates, GDAL's order.
	GeoTransform [6]float64
	// Descriptions are the bands' descriptions (GDAL band descriptions).
	Descriptions []string
	// Metadata are dataset metadata items (GDAL's default domain);
	// BandMetadata per band.
	Metadata     map[string]string
	BandMetadata []map[string]string
}

// Options tune the layout.
type Options struct {
	// TileSize is the tile's width and height (default 256, a multiple of
	// 16 as TIFF requires).
	TileSize int
	// MaxBytes bounds the file (0: no bound). Writing stops with
	// ErrTooLarge as soon as the tiles alone exceed it, before anything
	// is written to w.
	MaxBytes int64
	// Level is the DEFLATE level (0: 6, zlib's default).
	Level int
}

// ErrTooLarge says the file would exceed Options.MaxBytes.
var ErrTooLarge = errors.New("the file would exceed its byte limit")

// maxClassicBytes keeps offsets within a classic TIFF's 32 bits.
const maxClassicBytes = math.MaxUint32 - 1<<20

// Check reports why r cannot be written.
func (r *Raster) Check() error {
	switch {
	case r.Width <= 0 || r.Height <= 0:
		return fmt.Errorf("cogwrite: a %d×%d raster", r.Width, r.Height)
	case r.DataType.bytesPer() == 0:
		return fmt.Errorf("cogwrite: unknown data type %q", r.DataType)
	case len(r.Bands) == 0 || len(r.Bands) > 255:
		return fmt.Errorf("cogwrite: %d bands", len(r.Bands))
	case !r.DataType.Float() && r.NoData == nil:
		return fmt.Errorf("cogwrite: an integer raster needs a nodata value")
	case r.EPSG <= 0 || r.EPSG > math.MaxUint16:
		return fmt.Errorf("cogwrite: EPSG code %d", r.EPSG)
	case r.GeoTransform[1] == 0 || r.GeoTransform[5] == 0 && r.GeoTransform[4] == 0:
		return fmt.Errorf("cogwrite: geotransform %v", r.GeoTransform)
	}
	for i, b := range r.Bands {
		if len(b) != r.Width*r.Height {
			return fmt.Errorf("cogwrite: band %d has %d values for %d×%d pixels", i+1, len(b), r.Width, r.Height)
		}
	}
	if r.NoData != nil && !math.IsNaN(*r.NoData) && !r.fits(*r.NoData) {
		return fmt.Errorf("cogwrite: nodata %v does not fit %s", *r.NoData, r.DataType)
	}
	return nil
}

// fits says v (rounded for integer types) is representable.
func (r *Raster) fits(v float64) bool {
	lo, hi := 0.0, 0.0
	switch r.DataType {
	case Float32, Float64:
		return true
	case Uint8:
		hi = math.MaxUint8
	case Int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case Uint16:
		hi = math.MaxUint16
	case Int16:
		lo, hi = math.MinInt16, math.MaxInt16
	case Uint32:
		hi = math.MaxUint32
	case Int32:
		lo, hi = math.MinInt32, math.MaxInt32
	}
	v = math.Round(v)
	return v >= lo && v <= hi
}

// OverviewSizes are the sizes of the overviews written for a raster
// (GDAL's: halved and rounded up until the level fits one tile).
func OverviewSizes(w, h, tile int) [][2]int {
	var out [][2]int
	for w > tile || h > tile {
		w, h = (w+1)/2, (h+1)/2
		out = append(out, [2]int{w, h})
	}
	return out
}

// level is one resolution's values and encoded tiles.
type level struct {
	w, h   int
	bands  [][]float64
	tiles  [][]byte
	across int // tiles per row
}

// Write encodes r as a COG to w and returns the bytes written. Nothing is
// written to w unless the whole file could be encoded within
// o.MaxBytes; ctx is checked between tiles.
func Write(ctx context.Context, w io.Writer, r *Raster, o Options) (int64, error) {
	if err := r.Check(); err != nil {
		return 0, err
	}
	if o.TileSize <= 0 {
		o.TileSize = 256
	}
	if o.TileSize%16 != 0 {
		return 0, fmt.Errorf("cogwrite: tile size %d is not a multiple of 16", o.TileSize)
	}
	if o.Level == 0 {
		o.Level = 6
	}
	limit := int64(maxClassicBytes)
	if o.MaxBytes > 0 && o.MaxBytes < limit {
		limit = o.MaxBytes
	}
	nodata := math.NaN()
	if r.NoData != nil {
		nodata = *r.NoData
	}
	levels := []*level{{w: r.Width, h: r.Height, bands: r.Bands}}
	for _, s := range OverviewSizes(r.Width, r.Height, o.TileSize) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		levels = append(levels, downsample(levels[len(levels)-1], s[0], s[1], nodata, r.DataType.Float()))
	}
	enc := &encoder{r: r, size: o.TileSize, nodata: nodata, level: o.Level}
	var total int64
	// The smallest overview's tiles come first in the file; encode in
	// that order so that the limit stops the cheapest work first.
	for i := len(levels) - 1; i >= 0; i-- {
		l := levels[i]
		l.across = (l.w + o.TileSize - 1) / o.TileSize
		down := (l.h + o.TileSize - 1) / o.TileSize
		for ty := range down {
			for tx := range l.across {
				if err := ctx.Err(); err != nil {
					return 0, err
				}
				t, err := enc.tile(l, tx, ty)
				if err != nil {
					return 0, err
				}
				l.tiles = append(l.tiles, t)
				total += int64(len(t)) + 8
				if total > limit {
					return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
				}
			}
		}
	}
	file, err := layout(r, levels, o.TileSize)
	if err != nil {
		return 0, err
	}
	if file.size > limit {
		return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)
	}
	return file.write(ctx, w, levels)
}

// downsample makes the next overview: each pixel the mean of the valid
// pixels of the 2×2 (or fewer, at an odd edge) it covers.
func downsample(src *level, w, h int, nodata float64, float bool) *level {
	out := &level{w: w, h: h, bands: make([][]float64, len(src.bands))}
	noValue := func(v float64) bool { return math.IsNaN(v) || v == nodata }
	for b, vals := range src.bands {
		dst := make([]float64, w*h)
		for y := range h {
			for x := range w {
				sum, n := 0.0, 0
				for dy := range 2 {
					for dx := range 2 {
						sx, sy := 2*x+dx, 2*y+dy
						if sx >= src.w || sy >= src.h {
							continue
						}
						if v := vals[sy*src.w+sx]; !noValue(v) {
							sum += v
							n++
						}
					}
				}
				switch {
				case n == 0:
					dst[y*w+x] = nodata
				case float:
					dst[y*w+x] = sum / float64(n)
				default:
					dst[y*w+x] = math.Round(sum / float64(n))
				}
			}
		}
		out.bands[b] = dst
	}
	return out
}

// encoder turns tiles into compressed bytes.
type encoder struct {
	r      *Raster
	size   int
	nodata float64
	level  int
	raw    []byte
	tmp    []byte // one row, for the floating-point predictor
	buf    bytes.Buffer
	zw     *zlib.Writer
}

// tile encodes tile (tx, ty) of l: samples pixel-interleaved, padded with
// nodata past the level's edge, the predictor applied row by row, then
// DEFLATE.
func (e *encoder) tile(l *level, tx, ty int) ([]byte, error) {
	spp := len(l.bands)
	bps := e.r.DataType.bytesPer()
	rowBytes := e.size * spp * bps
	if need := rowBytes * e.size; cap(e.raw) < need {
		e.raw = make([]byte, need)
	}
	raw := e.raw[:rowBytes*e.size]
	for y := range e.size {
		row := raw[y*rowBytes : (y+1)*rowBytes]
		sy := ty*e.size + y
		for x := range e.size {
			sx := tx*e.size + x
			for b := range spp {
				v := e.nodata
				if sx < l.w && sy < l.h {
					v = l.bands[b][sy*l.w+sx]
					if math.IsNaN(v) {
						v = e.nodata
					}
				}
				e.put(row[(x*spp+b)*bps:], v)
			}
		}
		e.predict(row, spp, bps)
	}
	e.buf.Reset()
	if e.zw == nil {
		zw, err := zlib.NewWriterLevel(&e.buf, e.level)
		if err != nil {
			return nil, err
		}
		e.zw = zw
	} else {
		e.zw.Reset(&e.buf)
	}
	if _, err := e.zw.Write(raw); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(e.buf.Bytes()), nil
}

// put writes one sample, little-endian.
func (e *encoder) put(b []byte, v float64) {
	le := binary.LittleEndian
	switch e.r.DataType {
	case Float32:
		le.PutUint32(b, math.Float32bits(float32(v)))
	case Float64:
		le.PutUint64(b, math.Float64bits(v))
	default:
		v = math.Round(v)
		switch e.r.DataType {
		case Uint8:
			b[0] = uint8(clamp(v, 0, math.MaxUint8))
		case Int8:
			b[0] = uint8(int8(clamp(v, math.MinInt8, math.MaxInt8)))
		case Uint16:
			le.PutUint16(b, uint16(clamp(v, 0, math.MaxUint16)))
		case Int16:
			le.PutUint16(b, uint16(int16(clamp(v, math.MinInt16, math.MaxInt16))))
		case Uint32:
			le.PutUint32(b, uint32(clamp(v, 0, math.MaxUint32)))
		case Int32:
			le.PutUint32(b, uint32(int32(clamp(v, math.MinInt32, math.MaxInt32))))
		}
	}
}

func clamp(v, lo, hi float64) float64 { return math.Min(math.Max(v, lo), hi) }

// predictor is TIFF's Predictor tag for the type: 2 (horizontal
// differencing) for integers, 3 (floating point) for floats.
func (e *encoder) predictor() uint16 {
	if e.r.DataType.Float() {
		return 3
	}
	return 2
}

// predict applies the predictor to one row, as libtiff's encoder does.
func (e *encoder) predict(row []byte, spp, bps int) {
	if e.r.DataType.Float() {
		// fpDiff: the row's bytes regrouped by significance (most
		// significant first), then byte-wise differencing.
		n := len(row) / bps
		if cap(e.tmp) < len(row) {
			e.tmp = make([]byte, len(row))
		}
		tmp := e.tmp[:len(row)]
		copy(tmp, row)
		for i := range n {
			for k := range bps {
				row[(bps-k-1)*n+i] = tmp[bps*i+k]
			}
		}
		for i := len(row) - 1; i >= spp; i-- {
			row[i] -= row[i-spp]
		}
		return
	}
	le := binary.LittleEndian
	n := len(row) / bps
	switch bps {
	case 1:
		for i := n - 1; i >= spp; i-- {
			row[i] -= row[i-spp]
		}
	case 2:
		for i := n - 1; i >= spp; i-- {
			le.PutUint16(row[2*i:], le.Uint16(row[2*i:])-le.Uint16(row[2*(i-spp):]))
		}
	case 4:
		for i := n - 1; i >= spp; i-- {
			le.PutUint32(row[4*i:], le.Uint32(row[4*i:])-le.Uint32(row[4*(i-spp):]))
		}
	}
}

// TIFF tags written.
const (
	tagNewSubfileType  = 254
	tagImageWidth      = 256
	tagImageLength     = 257
	tagBitsPerSample   = 258
	tagCompression     = 259
	tagPhotometric     = 262
	tagSamplesPerPixel = 277
	tagPlanarConfig    = 284
	tagPredictor       = 317
	tagTileWidth       = 322
	tagTileLength      = 323
	tagTileOffsets     = 324
	tagTileByteCounts  = 325
	tagExtraSamples    = 338
	tagSampleFormat    = 339
	tagPixelScale      = 33550
	tagTiepoint        = 33922
	tagTransformation  = 34264
	tagGeoKeyDirectory = 34735
	tagGDALMetadata    = 42112
	tagGDALNoData      = 42113
)

// TIFF field types.
const (
	typeASCII  = 2
	typeShort  = 3
	typeLong   = 4
	typeDouble = 12
)

// entry is one IFD entry; its value's bytes are inline when they fit in
// four, else written after the IFD.
type entry struct {
	tag, typ uint16
	count    uint32
	value    []byte
	// offsets marks the TileOffsets entry, filled in at layout.
	offsets bool
}

func shorts(vs ...uint16) []byte {
	b := make([]byte, 2*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

func longs(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func doubles(vs ...float64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func ascii(s string) []byte { return append([]byte(s), 0) }

// ghost is GDAL's structural metadata, which tells a reader (and GDAL's
// LAYOUT=COG) how the file is laid out.
func ghost() []byte {
	md := "LAYOUT=IFDS_BEFORE_DATA\nBLOCK_ORDER=ROW_MAJOR\nBLOCK_LEADER=SIZE_AS_UINT4\n" +
		"BLOCK_TRAILER=LAST_4_BYTES_REPEATED\nKNOWN_INCOMPATIBLE_EDITION=NO\n "
	return []byte(fmt.Sprintf("GDAL_STRUCTURAL_METADATA_SIZE=%06d bytes\n", len(md)) + md)
}

// fileLayout is where everything goes.
type fileLayout struct {
	head []byte // header, ghost and every IFD with its values
	size int64
}

// layout places the IFDs (full resolution first) and the tiles (smallest
// overview first), and encodes the head of the file.
func layout(r *Raster, levels []*level, tile int) (*fileLayout, error) {
	ifds := make([][]entry, len(levels))
	for i, l := range levels {
		ifds[i] = tags(r, l, i, tile)
	}
	g := ghost()
	pos := int64(8 + len(g))
	pos += pos % 2
	ifdAt := make([]int64, len(levels))
	for i, es := range ifds {
		ifdAt[i] = pos
		pos += ifdSize(es)
	}
	// Tiles, smallest overview first, each after a 4-byte leader.
	tileAt := make([][]uint32, len(levels))
	for i := len(levels) - 1; i >= 0; i-- {
		for _, t := range levels[i].tiles {
			pos += 4
			if pos+int64(len(t)) > maxClassicBytes {
				return nil, fmt.Errorf("%w (a classic TIFF's 4 GiB)", ErrTooLarge)
			}
			tileAt[i] = append(tileAt[i], uint32(pos))
			pos += int64(len(t)) + 4
		}
	}
	var head bytes.Buffer
	head.Write([]byte{'I', 'I', 42, 0})
	head.Write(longs(uint32(ifdAt[0])))
	head.Write(g)
	if head.Len()%2 == 1 {
		head.WriteByte(0)
	}
	for i, es := range ifds {
		for k := range es {
			if es[k].offsets {
				es[k].value = longs(tileAt[i]...)
			}
		}
		next := int64(0)
		if i+1 < len(ifds) {
			next = ifdAt[i+1]
		}
		if int64(head.Len()) != ifdAt[i] {
			return nil, fmt.Errorf("cogwrite: IFD %d at %d, planned at %d", i, head.Len(), ifdAt[i])
		}
		writeIFD(&head, es, ifdAt[i], next)
	}
	return &fileLayout{head: head.Bytes(), size: pos}, nil
}

// tags are the entries of level i's IFD, sorted by tag.
func tags(r *Raster, l *level, i, tile int) []entry {
	spp := len(l.bands)
	bps := r.DataType.bytesPer()
	rep := func(v uint16) []uint16 {
		out := make([]uint16, spp)
		for k := range out {
			out[k] = v
		}
		return out
	}
	counts := make([]uint32, len(l.tiles))
	for k, t := range l.tiles {
		counts[k] = uint32(len(t))
	}
	sub := uint32(0)
	if i > 0 {
		sub = 1 // reduced-resolution image
	}
	enc := &encoder{r: r}
	es := []entry{
		{tag: tagNewSubfileType, typ: typeLong, count: 1, value: longs(sub)},
		{tag: tagImageWidth, typ: typeLong, count: 1, value: longs(uint32(l.w))},
		{tag: tagImageLength, typ: typeLong, count: 1, value: longs(uint32(l.h))},
		{tag: tagBitsPerSample, typ: typeShort, count: uint32(spp), value: shorts(rep(uint16(8 * bps))...)},
		{tag: tagCompression, typ: typeShort, count: 1, value: shorts(8)},
		{tag: tagPhotometric, typ: typeShort, count: 1, value: shorts(1)},
		{tag: tagSamplesPerPixel, typ: typeShort, count: 1, value: shorts(uint16(spp))},
		{tag: tagPlanarConfig, typ: typeShort, count: 1, value: shorts(1)},
		{tag: tagPredictor, typ: typeShort, count: 1, value: shorts(enc.predictor())},
		{tag: tagTileWidth, typ: typeShort, count: 1, value: shorts(uint16(tile))},
		{tag: tagTileLength, typ: typeShort, count: 1, value: shorts(uint16(tile))},
		{tag: tagTileOffsets, typ: typeLong, count: uint32(len(l.tiles)), value: longs(counts...), offsets: true},
		{tag: tagTileByteCounts, typ: typeLong, count: uint32(len(l.tiles)), value: longs(counts...)},
		{tag: tagSampleFormat, typ: typeShort, count: uint32(spp), value: shorts(rep(r.DataType.sampleFormat())...)},
	}
	if spp > 1 {
		es = append(es, entry{tag: tagExtraSamples, typ: typeShort, count: uint32(spp - 1), value: shorts(make([]uint16, spp-1)...)})
	}
	if i == 0 {
		gt := r.GeoTransform
		if gt[2] == 0 && gt[4] == 0 {
			es = append(es,
				entry{tag: tagPixelScale, typ: typeDouble, count: 3, value: doubles(gt[1], -gt[5], 0)},
				entry{tag: tagTiepoint, typ: typeDouble, count: 6, value: doubles(0, 0, 0, gt[0], gt[3], 0)})
		} else {
			es = append(es, entry{tag: tagTransformation, typ: typeDouble, count: 16, value: doubles(
				gt[1], gt[2], 0, gt[0],
				gt[4], gt[5], 0, gt[3],
				0, 0, 0, 0,
				0, 0, 0, 1)})
		}
		// GTModelType, GTRasterType (pixel is area), then the CRS.
		model, crsKey := uint16(1), uint16(3072)
		if r.Geographic {
			model, crsKey = 2, 2048
		}
		keys := shorts(1, 1, 0, 3,
			1024, 0, 1, model,
			1025, 0, 1, 1,
			crsKey, 0, 1, uint16(r.EPSG))
		es = append(es, entry{tag: tagGeoKeyDirectory, typ: typeShort, count: uint32(len(keys) / 2), value: keys})
		if md := gdalMetadata(r); md != "" {
			v := ascii(md)
			es = append(es, entry{tag: tagGDALMetadata, typ: typeASCII, count: uint32(len(v)), value: v})
		}
	}
	nd := ascii(noDataText(r))
	es = append(es, entry{tag: tagGDALNoData, typ: typeASCII, count: uint32(len(nd)), value: nd})
	sort.Slice(es, func(a, b int) bool { return es[a].tag < es[b].tag })
	return es
}

// noDataText is GDAL_NODATA as GDAL writes it.
func noDataText(r *Raster) string {
	if r.NoData == nil || math.IsNaN(*r.NoData) {
		return "nan"
	}
	return strconv.FormatFloat(*r.NoData, 'g', -1, 64)
}

// gdalMetadata is the GDAL_METADATA XML: dataset items, then per band its
// description and items.
func gdalMetadata(r *Raster) string {
	var b strings.Builder
	// GDAL escapes a value before putting it in its XML tree, which
	// escapes it again, and reverses both on reading: so do we.
	twice := func(s string) string {
		var once strings.Builder
		xmlEscape(&once, s)
		return once.String()
	}
	item := func(name string, sample int, role, value string) {
		b.WriteString(`  <Item name="`)
		xmlEscape(&b, name)
		b.WriteString(`"`)
		if sample >= 0 {
			fmt.Fprintf(&b, ` sample="%d"`, sample)
		}
		if role != "" {
			fmt.Fprintf(&b, ` role="%s"`, role)
		}
		b.WriteString(">")
		xmlEscape(&b, twice(value))
		b.WriteString("</Item>\n")
	}
	for _, k := range sortedKeys(r.Metadata) {
		item(k, -1, "", r.Metadata[k])
	}
	for i := range r.Bands {
		if i < len(r.Descriptions) && r.Descriptions[i] != "" {
			item("DESCRIPTION", i, "description", r.Descriptions[i])
		}
		if i < len(r.BandMetadata) {
			for _, k := range sortedKeys(r.BandMetadata[i]) {
				item(k, i, "", r.BandMetadata[i][k])
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "<GDALMetadata>\n" + b.String() + "</GDALMetadata>"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// xmlEscape writes s as XML character data, dropping the characters XML
// 1.0 cannot carry.
func xmlEscape(b *strings.Builder, s string) {
	for _, c := range s {
		switch {
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		case c == '&':
			b.WriteString("&amp;")
		case c == '"':
			b.WriteString("&quot;")
		case c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c != 0xFFFE && c != 0xFFFF && (c < 0xD800 || c > 0xDFFF)):
			b.WriteRune(c)
		}
	}
}

// ifdSize is an IFD's bytes with its out-of-line values (each on an even
// offset).
func ifdSize(es []entry) int64 {
	n := int64(2 + 12*len(es) + 4)
	for _, e := range es {
		if len(e.value) > 4 {
			n += int64(len(e.value) + len(e.value)%2)
		}
	}
	return n
}

// writeIFD encodes an IFD at offset at, its out-of-line values after it.
func writeIFD(b *bytes.Buffer, es []entry, at, next int64) {
	le := binary.LittleEndian
	extra := at + int64(2+12*len(es)+4)
	var tail bytes.Buffer
	b.Write(shorts(uint16(len(es))))
	for _, e := range es {
		b.Write(shorts(e.tag, e.typ))
		b.Write(longs(e.count))
		if len(e.value) <= 4 {
			v := make([]byte, 4)
			copy(v, e.value)
			b.Write(v)
			continue
		}
		var off [4]byte
		le.PutUint32(off[:], uint32(extra+int64(tail.Len())))
		b.Write(off[:])
		tail.Write(e.value)
		if len(e.value)%2 == 1 {
			tail.WriteByte(0)
		}
	}
	b.Write(longs(uint32(next)))
	b.Write(tail.Bytes())
}

// write sends the head, then every tile with its leader and trailer.
func (f *fileLayout) write(ctx context.Context, w io.Writer, levels []*level) (int64, error) {
	n, err := w.Write(f.head)
	total := int64(n)
	if err != nil {
		return total, err
	}
	var lead [4]byte
	for i := len(levels) - 1; i >= 0; i-- {
		for _, t := range levels[i].tiles {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			binary.LittleEndian.PutUint32(lead[:], uint32(len(t)))
			for _, part := range [][]byte{lead[:], t, t[len(t)-4:]} {
				n, err := w.Write(part)
				total += int64(n)
				if err != nil {
					return total, err
				}
			}
		}
	}
	if total != f.size {
		return total, fmt.Errorf("cogwrite: wrote %d bytes, planned %d", total, f.size)
	}
	return total, nil
}
