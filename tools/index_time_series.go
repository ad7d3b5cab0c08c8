package tools

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
)

// IndexTimeSeriesIn is a search and the index or band to follow over it.
type IndexTimeSeriesIn struct {
	CatalogArg
	Collections StringList `json:"collections,omitempty"`
	Datetime    string     `json:"datetime,omitempty"`
	AOI         AreaArg    `json:"aoi"`
	Index       IndexArg   `json:"index,omitempty"`
	Band        string     `json:"band,omitempty"`
}

// IndexTimeSeriesOut is the series: one row per clear item.
type IndexTimeSeriesOut struct {
	PlaceResult
	imageOutput
	Of       string          `json:"of" jsonschema:"the index or band followed"`
	Formula  string          `json:"formula,omitempty"`
	AOI      []float64       `json:"aoi"`
	Rows     []TimeSeriesRow `json:"rows" jsonschema:"by date: the statistic over the clear pixels of the area"`
	Skipped  []SkippedItem   `json:"skipped" jsonschema:"items searched but not in the series, and why"`
	Matched  *int            `json:"matched,omitempty"`
	HasMore  bool            `json:"has_more"`
	Image    *ImageInfo      `json:"image,omitempty" jsonschema:"the chart sent as image content"`
	Requests int             `json:"requests"`
	Bytes    int             `json:"bytes"`
	Warnings []string        `json:"warnings"`
	Notes    []string        `json:"notes"`
}

// TimeSeriesRow is one item's statistics.
type TimeSeriesRow struct {
	ItemID     string  `json:"item_id"`
	Datetime   string  `json:"datetime"`
	Mean       float64 `json:"mean"`
	Std        float64 `json:"std"`
	P2         float64 `json:"p2"`
	P50        float64 `json:"p50"`
	P98        float64 `json:"p98"`
	Valid      int     `json:"valid" jsonschema:"clear pixels with a value"`
	ValidShare float64 `json:"valid_share" jsonschema:"of the area's pixels"`
	PixelM     float64 `json:"pixel_m" jsonschema:"resolution read"`
}

// seriesItems is how many items a series reads at most: the first of the
// search (narrow datetime for another span).
const seriesItems = 12

// minClearShare is the share of the area an item must show clear for the
// series: below it, the statistic says more about the clouds than the
// ground.
const minClearShare = 0.5

// seriesReadsAtOnce bounds the items read side by side (each read sends
// its own ranges side by side).
const seriesReadsAtOnce = 3

// IndexTimeSeries is the index_time_series tool.
func IndexTimeSeries() Tool {
	return define(&mcp.Tool{
		Name:  "index_time_series",
		Title: "Index time series over an area",
		Description: "Index (default ndvi) or band over aoi per clear item of a search: table and chart by date.\n" +
			`Example: {"collections": "sentinel-2-l2a", "aoi": [-39.6,-4.6,-39.5,-4.5], "datetime": "2025", "index": "ndvi"}`,
		Annotations: readOnlyAnnotations("Index time series over an area"),
	}, true, indexTimeSeries)
}

// seriesOf is what a series follows: an index, or one band.
type seriesOf struct {
	ix   *index.Index
	band string
}

func (s seriesOf) name() string {
	if s.ix != nil {
		return s.ix.Name
	}
	return s.band
}

func indexTimeSeries(ctx context.Context, c *Call, in IndexTimeSeriesIn) (IndexTimeSeriesOut, string, error) {
	ctx = pixelCall(ctx)
	const tool = "index_time_series"
	fail := failWith[IndexTimeSeriesOut]()
	var of seriesOf
	switch band := strings.ToLower(strings.TrimSpace(in.Band)); {
	case in.Index != "" && band != "":
		return fail(&stacclient.ParamError{Param: "band", Got: in.Band, Reason: "index and band were both given", Accepted: "one of index or band"})
	case band != "":
		of.band = band
	default:
		name := in.Index
		if name == "" {
			name = "ndvi"
		}
		ix, err := lookupIndex(name)
		if err != nil {
			return fail(err)
		}
		of.ix = &ix
	}
	aoi, shape, km2, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	params, err := AreaSearch{SearchFilter: SearchFilter{Collections: in.Collections, Datetime: in.Datetime}, AOI: in.AOI}.params(nil)
	if err != nil {
		return fail(err)
	}
	fs, err := newFootprintSearch(c, tool, params, nil, seriesItems)
	if err != nil {
		return fail(err)
	}
	if err := fs.run(ctx, c); err != nil {
		return fail(err)
	}
	out := IndexTimeSeriesOut{Of: of.name(), AOI: roundBBox(footprint.BBox(shape.Bound())), Rows: []TimeSeriesRow{},
		Skipped: append([]SkippedItem{}, fs.skipped...), Matched: fs.matched, HasMore: fs.hasMore,
		Warnings: append([]string{}, fs.warnings...), Notes: append(append([]string{}, fs.notes...), fs.filterNotes...)}
	if of.ix != nil {
		out.Formula = of.ix.Formula
	}
	env := pixelEnv(c)
	rows, skipped := seriesRows(ctx, c, env, fs.located, of, pixel.Request{AOI: aoi, AOIKm2: km2}, &out)
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	out.Rows, out.Skipped = rows, append(out.Skipped, skipped...)
	if note := searchedNote("read", len(fs.items), fs.boundedSearch); note != "" {
		out.Notes = append(out.Notes, note)
	}
	if len(fs.items) == 0 {
		out.Notes = append(out.Notes, emptySearchNotes(ctx, c, fs.params, false)...)
	}
	if len(rows) > 0 {
		var pts []plot.Point
		for _, r := range rows {
			it := stacclient.Item{Properties: map[string]any{"datetime": r.Datetime}}
			pts = append(pts, plot.Point{Time: itemTime(&it), Value: r.Mean, Low: r.P2, High: r.P98})
		}
		title := fmt.Sprintf("%s mean over the area · %d clear item(s)", strings.ToUpper(of.name()), len(rows))
		pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) {
			return plot.Chart(plot.Series{Title: title, YLabel: of.name() + " (line: mean; bars: 2nd–98th percentile)", Points: pts})
		})
		if err != nil {
			return fail(err)
		}
		out.Image = &ImageInfo{MIMEType: picture.MIMEPNG, Width: pic.Image.Bounds().Dx(), Height: pic.Image.Bounds().Dy(), Bytes: len(data)}
		out.content = &mcp.ImageContent{Data: data, MIMEType: picture.MIMEPNG}
	}
	return out, indexTimeSeriesText(out), nil
}

// seriesRows reads each located item (a few at a time) and keeps the
// clear ones, in time order.
func seriesRows(ctx context.Context, c *Call, env *pixel.Env, located []locatedItem, of seriesOf, area pixel.Request, out *IndexTimeSeriesOut) ([]TimeSeriesRow, []SkippedItem) {
	type result struct {
		row      *TimeSeriesRow
		skip     string
		requests int
		bytes    int
	}
	results := make([]result, len(located))
	sem := make(chan struct{}, seriesReadsAtOnce)
	var wg sync.WaitGroup
	prog := newProgress(c)
	var mu sync.Mutex
	done := 0
	for i, l := range located {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i].skip = "not read: the call ran out of time"
				return
			}
			defer func() { <-sem }()
			row, p, why := seriesRow(ctx, c, env, l.item, of, area)
			results[i] = result{row: row, skip: why}
			if p != nil {
				results[i].requests, results[i].bytes = p.Requests, p.Bytes
			}
			mu.Lock()
			done++
			prog.step(ctx, len(located), "index_time_series: %d of %d item(s) read", done, len(located))
			mu.Unlock()
		}()
	}
	wg.Wait()
	rows := []TimeSeriesRow{}
	var skipped []SkippedItem
	for i, r := range results {
		out.Requests += r.requests
		out.Bytes += r.bytes
		if r.row == nil {
			skipped = append(skipped, SkippedItem{ID: located[i].item.ID, Reason: r.skip})
			continue
		}
		rows = append(rows, *r.row)
	}
	slices.SortStableFunc(rows, func(a, b TimeSeriesRow) int { return strings.Compare(a.Datetime, b.Datetime) })
	return rows, skipped
}

// seriesRow reads one item, or says why it is not in the series.
func seriesRow(ctx context.Context, c *Call, env *pixel.Env, item *stacclient.Item, of seriesOf, area pixel.Request) (*TimeSeriesRow, *pixel.Pixels, string) {
	const tool = "index_time_series"
	signing, err := newAssetSigning(c, c.Deps.signing.isPlanetaryComputer(c.Catalog))
	if err != nil {
		return nil, nil, err.Error()
	}
	signing.sign(ctx, item)
	area.Item = item
	var p *pixel.Pixels
	var st pixel.Stats
	if of.ix != nil {
		p, _, st, err = env.IndexOver(ctx, area, *of.ix)
	} else {
		all := pixel.ItemBands(item)
		b, ok := pixel.FindBand(item, all, of.band)
		if !ok {
			return nil, nil, pixelError(tool, item, pixel.MissingBand(item, all, of.band, []string{of.band})).Error()
		}
		area.Bands, area.Mask = []pixel.Band{b}, true
		p, err = env.Read(ctx, area)
		if err == nil {
			err = env.WithCPU(ctx, func() error {
				st = p.Stats(of.band, p.Values[0], p.Valid[0])
				return nil
			})
		}
	}
	if err != nil {
		return nil, p, renderError(tool, pixelError(tool, item, err)).Error()
	}
	if st.Valid == 0 || st.ValidShare < minClearShare {
		why := fmt.Sprintf("only %s of the area is clear with a value (%d of %d px; the series needs %s)",
			percent(st.ValidShare), st.Valid, st.AOIPixels, percent(minClearShare))
		if st.NoValue > 0 {
			why += fmt.Sprintf("; %d px of the area have no value (outside the item's data, or nodata)", st.NoValue)
		}
		if p.Mask != nil && len(p.Mask.Masked) > 0 {
			var parts []string
			for _, m := range p.Mask.Masked {
				parts = append(parts, fmt.Sprintf("%s %d px", m.Class, m.Pixels))
			}
			why += "; masked: " + strings.Join(parts, ", ")
		}
		return nil, p, why
	}
	return &TimeSeriesRow{ItemID: item.ID, Datetime: itemDatetime(item.Properties), Mean: round4(st.Mean), Std: round4(st.Std), P2: round4(st.P2),
		P50: round4(st.P50), P98: round4(st.P98), Valid: st.Valid, ValidShare: round4(st.ValidShare), PixelM: round2(p.Resolution.PixelMetres)}, p, ""
}

// percent writes a share as a percentage.
func percent(share float64) string {
	return formatNumber(math.Round(share*1000)/10) + "%"
}

func indexTimeSeriesText(out IndexTimeSeriesOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Time series of %s", out.Of)
	if out.Formula != "" {
		fmt.Fprintf(&b, " = %s", out.Formula)
	}
	fmt.Fprintf(&b, " over the area %s: %d clear item(s)", formatBBox(out.AOI), len(out.Rows))
	if out.Matched != nil {
		fmt.Fprintf(&b, " of %d matched", *out.Matched)
	}
	fmt.Fprintf(&b, ", %d skipped; %d range request(s), %d bytes.", len(out.Skipped), out.Requests, out.Bytes)
	if out.Image != nil {
		fmt.Fprintf(&b, " Chart (%s): the mean by date, bars from the 2nd to the 98th percentile.", out.Image)
	}
	b.WriteString("\n")
	if len(out.Rows) > 0 {
		b.WriteString("item_id | datetime | mean | std | p2 | p50 | p98 | valid px | valid_share | pixel_m\n")
	}
	n := formatNumber
	for _, r := range out.Rows {
		fmt.Fprintf(&b, "%s | %s | %s | %s | %s | %s | %s | %d | %s | %s\n", r.ItemID, r.Datetime, n(r.Mean), n(r.Std), n(r.P2), n(r.P50), n(r.P98),
			r.Valid, n(r.ValidShare), n(r.PixelM))
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(&b, "Skipped %s: %s\n", s.ID, s.Reason)
	}
	writeLines(&b, "Warning: ", out.Warnings)
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
