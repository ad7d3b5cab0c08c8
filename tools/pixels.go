package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/stats"
)

// What the pixel tools (toolset "pixels": aoi_statistics, compute_index,
// render_aoi, index_time_series) share: the bands of an item named by
// their eo:bands common names, the window of each asset an area of
// interest needs, read at the overview that fits the pixel budget through
// the reliability layer (cog.HTTPSource over stacclient's FetchRange), the
// bands brought to one grid, calibrated, and masked by the collection's
// cloud mask where it has one.

// DefaultReadPixels is the pixel budget of one band's read
// (Limits.ReadPixels): the finest level whose window over the area holds
// at most this many pixels is read (a 10 km × 10 km area at 10 m is
// 1000 × 1000 px).
const DefaultReadPixels = 1 << 20

func readPixels(l Limits) int {
	if l.ReadPixels > 0 {
		return l.ReadPixels
	}
	return DefaultReadPixels
}

// pixelState is the process's header and tile cache of the pixel tools.
type pixelState struct {
	once  sync.Once
	cache *cog.Cache
}

// pixelCacheBytes bounds the cache (headers and decoded tiles).
const pixelCacheBytes = 64 << 20

func (d *Deps) pixelCache() *cog.Cache {
	d.pixels.once.Do(func() { d.pixels.cache = cog.NewCache(pixelCacheBytes) })
	return d.pixels.cache
}

// itemBand is one band of an item the tools can read: an asset and a band
// of its file, with what the item says about it.
type itemBand struct {
	AssetKey   string
	Band       int // 0-based within the asset's file
	CommonName string
	Name       string       // eo:bands name (B04), "" when none
	cal        *calibration // raster:bands; nil: the file's own metadata
}

// calibration is raster:bands' scale, offset and nodata for one band.
type calibration struct {
	scale, offset *float64
	nodata        *float64
}

// label is how texts name the band: "red (asset red)" or "nir (asset B08, band 1)".
func (b itemBand) label() string {
	name := b.CommonName
	if name == "" {
		name = b.AssetKey
	}
	s := name + " (asset " + b.AssetKey
	if b.Band > 0 {
		s += fmt.Sprintf(", band %d", b.Band+1)
	}
	return s + ")"
}

// itemBands lists the item's bands that have an eo:bands entry, in asset
// key order: STAC 1.0's eo:bands on the asset, or STAC 1.1's bands with
// eo:common_name; raster:bands (or the 1.1 band's own scale/offset/nodata)
// gives the calibration.
func itemBands(item *stacclient.Item) []itemBand {
	var out []itemBand
	keys := make([]string, 0, len(item.Assets))
	for k := range item.Assets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		a := item.Assets[key]
		type band struct {
			Name       string   `json:"name"`
			CommonName string   `json:"common_name"`
			EOCommon   string   `json:"eo:common_name"`
			Scale      *float64 `json:"scale"`
			Offset     *float64 `json:"offset"`
			NoData     any      `json:"nodata"`
		}
		var eo, rb, b11 []band
		_ = json.Unmarshal(a.Extra["eo:bands"], &eo)
		_ = json.Unmarshal(a.Extra["raster:bands"], &rb)
		_ = json.Unmarshal(a.Extra["bands"], &b11)
		if len(eo) == 0 && len(b11) > 0 {
			eo = b11
			if len(rb) == 0 {
				rb = b11
			}
		}
		for i, e := range eo {
			common := strings.ToLower(strings.TrimSpace(e.CommonName + e.EOCommon))
			ib := itemBand{AssetKey: key, Band: i, CommonName: common, Name: e.Name}
			if i < len(rb) {
				c := &calibration{scale: rb[i].Scale, offset: rb[i].Offset, nodata: nodataValue(rb[i].NoData)}
				if c.scale != nil || c.offset != nil || c.nodata != nil {
					ib.cal = c
				}
			}
			out = append(out, ib)
		}
	}
	return out
}

// nodataValue reads raster:bands nodata: a number, or "nan".
func nodataValue(v any) *float64 {
	switch x := v.(type) {
	case float64:
		return &x
	case string:
		if strings.EqualFold(x, "nan") {
			n := math.NaN()
			return &n
		}
	}
	return nil
}

// findBand finds the band filling one of commonNames (preferred first),
// or an asset with that key (a band without eo:bands, such as a DEM's).
func findBand(item *stacclient.Item, bands []itemBand, names ...string) (itemBand, bool) {
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		for _, b := range bands {
			if b.CommonName == n {
				return b, true
			}
		}
	}
	for _, n := range names {
		if a, ok := item.Assets[n]; ok && isGeoTIFF(a) {
			return itemBand{AssetKey: n}, true
		}
	}
	return itemBand{}, false
}

// missingBand is the error for a band the item lacks.
func missingBand(item *stacclient.Item, bands []itemBand, role string, names []string) error {
	var have []string
	for _, b := range bands {
		if b.CommonName != "" && !slices.Contains(have, b.CommonName) {
			have = append(have, b.CommonName)
		}
	}
	if len(have) == 0 {
		return actionable(nil, "item %s has no asset with eo:bands common names (its assets: %s), so its %s band cannot be found; "+
			"name an asset key instead where the tool takes bands", item.ID, strings.Join(orderedAssetKeys(item.Assets), ", "), role)
	}
	return actionable(nil, "this item (%s) has no asset with eo:bands common_name %s; its bands are: %s",
		item.ID, strings.Join(names, " or "), strings.Join(have, ", "))
}

// isGeoTIFF says whether an asset may be read as a GeoTIFF.
func isGeoTIFF(a stacclient.Asset) bool {
	mt := strings.ToLower(a.Type)
	if strings.HasPrefix(mt, "image/tiff") || strings.HasPrefix(mt, "image/geotiff") {
		return true
	}
	h := strings.ToLower(a.Href)
	if i := strings.IndexAny(h, "?#"); i >= 0 {
		h = h[:i]
	}
	return mt == "" && (strings.HasSuffix(h, ".tif") || strings.HasSuffix(h, ".tiff"))
}

// cloudMaskBand is the item's cloud mask: Sentinel-2 L2A's scene
// classification (asset scl / SCL) or Landsat C2's QA_PIXEL (qa_pixel /
// QA_PIXEL). These are products' layers, not spectral bands, so they have
// no common name: they are found by the key both big catalogs use.
func cloudMaskBand(item *stacclient.Item) (itemBand, mask.Kind, bool) {
	for key, a := range item.Assets {
		if !isGeoTIFF(a) {
			continue
		}
		switch strings.ToLower(key) {
		case "scl":
			return itemBand{AssetKey: key, CommonName: "scl"}, mask.SCL, true
		case "qa_pixel":
			return itemBand{AssetKey: key, CommonName: "qa_pixel"}, mask.QAPixel, true
		}
	}
	return itemBand{}, "", false
}

// aoiArea reads the tool's aoi: a bbox or a GeoJSON Polygon/MultiPolygon,
// in longitude/latitude.
func aoiArea(arg AreaArg) (orb.Geometry, footprint.Shape, error) {
	v, err := decodeArg("aoi", arg, "a bbox or a GeoJSON geometry")
	if err != nil {
		return nil, footprint.Shape{}, err
	}
	if v == nil {
		return nil, footprint.Shape{}, &stacclient.ParamError{Param: "aoi", Got: "(none)", Reason: "the pixel tools measure an area",
			Accepted: "[west, south, east, north] in degrees, or a GeoJSON Polygon or MultiPolygon"}
	}
	bbox, intersects, err := stacclient.ParseArea("aoi", v)
	if err != nil {
		return nil, footprint.Shape{}, err
	}
	shape, ok, err := searchArea(stacclient.SearchParams{BBox: bbox, Intersects: intersects})
	if err != nil {
		return nil, shape, err
	}
	if !ok {
		return nil, shape, &stacclient.ParamError{Param: "aoi", Got: trimText(string(intersects), 120), Reason: "not an area",
			Accepted: "[west, south, east, north] in degrees, or a GeoJSON Polygon or MultiPolygon"}
	}
	if bbox != nil {
		b := orb.Bound{Min: orb.Point{bbox[0], bbox[1]}, Max: orb.Point{bbox[2], bbox[3]}}
		if bbox[0] > bbox[2] {
			return nil, shape, &stacclient.ParamError{Param: "aoi", Got: formatBBox(bbox), Reason: "the pixel tools do not read areas across the antimeridian",
				Accepted: "a bbox with west < east (split the area at ±180° and call once per side)"}
		}
		return b.ToPolygon(), shape, nil
	}
	g, err := geojson.UnmarshalGeometry(intersects)
	if err != nil {
		return nil, shape, &stacclient.ParamError{Param: "aoi", Got: trimText(string(intersects), 120), Reason: err.Error(),
			Accepted: "a GeoJSON Polygon or MultiPolygon"}
	}
	return g.Geometry(), shape, nil
}

// openedAsset is one asset's file, opened once per call.
type openedAsset struct {
	file  *cog.File
	info  cog.Info
	grid  geo.Grid
	local *os.File // a local catalog's file, closed when the read ends
}

// readRequest is what one read of an item needs.
type readRequest struct {
	item  *stacclient.Item
	bands []itemBand
	// mask adds the item's cloud mask when it has one.
	mask bool
	aoi  orb.Geometry
}

// aoiPixels are an item's bands over an area, on one grid.
type aoiPixels struct {
	W, H    int
	Inside  []bool      // pixel centre inside the area
	Values  [][]float64 // per band, calibrated; NaN where no value
	Valid   [][]bool
	Outline [][][2]float64 // the area in the window's pixels
	// PixelMetres is the ground size of one pixel of the grid read.
	PixelMetres float64
	Resolution  Resolution
	Bands       []BandRead
	Mask        *MaskInfo
	keep        []bool // inside, and clear when masked
	Requests    int
	Bytes       int
	Notes       []string
}

// Resolution says which resolution was read.
type Resolution struct {
	EPSG        int     `json:"epsg"`
	PixelMetres float64 `json:"pixel_m" jsonschema:"ground size of the pixels measured"`
	FullMetres  float64 `json:"full_resolution_m" jsonschema:"the file's full-resolution pixel size"`
	Level       int     `json:"level" jsonschema:"0 full resolution, 1.. overviews"`
	Width       int     `json:"width" jsonschema:"pixels of the window read"`
	Height      int     `json:"height"`
	Budget      int     `json:"pixel_budget" jsonschema:"most pixels one band read may hold"`
}

// BandRead is one band as read.
type BandRead struct {
	Band        string `json:"band" jsonschema:"common name, or asset key"`
	Asset       string `json:"asset"`
	Calibration string `json:"calibration" jsonschema:"scale, offset and nodata applied, and from where"`
	Resampled   string `json:"resampled,omitempty" jsonschema:"how the band was brought to the grid measured, when it was"`
}

// MaskInfo is the cloud mask applied.
type MaskInfo struct {
	Asset      string         `json:"asset"`
	Rule       string         `json:"rule" jsonschema:"the classes or bits removed"`
	Considered int            `json:"considered" jsonschema:"pixels of the area the mask was read for"`
	Clear      int            `json:"clear" jsonschema:"pixels it kept"`
	Masked     []mask.Counted `json:"masked" jsonschema:"pixels removed, by class"`
}

// readAOI reads r's bands over the area. The finest band decides the grid
// (at the level that fits the pixel budget); the others are resampled to
// it by nearest neighbour.
func readAOI(ctx context.Context, c *Call, r readRequest) (*aoiPixels, error) {
	bands := slices.Clone(r.bands)
	var maskKind mask.Kind
	if r.mask {
		if mb, kind, ok := cloudMaskBand(r.item); ok {
			bands = append(bands, mb)
			maskKind = kind
		}
	}
	files := map[string]*openedAsset{}
	defer func() {
		for _, f := range files {
			if f.local != nil {
				_ = f.local.Close()
			}
		}
	}()
	for _, b := range bands {
		if files[b.AssetKey] != nil {
			continue
		}
		f, err := openAsset(ctx, c, r.item, b.AssetKey)
		if err != nil {
			return nil, err
		}
		files[b.AssetKey] = f
	}
	// The reference: the finest of the measured bands (not the mask).
	ref := files[r.bands[0].AssetKey]
	for _, b := range r.bands[1:] {
		if f := files[b.AssetKey]; math.Abs(f.info.GeoTransform[1]) < math.Abs(ref.info.GeoTransform[1]) {
			ref = f
		}
	}
	win0, ok, err := ref.grid.Window(r.aoi)
	if err != nil {
		return nil, actionable(err, "item %s: the aoi cannot be placed on its raster (%s): %v", r.item.ID, ref.grid.CRS, err)
	}
	if !ok {
		return nil, actionable(nil, "the aoi does not overlap item %s's raster: choose an item whose footprint covers the area (search_items with the aoi)", r.item.ID)
	}
	budgetPx := readPixels(c.Deps.Limits)
	lvl, win := ref.file.ChooseLevel(win0, budgetPx)
	l := ref.info.Levels[lvl]
	lgrid := ref.grid.Level(l.Width, l.Height)
	inside, err := lgrid.Mask(r.aoi, win)
	if err != nil {
		return nil, err
	}
	out := &aoiPixels{W: win.Dx(), H: win.Dy(), Inside: inside}
	for _, f := range files {
		// What Open fetched: 0 when the header was cached.
		out.Requests += f.info.HeaderRequests
		out.Bytes += f.info.HeaderBytes
	}
	px, full := pixelMetres(lgrid), pixelMetres(ref.grid)
	out.PixelMetres = px
	out.Resolution = Resolution{EPSG: ref.info.EPSG, PixelMetres: round2(px), FullMetres: round2(full), Level: lvl,
		Width: win.Dx(), Height: win.Dy(), Budget: budgetPx}
	out.Outline = outlineInWindow(lgrid, win, r.aoi)
	n := out.W * out.H
	if err := holdPixels(ctx, c, int64(n)*int64(len(bands))*2, func() error {
		for _, b := range bands {
			f := files[b.AssetKey]
			vals, valid, resampled, err := readBandOnGrid(ctx, f, b, lgrid, win)
			if err != nil {
				return actionable(err, "item %s: reading %s failed: %v", r.item.ID, b.label(), err)
			}
			out.Requests += vals.requests
			out.Bytes += vals.bytes
			if b.CommonName == string(maskKind) && maskKind != "" && b.AssetKey == bands[len(bands)-1].AssetKey {
				var res mask.Result
				if maskKind == mask.SCL {
					res = mask.ApplySCL(vals.v, valid, inside, nil)
				} else {
					res = mask.ApplyQAPixel(vals.v, valid, inside)
				}
				out.Mask = &MaskInfo{Asset: b.AssetKey, Rule: res.Rule, Considered: res.Considered, Clear: res.Clear, Masked: res.Masked}
				if out.Mask.Masked == nil {
					out.Mask.Masked = []mask.Counted{}
				}
				if resampled != "" {
					out.Mask.Rule += "; " + resampled
				}
				out.keep = res.Keep
				continue
			}
			cal, calText := bandCalibration(b, f.info)
			valid = cal.Apply(vals.v, valid)
			out.Values = append(out.Values, vals.v)
			out.Valid = append(out.Valid, valid)
			name := b.CommonName
			if name == "" {
				name = b.AssetKey
			}
			out.Bands = append(out.Bands, BandRead{Band: name, Asset: b.AssetKey, Calibration: calText, Resampled: resampled})
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if out.keep == nil {
		out.keep = slices.Clone(inside)
		if r.mask {
			out.Notes = append(out.Notes, "no cloud mask: the item has no SCL or QA_PIXEL asset, so every pixel with a value was measured")
		}
	}
	return out, nil
}

// round2 rounds to centimetres.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// holdPixels runs fn holding n units of the process's decoded-pixel
// budget (float64 values count 2 units of 4 bytes). The reads behind fn
// wait on the network, so they take no CPU slot.
func holdPixels(ctx context.Context, c *Call, n int64, fn func() error) error {
	if b := c.Deps.work().pixelBudget(); b != nil {
		free, err := b.Acquire(ctx, n)
		if err != nil {
			return err
		}
		defer free()
	}
	return fn()
}

// withCPU runs fn holding a CPU slot (statistics, drawing, encoding).
func withCPU(ctx context.Context, c *Call, fn func() error) error {
	release, err := c.Deps.work().cpuSlot(ctx)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// openAsset opens an asset's GeoTIFF through the reliability layer.
func openAsset(ctx context.Context, c *Call, item *stacclient.Item, key string) (*openedAsset, error) {
	a := item.Assets[key]
	if !isGeoTIFF(a) {
		return nil, actionable(nil, "asset %s of item %s is %s, not a GeoTIFF; the pixel tools read Cloud-Optimized GeoTIFFs",
			key, item.ID, orDash(a.Type))
	}
	href := assetHref(item, key)
	if strings.HasPrefix(strings.ToLower(href), "s3://") {
		return nil, actionable(nil, "asset %s of item %s is at %s, an s3:// href this server does not read: "+
			"use the catalog's https hrefs (Earth Search and the Planetary Computer give them)", key, item.ID, href)
	}
	name := item.Assets[key].Href // unsigned: names the file in the cache and in errors
	src := cog.HTTPSource(c.Catalog.Client, href, name)
	var local *os.File
	if path, ok, err := localAssetPath(c, name); err != nil { // the href as served, before resolving against the item's link
		return nil, actionable(err, "item %s asset %s: %v", item.ID, key, err)
	} else if ok {
		if local, err = os.Open(path); err != nil {
			return nil, actionable(err, "item %s asset %s could not be opened: %v", item.ID, key, err)
		}
		fi, err := local.Stat()
		if err != nil {
			_ = local.Close()
			return nil, actionable(err, "item %s asset %s: %v", item.ID, key, err)
		}
		// The cache key changes when the file does.
		src = cog.ReaderAtSource(fmt.Sprintf("%s@%d.%d", path, fi.ModTime().UnixNano(), fi.Size()), local, fi.Size())
	}
	f, err := cog.Open(ctx, src, cog.Options{Cache: c.Deps.pixelCache()})
	if err != nil && local != nil {
		_ = local.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, actionable(err, "item %s asset %s could not be opened as a GeoTIFF: %v", item.ID, key, err)
	}
	info := f.Info()
	if info.EPSG == 0 || !info.Georeferenced {
		return nil, actionable(nil, "item %s asset %s has no EPSG-coded CRS in its GeoKeys, so the aoi cannot be placed on it", item.ID, key)
	}
	crs, err := geo.FromEPSG(info.EPSG)
	if err != nil {
		return nil, actionable(err, "item %s asset %s: %v", item.ID, key, err)
	}
	g := geo.Grid{CRS: crs, GeoTransform: info.GeoTransform, Width: info.Width, Height: info.Height}
	if err := g.Check(); err != nil {
		return nil, actionable(err, "item %s asset %s: %v", item.ID, key, err)
	}
	return &openedAsset{file: f, info: info, grid: g, local: local}, nil
}

// pixelCall marks a pixel tool's call as one made of many reads it needs
// all of (its item or search, then twenty-odd range requests): its
// requests share one pool of attempts, so that one may take up to three
// past the policy's three, never more than three a request on average
// (reliability.PoolAttempts, adr/0030). With three each, a call of 25
// reads at 20 % faults succeeds 82 % of the time; pooled, 99.8 %.
func pixelCall(ctx context.Context) context.Context { return reliability.PoolAttempts(ctx) }

// localAssetPath is the file an asset href names when the catalog is a
// local catalog.json (its hrefs are served as absolute paths on this
// machine): ok only for a path inside the catalog's directory, after
// symbolic links, so that an item cannot name any other file of the
// machine. A remote catalog's hrefs are never read from disk.
func localAssetPath(c *Call, href string) (string, bool, error) {
	root := c.Catalog.Key // a local catalog's real path
	if !filepath.IsAbs(root) || strings.Contains(root, "://") {
		return "", false, nil
	}
	path := strings.TrimPrefix(href, "file://")
	if !filepath.IsAbs(path) {
		return "", false, nil // an http(s) href: read over HTTP
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(root))
	if err != nil {
		return "", false, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false, fmt.Errorf("the file %s cannot be read: %w", path, err)
	}
	if rel, err := filepath.Rel(dir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false, fmt.Errorf("the file %s is outside the local catalog's directory %s, and only files under it are read", path, dir)
	}
	return real, true, nil
}

// bandCalibration is raster:bands' calibration, else the file's own
// (GDAL_METADATA scale/offset, GDAL_NODATA), and how texts say it.
func bandCalibration(b itemBand, info cog.Info) (mask.Calibration, string) {
	cal := mask.Calibration{Scale: 1, NoData: info.NoData}
	if b.Band < len(info.Scale) && info.Scale[b.Band] != 0 {
		cal.Scale = info.Scale[b.Band]
	}
	if b.Band < len(info.Offset) {
		cal.Offset = info.Offset[b.Band]
	}
	from := "the file's GDAL metadata"
	if b.cal != nil {
		from = "raster:bands"
		if b.cal.scale != nil {
			cal.Scale = *b.cal.scale
		}
		if b.cal.offset != nil {
			cal.Offset = *b.cal.offset
		}
		if b.cal.nodata != nil {
			cal.NoData = b.cal.nodata
		}
	}
	return cal, cal.String() + " (" + from + ")"
}

// bandValues are one band's values on the grid, with the read's counts.
type bandValues struct {
	v               []float64
	requests, bytes int
}

// readBandOnGrid reads band b of f over win of lgrid (the reference
// level's grid): directly when f is the reference grid, else the window
// of f covering it, at the level nearest in pixel size, resampled by
// nearest neighbour.
func readBandOnGrid(ctx context.Context, f *openedAsset, b itemBand, lgrid geo.Grid, win image.Rectangle) (bandValues, []bool, string, error) {
	same := f.grid.Width == lgrid.Width && f.grid.Height == lgrid.Height && f.grid.GeoTransform == lgrid.GeoTransform
	if same {
		w, err := f.file.ReadWindow(ctx, 0, win, []int{b.Band})
		if err != nil {
			return bandValues{}, nil, "", err
		}
		return bandValues{w.Bands[0], w.Requests, w.Bytes}, w.Valid, "", nil
	}
	// The other file's coarsest level whose pixels are not coarser than
	// the grid's (within 1 %): no detail of the grid is lost, and no
	// more is read than it shows.
	target := pixelMetres(lgrid)
	lvl := 0
	for i, l := range f.info.Levels {
		if pixelMetres(f.grid.Level(l.Width, l.Height)) <= target*1.01 {
			lvl = i
		}
	}
	l := f.info.Levels[lvl]
	og := f.grid.Level(l.Width, l.Height)
	// The other level's pixel under each grid pixel's centre (GDAL's -r near).
	cols, rows, err := lgrid.NearestIn(og, win)
	if err != nil {
		return bandValues{}, nil, "", err
	}
	n := len(cols)
	src := image.Rectangle{Min: image.Pt(math.MaxInt32, math.MaxInt32), Max: image.Pt(math.MinInt32, math.MinInt32)}
	for k := range cols {
		if cols[k] < 0 {
			continue
		}
		src.Min.X, src.Min.Y = min(src.Min.X, cols[k]), min(src.Min.Y, rows[k])
		src.Max.X, src.Max.Y = max(src.Max.X, cols[k]+1), max(src.Max.Y, rows[k]+1)
	}
	out := make([]float64, n)
	valid := make([]bool, n)
	how := fmt.Sprintf("resampled by nearest neighbour from %s m pixels", formatNumber(round2(pixelMetres(og))))
	if src.Empty() {
		for k := range out {
			out[k] = math.NaN()
		}
		return bandValues{v: out}, valid, how, nil
	}
	w, err := f.file.ReadWindow(ctx, lvl, src, []int{b.Band})
	if err != nil {
		return bandValues{}, nil, "", err
	}
	for k := range out {
		c, r := cols[k]-w.Rect.Min.X, rows[k]-w.Rect.Min.Y
		if cols[k] < 0 || c < 0 || r < 0 || c >= w.Rect.Dx() || r >= w.Rect.Dy() {
			out[k] = math.NaN()
			continue
		}
		s := r*w.Rect.Dx() + c
		out[k] = w.Bands[0][s]
		valid[k] = w.Valid == nil || w.Valid[s]
	}
	return bandValues{out, w.Requests, w.Bytes}, valid, how, nil
}

// pixelMetres is a grid's pixel size: its geotransform's in a projected
// CRS (metres; what the file says, e.g. 20 m for Sentinel-2's swir bands),
// else measured on the ground at the grid's centre.
func pixelMetres(g geo.Grid) float64 {
	if !g.CRS.Geographic() {
		return math.Hypot(g.GeoTransform[1], g.GeoTransform[4])
	}
	x, _ := g.PixelSize()
	return x
}

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

// BandStats are one band's statistics over the clear pixels of the area.
type BandStats struct {
	Band       string    `json:"band"`
	Pixels     int       `json:"pixels" jsonschema:"pixels of the area (centre inside)"`
	Valid      int       `json:"valid" jsonschema:"pixels with a value and clear"`
	ValidShare float64   `json:"valid_share" jsonschema:"valid / pixels"`
	Min        *float64  `json:"min,omitempty"`
	Max        *float64  `json:"max,omitempty"`
	Mean       *float64  `json:"mean,omitempty"`
	Std        *float64  `json:"std,omitempty"`
	P2         *float64  `json:"p2,omitempty"`
	P50        *float64  `json:"p50,omitempty"`
	P98        *float64  `json:"p98,omitempty"`
	Histogram  Histogram `json:"histogram"`
}

// Histogram counts values in equal bins from min to max.
type Histogram struct {
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Counts []int   `json:"counts"`
}

// bandStats summarises values over the area's kept pixels.
func bandStats(name string, values []float64, inside, keep []bool) BandStats {
	areaValues := make([]float64, 0, len(values))
	areaKeep := make([]bool, 0, len(values))
	for i, v := range values {
		if inside[i] {
			areaValues = append(areaValues, v)
			areaKeep = append(areaKeep, keep[i])
		}
	}
	s := stats.Summarize(areaValues, areaKeep, stats.DefaultBins)
	out := BandStats{Band: name, Pixels: s.Pixels, Valid: s.Valid, ValidShare: round4(s.ValidShare), Histogram: Histogram{Counts: []int{}}}
	if s.Valid > 0 {
		f := func(v float64) *float64 { r := round4(v); return &r }
		out.Min, out.Max, out.Mean, out.Std = f(s.Min), f(s.Max), f(s.Mean), f(s.Std)
		out.P2, out.P50, out.P98 = f(s.P2), f(s.P50), f(s.P98)
		out.Histogram = Histogram{Min: round4(s.Histogram.Min), Max: round4(s.Histogram.Max), Counts: s.Histogram.Counts}
	}
	return out
}

// round4 keeps 4 significant decimals of reflectances and indices.
func round4(v float64) float64 {
	if math.Abs(v) >= 100 {
		return math.Round(v*100) / 100
	}
	return math.Round(v*1e4) / 1e4
}

// statsLine is one band's statistics in a text line.
func statsLine(s BandStats) string {
	if s.Valid == 0 {
		return fmt.Sprintf("%s: no valid pixel of %d (valid 0, valid_share 0)", s.Band, s.Pixels)
	}
	n := formatNumber
	return fmt.Sprintf("%s: valid %d of %d pixels (valid_share %s) | min %s max %s mean %s std %s | p2 %s p50 %s p98 %s | histogram %s..%s %v",
		s.Band, s.Valid, s.Pixels, n(s.ValidShare), n(*s.Min), n(*s.Max), n(*s.Mean), n(*s.Std), n(*s.P2), n(*s.P50), n(*s.P98),
		n(s.Histogram.Min), n(s.Histogram.Max), s.Histogram.Counts)
}

// readText is what every pixel tool's text says about the read.
func readText(b *strings.Builder, p *aoiPixels) {
	r := p.Resolution
	n := formatNumber
	fmt.Fprintf(b, "Read at %s m pixels (level %d; full resolution %s m; EPSG:%d), window %d×%d px (pixel budget %d per band), %d range request(s), %d bytes (header reads included).\n",
		n(r.PixelMetres), r.Level, n(r.FullMetres), r.EPSG, r.Width, r.Height, r.Budget, p.Requests, p.Bytes)
	for _, br := range p.Bands {
		fmt.Fprintf(b, "Band %s: asset %s, %s", br.Band, br.Asset, br.Calibration)
		if br.Resampled != "" {
			b.WriteString(", " + br.Resampled)
		}
		b.WriteString(".\n")
	}
	if m := p.Mask; m != nil {
		fmt.Fprintf(b, "Mask (asset %s): %d of %d pixels clear; %s.", m.Asset, m.Clear, m.Considered, m.Rule)
		for _, x := range m.Masked {
			fmt.Fprintf(b, " %s: %d px.", x.Class, x.Pixels)
		}
		b.WriteString("\n")
	}
	writeLines(b, "Note: ", p.Notes)
}

// pixelItem fetches the item a pixel tool reads.
func pixelItem(ctx context.Context, c *Call, tool, collection, id string) (*stacclient.Item, error) {
	ref, err := parseItemRef(collection, id)
	if err != nil {
		return nil, err
	}
	item, err := ref.fetch(ctx, c, tool)
	if err != nil {
		return nil, err
	}
	signing, err := newAssetSigning(c, c.Deps.signing.isPlanetaryComputer(c.Catalog))
	if err != nil {
		return nil, err
	}
	signing.sign(ctx, item)
	if signing.firstErr != nil {
		return nil, actionable(signing.firstErr, "%s: Planetary Computer signing failed, and its assets cannot be read unsigned: %v", tool, signing.firstErr)
	}
	return item, nil
}

// drawPicture encodes a plot under a CPU slot.
func drawPicture(ctx context.Context, c *Call, draw func() (*plot.Picture, error)) (*plot.Picture, []byte, error) {
	var pic *plot.Picture
	var data []byte
	err := withCPU(ctx, c, func() error {
		var err error
		if pic, err = draw(); err != nil {
			return err
		}
		data, err = picture.EncodePNG(pic.Image)
		return err
	})
	return pic, data, err
}
