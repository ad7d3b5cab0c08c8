package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/federation"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
)

// The pixel tools (toolset "pixels": aoi_statistics, render_aoi,
// index_time_series) read through the engine in tools/internal/pixel: the
// bands of an item named by their eo:bands common names, the window of
// each asset an area of interest needs, read at the overview that fits
// the pixel budget through the reliability layer (cog.HTTPSource over
// stacclient's FetchRange), the bands brought to one grid, calibrated and
// checked, and masked by the collection's cloud mask where it has one.
// This file turns the engine's facts into the tools' structured output
// and words them.

// DefaultReadPixels is the pixel budget of one band's read
// (Limits.ReadPixels).
const DefaultReadPixels = pixel.DefaultReadPixels

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

// pixelEnv is the engine's environment for one call: the catalog's
// client for range requests, its local directory when it is a local
// catalog, and the process's cache and budgets.
func pixelEnv(c *Call) *pixel.Env {
	w := c.Deps.work()
	e := &pixel.Env{Href: assetHref, Cache: c.Deps.pixelCache(), Decode: w.pixelBudget(), CPU: w.cpuBudget(),
		ReadPixels: c.Deps.Limits.ReadPixels}
	if c.Catalog != nil {
		e.Fetcher = c.Catalog.Client
		e.LocalCatalog = c.Catalog.Key
	}
	return e
}

// aoiArea reads the tool's aoi: a bbox or a GeoJSON Polygon/MultiPolygon,
// in longitude/latitude; km2 is its area on the ellipsoid.
func aoiArea(arg AreaArg) (orb.Geometry, footprint.Shape, float64, error) {
	v, err := decodeArg("aoi", arg, "a bbox or a GeoJSON geometry")
	if err != nil {
		return nil, footprint.Shape{}, 0, err
	}
	if v == nil {
		return nil, footprint.Shape{}, 0, &stacclient.ParamError{Param: "aoi", Got: "(none)", Reason: "the pixel tools measure an area",
			Accepted: "[west, south, east, north] in degrees, or a GeoJSON Polygon or MultiPolygon"}
	}
	bbox, intersects, err := stacclient.ParseArea("aoi", v)
	if err != nil {
		return nil, footprint.Shape{}, 0, err
	}
	shape, ok, err := searchArea(stacclient.SearchParams{BBox: bbox, Intersects: intersects})
	if err != nil {
		return nil, shape, 0, err
	}
	if !ok {
		return nil, shape, 0, &stacclient.ParamError{Param: "aoi", Got: trimText(string(intersects), 120), Reason: "not an area",
			Accepted: "[west, south, east, north] in degrees, or a GeoJSON Polygon or MultiPolygon"}
	}
	km2 := 0.0
	if a, err := footprint.NewArea(shape); err == nil {
		km2 = a.Km2()
	}
	if bbox != nil {
		b := orb.Bound{Min: orb.Point{bbox[0], bbox[1]}, Max: orb.Point{bbox[2], bbox[3]}}
		if bbox[0] > bbox[2] {
			return nil, shape, 0, &stacclient.ParamError{Param: "aoi", Got: formatBBox(bbox), Reason: "the pixel tools do not read areas across the antimeridian",
				Accepted: "a bbox with west < east (split the area at ±180° and call once per side)"}
		}
		return b.ToPolygon(), shape, km2, nil
	}
	g, err := geojson.UnmarshalGeometry(intersects)
	if err != nil {
		return nil, shape, 0, &stacclient.ParamError{Param: "aoi", Got: trimText(string(intersects), 120), Reason: err.Error(),
			Accepted: "a GeoJSON Polygon or MultiPolygon"}
	}
	return g.Geometry(), shape, km2, nil
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

// CalibrationInfo is how the numbers became values, and what the pixels
// said about it.
type CalibrationInfo struct {
	Convention string `json:"convention,omitempty" jsonschema:"the product convention recognised"`
	Reading    string `json:"reading" jsonschema:"the reading applied"`
	Evidence   string `json:"evidence,omitempty" jsonschema:"what the metadata says"`
	// IgnoredOffset is the item's raster:bands offset the reading does not
	// apply (Earth Search's −0.1 on harmonised numbers).
	IgnoredOffset *float64 `json:"ignored_offset,omitempty" jsonschema:"the item's offset, not applied"`
	// Status is consistent, overridden (the pixels contradicted the
	// metadata), guessed (the metadata cannot tell) or suspect (no reading
	// passed the check).
	Status string `json:"status" jsonschema:"consistent, overridden, guessed or suspect"`
	// ImpossibleShare is the share of clear reflectances below −0.05 or
	// above 1.5 under the reading applied; IndexOutsideShare an index's
	// values outside [−1, 1].
	ImpossibleShare   float64       `json:"impossible_share"`
	IndexOutsideShare float64       `json:"index_outside_share,omitempty"`
	Other             *OtherReading `json:"other,omitempty" jsonschema:"what the reading not applied would give"`
}

// OtherReading is what the reading not applied would give.
type OtherReading struct {
	Reading         string             `json:"reading"`
	BandMeans       map[string]float64 `json:"band_means,omitempty"`
	IndexMean       *float64           `json:"index_mean,omitempty"`
	ImpossibleShare float64            `json:"impossible_share"`
}

// readFacts is what every pixel tool's output says about its read.
type readFacts struct {
	Copy        *ReadCopy        // the scene's copy read instead of the item, or nil
	Catalogs    []CatalogOutcome // a period's search over several catalogs, or nil
	Resolution  Resolution
	Bands       []BandRead
	Mask        *MaskInfo
	Calibration *CalibrationInfo
	Requests    int
	Bytes       int
	Notes       []string
}

// describeRead turns the engine's read into output facts and notes.
func describeRead(p *pixel.Pixels) readFacts {
	r := p.Resolution
	f := readFacts{Resolution: Resolution{EPSG: r.EPSG, PixelMetres: round2(r.PixelMetres), FullMetres: round2(r.FullMetres), Level: r.Level,
		Width: r.Width, Height: r.Height, Budget: r.Budget}, Requests: p.Requests, Bytes: p.Bytes, Bands: []BandRead{}}
	for _, b := range p.Bands {
		br := BandRead{Band: b.Band, Asset: b.Asset, Calibration: calibrationWords(b)}
		if b.ResampledFrom > 0 {
			br.Resampled = fmt.Sprintf("resampled by nearest neighbour from %s m pixels", formatNumber(round2(b.ResampledFrom)))
			if b.Coarser {
				br.Resampled += " (an overview coarser than the grid: the finer levels were too large to read for it)"
			}
		}
		f.Bands = append(f.Bands, br)
	}
	if m := p.Mask; m != nil {
		f.Mask = &MaskInfo{Asset: m.Asset, Rule: m.Rule, Considered: m.Considered, Clear: m.Clear, Masked: m.Masked}
		if f.Mask.Masked == nil {
			f.Mask.Masked = []mask.Counted{}
		}
		if m.ResampledFrom > 0 {
			f.Mask.Rule += fmt.Sprintf("; resampled by nearest neighbour from %s m pixels", formatNumber(round2(m.ResampledFrom)))
		}
	}
	if p.NoMask {
		f.Notes = append(f.Notes, "no cloud mask: the item has no SCL or QA_PIXEL asset, so every pixel with a value was measured")
	}
	f.Calibration = calibrationInfo(p.Calibration)
	return f
}

// calibrationWords says one band's calibration: "× 0.0001 − 0.1, nodata
// 0 (raster:bands)".
func calibrationWords(b pixel.BandRead) string {
	s := b.Calibration.String()
	switch {
	case b.From == "" && b.NoDataFrom == "":
		return s + " (the numbers as stored)"
	case b.From == b.NoDataFrom || b.NoDataFrom == "":
		return s + " (" + orDash(b.From) + ")"
	case b.From == "":
		return s + " (nodata from " + b.NoDataFrom + ")"
	}
	return s + " (" + b.From + "; nodata from " + b.NoDataFrom + ")"
}

// calibrationInfo is the structured calibration, nil when there is
// nothing to say: no convention, and the values pass the check.
func calibrationInfo(c pixel.Calibration) *CalibrationInfo {
	status := "consistent"
	switch {
	case c.Suspect:
		status = "suspect"
	case c.Overridden:
		status = "overridden"
	case c.Guessed:
		status = "guessed"
	}
	used := c.Checks[0]
	if c.Convention == "" && status == "consistent" && used.IndexOutside == 0 {
		return nil
	}
	out := &CalibrationInfo{Convention: c.Convention, Reading: c.Used.Name, Evidence: c.Evidence, Status: status, IgnoredOffset: c.IgnoredOffset,
		ImpossibleShare: round4(used.ImpossibleShare()), IndexOutsideShare: round4(used.IndexOutsideShare())}
	if o := c.Other; o != nil {
		other := &OtherReading{Reading: o.Reading, BandMeans: map[string]float64{}}
		for _, m := range o.BandMeans {
			other.BandMeans[m.Band] = round4(m.Mean)
		}
		if o.IndexMean != nil {
			v := round4(*o.IndexMean)
			other.IndexMean = &v
		}
		for _, ch := range c.Checks[1:] {
			if ch.Reading == o.Reading {
				other.ImpossibleShare = round4(ch.ImpossibleShare())
			}
		}
		out.Other = other
	}
	return out
}

// calibrationLine says in one line which reading was used, why, and what
// the other would give; "" when there is nothing to say. of names the
// statistic the tool reports (an index), for "what the other gives".
func calibrationLine(ci *CalibrationInfo, of string) string {
	if ci == nil {
		return ""
	}
	product := map[string]string{"sentinel-2-l2a": "Sentinel-2 L2A", "landsat-c2-l2": "Landsat Collection 2 Level-2"}[ci.Convention]
	var b strings.Builder
	switch ci.Status {
	case "overridden":
		fmt.Fprintf(&b, "Calibration: the pixels contradict the metadata (%s), so %s was used", ci.Evidence, ci.Reading)
		if o := ci.Other; o != nil {
			fmt.Fprintf(&b, "; %s would put %s of the clear reflectances below −0.05 or above 1.5%s", o.Reading, percent(o.ImpossibleShare), otherGives(o, of))
		}
	case "guessed":
		fmt.Fprintf(&b, "Calibration (%s): the metadata does not say whether the −1000 offset is in the numbers; %s was used (%s)", product, ci.Reading, ci.Evidence)
		if o := ci.Other; o != nil {
			fmt.Fprintf(&b, "; %s%s", o.Reading, otherGives(o, of))
		}
	case "suspect":
		fmt.Fprintf(&b, "Warning: the values look wrong whichever reading is used: under %s (%s), %s of the clear reflectances are below −0.05 or above 1.5",
			ci.Reading, orDash(ci.Evidence), percent(ci.ImpossibleShare))
		if ci.IndexOutsideShare > 0 {
			fmt.Fprintf(&b, " and %s of the %s values lie outside [−1, 1]", percent(ci.IndexOutsideShare), of)
		}
		b.WriteString("; check the item's raster:bands scale and offset")
		return b.String() + "."
	default:
		if product != "" {
			fmt.Fprintf(&b, "Calibration (%s): %s, as %s", product, ci.Reading, ci.Evidence)
			if ci.IgnoredOffset != nil {
				fmt.Fprintf(&b, " (raster:bands' offset %s is not applied)", formatNumber(*ci.IgnoredOffset))
			}
			fmt.Fprintf(&b, "; the pixels agree (consistent): %s of the clear reflectances lie outside −0.05..1.5", percent(ci.ImpossibleShare))
		}
	}
	if ci.IndexOutsideShare > 0 {
		if b.Len() > 0 {
			b.WriteString(". ")
		}
		fmt.Fprintf(&b, "Warning: %s of the %s values lie outside [−1, 1], which reflectances cannot give: the calibration is suspect", percent(ci.IndexOutsideShare), of)
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "."
}

// otherGives is ", giving NDVI mean 1.085 (red mean −0.02)".
func otherGives(o *OtherReading, of string) string {
	if o.IndexMean != nil && of != "" {
		return fmt.Sprintf(" and give %s mean %s", of, formatNumber(*o.IndexMean))
	}
	if len(o.BandMeans) == 0 {
		return ""
	}
	var parts []string
	for _, k := range sortedKeys(o.BandMeans) {
		parts = append(parts, fmt.Sprintf("%s mean %s", k, formatNumber(o.BandMeans[k])))
	}
	return " and give " + strings.Join(parts, ", ")
}

// round2 rounds to centimetres.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

// BandStats are one band's statistics over the clear pixels of the area.
type BandStats struct {
	Band string `json:"band"`
	// Pixels is the whole area in pixels of the grid read, the part
	// outside the raster included.
	Pixels     int       `json:"pixels" jsonschema:"pixels of the area (centre inside), outside the item's raster included"`
	Valid      int       `json:"valid" jsonschema:"pixels with a value and clear"`
	ValidShare float64   `json:"valid_share" jsonschema:"valid / pixels: the share of the area measured"`
	NoValue    int       `json:"no_value" jsonschema:"pixels of the area without a value: outside the item's data, or nodata"`
	Masked     int       `json:"masked" jsonschema:"pixels with a value removed by the cloud mask"`
	Estimated  bool      `json:"pixels_estimated,omitempty" jsonschema:"pixels counted from the area's size (it reaches past the raster)"`
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

// bandStats is the output form of the engine's statistics.
func bandStats(s pixel.Stats) BandStats {
	out := BandStats{Band: s.Name, Pixels: s.AOIPixels, Valid: s.Valid, ValidShare: round4(s.ValidShare), NoValue: s.NoValue, Masked: s.Masked,
		Estimated: s.Estimated, Histogram: Histogram{Counts: []int{}}}
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
	var b strings.Builder
	about := ""
	if s.Estimated {
		about = "about "
	}
	if s.Valid == 0 {
		fmt.Fprintf(&b, "%s: no valid pixel of %s%d (valid 0, valid_share 0)", s.Band, about, s.Pixels)
	} else {
		n := formatNumber
		fmt.Fprintf(&b, "%s: valid %d of %s%d pixels of the area (valid_share %s) | min %s max %s mean %s std %s | p2 %s p50 %s p98 %s | histogram %s..%s %v",
			s.Band, s.Valid, about, s.Pixels, n(s.ValidShare), n(*s.Min), n(*s.Max), n(*s.Mean), n(*s.Std), n(*s.P2), n(*s.P50), n(*s.P98),
			n(s.Histogram.Min), n(s.Histogram.Max), s.Histogram.Counts)
	}
	if s.NoValue > 0 || s.Masked > 0 {
		fmt.Fprintf(&b, " | %d px without a value (outside the item's data, or nodata), %d masked", s.NoValue, s.Masked)
	}
	return b.String()
}

// readText is what every pixel tool's text says about the read.
func readText(b *strings.Builder, f readFacts, of string) {
	if f.Copy != nil {
		b.WriteString(copyLine(f.Copy) + "\n")
	}
	r := f.Resolution
	n := formatNumber
	fmt.Fprintf(b, "Read at %s m pixels (level %d; full resolution %s m; EPSG:%d), window %d×%d px (pixel budget %d per band), %d range request(s), %d bytes (header reads included).\n",
		n(r.PixelMetres), r.Level, n(r.FullMetres), r.EPSG, r.Width, r.Height, r.Budget, f.Requests, f.Bytes)
	for _, br := range f.Bands {
		fmt.Fprintf(b, "Band %s: asset %s, %s", br.Band, br.Asset, br.Calibration)
		if br.Resampled != "" {
			b.WriteString(", " + br.Resampled)
		}
		b.WriteString(".\n")
	}
	if line := calibrationLine(f.Calibration, of); line != "" {
		b.WriteString(line + "\n")
	}
	if m := f.Mask; m != nil {
		fmt.Fprintf(b, "Mask (asset %s): %d of %d pixels clear; %s.", m.Asset, m.Clear, m.Considered, m.Rule)
		for _, x := range m.Masked {
			fmt.Fprintf(b, " %s: %d px.", x.Class, x.Pixels)
		}
		b.WriteString("\n")
	}
	if len(f.Catalogs) > 0 {
		b.WriteString(catalogsText(f.Catalogs) + ".\n")
	}
	writeLines(b, "Note: ", f.Notes)
}

// itemCatalogs names each of a period's items' catalogs, in the order of
// ids, over several catalogs (nil over one).
func itemCatalogs(ids []string, of map[*stacclient.Item]*Catalog) []string {
	if of == nil {
		return nil
	}
	byID := make(map[string]string, len(of))
	for it, cat := range of {
		byID[it.ID] = memberName(cat)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}

// withCatalogs writes items as "catalog:id" when their catalogs are known.
func withCatalogs(ids, catalogs []string) []string {
	if len(catalogs) != len(ids) {
		return ids
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = catalogs[i] + ":" + id
	}
	return out
}

// mergeOutcomes is two searches' outcomes over the same catalogs (a
// change's two periods) as one per catalog: the worse status (its error),
// the items and times added, the notes of both.
func mergeOutcomes(a, b []CatalogOutcome) []CatalogOutcome {
	if len(a) != len(b) {
		return append(slices.Clone(a), b...)
	}
	rank := map[string]int{"answered": 0, "skipped": 1, "timeout": 2, "error": 3}
	out := make([]CatalogOutcome, len(a))
	for i := range a {
		o := a[i]
		if rank[b[i].Status] > rank[o.Status] {
			o.Status, o.Error = b[i].Status, b[i].Error
		}
		o.Returned += b[i].Returned
		o.MS += b[i].MS
		o.Matched = nil // two searches' counts: each period's is not kept apart here
		o.Notes = append(slices.Clone(o.Notes), b[i].Notes...)
		out[i] = o
	}
	return out
}

// pixelRead is the item a pixel tool reads: the one asked for, or, when
// its data cannot be read here, the same scene's copy in another catalog.
type pixelRead struct {
	asked *stacclient.Item // the item named (its id, collection and datetime are reported)
	item  *stacclient.Item // the item whose assets are read, signed where its catalog needs it
	call  *Call            // the call with the catalog item comes from: its client sends the range requests
	copy  *ReadCopy        // the copy read, nil when the asked item is
}

// ReadCopy is the scene's copy in another catalog whose pixels were read,
// because the item's own data cannot be read here.
type ReadCopy struct {
	Catalog    string `json:"catalog"`
	ID         string `json:"id"`
	Collection string `json:"collection,omitempty"`
	Evidence   string `json:"evidence" jsonschema:"why it is the same scene"`
	Why        string `json:"why" jsonschema:"why the item's own data could not be read"`
}

// copyLine says whose copy was read, for the text.
func copyLine(cp *ReadCopy) string {
	return fmt.Sprintf("Read from %s's copy %s (%s) of the scene: %s; the item's own data assets cannot be read here (%s).",
		cp.Catalog, cp.ID, orDash(cp.Collection), cp.Evidence, cp.Why)
}

// pixelItem fetches the item a pixel tool reads. When none of its data
// assets can be read here (s3:// hrefs, requester-pays: Earth Search's
// Landsat), the same scene's copy is looked for in the other catalogs the
// operator put together (federation.CopySources: the call's, the groups',
// the presets that hold the product) and read instead, from its own
// catalog and signed as that catalog needs; the result says so. Without a
// copy the error says where it looked. Every tool that reads one item
// (aoi_statistics, render_aoi, export kind pixels) comes through here.
func pixelItem(ctx context.Context, c *Call, tool, collection, id string) (*pixelRead, error) {
	ref, err := parseItemRef(collection, id)
	if err != nil {
		return nil, err
	}
	item, err := ref.fetch(ctx, c, tool)
	if err != nil {
		return nil, err
	}
	r := &pixelRead{asked: item, item: item, call: c}
	if acc := federation.AccessOf(item); acc.Readable == 0 && acc.Unreadable > 0 {
		if err := r.useCopy(ctx, tool, acc); err != nil {
			return nil, err
		}
	}
	signing, err := newAssetSigning(r.call, r.call.Deps.signing.isPlanetaryComputer(r.call.Catalog))
	if err != nil {
		return nil, err
	}
	signing.sign(ctx, r.item)
	if signing.firstErr != nil {
		return nil, actionable(signing.firstErr, "%s: Planetary Computer signing failed, and its assets cannot be read unsigned: %v", tool, signing.firstErr)
	}
	return r, nil
}

// useCopy finds a readable copy of r's scene and makes it the item read.
func (r *pixelRead) useCopy(ctx context.Context, tool string, acc federation.Access) error {
	c, item := r.call, r.asked
	var others []*Catalog
	if c.Federation != nil {
		others = c.Federation.members
	}
	sources := federation.CopySources(ctx, c.Deps.Catalogs, c.Catalog, others, item)
	if len(sources) == 0 {
		return actionable(nil, "%s: item %s's data assets cannot be read here (%s), and there is no other catalog to look for a readable copy of the scene in "+
			"(%s is not in a configured group, and no preset holds its product): read the scene from a catalog that serves it over https, "+
			"or put such a catalog in a group with this one (STAC_MCP_CATALOG_GROUPS)", tool, item.ID, acc.Why, memberName(c.Catalog))
	}
	members := make([]federation.Member, len(sources))
	names := make([]string, len(sources))
	for i, s := range sources {
		members[i] = federation.MemberOf(s)
		names[i] = members[i].Name
	}
	found, tried, failures := federation.FindReadableCopy(ctx, item, federation.MemberOf(c.Catalog), members)
	if err := ctx.Err(); err != nil {
		return err
	}
	if found == nil {
		for i := range tried {
			tried[i] = trimText(tried[i], 300)
		}
		// The failures stay beneath the message: the reliability layer
		// would otherwise word the call by the last request it gave up.
		return actionable(failures, "%s: item %s's data assets cannot be read here (%s), and no readable copy of the scene was found in %s: %s",
			tool, item.ID, acc.Why, strings.Join(names, ", "), strings.Join(tried, "; "))
	}
	mc := *c
	mc.Federation = nil
	for i, m := range members {
		if m.Name == found.Member.Name {
			mc.Catalog = sources[i]
		}
	}
	r.item, r.call = found.Item, &mc
	r.copy = &ReadCopy{Catalog: found.Member.Name, ID: found.Item.ID, Collection: found.Item.Collection, Evidence: found.Evidence, Why: acc.Why}
	return nil
}

// pixelCall marks a pixel tool's call as one made of many reads it needs
// all of (its item or search, then twenty-odd range requests): its
// requests share one pool of attempts, so that one may take up to three
// past the policy's three, never more than three a request on average
// (reliability.PoolAttempts, adr/0030). With three each, a call of 25
// reads at 20 % faults succeeds 82 % of the time; pooled, 99.8 %.
func pixelCall(ctx context.Context) context.Context { return reliability.PoolAttempts(ctx) }

// pixelError words an engine failure for the model: which item, asset
// and band, what went wrong, and what to do. An upstream failure beneath
// it (a Denial, a catalog error) is worded as every other tool words it.
func pixelError(tool string, item *stacclient.Item, err error) error {
	var pe *pixel.Error
	if !errors.As(err, &pe) {
		return err // budgets, the deadline, parameters: renderError words them
	}
	what := "item " + pe.Item
	if pe.Asset != "" {
		what = fmt.Sprintf("asset %s of item %s", pe.Asset, pe.Item)
	}
	var le *cog.LimitError
	if errors.As(pe.Err, &le) {
		return actionable(err, "%s: %s was not read: %s", tool, what, limitWords(le))
	}
	switch pe.Kind {
	case pixel.ErrNoAsset:
		return actionable(err, "%s: item %s has no asset %s", tool, pe.Item, pe.Asset)
	case pixel.ErrNotGeoTIFF:
		return actionable(err, "%s: %s is %s, not a GeoTIFF; the pixel tools read Cloud-Optimized GeoTIFFs", tool, what, orDash(pe.Detail))
	case pixel.ErrS3Href:
		return actionable(err, "%s: %s is at %s, an s3:// href this server does not read: use a catalog that gives https hrefs for it "+
			"(the Planetary Computer does for Landsat and Sentinel-2)", tool, what, pe.Detail)
	case pixel.ErrLocalFile:
		return actionable(err, "%s: %s: %s", tool, what, pe.Detail)
	case pixel.ErrOpen:
		if reason := upstreamReason(tool, pe.Err); reason != "" {
			return actionable(err, "%s: %s could not be opened: %s", tool, what, reason)
		}
		return actionable(err, "%s: %s could not be opened as a GeoTIFF: %v", tool, what, pe.Err)
	case pixel.ErrNoCRS:
		return actionable(err, "%s: %s has no EPSG-coded CRS in its GeoKeys, so the aoi cannot be placed on it", tool, what)
	case pixel.ErrBadGrid:
		return actionable(err, "%s: %s: its georeferencing cannot be used: %s", tool, what, pe.Detail)
	case pixel.ErrPlace:
		return actionable(err, "%s: the aoi cannot be placed on the raster of %s (%s): %v", tool, what, pe.Detail, pe.Err)
	case pixel.ErrNoOverlap:
		return actionable(err, "%s: the aoi does not overlap item %s's raster: choose an item whose footprint covers the area (search_items with the aoi)", tool, pe.Item)
	case pixel.ErrTooLarge:
		return actionable(err, "%s: the aoi is too large to read from %s: %s. Use a smaller aoi", tool, what, pe.Detail)
	case pixel.ErrTooFine:
		return actionable(err, "%s: band %s (%s) cannot be brought to the grid measured: %s. Use a smaller aoi", tool, pe.Band, what, pe.Detail)
	case pixel.ErrRead:
		if reason := upstreamReason(tool, pe.Err); reason != "" {
			return actionable(err, "%s: reading band %s (%s) failed: %s", tool, pe.Band, what, reason)
		}
		return actionable(err, "%s: reading band %s (%s) failed: %v", tool, pe.Band, what, pe.Err)
	case pixel.ErrNoBandInfo:
		return actionable(err, "%s: item %s has no asset with eo:bands common names (its assets: %s), so its %s band cannot be found; "+
			"name an asset key instead where the tool takes bands", tool, pe.Item, strings.Join(orderedAssetKeys(item.Assets), ", "), pe.Band)
	case pixel.ErrNoBand:
		return actionable(err, "%s: this item (%s) has no band %s (by eo:bands common name, asset key or band name); its bands are: %s",
			tool, pe.Item, pe.Detail, strings.Join(pixel.CommonNames(pixel.ItemBands(item)), ", "))
	}
	return actionable(err, "%s: %v", tool, err)
}

// limitWords says which bound a read would have passed, and what to do.
func limitWords(le *cog.LimitError) string {
	switch le.Limit {
	case "MaxHeaderBytes", "MaxHeaderDecodedBytes":
		return fmt.Sprintf("its header needs %d bytes, more than the %d this server reads for one file; it is not a Cloud-Optimized GeoTIFF the pixel tools can use", le.Need, le.Max)
	case "MaxBlocks":
		return fmt.Sprintf("the area covers %d of its tiles or strips, more than the %d one read may decode; use a smaller aoi", le.Need, le.Max)
	case "MaxRequests", "RequestBudget":
		return fmt.Sprintf("reading it needs %d range requests, more than the %d one read may send (its blocks are small or scattered); use a smaller aoi", le.Need, le.Max)
	case "MaxWindowValues":
		return fmt.Sprintf("the window holds %d values, more than the %d one read may hold; use a smaller aoi", le.Need, le.Max)
	}
	return le.Error()
}

// upstreamReason words an upstream failure beneath an engine error the
// way the other tools word it ("" when there is none).
func upstreamReason(tool string, err error) string {
	var d *reliability.Denial
	if errors.As(err, &d) {
		return strings.TrimPrefix(denialMessage(tool, d), tool+": ")
	}
	var se *stacclient.Error
	if errors.As(err, &se) {
		return strings.TrimPrefix(stacErrorMessage(tool, se), tool+": ")
	}
	return ""
}

// drawPicture encodes a plot under a CPU slot.
func drawPicture(ctx context.Context, e *pixel.Env, draw func() (*plot.Picture, error)) (*plot.Picture, []byte, error) {
	var pic *plot.Picture
	var data []byte
	err := e.WithCPU(ctx, func() error {
		var err error
		if pic, err = draw(); err != nil {
			return err
		}
		data, err = picture.EncodePNG(pic.Image)
		return err
	})
	return pic, data, err
}
