package pixel

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"

	"github.com/paulmach/orb"
	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
)

// Request is one read: an item's bands over an area.
type Request struct {
	Item  *stacclient.Item
	Bands []Band
	// Mask adds the item's cloud mask when it has one.
	Mask bool
	// AOI is the area in longitude/latitude (WGS 84); AOIKm2 its size on
	// the ellipsoid, from which the share of it outside the raster is
	// counted when the area reaches beyond it (0: only the pixels inside
	// count).
	AOI    orb.Geometry
	AOIKm2 float64
	// Index, when set, is what the bands are read for (Bands in the order
	// of its roles): its values join the plausibility check of the
	// calibration.
	Index *index.Index
	// Grid, when set, is the grid to read onto, covering the whole area
	// (PlanTarget; a mosaic or a composite reads every item onto one):
	// the pixels of the area outside the item's raster have no value.
	Grid *Target
	// Hold keeps a read onto Grid charged to the decode budget until
	// Pixels.Release, for a caller that keeps the pixels (merging them).
	Hold bool
}

// Pixels are an item's bands over an area, on one grid, calibrated.
type Pixels struct {
	W, H int
	// Inside is true for the pixels whose centre lies inside the area.
	Inside []bool
	// Values are per band, calibrated; NaN where there is no value.
	Values [][]float64
	// Valid is per band: a value (not nodata, not masked by the file).
	Valid [][]bool
	// Keep is Inside and clear (the cloud mask's verdict, when read).
	Keep []bool
	// Outline is the area in the window's pixels, for drawing.
	Outline [][][2]float64
	// PixelMetres is the ground size of one pixel of the grid read.
	PixelMetres float64
	// GeoTransform places the pixels in Resolution.EPSG's coordinates
	// (GDAL's order; pixel (0, 0) is the window's top-left): the level's
	// geotransform moved to the window.
	GeoTransform [6]float64
	Resolution   Resolution
	Bands        []BandRead
	Mask         *MaskRead
	// NoMask: a mask was asked for and the item has none.
	NoMask bool
	// AOIPixels is how many pixels of this grid the whole area covers,
	// the part outside the raster included; Estimated says that part was
	// counted from the area's size rather than pixel by pixel.
	AOIPixels int
	Estimated bool
	// Calibration is how the numbers became values.
	Calibration Calibration
	// Requests and Bytes count the range requests sent and the bytes
	// they returned, header reads included.
	Requests, Bytes int
	// Grid is the grid of the pixels: CRS, the geotransform of their
	// top-left pixel, W×H (what an export georeferences them with).
	Grid geo.Grid
	// release gives back a held read's charge (Request.Hold).
	release func()
}

// Resolution says which resolution was read.
type Resolution struct {
	EPSG                    int
	PixelMetres, FullMetres float64
	// Level is 0 for full resolution, 1.. for overviews.
	Level, Width, Height int
	// Budget is the most pixels one band's read may hold.
	Budget int
}

// BandRead is one band as read.
type BandRead struct {
	Band, Asset string
	// Calibration is what was applied; From names where its scale and
	// offset came from ("raster:bands", "bands", "the file's GDAL
	// metadata", a convention's reading), "" when the numbers are used as
	// they are; NoDataFrom where its nodata came from.
	Calibration      mask.Calibration
	From, NoDataFrom string
	// ResampledFrom is the pixel size (m) the band was resampled from by
	// nearest neighbour, 0 when it was read on the grid; Coarser says its
	// finer levels were too large to read for this grid.
	ResampledFrom float64
	Coarser       bool
	// DataType is the file's sample type (uint16, float32, ...).
	DataType string
}

// MaskRead is the cloud mask applied.
type MaskRead struct {
	Asset         string
	Kind          mask.Kind
	Rule          string
	Considered    int
	Clear         int
	Masked        []mask.Counted
	ResampledFrom float64
}

// maxSourceFactor bounds a resampled band's source window: at most this
// many times the grid's pixels (or minSourcePixels), so that a mask 57
// times finer than the bands cannot cost 57² times the grid.
const (
	maxSourceFactor = 4
	minSourcePixels = 1 << 16
)

// bandsAtOnce bounds the bands read side by side (each sends its own
// ranges side by side).
const bandsAtOnce = 4

// bandPlan is how one band reaches the grid.
type bandPlan struct {
	band  Band
	file  *asset
	level int
	win   image.Rectangle // in the level's pixels
	// resampled: the band is brought to grid (the reference level's) by
	// nearest neighbour from win of its own level; else read on the grid.
	resampled bool
	grid      geo.Grid
	coarser   bool
	// axisCols and axisRows map each column and each row of a target
	// grid to the level's (-1: none), for a file on the grid's CRS
	// (planOnto); nil otherwise.
	axisCols, axisRows []int
}

// Read reads r's bands over the area. The finest band decides the grid
// (at the level that fits the pixel budget); the others are resampled to
// it by nearest neighbour. Everything it allocates for the pixels is
// charged to the decode budget first.
func (e *Env) Read(ctx context.Context, r Request) (*Pixels, error) {
	if len(r.Bands) == 0 {
		return nil, &Error{Kind: ErrNoBand, Item: r.Item.ID, Detail: "no band to read"}
	}
	bands := slices.Clone(r.Bands)
	var maskKind mask.Kind
	out := &Pixels{}
	if r.Mask {
		if mb, kind, ok := CloudMask(r.Item); ok {
			bands = append(bands, mb)
			maskKind = kind
		} else {
			out.NoMask = true
		}
	}
	requests := cog.NewRequestBudget(e.readRequests())
	files, err := e.openAll(ctx, r.Item, bands, requests)
	defer func() {
		for _, f := range files {
			f.close()
		}
	}()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		// What Open fetched: 0 when the header was cached.
		out.Requests += f.info.HeaderRequests
		out.Bytes += f.info.HeaderBytes
	}
	if r.Grid != nil {
		return e.readOnto(ctx, r, bands, maskKind, files, out)
	}
	// The reference: the finest of the measured bands (not the mask).
	ref := files[r.Bands[0].AssetKey]
	for _, b := range r.Bands[1:] {
		if f := files[b.AssetKey]; math.Abs(f.info.GeoTransform[1]) < math.Abs(ref.info.GeoTransform[1]) {
			ref = f
		}
	}
	win0, ok, err := ref.grid.Window(r.AOI)
	if err != nil {
		return nil, &Error{Kind: ErrPlace, Item: r.Item.ID, Asset: ref.key, Detail: ref.grid.CRS.String(), Err: err}
	}
	if !ok {
		return nil, &Error{Kind: ErrNoOverlap, Item: r.Item.ID}
	}
	budgetPx := e.readPixels()
	lvl, win := ref.file.ChooseLevel(win0, budgetPx)
	if win.Dx()*win.Dy() > budgetPx {
		return nil, &Error{Kind: ErrTooLarge, Item: r.Item.ID, Asset: ref.key,
			Detail: fmt.Sprintf("%d×%d px at the coarsest level (%d of %d), over the pixel budget of %d per band", win.Dx(), win.Dy(), lvl, len(ref.info.Levels)-1, budgetPx)}
	}
	l := ref.info.Levels[lvl]
	lgrid := ref.grid.Level(l.Width, l.Height)
	n := win.Dx() * win.Dy()
	plans := make([]bandPlan, len(bands))
	for i, b := range bands {
		p, err := planBand(b, files[b.AssetKey], ref, lvl, lgrid, win)
		if err != nil {
			return nil, &Error{Kind: ErrTooFine, Item: r.Item.ID, Asset: b.AssetKey, Band: b.Title(), Detail: err.Error()}
		}
		plans[i] = p
	}
	// The cost, in the budget's units of 4 bytes: the headers parsed for
	// this read (a cached one is already counted by the cache), the area
	// mask and the kept pixels (a byte each), per band its float64 values
	// and validity on the grid, and what its read holds at once (the
	// reader's own bound, from the header alone); a resampled band adds
	// its pixel map (two ints a pixel).
	cost := int64(n) / 2
	for _, f := range files {
		if f.info.HeaderRequests > 0 {
			cost += f.info.HeaderMemory / 4
		}
	}
	for _, p := range plans {
		wc, err := p.file.file.WindowCost(p.level, p.win, []int{p.band.Index}) //nolint:contextcheck // it plans from the header, reading nothing
		if err != nil && !p.win.Empty() {
			return nil, &Error{Kind: ErrRead, Item: r.Item.ID, Asset: p.band.AssetKey, Band: p.band.Title(), Err: err}
		}
		cost += int64(n)*9/4 + wc.Bytes/4 + 1
		if p.resampled {
			cost += int64(n) * 4
		}
	}
	release, err := e.Decode.Acquire(ctx, cost)
	if err != nil {
		return nil, err
	}
	defer release()

	inside, err := lgrid.Mask(r.AOI, win)
	if err != nil {
		return nil, &Error{Kind: ErrPlace, Item: r.Item.ID, Asset: ref.key, Err: err}
	}
	out.W, out.H, out.Inside = win.Dx(), win.Dy(), inside
	px, full := PixelMetres(lgrid), PixelMetres(ref.grid)
	out.PixelMetres = px
	out.Grid = windowGrid(lgrid, win)
	out.Resolution = Resolution{EPSG: ref.info.EPSG, PixelMetres: px, FullMetres: full, Level: lvl,
		Width: win.Dx(), Height: win.Dy(), Budget: budgetPx}
	x0, y0 := lgrid.ToCRS(float64(win.Min.X), float64(win.Min.Y))
	gt := lgrid.GeoTransform
	out.GeoTransform = [6]float64{x0, gt[1], gt[2], y0, gt[4], gt[5]}
	out.Outline = outlineInWindow(lgrid, win, r.AOI)
	out.AOIPixels, out.Estimated = aoiPixels(inside, out.Outline, win, lgrid, r.AOIKm2)

	raw, valid, err := e.readBands(ctx, r.Item, plans, win, out)
	if err != nil {
		return nil, err
	}
	measured := len(r.Bands)
	if maskKind != "" {
		k := len(bands) - 1
		var res mask.Result
		if maskKind == mask.SCL {
			res = mask.ApplySCL(raw[k], valid[k], inside, nil)
		} else {
			res = mask.ApplyQAPixel(raw[k], valid[k], inside)
		}
		out.Mask = &MaskRead{Asset: bands[k].AssetKey, Kind: maskKind, Rule: res.Rule, Considered: res.Considered, Clear: res.Clear,
			Masked: res.Masked, ResampledFrom: resampledFrom(plans[k])}
		out.Keep = res.Keep
		raw, valid = raw[:measured], valid[:measured]
	} else {
		out.Keep = slices.Clone(inside)
	}
	infos := make([]cog.Info, measured)
	for i := range measured {
		infos[i] = plans[i].file.info
	}
	out.Calibration = e.calibrate(r, infos, raw, valid, out)
	out.Values, out.Valid = raw, valid
	for i := range measured {
		out.Bands[i].ResampledFrom = resampledFrom(plans[i])
		out.Bands[i].Coarser = plans[i].coarser
		out.Bands[i].DataType = infos[i].DataType
	}
	return out, nil
}

// openAll opens the distinct assets of bands side by side.
func (e *Env) openAll(ctx context.Context, item *stacclient.Item, bands []Band, requests *cog.RequestBudget) (map[string]*asset, error) {
	var keys []string
	for _, b := range bands {
		if !slices.Contains(keys, b.AssetKey) {
			keys = append(keys, b.AssetKey)
		}
	}
	opened := make([]*asset, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	for i, key := range keys {
		g.Go(func() error {
			f, err := e.open(gctx, item, key, requests)
			opened[i] = f
			return err
		})
	}
	err := g.Wait()
	files := map[string]*asset{}
	for i, f := range opened {
		if f != nil {
			files[keys[i]] = f
		}
	}
	if err != nil && ctx.Err() != nil {
		return files, ctx.Err()
	}
	return files, err
}

// planBand decides how band b reaches the grid: read on it when its file
// has the reference's grid, else from the level of its file nearest the
// grid's pixel size that is not coarser (no detail of the grid is lost),
// or a coarser one when that level's window would be far larger than the
// grid (a mask much finer than the bands).
func planBand(b Band, f, ref *asset, lvl int, lgrid geo.Grid, win image.Rectangle) (bandPlan, error) {
	p := bandPlan{band: b, file: f, level: lvl, win: win}
	if f == ref || (f.grid.Width == ref.grid.Width && f.grid.Height == ref.grid.Height && f.grid.GeoTransform == ref.grid.GeoTransform &&
		f.grid.CRS.EPSG == ref.grid.CRS.EPSG && lvl < len(f.info.Levels) && f.info.Levels[lvl].Width == lgrid.Width && f.info.Levels[lvl].Height == lgrid.Height) {
		return p, nil
	}
	target := PixelMetres(lgrid)
	first := 0
	for i, l := range f.info.Levels {
		if PixelMetres(f.grid.Level(l.Width, l.Height)) <= target*1.01 {
			first = i
		}
	}
	n := win.Dx() * win.Dy()
	limit := max(maxSourceFactor*n, minSourcePixels)
	for i := first; i < len(f.info.Levels); i++ {
		l := f.info.Levels[i]
		src, err := lgrid.SourceRect(f.grid.Level(l.Width, l.Height), win)
		if err != nil {
			return p, err
		}
		if src.Dx()*src.Dy() <= limit {
			p.level, p.win, p.resampled, p.grid, p.coarser = i, src, true, lgrid, i > first
			return p, nil
		}
	}
	return p, fmt.Errorf("its pixels are %s m and its coarsest level still needs more than %d× the %d px of the grid (%s m pixels)",
		formatMetres(PixelMetres(f.grid)), maxSourceFactor, n, formatMetres(target))
}

func resampledFrom(p bandPlan) float64 {
	if !p.resampled {
		return 0
	}
	l := p.file.info.Levels[p.level]
	return PixelMetres(p.file.grid.Level(l.Width, l.Height))
}

// readBands reads every band's raw numbers onto the grid, a few bands
// side by side; valid is false where a band has no value (the file's
// mask or alpha; nodata is the calibration's to apply).
func (e *Env) readBands(ctx context.Context, item *stacclient.Item, plans []bandPlan, win image.Rectangle, out *Pixels) ([][]float64, [][]bool, error) {
	n := out.W * out.H
	raw := make([][]float64, len(plans))
	valid := make([][]bool, len(plans))
	counts := make([][2]int, len(plans))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(bandsAtOnce)
	for i, p := range plans {
		g.Go(func() error {
			vals, ok, reqs, nbytes, err := readPlanned(gctx, p, n, win)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return &Error{Kind: ErrRead, Item: item.ID, Asset: p.band.AssetKey, Band: p.band.Title(), Err: err}
			}
			raw[i], valid[i], counts[i] = vals, ok, [2]int{reqs, nbytes}
			return nil
		})
	}
	err := g.Wait()
	for _, c := range counts {
		out.Requests += c[0]
		out.Bytes += c[1]
	}
	if err != nil {
		return nil, nil, err
	}
	return raw, valid, nil
}

// readPlanned reads one band as planned: its values on the grid (NaN
// where the grid pixel maps to none), and validity.
func readPlanned(ctx context.Context, p bandPlan, n int, win image.Rectangle) ([]float64, []bool, int, int, error) {
	if p.axisCols != nil {
		return readAxis(ctx, p)
	}
	if !p.resampled {
		w, err := p.file.file.ReadWindow(ctx, p.level, p.win, []int{p.band.Index})
		if err != nil {
			return nil, nil, 0, 0, err
		}
		return w.Bands[0], allValid(w.MaskValid, n), w.Requests, w.Bytes, nil
	}
	vals := make([]float64, n)
	valid := make([]bool, n)
	if p.win.Empty() {
		for k := range vals {
			vals[k] = math.NaN()
		}
		return vals, valid, 0, 0, nil
	}
	l := p.file.info.Levels[p.level]
	cols, rows, err := p.grid.NearestIn(p.file.grid.Level(l.Width, l.Height), win)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	w, err := p.file.file.ReadWindow(ctx, p.level, p.win, []int{p.band.Index})
	if err != nil {
		return nil, nil, 0, 0, err
	}
	for k := range vals {
		c, r := cols[k]-w.Rect.Min.X, rows[k]-w.Rect.Min.Y
		if cols[k] < 0 || c < 0 || r < 0 || c >= w.Rect.Dx() || r >= w.Rect.Dy() {
			vals[k] = math.NaN()
			continue
		}
		s := r*w.Rect.Dx() + c
		vals[k] = w.Bands[0][s]
		valid[k] = w.MaskValid == nil || w.MaskValid[s]
	}
	return vals, valid, w.Requests, w.Bytes, nil
}

// allValid is v, or n trues when v is nil.
func allValid(v []bool, n int) []bool {
	if v != nil {
		return v
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// PixelMetres is a grid's pixel size: its geotransform's in a projected
// CRS (metres; what the file says, e.g. 20 m for Sentinel-2's swir bands),
// else measured on the ground at the grid's centre.
func PixelMetres(g geo.Grid) float64 {
	if !g.CRS.Geographic() {
		return math.Hypot(g.GeoTransform[1], g.GeoTransform[4])
	}
	x, _ := g.PixelSize()
	return x
}

func formatMetres(v float64) string { return trimFloat(math.Round(v*100) / 100) }

// outlineInWindow is the area's outline in the window's pixel coordinates,
// for drawing.
func outlineInWindow(g geo.Grid, win image.Rectangle, aoi orb.Geometry) [][][2]float64 {
	mp, err := g.Outline(aoi)
	if err != nil {
		return nil // the mask was made from the same area; no outline is drawn rather than failing the call
	}
	var out [][][2]float64
	for _, poly := range mp {
		for _, ring := range poly {
			var pts [][2]float64
			for _, p := range ring {
				pts = append(pts, [2]float64{p[0] - float64(win.Min.X), p[1] - float64(win.Min.Y)})
			}
			out = append(out, pts)
		}
	}
	return out
}

// aoiPixels is how many pixels of the grid the whole area covers: those
// inside the window when the area lies within the raster, else (the
// outline reaching past the raster's edge) at least those plus the rest
// of the area's size in pixels, estimated from its area on the ellipsoid.
func aoiPixels(inside []bool, outline [][][2]float64, win image.Rectangle, g geo.Grid, km2 float64) (int, bool) {
	count := 0
	for _, in := range inside {
		if in {
			count++
		}
	}
	reaches := false
	const eps = 1e-6
	for _, ring := range outline {
		for _, p := range ring {
			x, y := p[0]+float64(win.Min.X), p[1]+float64(win.Min.Y)
			if x < -eps || y < -eps || x > float64(g.Width)+eps || y > float64(g.Height)+eps {
				reaches = true
			}
		}
	}
	if !reaches || km2 <= 0 {
		return count, false
	}
	xm, ym := g.PixelSize()
	if !g.CRS.Geographic() {
		xm, ym = math.Hypot(g.GeoTransform[1], g.GeoTransform[4]), math.Hypot(g.GeoTransform[2], g.GeoTransform[5])
	}
	if xm <= 0 || ym <= 0 {
		return count, false
	}
	est := int(math.Round(km2 * 1e6 / (xm * ym)))
	return max(count, est), true
}
