package pixel

import (
	"context"
	"fmt"
	"image"
	"math"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
)

// Target is a grid covering the whole area, onto which several items are
// read (a mosaic of tiles, a composite of dates, a change between them):
// the pixel lattice of one item's band file at one of its levels, cut to
// the area's extent. Pixels of the area outside an item's raster have no
// value in that item's read, so every read on it counts the whole area.
type Target struct {
	// Grid is the area's grid: CRS, geotransform of its top-left pixel
	// (GDAL's order) and size; what is read onto it lies on it, so it is
	// what an export georeferences the values with.
	Grid geo.Grid
	// Resolution says which file and level the lattice is.
	Resolution Resolution
	// From is the item, Asset its asset, whose file gave the lattice.
	From, Asset string
}

// PlanTarget is the grid for reading items over aoi: the lattice of the
// finest of bands (the bands to read, of the item that covers most of the
// area, is the usual choice) at the finest of its file's levels whose
// window over the whole area holds at most maxPixels (0: the read pixel
// budget). Items on the same lattice (the tiles of one UTM zone of
// Sentinel-2 or Landsat) are then read without resampling.
func (e *Env) PlanTarget(ctx context.Context, item *stacclient.Item, bands []Band, aoi orb.Geometry, maxPixels int) (*Target, error) {
	if maxPixels <= 0 {
		maxPixels = e.readPixels()
	}
	if len(bands) == 0 {
		return nil, &Error{Kind: ErrNoBand, Item: item.ID, Detail: "no band to read"}
	}
	files, err := e.openAll(ctx, item, bands, cog.NewRequestBudget(e.readRequests()))
	defer func() {
		for _, f := range files {
			f.close()
		}
	}()
	if err != nil {
		return nil, err
	}
	band := bands[0]
	f := files[band.AssetKey]
	for _, b := range bands[1:] {
		if o := files[b.AssetKey]; PixelMetres(o.grid) < PixelMetres(f.grid)*0.999 {
			band, f = b, o
		}
	}
	gt := f.grid.GeoTransform
	if gt[2] != 0 || gt[4] != 0 {
		return nil, &Error{Kind: ErrBadGrid, Item: item.ID, Asset: band.AssetKey,
			Detail: "its geotransform is rotated, and areas are read across items only on north-up grids"}
	}
	var last image.Rectangle
	for lvl, l := range f.info.Levels {
		lattice := f.grid.Level(l.Width, l.Height)
		win, err := aoiWindow(lattice, aoi)
		if err != nil {
			return nil, &Error{Kind: ErrPlace, Item: item.ID, Asset: band.AssetKey, Detail: f.grid.CRS.String(), Err: err}
		}
		last = win
		if int64(win.Dx())*int64(win.Dy()) > int64(maxPixels) {
			continue
		}
		return &Target{Grid: windowGrid(lattice, win), From: item.ID, Asset: band.AssetKey,
			Resolution: Resolution{EPSG: f.info.EPSG, PixelMetres: PixelMetres(lattice), FullMetres: PixelMetres(f.grid), Level: lvl,
				Width: win.Dx(), Height: win.Dy(), Budget: maxPixels}}, nil
	}
	return nil, &Error{Kind: ErrTooLarge, Item: item.ID, Asset: band.AssetKey,
		Detail: fmt.Sprintf("%d×%d px at the coarsest level (%d of %d), over the pixel budget of %d per band",
			last.Dx(), last.Dy(), len(f.info.Levels)-1, len(f.info.Levels)-1, maxPixels)}
}

// maxTargetSide bounds a target grid's side before the pixel budget is
// applied (a continent at 10 m is not planned pixel by pixel).
const maxTargetSide = 1 << 22

// aoiWindow is the window of the lattice's pixels the area touches (as
// Window has it: the bound of its densified outline, floor and ceiling),
// not clipped to the lattice's raster: it may start at negative columns
// and reach past the raster's size. The outline is taken on a provisional
// grid of the lattice around the area, so that it is clipped (as
// geo.Outline clips an area) to a region that holds all of it.
func aoiWindow(lattice geo.Grid, aoi orb.Geometry) (image.Rectangle, error) {
	b := aoi.Bound()
	gt := lattice.GeoTransform
	cx, cy, err := lattice.CRS.FromLonLat(b.Center()[0], b.Center()[1])
	if err != nil {
		return image.Rectangle{}, err
	}
	col, row := (cx-gt[0])/gt[1], (cy-gt[3])/gt[5]
	reach := 16.0
	for _, p := range []orb.Point{b.Min, b.Max, {b.Min[0], b.Max[1]}, {b.Max[0], b.Min[1]}} {
		x, y, err := lattice.CRS.FromLonLat(p[0], p[1])
		if err != nil {
			return image.Rectangle{}, err
		}
		reach = math.Max(reach, 2*math.Max(math.Abs((x-cx)/gt[1]), math.Abs((y-cy)/gt[5]))+16)
	}
	if reach > maxTargetSide {
		return image.Rectangle{}, fmt.Errorf("the area spans more than %d pixels of %s m", maxTargetSide, formatMetres(math.Abs(gt[1])))
	}
	c0, r0 := int(math.Floor(col-reach)), int(math.Floor(row-reach))
	side := int(2*reach) + 1
	around := geo.Grid{CRS: lattice.CRS, Width: side, Height: side,
		GeoTransform: [6]float64{gt[0] + float64(c0)*gt[1], gt[1], 0, gt[3] + float64(r0)*gt[5], 0, gt[5]}}
	mp, err := around.Outline(aoi)
	if err != nil {
		return image.Rectangle{}, err
	}
	if len(mp) == 0 {
		return image.Rectangle{}, fmt.Errorf("the area cannot be placed on %s", lattice.CRS)
	}
	ob := mp.Bound()
	win := image.Rect(int(math.Floor(ob.Min[0])), int(math.Floor(ob.Min[1])), int(math.Ceil(ob.Max[0])), int(math.Ceil(ob.Max[1])))
	return win.Add(image.Pt(c0, r0)), nil
}

// windowGrid is the grid of a window of g's pixels: its own origin, its
// size.
func windowGrid(g geo.Grid, win image.Rectangle) geo.Grid {
	x, y := g.ToCRS(float64(win.Min.X), float64(win.Min.Y))
	gt := g.GeoTransform
	return geo.Grid{CRS: g.CRS, Width: win.Dx(), Height: win.Dy(), GeoTransform: [6]float64{x, gt[1], gt[2], y, gt[4], gt[5]}}
}

// Release gives back what a read made with Hold keeps charged to the
// decode budget; the pixels must not be used after it. It does nothing for
// other reads, and may be called more than once.
func (p *Pixels) Release() {
	if p != nil && p.release != nil {
		p.release()
		p.release = nil
	}
}

// readOnto is Read onto r.Grid: each band planned onto the target's whole
// grid, the area's pixels counted on it, and the pixels outside the
// item's raster without a value (and outside the mask's reach: the mask
// counts only the pixels its file covers).
func (e *Env) readOnto(ctx context.Context, r Request, bands []Band, maskKind mask.Kind, files map[string]*asset, out *Pixels) (*Pixels, error) {
	g := r.Grid.Grid
	n := g.Width * g.Height
	plans := make([]bandPlan, len(bands))
	overlap := false
	for i, b := range bands {
		p, err := planOnto(b, files[b.AssetKey], g)
		if err != nil {
			return nil, &Error{Kind: ErrTooFine, Item: r.Item.ID, Asset: b.AssetKey, Band: b.Title(), Detail: err.Error()}
		}
		plans[i] = p
		overlap = overlap || (i < len(r.Bands) && !p.win.Empty())
	}
	if !overlap {
		return nil, &Error{Kind: ErrNoOverlap, Item: r.Item.ID}
	}
	// Kept: the area mask and the kept pixels (a byte each), per measured
	// band its values and validity, and for a held read the caller's
	// per-pixel source (two bytes). Scratch: the headers parsed for this
	// read, the mask band on the grid, what each band's read holds at once
	// (the reader's own bound, from the header alone) and its pixel map.
	kept := int64(n)/2 + int64(len(r.Bands))*(int64(n)*9/4+1)
	if r.Hold {
		kept += int64(n) / 2
	}
	scratch := int64(0)
	for _, f := range files {
		if f.info.HeaderRequests > 0 {
			scratch += f.info.HeaderMemory / 4
		}
	}
	for i, p := range plans {
		if i >= len(r.Bands) {
			scratch += int64(n)*9/4 + 1
		}
		if !p.win.Empty() {
			wc, err := p.file.file.WindowCost(p.level, p.win, []int{p.band.Index}) //nolint:contextcheck // it plans from the header, reading nothing
			if err != nil {
				return nil, &Error{Kind: ErrRead, Item: r.Item.ID, Asset: p.band.AssetKey, Band: p.band.Title(), Err: err}
			}
			scratch += wc.Bytes / 4
		}
		switch {
		case p.resampled:
			scratch += int64(n) * 4
		case p.axisCols != nil:
			scratch += int64(len(p.axisCols)+len(p.axisRows)) / 2
		}
	}
	releases, err := e.Decode.AcquireParts(ctx, kept, scratch)
	if err != nil {
		return nil, err
	}
	defer releases[1]()
	keep := releases[0]
	defer func() {
		if keep != nil {
			keep()
		}
	}()
	win := g.Bounds()
	inside, err := g.Mask(r.AOI, win)
	if err != nil {
		return nil, &Error{Kind: ErrPlace, Item: r.Item.ID, Err: err}
	}
	out.W, out.H, out.Inside, out.Grid, out.GeoTransform = g.Width, g.Height, inside, g, g.GeoTransform
	out.Resolution = r.Grid.Resolution
	out.PixelMetres = r.Grid.Resolution.PixelMetres
	out.Outline = outlineInWindow(g, win, r.AOI)
	for _, in := range inside {
		if in {
			out.AOIPixels++
		}
	}
	raw, valid, err := e.readBands(ctx, r.Item, plans, win, out)
	if err != nil {
		return nil, err
	}
	measured := len(r.Bands)
	if maskKind != "" {
		k := len(bands) - 1
		// The mask counts the pixels its file reaches (a pixel no source
		// pixel maps to reads as NaN).
		within := make([]bool, len(inside))
		for i := range within {
			within[i] = inside[i] && !math.IsNaN(raw[k][i])
		}
		var res mask.Result
		if maskKind == mask.SCL {
			res = mask.ApplySCL(raw[k], valid[k], within, nil)
		} else {
			res = mask.ApplyQAPixel(raw[k], valid[k], within)
		}
		out.Mask = &MaskRead{Asset: bands[k].AssetKey, Kind: maskKind, Rule: res.Rule, Considered: res.Considered, Clear: res.Clear,
			Masked: res.Masked, ResampledFrom: ontoResampledFrom(plans[k], g)}
		out.Keep = res.Keep
		raw, valid = raw[:measured], valid[:measured]
	} else {
		out.Keep = append([]bool(nil), inside...)
	}
	infos := make([]cog.Info, measured)
	for i := range measured {
		infos[i] = plans[i].file.info
	}
	out.Calibration = e.calibrate(r, infos, raw, valid, out)
	out.Values, out.Valid = raw, valid
	for i := range measured {
		out.Bands[i].ResampledFrom = ontoResampledFrom(plans[i], g)
		out.Bands[i].Coarser = plans[i].coarser
	}
	if r.Hold {
		out.release, keep = keep, nil
	}
	return out, nil
}

// planOnto plans band b of file f onto the whole of grid g: from the
// level of f nearest g's pixel size that is not coarser (a coarser one
// when that level's window would be far larger than the grid), by one
// source index per column and one per row where the level shares g's CRS
// and is north-up (every tile of one UTM zone; a 20 m band under a 10 m
// grid), else by a source pixel per grid pixel, as planBand resamples (a
// tile of another UTM zone). Both are nearest neighbour, and the same
// arithmetic as geo.NearestIn, so they pick the same pixels.
func planOnto(b Band, f *asset, g geo.Grid) (bandPlan, error) {
	ogt := f.grid.GeoTransform
	if f.grid.CRS.EPSG != g.CRS.EPSG || ogt[2] != 0 || ogt[4] != 0 || g.GeoTransform[2] != 0 || g.GeoTransform[4] != 0 {
		// Another CRS: planBand's per-pixel map (a reference it never
		// matches sends it there).
		return planBand(b, f, &asset{}, 0, g, g.Bounds())
	}
	target := PixelMetres(g)
	first := 0
	for i, l := range f.info.Levels {
		if PixelMetres(f.grid.Level(l.Width, l.Height)) <= target*1.01 {
			first = i
		}
	}
	n := g.Width * g.Height
	limit := max(maxSourceFactor*n, minSourcePixels)
	for i := first; i < len(f.info.Levels); i++ {
		l := f.info.Levels[i]
		og := f.grid.Level(l.Width, l.Height)
		cols := axisMap(g.GeoTransform[0], g.GeoTransform[1], g.Width, og.GeoTransform[0], og.GeoTransform[1], og.Width)
		rows := axisMap(g.GeoTransform[3], g.GeoTransform[5], g.Height, og.GeoTransform[3], og.GeoTransform[5], og.Height)
		src := axisRect(cols, rows)
		if src.Dx()*src.Dy() <= limit {
			return bandPlan{band: b, file: f, level: i, win: src, axisCols: cols, axisRows: rows, coarser: i > first}, nil
		}
	}
	return bandPlan{}, fmt.Errorf("its pixels are %s m and its coarsest level still needs more than %d× the %d px of the grid (%s m pixels)",
		formatMetres(PixelMetres(f.grid)), maxSourceFactor, n, formatMetres(target))
}

// axisMap is, along one axis of a north-up grid (origin o, pixel size d,
// n pixels), the source pixel (origin so, size sd, sn pixels) holding each
// pixel's centre, -1 outside: geo.NearestIn's arithmetic (GDAL's inverse
// geotransform, the same nudge) on one axis.
func axisMap(o, d float64, n int, so, sd float64, sn int) []int {
	const nearEps = 1e-10
	inv0, inv1 := -so/sd, 1/sd
	out := make([]int, n)
	for k := range out {
		x := o + (float64(k)+0.5)*d
		s := math.Floor(inv0 + x*inv1 + nearEps)
		if s >= 0 && s < float64(sn) {
			out[k] = int(s)
		} else {
			out[k] = -1
		}
	}
	return out
}

// axisRect is the source window the axis maps reach (empty when one of
// them reaches nothing).
func axisRect(cols, rows []int) image.Rectangle {
	span := func(m []int) (int, int) {
		lo, hi := math.MaxInt32, -1
		for _, v := range m {
			if v >= 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		return lo, hi + 1
	}
	x0, x1 := span(cols)
	y0, y1 := span(rows)
	if x1 <= x0 || y1 <= y0 {
		return image.Rectangle{}
	}
	return image.Rect(x0, y0, x1, y1)
}

// readAxis reads a band planned by axis maps: its values on the grid (NaN
// where the grid pixel maps to none) and validity.
func readAxis(ctx context.Context, p bandPlan) ([]float64, []bool, int, int, error) {
	w, h := len(p.axisCols), len(p.axisRows)
	vals := make([]float64, w*h)
	valid := make([]bool, w*h)
	for k := range vals {
		vals[k] = math.NaN()
	}
	if p.win.Empty() {
		return vals, valid, 0, 0, nil
	}
	win, err := p.file.file.ReadWindow(ctx, p.level, p.win, []int{p.band.Index})
	if err != nil {
		return nil, nil, 0, 0, err
	}
	ww := win.Rect.Dx()
	for r, sr := range p.axisRows {
		y := sr - win.Rect.Min.Y
		if sr < 0 || y < 0 || y >= win.Rect.Dy() {
			continue
		}
		for c, sc := range p.axisCols {
			x := sc - win.Rect.Min.X
			if sc < 0 || x < 0 || x >= ww {
				continue
			}
			s := y*ww + x
			vals[r*w+c] = win.Bands[0][s]
			valid[r*w+c] = win.MaskValid == nil || win.MaskValid[s]
		}
	}
	return vals, valid, win.Requests, win.Bytes, nil
}

// ontoResampledFrom is the pixel size a band planned onto g was resampled
// from, 0 when its pixels are g's (same size, whole-pixel offset).
func ontoResampledFrom(p bandPlan, g geo.Grid) float64 {
	if p.resampled {
		return resampledFrom(p)
	}
	if p.file == nil || p.level >= len(p.file.info.Levels) {
		return 0
	}
	l := p.file.info.Levels[p.level]
	og := p.file.grid.Level(l.Width, l.Height)
	a, b := og.GeoTransform, g.GeoTransform
	same := math.Abs(a[1]-b[1]) <= 1e-9*math.Abs(b[1]) && math.Abs(a[5]-b[5]) <= 1e-9*math.Abs(b[5])
	if same {
		dx, dy := (b[0]-a[0])/a[1], (b[3]-a[3])/a[5]
		same = math.Abs(dx-math.Round(dx)) < 1e-6 && math.Abs(dy-math.Round(dy)) < 1e-6
	}
	if same {
		return 0
	}
	return PixelMetres(og)
}
