package cog

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// ErrEmptyWindow is returned for a window that does not overlap the level.
var ErrEmptyWindow = errors.New("the window does not overlap the image")

// Window is the result of a ReadWindow.
type Window struct {
	Rect  image.Rectangle // the window read, clipped to the level
	Level int
	// Bands are the raw values (no scale or offset applied), row-major,
	// one slice per band asked for, in the order asked.
	Bands [][]float64
	// Valid is false where a band read holds the nodata value or the
	// file's internal mask or alpha band is 0; nil when every pixel is
	// valid.
	Valid []bool
	// MaskValid is false where the file's internal mask or alpha band is
	// 0 (nodata values aside: a caller that takes nodata from elsewhere,
	// as a STAC item's raster:bands, applies its own); nil when the file
	// masks no pixel of the window.
	MaskValid []bool
	// Requests and Bytes count the range requests this read sent and the
	// bytes they returned (tiles served from the cache count nothing).
	Requests, Bytes int
	// Blocks counts the tiles or strips the read placed (the mask's and
	// unwritten ones included).
	Blocks int
}

// Cost is what a ReadWindow will take, known before it reads or
// allocates anything (WindowCost).
type Cost struct {
	Rect   image.Rectangle // the window, clipped to the level
	Pixels int64
	// Values is Pixels × bands read: the float64s of Window.Bands, and of
	// the alpha band when the file has one (read to mask, not returned).
	Values int64
	// Blocks are the tiles or strips the read places, the mask's included.
	Blocks int
	// Requests is the most range requests the read sends (blocks in the
	// cache or in the bytes Open read need none), FetchBytes the bytes
	// they ask for.
	Requests   int
	FetchBytes int64
	// Bytes bounds the memory the read holds at once: the window's values
	// and validity, the bytes fetched (and their copies in the cache), and
	// the blocks being decoded side by side (at most Concurrency; a block
	// placed in the window leaves garbage, not memory held).
	Bytes int64
}

// block is one tile or strip a read needs.
type block struct {
	mask   bool // a block of the level's mask, not of its bands
	idx    int  // index into the level's (or its mask's) offsets
	plane  int  // band, for band-interleaved files; else 0
	bx, by int
	r      Range
}

// group is blocks read with one request (or from the cache: r.Len == 0).
type group struct {
	r      Range
	blocks []block
}

// plan is a read's blocks, sorted into those to fetch (merged into
// groups), those already at hand and the unwritten ones, and its cost.
type plan struct {
	l              *level
	win            image.Rectangle
	bands          []int   // asked for, then the alpha band when the file has one
	asked          int     // bands asked for
	alpha          int     // the alpha band, -1 when none
	groups         []group // to fetch, then (r.Len == 0) at hand
	sparse         []block
	rawCached      map[int64][]byte // by offset: blocks at one offset hold the same bytes
	cost           Cost
	blockDecodeMax int64 // the most one block's decoding allocates
	decoding       int64 // blocks decoded at once, at most
}

// decodeBytes bounds what decoding one block of the level allocates, for
// blocks of at most raw compressed bytes: the decompressed block (none
// when uncompressed), predictor 3's reordered copy; for JPEG the stream
// with its tables, Go's decoded image, the upsampled chroma and the
// converted block; and a decoder's state (a new one's, when its pool is
// empty, as after a garbage collection).
func (l *level) decodeBytes(raw int64) int64 {
	full := int64(l.TileHeight) * int64(l.rowBytes())
	var n int64
	switch l.compression {
	case 1:
	case 7:
		n = raw + int64(len(l.jpegTables)) + 2*full + 2*int64(l.TileWidth)*int64(l.TileHeight)
	default:
		n = full + 1
	}
	if l.predictor == 3 {
		n += full
	}
	if l.compression == 50000 {
		// A new zstd decoder (its pool may be empty) allocates its history
		// window (at least 128 KiB, zstdInput) and a block buffer.
		n += 2 * max(full, 128<<10)
	}
	return n + 64<<10
}

// allocated bounds the bytes the read allocates in all, garbage included:
// Cost.Bytes with every block's decoding counted.
func (p *plan) allocated() int64 {
	return p.cost.Bytes + (int64(p.cost.Blocks)-int64(len(p.sparse))-p.decoding)*p.blockDecodeMax
}

// WindowCost is what ReadWindow(lvl, win, bands) would take, computed
// from the header alone, without reading or allocating anything in
// proportion to the window; an error when the read would be refused
// (a *LimitError when it passes a bound). It counts no block as cached,
// so its Requests and FetchBytes are at most the read's.
func (f *File) WindowCost(lvl int, win image.Rectangle, bands []int) (Cost, error) {
	p, err := f.plan(context.Background(), lvl, win, bands, false)
	if err != nil {
		return Cost{}, err
	}
	return p.cost, nil
}

// plan checks a read against the bounds and lists its blocks. Nothing in
// proportion to the window is allocated before the bounds are checked.
func (f *File) plan(ctx context.Context, lvl int, win image.Rectangle, bands []int, useCache bool) (*plan, error) {
	if lvl < 0 || lvl >= len(f.h.levels) {
		return nil, fmt.Errorf("level %d: the file has levels 0 to %d", lvl, len(f.h.levels)-1)
	}
	l := f.h.levels[lvl]
	win = win.Canon().Intersect(image.Rect(0, 0, l.Width, l.Height))
	if win.Empty() {
		return nil, fmt.Errorf("%w (level %d is %dx%d pixels)", ErrEmptyWindow, lvl, l.Width, l.Height)
	}
	if bands == nil {
		bands = make([]int, l.spp)
		for i := range bands {
			bands[i] = i
		}
	}
	if len(bands) == 0 {
		return nil, fmt.Errorf("no bands asked for")
	}
	for _, b := range bands {
		if b < 0 || b >= l.spp {
			return nil, fmt.Errorf("band %d: the file has bands 0 to %d", b, l.spp-1)
		}
	}
	// The alpha band is read with the bands asked for: where it is 0 no
	// band has a value (GDAL's alpha mask), and it is left out of Bands.
	asked := len(bands)
	alpha := f.h.info.Alpha - 1
	if alpha >= 0 && !slices.Contains(bands, alpha) {
		bands = append(slices.Clone(bands), alpha)
	}
	masks := l.mask != nil || alpha >= 0
	ww, wh := win.Dx(), win.Dy()
	pixels := int64(ww) * int64(wh)
	if pixels*int64(len(bands)) > int64(f.opts.MaxWindowValues) {
		return nil, &LimitError{Limit: "MaxWindowValues", Need: pixels * int64(len(bands)), Max: int64(f.opts.MaxWindowValues),
			what: fmt.Sprintf("a window of %dx%d pixels × %d bands holds more values than one read may; choose a coarser level (ChooseLevel, FitLevel)", ww, wh, len(bands))}
	}
	// The blocks the window touches, per plane, counted before listed.
	planes := []int{0}
	if l.planar == 2 {
		planes = slices.Compact(slices.Sorted(slices.Values(bands)))
	}
	bx0, bx1 := win.Min.X/l.TileWidth, (win.Max.X-1)/l.TileWidth
	by0, by1 := win.Min.Y/l.TileHeight, (win.Max.Y-1)/l.TileHeight
	nblocks := int64(len(planes)) * int64(bx1-bx0+1) * int64(by1-by0+1)
	m := l.mask
	var mx0, mx1, my0, my1 int
	if m != nil {
		mx0, mx1 = win.Min.X/m.TileWidth, (win.Max.X-1)/m.TileWidth
		my0, my1 = win.Min.Y/m.TileHeight, (win.Max.Y-1)/m.TileHeight
		nblocks += int64(mx1-mx0+1) * int64(my1-my0+1)
	}
	if nblocks > int64(f.opts.MaxBlocks) {
		return nil, &LimitError{Limit: "MaxBlocks", Need: nblocks, Max: int64(f.opts.MaxBlocks),
			what: fmt.Sprintf("a window of %dx%d pixels covers more tiles or strips (of %dx%d pixels) than one read may decode; choose a coarser level or a smaller window",
				ww, wh, l.TileWidth, l.TileHeight)}
	}

	p := &plan{l: l, win: win, bands: bands, asked: asked, alpha: alpha, rawCached: map[int64][]byte{}}
	var fetch, cached []block
	listed := 0
	add := func(bl *level, b block) error {
		if listed++; listed%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		off, n := bl.offsets.at(b.idx), bl.counts.at(b.idx)
		if n == 0 {
			p.sparse = append(p.sparse, b) // GDAL's sparse files: an unwritten block
			return nil
		}
		if n > uint64(f.opts.MaxBlockBytes) || off > math.MaxInt64/2 {
			return fmt.Errorf("%s: block %d declares %d bytes at offset %d, over the %d-byte limit",
				f.src, b.idx, n, off, f.opts.MaxBlockBytes)
		}
		b.r = Range{int64(off), int64(n)}
		if raw, ok := f.h.headerBytes(b.r); ok {
			// Read with the header already (a small file, or a COG's
			// first overview tiles): no request for it again.
			p.rawCached[b.r.Off] = raw
			cached = append(cached, b)
			return nil
		}
		if useCache {
			if v, ok := f.opts.Cache.get(f.blockKey(b.r)); ok {
				p.rawCached[b.r.Off] = v.([]byte)
				cached = append(cached, b)
				return nil
			}
		}
		fetch = append(fetch, b)
		return nil
	}
	for _, pl := range planes {
		for by := by0; by <= by1; by++ {
			for bx := bx0; bx <= bx1; bx++ {
				if err := add(l, block{idx: (pl*l.down+by)*l.across + bx, plane: pl, bx: bx, by: by}); err != nil {
					return nil, err
				}
			}
		}
	}
	if m != nil {
		for by := my0; by <= my1; by++ {
			for bx := mx0; bx <= mx1; bx++ {
				if err := add(m, block{mask: true, idx: by*m.across + bx, bx: bx, by: by}); err != nil {
					return nil, err
				}
			}
		}
	}
	p.groups = mergeBlocks(fetch, f.opts.MergeGap, f.opts.MaxMergeBytes)
	requests := len(p.groups)
	if requests > f.opts.MaxRequests {
		return nil, &LimitError{Limit: "MaxRequests", Need: int64(requests), Max: int64(f.opts.MaxRequests),
			what: fmt.Sprintf("a window of %dx%d pixels lies in more separate byte ranges than one read may request; choose a coarser level or a smaller window", ww, wh)}
	}
	var fetchBytes, copies int64
	for _, g := range p.groups {
		fetchBytes += g.r.Len
		if f.h.headerHead(g.r) != nil {
			copies += g.r.Len // joined to the bytes Open read
		}
	}
	if f.opts.Cache != nil {
		copies += fetchBytes // the blocks' copies the cache keeps
	}
	for _, b := range cached {
		p.groups = append(p.groups, group{blocks: []block{b}})
	}
	var maxRaw int64
	for _, g := range p.groups {
		for _, b := range g.blocks {
			maxRaw = max(maxRaw, b.r.Len)
		}
	}
	p.blockDecodeMax = l.decodeBytes(maxRaw)
	if m != nil {
		p.blockDecodeMax = max(p.blockDecodeMax, m.decodeBytes(maxRaw))
	}
	p.decoding = int64(min(f.opts.Concurrency, int(nblocks)-len(p.sparse)))
	validity := int64(0)
	if masks || f.h.info.NoData != nil {
		validity = pixels // Window.Valid
	}
	if masks {
		validity += 2 * pixels // the mask's or alpha's marks, and Window.MaskValid
	}
	p.cost = Cost{Rect: win, Pixels: pixels, Values: pixels * int64(len(bands)), Blocks: int(nblocks),
		Requests: requests, FetchBytes: fetchBytes,
		Bytes: 8*pixels*int64(len(bands)) + validity + fetchBytes + copies + p.decoding*p.blockDecodeMax}
	return p, nil
}

// ReadWindow reads a pixel window of a level (in that level's pixels,
// clipped to it) for the given 0-based bands (nil: all). It is refused,
// before anything is requested or allocated, when it would pass a bound
// (MaxWindowValues, MaxBlocks, MaxRequests, the RequestBudget): a
// *LimitError. WindowCost says what it will take.
func (f *File) ReadWindow(ctx context.Context, lvl int, win image.Rectangle, bands []int) (*Window, error) {
	p, err := f.plan(ctx, lvl, win, bands, true)
	if err != nil {
		return nil, err
	}
	if err := f.opts.Requests.take(p.cost.Requests); err != nil {
		return nil, err
	}
	out := &Window{Rect: p.win, Level: lvl, Bands: make([][]float64, len(p.bands)), Blocks: p.cost.Blocks}
	for i := range out.Bands {
		out.Bands[i] = make([]float64, p.win.Dx()*p.win.Dy())
	}
	var masked []bool // true where the mask is 0
	if p.l.mask != nil {
		masked = make([]bool, p.win.Dx()*p.win.Dy())
	}
	if err := f.readGroups(ctx, p, out, masked); err != nil {
		return nil, err
	}
	f.fillSparse(p, out, masked)
	if p.alpha >= 0 {
		masked = alphaMask(p, out, masked)
	}
	out.MaskValid = maskValidity(masked)
	out.Valid = f.validity(out, out.MaskValid)
	return out, nil
}

// readGroups fetches the plan's groups, at most Options.Concurrency at
// once, and places each block's pixels in out (a mask block's in masked).
// The first failure, or the end of ctx, starts no more groups; out's
// Requests and Bytes count what was fetched either way.
func (f *File) readGroups(ctx context.Context, p *plan, out *Window, masked []bool) error {
	sel := newSelection(p.l, p.bands)
	read := sampleReader(p.l.format, p.l.bytesPer, f.h.order)
	var requests, nbytes atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(f.opts.Concurrency)
	var stopped error
	for _, gr := range p.groups {
		if err := gctx.Err(); err != nil {
			stopped = err // a request failed or the call ended: start no more
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			data, err := f.fetchGroup(gctx, gr, &requests, &nbytes)
			if err != nil {
				return err
			}
			return f.placeGroup(gctx, p, gr, data, out, masked, sel, read)
		})
	}
	err := g.Wait()
	out.Requests, out.Bytes = int(requests.Load()), int(nbytes.Load())
	if err == nil && stopped != nil {
		err = stopped // groups not started because the call ended
	}
	return err
}

// fetchGroup requests a group's merged range (nil for a group whose blocks
// are all at hand, gr.r.Len == 0), counting the request and its bytes.
func (f *File) fetchGroup(ctx context.Context, gr group, requests, nbytes *atomic.Int64) ([]byte, error) {
	if gr.r.Len == 0 {
		return nil, nil
	}
	// A range that starts in the bytes Open read asks only for the rest.
	head := f.h.headerHead(gr.r)
	ask := Range{gr.r.Off + int64(len(head)), gr.r.Len - int64(len(head))}
	bs, err := f.src.ReadRanges(ctx, []Range{ask})
	if err != nil {
		return nil, err
	}
	requests.Add(1)
	nbytes.Add(int64(len(bs[0])))
	if int64(len(bs[0])) != ask.Len {
		return nil, fmt.Errorf("%s: %d bytes at offset %d were asked for, %d came back (the file is shorter than its header says)",
			f.src, ask.Len, ask.Off, len(bs[0]))
	}
	if len(head) == 0 {
		return bs[0], nil
	}
	return append(append(make([]byte, 0, gr.r.Len), head...), bs[0]...), nil
}

// placeGroup decodes each block of a group, from data (the group's fetched
// bytes, then cached) or from the cache, into out or masked.
func (f *File) placeGroup(ctx context.Context, p *plan, gr group, data []byte, out *Window, masked []bool, sel selection, read func([]byte, int) float64) error {
	for _, b := range gr.blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw := p.rawCached[b.r.Off]
		if data != nil {
			raw = data[b.r.Off-gr.r.Off : b.r.end()-gr.r.Off]
			f.cacheBlock(b.r, raw)
		}
		var err error
		if b.mask {
			err = f.placeMask(p.l.mask, b, raw, p.win, masked)
		} else {
			err = f.placeBlock(p.l, b, raw, p.win, out, sel, read)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fillSparse fills the blocks the file never wrote (GDAL's sparse files):
// a band's with its nodata (0 without one), a mask's as masked.
func (f *File) fillSparse(p *plan, out *Window, masked []bool) {
	win, ww := p.win, p.win.Dx()
	sel := newSelection(p.l, p.bands)
	for _, b := range p.sparse {
		if b.mask {
			// An unwritten mask block reads as 0 (masked), as GDAL fills
			// any unwritten block without nodata.
			in := p.l.mask.blockRect(b).Intersect(win)
			for y := in.Min.Y; y < in.Max.Y; y++ {
				for x := in.Min.X; x < in.Max.X; x++ {
					masked[(y-win.Min.Y)*ww+x-win.Min.X] = true
				}
			}
			continue
		}
		fill := 0.0
		if f.h.info.NoData != nil {
			fill = *f.h.info.NoData
			if f.h.info.DataType == "float32" {
				fill = float64(float32(fill)) // a value of the band's type, as GDAL fills
			}
		}
		f.fillBlock(p.l, b, win, out, sel, fill)
	}
}

// alphaMask marks as masked the pixels whose alpha band (read beside the
// asked bands) is 0, and drops that band from out; it returns masked,
// made when the file had no mask.
func alphaMask(p *plan, out *Window, masked []bool) []bool {
	a := out.Bands[slices.Index(p.bands, p.alpha)]
	for i, v := range a {
		if v == 0 {
			if masked == nil {
				masked = make([]bool, len(a))
			}
			masked[i] = true
		}
	}
	out.Bands = out.Bands[:p.asked]
	return masked
}

// cacheBlock keeps a fetched block's bytes in the cache: a copy when they
// are a small part of a larger buffer (a merged request's), which the
// cache would otherwise keep whole while counting only the block.
func (f *File) cacheBlock(r Range, raw []byte) {
	if f.opts.Cache == nil {
		return
	}
	if cap(raw) > len(raw)+len(raw)/4 {
		raw = slices.Clone(raw)
	}
	f.opts.Cache.put(f.blockKey(r), raw, int64(cap(raw))+64)
}

func (f *File) blockKey(r Range) string {
	return "t\x00" + f.src.String() + "\x00" + strconv.FormatInt(r.Off, 10) + "+" + strconv.FormatInt(r.Len, 10)
}

// mergeBlocks groups blocks into requests: sorted by offset, a block
// joins the previous request when the gap is at most gap bytes and the
// request stays within maxLen.
func mergeBlocks(bs []block, gap, maxLen int64) []group {
	slices.SortFunc(bs, func(a, b block) int {
		if a.r.Off != b.r.Off {
			return int(min(max(a.r.Off-b.r.Off, -1), 1))
		}
		return int(min(max(a.r.Len-b.r.Len, -1), 1))
	})
	var out []group
	for _, b := range bs {
		if n := len(out); n > 0 {
			cur := &out[n-1]
			end := max(cur.r.end(), b.r.end())
			if b.r.Off-cur.r.end() <= gap && end-cur.r.Off <= maxLen {
				cur.r.Len = end - cur.r.Off
				cur.blocks = append(cur.blocks, b)
				continue
			}
		}
		out = append(out, group{r: b.r, blocks: []block{b}})
	}
	return out
}

// selection maps a block's samples to the window's bands.
type selection struct {
	bands []int
}

func newSelection(_ *level, bands []int) selection { return selection{bands: bands} }

// blockRect is a block's pixels in the level, and its rows.
func (l *level) blockRect(b block) image.Rectangle {
	x0, y0 := b.bx*l.TileWidth, b.by*l.TileHeight
	return image.Rect(x0, y0, min(x0+l.TileWidth, l.Width), min(y0+l.TileHeight, l.Height))
}

// placeBlock decodes a block and copies its part of the window.
func (f *File) placeBlock(l *level, b block, raw []byte, win image.Rectangle, out *Window, sel selection, read func([]byte, int) float64) error {
	br := l.blockRect(b)
	rows := l.TileHeight
	if !l.tiled {
		rows = br.Dy() // a last strip holds the rows left
	}
	buf, err := l.decodeBlock(raw, f.h.order, rows)
	if err != nil {
		return fmt.Errorf("%s: block %d (level %dx%d, %s): %w", f.src, b.idx, l.Width, l.Height, compressionNames[uint64(l.compression)], err)
	}
	in := br.Intersect(win)
	ww := win.Dx()
	for j, band := range sel.bands {
		if l.planar == 2 && band != b.plane {
			continue
		}
		dst := out.Bands[j]
		for y := in.Min.Y; y < in.Max.Y; y++ {
			o := (y-win.Min.Y)*ww - win.Min.X
			rowBase := (y - br.Min.Y) * l.TileWidth
			if l.planar == 1 {
				for x := in.Min.X; x < in.Max.X; x++ {
					dst[o+x] = read(buf, (rowBase+x-br.Min.X)*l.spp+band)
				}
			} else {
				for x := in.Min.X; x < in.Max.X; x++ {
					dst[o+x] = read(buf, rowBase+x-br.Min.X)
				}
			}
		}
	}
	return nil
}

// fillBlock writes v over a sparse block's part of the window.
func (f *File) fillBlock(l *level, b block, win image.Rectangle, out *Window, sel selection, v float64) {
	in := l.blockRect(b).Intersect(win)
	ww := win.Dx()
	for j, band := range sel.bands {
		if l.planar == 2 && band != b.plane {
			continue
		}
		for y := in.Min.Y; y < in.Max.Y; y++ {
			o := (y-win.Min.Y)*ww - win.Min.X
			for x := in.Min.X; x < in.Max.X; x++ {
				out.Bands[j][o+x] = v
			}
		}
	}
}

// placeMask decodes a mask block and marks the window's pixels it masks.
func (f *File) placeMask(m *level, b block, raw []byte, win image.Rectangle, masked []bool) error {
	br := m.blockRect(b)
	rows := m.TileHeight
	if !m.tiled {
		rows = br.Dy()
	}
	buf, err := m.decodeBlock(raw, f.h.order, rows)
	if err != nil {
		return fmt.Errorf("%s: mask block %d (level %dx%d): %w", f.src, b.idx, m.Width, m.Height, err)
	}
	in := br.Intersect(win)
	rb := m.rowBytes()
	for y := in.Min.Y; y < in.Max.Y; y++ {
		row := buf[(y-br.Min.Y)*rb:]
		o := (y-win.Min.Y)*win.Dx() - win.Min.X
		for x := in.Min.X; x < in.Max.X; x++ {
			bx := x - br.Min.X
			var on bool
			if m.bits == 1 {
				on = row[bx>>3]&(0x80>>(bx&7)) != 0
			} else {
				on = row[bx] != 0
			}
			if !on {
				masked[o+x] = true
			}
		}
	}
	return nil
}

// maskValidity is false where masked is true; nil when nothing is masked.
func maskValidity(masked []bool) []bool {
	var valid []bool
	for i, m := range masked {
		if m {
			if valid == nil {
				valid = make([]bool, len(masked))
				for k := range valid {
					valid[k] = true
				}
			}
			valid[i] = false
		}
	}
	return valid
}

// validity adds to maskValid (nil: all valid) the pixels where a band
// holds the nodata value (NaN nodata matches NaN); nil when every pixel
// is valid.
func (f *File) validity(w *Window, maskValid []bool) []bool {
	valid := slices.Clone(maskValid)
	nd := f.h.info.NoData
	if nd == nil {
		return valid
	}
	v, isNaN := *nd, math.IsNaN(*nd)
	if f.h.info.DataType == "float32" {
		v = float64(float32(v)) // as GDAL compares: in the band's type
	}
	for _, band := range w.Bands {
		for i, x := range band {
			if x == v || (isNaN && math.IsNaN(x)) {
				if valid == nil {
					valid = make([]bool, len(band))
					for k := range valid {
						valid[k] = true
					}
				}
				valid[i] = false
			}
		}
	}
	return valid
}
