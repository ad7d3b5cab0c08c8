package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/export"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cogwrite"
)

// export kind pixels over a period: the same read aoi_statistics and
// render_aoi make of collections + datetime (a day's acquisition
// mosaicked, an interval's per-pixel median composite; adr/0040), written
// as the item path writes one item's read.

func exportPixelsPeriod(ctx context.Context, c *Call, in ExportIn) (ExportOut, string, error) {
	tool := c.Tool
	fail := failWith[ExportOut]()
	names, ix, err := in.selection()
	if err != nil {
		return fail(err)
	}
	aoi, shape, _, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	per, err := readPeriod("datetime", in.Datetime)
	if err != nil {
		return fail(err)
	}
	src := pixelSource{collections: in.Collections, period: per}
	acqs, _, notes, err := periodAcquisitions(ctx, c, tool, src, in.AOI, shape)
	if err != nil {
		return fail(err)
	}
	var bandsOf func(*stacclient.Item) ([]pixel.Band, error)
	var titles, repeated []string
	if ix != nil {
		bandsOf = func(item *stacclient.Item) ([]pixel.Band, error) { return pixel.IndexBands(item, *ix) }
		titles = []string{ix.Name}
	} else {
		// Called for several items side by side: it keeps nothing.
		bandsOf = func(item *stacclient.Item) ([]pixel.Band, error) {
			bands, _, err := statBands(item, names)
			return bands, err
		}
		first := acqs[0].Items[0]
		var bands []pixel.Band
		if bands, repeated, err = statBands(first, names); err != nil {
			return fail(pixelError(tool, first, err))
		}
		for _, b := range bands {
			titles = append(titles, b.Title())
		}
	}
	env := pixelEnv(c)
	t, err := seasonTarget(ctx, env, tool, acqs, shape, aoi, bandsOf, periodPixels(c, env, src, len(acqs), len(titles)))
	if err != nil {
		return fail(err)
	}
	l, err := readLayer(ctx, env, tool, src, acqs, aoi, t, bandsOf, ix, titles)
	if err != nil {
		return fail(err)
	}
	defer l.release()
	g := exportGrid{w: l.area.W, h: l.area.H, epsg: l.area.Grid.CRS.EPSG, gt: l.area.Grid.GeoTransform, layers: l.values, inside: l.inside,
		keep: l.keep, valid: l.valid, descriptions: titles, stats: l.stats}
	g.dt, g.nodata, g.why = periodDataType(l.reads, ix != nil, l.period.Mode == "composite")
	facts := l.facts
	out := ExportOut{Also: []ExportFile{}, Notes: append(append(append([]string{}, l.facts.Notes...), notes...), l.notes...)}
	if len(repeated) > 0 {
		out.Notes = append(out.Notes, "bands named again were exported once: "+strings.Join(repeated, ", "))
	}
	pe := g.describe(footprint.BBox(shape.Bound()), facts)
	pe.Collection, pe.Datetime, pe.Items, pe.Period = strings.Join(periodCollections(acqs), ", "), per.String(), l.items, l.period
	md := g.metadata(pe, facts, ix)
	md["STAC_ITEM_IDS"] = strings.Join(l.items, " ")
	md["STAC_COLLECTION"] = pe.Collection
	md["DATETIME"] = pe.Datetime
	md["METHOD"] = periodMethod(l.period)
	md["ACQUISITIONS"] = acquisitionsWords(l.period.Dates)
	if l.period.Mode == "composite" {
		md["NODATA_MEANS"] = "outside the aoi, or no date of the period shows the pixel clear with a value"
	}
	if o := l.period.Observations; o != nil {
		md["OBSERVATIONS_PER_PIXEL"] = fmt.Sprintf("clear observations per pixel of the aoi: min %d, median %d, max %d", o.Min, o.Median, o.Max)
	}
	if m := periodMask(l.reads); m != "" {
		md["CLOUD_MASK"] = m
	}
	of := strings.Join(titles, ", ")
	what := fmt.Sprintf("%s of the %s of %s (%s; %s) over %s: %s, EPSG:%d, %d×%d px of %s m", of, periodModeWords(l.period), pe.Datetime, pe.Collection,
		itemsWords(l.items), formatBBox(pe.AOI), g.dt, pe.EPSG, g.w, g.h, formatNumber(facts.Resolution.PixelMetres))
	base := exportBase(in.Name, export.Slug(strings.Join(titles, "-")), l.period.Mode, export.Slug(per.String()))
	// The layer's charge is given back once the file's copy of its values
	// is made.
	f, err := writePixels(ctx, c, env, g, md, bandMetadata(facts, ix), base, what, l.release)
	if err != nil {
		return fail(err)
	}
	out.ExportFile, out.Pixels = f, pe
	out.links = []mcp.Content{link(f, base+".tif")}
	facts.Notes = out.Notes
	return out, exportPixelsText(out, facts, of), nil
}

// exportItemsShown is the most item ids a file's description names (the
// file's metadata and the result name them all).
const exportItemsShown = 6

// itemsWords names a period's items, or counts them when there are many.
func itemsWords(ids []string) string {
	if len(ids) > exportItemsShown {
		return fmt.Sprintf("%d items, named in the file's STAC_ITEM_IDS and the result's items", len(ids))
	}
	return fmt.Sprintf("%d item(s): %s", len(ids), pixel.ItemList(ids))
}

// periodModeWords is "mosaic" or "median composite".
func periodModeWords(pr *PeriodRead) string {
	if pr.Mode == "composite" {
		return pr.Method + " composite"
	}
	return pr.Mode
}

// periodMethod words how a period's values were made.
func periodMethod(pr *PeriodRead) string {
	if pr.Mode == "composite" {
		return fmt.Sprintf("median composite: per pixel and band (or index), the %s of the clear observations of the period's acquisitions "+
			"(numpy's nanmedian: the mean of the two middle values for an even count); %s", pr.Method, pr.Rule)
	}
	return "mosaic: one acquisition, each pixel from the clearest item that has it; " + pr.Rule
}

// acquisitionsWords is each date of a period read: its status, clear
// share of the aoi, or why it gave nothing.
func acquisitionsWords(dates []DateRead) string {
	var parts []string
	for _, d := range dates {
		s := d.Date + ": " + d.Status
		if d.Status == "read" {
			s += ", clear_share " + formatNumber(d.ClearShare)
		}
		if d.Reason != "" {
			s += " (" + d.Reason + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// periodCollections are the collections of the acquisitions read.
func periodCollections(acqs []pixel.Acquisition) []string {
	var out []string
	for _, a := range acqs {
		if !slices.Contains(out, a.Collection) {
			out = append(out, a.Collection)
		}
	}
	return out
}

// periodMask words the cloud masks the period's reads applied, each rule
// once (every item of a collection is masked by one rule); "" for none.
func periodMask(reads []*pixel.Pixels) string {
	var rules []string
	for _, r := range reads {
		if r == nil || r.Mask == nil {
			continue
		}
		m := describeRead(r).Mask
		if w := fmt.Sprintf("asset %s: %s", m.Asset, m.Rule); !slices.Contains(rules, w) {
			rules = append(rules, w)
		}
	}
	return strings.Join(rules, "; ")
}

// periodDataType is a period's sample type: float32 for an index, a
// composite (a median of two values falls between stored numbers) and
// calibrated values; the source's type only when every read keeps its
// numbers as stored in one type with one nodata.
func periodDataType(reads []*pixel.Pixels, isIndex, composite bool) (cogwrite.DataType, *float64, string) {
	switch {
	case isIndex:
		return exportDataType(nil, true)
	case composite:
		return cogwrite.Float32, nil, "float32: per-pixel medians of calibrated values (reflectance for optical bands)"
	}
	var dt cogwrite.DataType
	var nd *float64
	for i, r := range reads {
		t, n, why := exportDataType(r, false)
		if t == cogwrite.Float32 || (i > 0 && (t != dt || *n != *nd)) {
			if t != cogwrite.Float32 {
				t, n, why = cogwrite.Float32, nil, "float32: the items' numbers as stored differ in type or nodata"
			}
			return t, n, why
		}
		dt, nd = t, n
	}
	if len(reads) == 0 {
		return cogwrite.Float32, nil, "float32"
	}
	_, _, why := exportDataType(reads[0], false)
	return dt, nd, why
}
