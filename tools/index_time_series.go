package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
)

// IndexTimeSeriesIn is a search and the index or band to follow over it.
type IndexTimeSeriesIn struct {
	CatalogsArg
	Collections   StringList `json:"collections,omitempty" jsonschema:"searched"`
	Datetime      string     `json:"datetime,omitempty" jsonschema:"period, e.g. 2024"`
	AOI           AreaArg    `json:"aoi" jsonschema:"bbox, GeoJSON or place"`
	Index         IndexArg   `json:"index,omitempty" jsonschema:"default ndvi"`
	Band          string     `json:"band,omitempty" jsonschema:"instead of index"`
	MaxCloudCover IntArg     `json:"max_cloud_cover,omitempty" jsonschema:"percent, by item metadata"`
	Cursor        string     `json:"cursor,omitempty" jsonschema:"from the previous result, with the same arguments"`
}

func (in IndexTimeSeriesIn) cursorToken() (string, cursor.Kind) { return in.Cursor, cursor.Series }

// IndexTimeSeriesOut is one call's part of a series: a row per clear
// acquisition date read in this call.
type IndexTimeSeriesOut struct {
	PlaceResult
	imageOutput
	Of      string          `json:"of" jsonschema:"the index or band followed"`
	Formula string          `json:"formula,omitempty"`
	AOI     []float64       `json:"aoi"`
	Rows    []TimeSeriesRow `json:"rows" jsonschema:"this call's clear dates, by date: the statistic over the clear pixels of the aoi"`
	Skipped []SkippedItem   `json:"skipped" jsonschema:"dates (and items) read or searched but not in the series, and why"`
	Failed  []SkippedItem   `json:"failed" jsonschema:"dates whose reads failed, and why"`
	// Dates is every acquisition date of the period; Done those finished
	// so far, this call's included; ThisCall those finished in this call.
	Dates    int        `json:"dates" jsonschema:"acquisition dates in the period (after max_cloud_cover)"`
	Done     int        `json:"dates_done" jsonschema:"dates finished so far, this call's included"`
	ThisCall int        `json:"dates_this_call"`
	Cursor   string     `json:"cursor,omitempty" jsonschema:"call again with the same arguments and this cursor for the rest"`
	Grid     *GridInfo  `json:"grid,omitempty" jsonschema:"the grid every date was read onto"`
	Image    *ImageInfo `json:"image,omitempty" jsonschema:"the chart sent as image content"`
	Requests int        `json:"requests"`
	Bytes    int        `json:"bytes"`
	// Catalogs is each catalog's outcome when catalog_url names several.
	Catalogs []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"per catalog, when catalog_url names several"`
	Warnings []string         `json:"warnings"`
	Notes    []string         `json:"notes"`
}

// TimeSeriesRow is one acquisition date's statistics.
type TimeSeriesRow struct {
	Date     string   `json:"date" jsonschema:"acquisition: UTC day, platform, collection"`
	Datetime string   `json:"datetime"`
	Items    []string `json:"items" jsonschema:"the items mosaicked"`
	// ItemCatalogs are the items' catalogs, in the order of Items, over
	// several catalogs.
	ItemCatalogs []string `json:"item_catalogs,omitempty" jsonschema:"over several catalogs: each item's catalog"`
	Mean         float64  `json:"mean"`
	Std          float64  `json:"std"`
	P2           float64  `json:"p2"`
	P50          float64  `json:"p50"`
	P98          float64  `json:"p98"`
	Valid        int      `json:"valid" jsonschema:"clear pixels with a value"`
	ValidShare   float64  `json:"valid_share" jsonschema:"of the aoi's pixels"`
	PixelM       float64  `json:"pixel_m" jsonschema:"resolution read"`
}

// minClearShare is the share of the area a date must show clear for the
// series: below it, the statistic says more about the clouds than the
// ground.
const minClearShare = 0.5

// seriesDatesAtOnce bounds the dates read side by side (each reads its
// items side by side, and each item its bands). Each date in flight keeps
// its mosaic's pixels while its next item is read: with three, a 1 Mpx
// grid's held mosaics and one read no longer fit the default decode
// budget, and dates waited on each other (bench/RESULTS.md, "A year of NDVI over two tiles").
const seriesDatesAtOnce = 2

// seriesPageDates bounds the dates one call returns (the text stays
// readable; the cursor has the rest).
const seriesPageDates = 120

// seriesWindow is how far past the first unfinished date (in the reading
// order) a call may finish dates: the cursor records them in 64 bits.
const seriesWindow = 64

// IndexTimeSeries is the index_time_series tool.
func IndexTimeSeries() Tool {
	return define(&mcp.Tool{
		Name:  "index_time_series",
		Title: "Index time series over an area",
		Description: "Index or band over aoi per clear acquisition date of a period (tiles mosaicked): table and chart; an even sample first, cursor for the rest.\n" +
			`Example: {"collections":"sentinel-2-l2a-synthetic-series","aoi":[-105.235,40.081,-105.217,40.087],"datetime":"2023","max_cloud_cover":60}`,
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

// bands picks an item's bands for the series.
func (s seriesOf) bands(item *stacclient.Item) ([]pixel.Band, error) {
	if s.ix != nil {
		return pixel.IndexBands(item, *s.ix)
	}
	all := pixel.ItemBands(item)
	b, ok := pixel.FindBand(item, all, s.band)
	if !ok {
		return nil, pixel.MissingBand(item, all, s.band, []string{s.band})
	}
	return []pixel.Band{b}, nil
}

// seriesParams are what a series cursor is bound to: the call's arguments
// as read.
type seriesParams struct {
	Collections []string        `json:"collections,omitempty"`
	Datetime    string          `json:"datetime,omitempty"`
	AOI         json.RawMessage `json:"aoi"`
	Of          string          `json:"of"`
	Band        bool            `json:"band,omitempty"`
	Cloud       json.RawMessage `json:"max_cloud_cover,omitempty"`
}

func indexTimeSeries(ctx context.Context, c *Call, in IndexTimeSeriesIn) (IndexTimeSeriesOut, string, error) {
	ctx = pixelCall(ctx)
	tool := c.Tool
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
	aoi, shape, _, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	var p period
	if in.Datetime != "" {
		if p, err = readPeriod("datetime", in.Datetime); err != nil {
			return fail(err)
		}
	}
	collections, err := in.Collections.Strings("collections")
	if err != nil {
		return fail(err)
	}
	paramsJSON, _ := json.Marshal(seriesParams{Collections: collections, Datetime: p.text, AOI: json.RawMessage(in.AOI), Of: of.name(),
		Band: of.band != "", Cloud: json.RawMessage(in.MaxCloudCover)})
	if c.Cursor != nil && c.Cursor.ParamsSum != cursor.Sum64(paramsJSON) {
		return fail(cursorRefusal(in.Cursor, "it continues a series of other arguments: send exactly the arguments of the call that returned it (and the cursor), or drop the cursor to start again"))
	}
	s, err := searchSeason(ctx, c, tool, in.Collections, p, in.AOI, in.MaxCloudCover)
	if err != nil {
		return fail(err)
	}
	out := IndexTimeSeriesOut{Of: of.name(), AOI: roundBBox(footprint.BBox(shape.Bound())), Rows: []TimeSeriesRow{},
		Skipped: append([]SkippedItem{}, s.skipped...), Failed: []SkippedItem{}, Dates: len(s.acqs), Catalogs: s.catalogs,
		Warnings: append([]string{}, s.warnings...), Notes: append(append([]string{}, s.notes...), s.filterNotes...)}
	if of.ix != nil {
		out.Formula = of.ix.Formula
	}
	acqs := s.acqs
	listSum := acquisitionsSum(acqs)
	done := make([]bool, len(acqs)) // by position in the reading order
	if cur := c.Cursor; cur != nil {
		if cur.ListSum != listSum || cur.PageSize != len(acqs) {
			return fail(cursorRefusal(in.Cursor, fmt.Sprintf("the catalog's items for this series changed since the cursor was made (%d dates then, %d now): call again without cursor to start over", cur.PageSize, len(acqs))))
		}
		for i := range min(cur.Done, len(done)) {
			done[i] = true
		}
		for k := range seriesWindow {
			if cur.DoneBits&(1<<k) != 0 && cur.Done+1+k < len(done) {
				done[cur.Done+1+k] = true
			}
		}
	}
	if len(acqs) == 0 {
		switch {
		case len(s.items) > 0:
		case c.Federation != nil:
			out.Notes = append(out.Notes, s.emptyNotes...)
		default:
			out.Notes = append(out.Notes, emptySearchNotes(ctx, c, s.params, false)...)
		}
		return out, indexTimeSeriesText(out), nil
	}
	order := pixel.SpreadOrder(len(acqs))
	env := seasonEnv(c, s.catalogOf)
	// The grid is planned on one item's header: its hrefs are signed
	// first where its catalog needs it (the dates are signed as they are
	// read), or the Planetary Computer answers 403.
	if it := latticeItem(acqs, shape); it != nil {
		if err := signAcquisitions(ctx, c, tool, []pixel.Acquisition{{Items: []*stacclient.Item{it}}}, s.catalogOf); err != nil {
			return fail(err)
		}
	}
	target, err := seasonTarget(ctx, env, tool, acqs, shape, aoi, of.bands, 0)
	if err != nil {
		return fail(err)
	}
	g := gridInfo(target)
	out.Grid = &g
	run := &seriesRun{c: c, env: env, of: of, acqs: acqs, order: order, done: done, target: target, aoi: aoi, tool: tool, catalogOf: s.catalogOf}
	results := run.read(ctx)
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	var marks []plot.Mark
	for _, r := range results {
		out.Requests += r.requests
		out.Bytes += r.bytes
		acq := acqs[order[r.pos]]
		switch {
		case r.row != nil:
			out.Rows = append(out.Rows, *r.row)
		case r.failed != "":
			out.Failed = append(out.Failed, SkippedItem{ID: acq.Key(), Reason: r.failed})
			marks = append(marks, plot.Mark{Time: acq.Start, Failed: true})
		default:
			out.Skipped = append(out.Skipped, SkippedItem{ID: acq.Key(), Reason: r.skip})
			marks = append(marks, plot.Mark{Time: acq.Start})
		}
		out.ThisCall++
	}
	slices.SortStableFunc(out.Rows, func(a, b TimeSeriesRow) int { return strings.Compare(a.Datetime, b.Datetime) })
	byDate := func(a, b SkippedItem) int { return strings.Compare(a.ID, b.ID) }
	slices.SortStableFunc(out.Skipped[len(s.skipped):], byDate)
	slices.SortStableFunc(out.Failed, byDate)
	for _, d := range done {
		if d {
			out.Done++
		}
	}
	if out.Done < len(acqs) {
		out.Cursor = seriesCursor(c, paramsJSON, listSum, len(acqs), done)
	}
	if len(out.Rows) > 0 {
		pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) { return seriesChart(out, of, acqs, marks) })
		if err != nil {
			return fail(err)
		}
		if pic != nil {
			out.Image = &ImageInfo{MIMEType: picture.MIMEPNG, Width: pic.Image.Bounds().Dx(), Height: pic.Image.Bounds().Dy(), Bytes: len(data)}
			out.content = &mcp.ImageContent{Data: data, MIMEType: picture.MIMEPNG}
		}
	}
	return out, indexTimeSeriesText(out), nil
}

// acquisitionsSum fingerprints the series' dates and their items.
func acquisitionsSum(acqs []pixel.Acquisition) uint64 {
	var b strings.Builder
	for _, a := range acqs {
		b.WriteString(a.Key() + "=" + strings.Join(a.IDs(), ",") + ";")
	}
	return cursor.Sum64([]byte(b.String()))
}

// seriesCursor is the cursor for the dates not done: the first not done
// (in the reading order) and the done ones in the 64 after it.
func seriesCursor(c *Call, params []byte, listSum uint64, n int, done []bool) string {
	first := 0
	for first < len(done) && done[first] {
		first++
	}
	var bits uint64
	for k := range seriesWindow {
		if i := first + 1 + k; i < len(done) && done[i] {
			bits |= 1 << k
		}
	}
	cur := cursor.Cursor{Kind: cursor.Series, Catalog: cursorCatalogRef(c.Catalog), ParamsSum: cursor.Sum64(params), PageSize: n,
		ListSum: listSum, Done: first, DoneBits: bits}
	key := catalogKey(c.Catalog)
	if c.Federation != nil {
		// Several catalogs: bound to them by fingerprint, so the cursor
		// comes back with the same catalog_url, as with the same arguments.
		key = c.Federation.key()
		cur.Catalog, cur.CatalogSum = "", cursor.Sum64([]byte(key))
	}
	token, _ := cursor.Fit(c.Deps.cursorKey(), cur, params, []byte(key))
	return token
}

// seriesRun reads a series' dates not done yet, within the call's time.
type seriesRun struct {
	c         *Call
	catalogOf map[*stacclient.Item]*Catalog // each item's catalog over several (nil over one)
	env       *pixel.Env
	of        seriesOf
	acqs      []pixel.Acquisition
	order     []int
	done      []bool // by reading position; read updates it
	target    *pixel.Target
	aoi       orb.Geometry
	tool      string
}

// dateResult is one date's outcome.
type dateResult struct {
	pos             int // in the reading order
	row             *TimeSeriesRow
	skip, failed    string
	unfinished      bool
	requests, bytes int
}

// read reads dates in the reading order, a few at a time, until every
// date is done, seriesPageDates are, or the call's time is nearly up
// (callStop): dates still being read then are cancelled and left for the
// cursor. A date whose read fails is tried once more while time remains,
// then reported as failed. Progress is notified per date.
func (r *seriesRun) read(ctx context.Context) []dateResult {
	stop := callStop(ctx)
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if !stop.IsZero() {
		runCtx, cancel = context.WithDeadline(ctx, stop)
	}
	defer cancel()
	prog := newProgress(r.c)
	n := len(r.order)
	var todo []int
	for pos := range n {
		if !r.done[pos] {
			todo = append(todo, pos)
		}
	}
	already := n - len(todo)
	retried := map[int]bool{}
	inflight := map[int]bool{}
	results := make(chan dateResult)
	var out []dateResult
	finished := 0
	next := 0
	firstOpen := func() int {
		lo := n
		for pos := range inflight {
			lo = min(lo, pos)
		}
		if next < len(todo) {
			lo = min(lo, todo[next])
		}
		for pos := range n {
			if !r.done[pos] && pos < lo {
				lo = pos
			}
		}
		return lo
	}
	page := seriesPageDates
	if r.c.Deps.seriesPage > 0 {
		page = r.c.Deps.seriesPage
	}
	for {
		for len(inflight) < seriesDatesAtOnce && next < len(todo) && finished+len(inflight) < page && runCtx.Err() == nil &&
			todo[next] < firstOpen()+1+seriesWindow {
			pos := todo[next]
			next++
			inflight[pos] = true
			go func() { results <- r.readDate(runCtx, pos) }()
		}
		if len(inflight) == 0 {
			break
		}
		res := <-results
		delete(inflight, res.pos)
		switch {
		case res.unfinished || runCtx.Err() != nil && res.failed != "":
			continue // left for the next call
		case res.failed != "" && !retried[res.pos]:
			retried[res.pos] = true
			todo = append(todo, res.pos)
			continue
		}
		r.done[res.pos] = true
		finished++
		out = append(out, res)
		prog.step(ctx, n, "%s: %d of %d dates so far (%s)", r.tool, already+finished, n, r.acqs[r.order[res.pos]].Key())
	}
	return out
}

// readDate reads one date's mosaic and its statistic, or says why it is
// not in the series.
func (r *seriesRun) readDate(ctx context.Context, pos int) dateResult {
	res := dateResult{pos: pos}
	acq := r.acqs[r.order[pos]]
	if err := signAcquisitions(ctx, r.c, r.tool, []pixel.Acquisition{acq}, r.catalogOf); err != nil {
		res.failed = err.Error()
		return res
	}
	var m *pixel.Mosaic
	var st pixel.Stats
	var err error
	mreq := pixel.MosaicRequest{Items: acq.Items, Bands: r.of.bands, Mask: true, AOI: r.aoi, Grid: r.target}
	if r.of.ix != nil {
		m, _, st, err = r.env.MosaicIndex(ctx, mreq, *r.of.ix)
	} else if m, err = r.env.Mosaic(ctx, mreq); err == nil {
		err = r.env.WithCPU(ctx, func() error {
			st = m.Stats(r.of.band, m.Values[0], m.Valid[0])
			return nil
		})
	}
	if m != nil {
		res.requests, res.bytes = m.Requests, m.Bytes
		defer m.Release()
	}
	var pe *pixel.Error
	switch {
	case ctx.Err() != nil:
		res.unfinished = true
		return res
	case errors.As(err, &pe) && pe.Kind == pixel.ErrNoOverlap:
		res.skip = "no item's raster reaches the aoi (their footprints do)"
		return res
	case err != nil:
		res.failed = errorReason(r.tool, err)
		return res
	}
	if st.Valid == 0 || st.ValidShare < minClearShare {
		why := fmt.Sprintf("only %s of the aoi is clear with a value (%d of %d px; the series needs %s)", percent(st.ValidShare), st.Valid, st.AOIPixels, percent(minClearShare))
		if st.NoValue > 0 {
			why += fmt.Sprintf("; %d px of the aoi have no value (outside the items' data, or nodata)", st.NoValue)
		}
		masked := map[string]int{}
		var classes []string
		for _, it := range m.Items {
			if it.Read == nil || it.Read.Mask == nil {
				continue
			}
			for _, x := range it.Read.Mask.Masked {
				if masked[x.Class] == 0 {
					classes = append(classes, x.Class)
				}
				masked[x.Class] += x.Pixels
			}
		}
		if len(classes) > 0 {
			var parts []string
			for _, cl := range classes {
				parts = append(parts, fmt.Sprintf("%s %d px", cl, masked[cl]))
			}
			why += "; masked: " + strings.Join(parts, ", ")
		}
		res.skip = why
		return res
	}
	res.row = &TimeSeriesRow{Date: acq.Key(), Datetime: formatInstant(acq.Start), Items: m.ItemIDs(), Mean: round4(st.Mean), Std: round4(st.Std),
		P2: round4(st.P2), P50: round4(st.P50), P98: round4(st.P98), Valid: st.Valid, ValidShare: round4(st.ValidShare),
		PixelM: round2(m.Resolution.PixelMetres)}
	if r.catalogOf != nil {
		for _, id := range res.row.Items {
			for _, it := range acq.Items {
				if it.ID == id {
					res.row.ItemCatalogs = append(res.row.ItemCatalogs, memberName(r.catalogOf[it]))
					break
				}
			}
		}
	}
	return res
}

// percent writes a share as a percentage.
func percent(share float64) string {
	return formatNumber(math.Round(share*1000)/10) + "%"
}

// seriesChart draws this call's rows, with the dates skipped (grey) or
// failed (red) marked along the axis, and the spans of the period without
// any acquisition (far longer than the usual revisit) shaded.
func seriesChart(out IndexTimeSeriesOut, of seriesOf, acqs []pixel.Acquisition, marks []plot.Mark) (*plot.Picture, error) {
	var pts []plot.Point
	for _, r := range out.Rows {
		t, _ := time.Parse(time.RFC3339Nano, r.Datetime)
		pts = append(pts, plot.Point{Time: t, Value: r.Mean, Low: r.P2, High: r.P98})
	}
	title := fmt.Sprintf("%s mean over the aoi · %d clear of %d date(s) this call", strings.ToUpper(of.name()), len(out.Rows), out.ThisCall)
	if out.Done < out.Dates || out.ThisCall < out.Dates {
		title += fmt.Sprintf(" · %d of %d dates so far", out.Done, out.Dates)
	}
	s := plot.Series{Title: title, YLabel: of.name() + " (line: mean; bars: 2nd–98th percentile; grey ×: skipped, red ×: failed; shaded: no acquisition)",
		Points: pts, Marks: marks, Gaps: seriesGaps(acqs)}
	if of.ix != nil {
		s.YMin, s.YMax, s.Clip = -1, 1, true
	}
	return plot.Chart(s)
}

// seriesGaps are the spans between consecutive acquisitions of the period
// longer than 2.5 times the median span (none for fewer than three).
func seriesGaps(acqs []pixel.Acquisition) []plot.Gap {
	if len(acqs) < 3 {
		return nil
	}
	var spans []time.Duration
	for i := 1; i < len(acqs); i++ {
		spans = append(spans, acqs[i].Start.Sub(acqs[i-1].Start))
	}
	sorted := slices.Clone(spans)
	slices.Sort(sorted)
	typical := sorted[len(sorted)/2]
	if typical <= 0 {
		return nil
	}
	var out []plot.Gap
	for i, d := range spans {
		if d > typical*5/2 {
			out = append(out, plot.Gap{From: acqs[i].Start, To: acqs[i+1].Start})
		}
	}
	return out
}

func indexTimeSeriesText(out IndexTimeSeriesOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Time series of %s", out.Of)
	if out.Formula != "" {
		fmt.Fprintf(&b, " = %s", out.Formula)
	}
	fmt.Fprintf(&b, " over the area %s: %d of %d dates so far (this call: %d, of which %d clear, %d skipped, %d failed); %s. %d range request(s), %d bytes.",
		formatBBox(out.AOI), out.Done, out.Dates, out.ThisCall, len(out.Rows), out.ThisCall-len(out.Rows)-len(out.Failed), len(out.Failed),
		pixel.AcquisitionRule+"; a date is in the series when at least "+percent(minClearShare)+" of the aoi is clear", out.Requests, out.Bytes)
	if out.Grid != nil {
		fmt.Fprintf(&b, " Every date read onto one grid: %s.", out.Grid)
	}
	if out.Image != nil {
		fmt.Fprintf(&b, " Chart (%s): the mean by date, bars from the 2nd to the 98th percentile, skipped dates grey ×, failed red ×.", out.Image)
	}
	b.WriteString("\n")
	if len(out.Rows) > 0 {
		hi, lo := out.Rows[0], out.Rows[0]
		for _, r := range out.Rows {
			if r.Mean > hi.Mean {
				hi = r
			}
			if r.Mean < lo.Mean {
				lo = r
			}
		}
		fmt.Fprintf(&b, "Highest mean %s on %s; lowest %s on %s (of this call's dates).\n", formatNumber(hi.Mean), day(parseInstant(hi.Datetime)), formatNumber(lo.Mean), day(parseInstant(lo.Datetime)))
		items := "items"
		if len(out.Catalogs) > 0 {
			items = "items (catalog:id)"
		}
		b.WriteString("date | datetime | " + items + " | mean | std | p2 | p50 | p98 | valid px | valid_share | pixel_m\n")
	}
	n := formatNumber
	for _, r := range out.Rows {
		fmt.Fprintf(&b, "%s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s\n", r.Date, r.Datetime, strings.Join(withCatalogs(r.Items, r.ItemCatalogs), " "), n(r.Mean), n(r.Std), n(r.P2), n(r.P50), n(r.P98),
			r.Valid, n(r.ValidShare), n(r.PixelM))
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(&b, "Skipped %s: %s\n", s.ID, s.Reason)
	}
	for _, s := range out.Failed {
		fmt.Fprintf(&b, "Failed %s: %s (to retry it alone: datetime its day)\n", s.ID, s.Reason)
	}
	if out.Cursor != "" {
		fmt.Fprintf(&b, "More: %d date(s) not read yet (the dates are read as an even sample of the period first, then filling in): call index_time_series again with the same arguments and cursor %q\n",
			out.Dates-out.Done, out.Cursor)
	}
	if len(out.Catalogs) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + ".\n")
	}
	writeLines(&b, "Warning: ", out.Warnings)
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}

// parseInstant reads an RFC 3339 instant (zero when it is not one).
func parseInstant(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
