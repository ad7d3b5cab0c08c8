package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
)

// What the pixel tools share when they read a search rather than an item
// (adr/0040): a period (a day is one acquisition's mosaic, a longer
// interval a composite), the search's items grouped into acquisitions, the
// one grid they are read onto, and how a mosaic or a composite is worded.

// period is a datetime argument as the pixel tools read it: one UTC day
// (an instant stands for its day), or an interval longer than a day.
type period struct {
	text       string // as sent to the catalog: the day's whole period, or the interval
	start, end time.Time
	open       bool // an end is open
	day        bool
}

// readPeriod reads a datetime argument of a pixel tool.
func readPeriod(param, s string) (period, error) {
	norm, err := stacclient.ParseDatetime(s)
	if err != nil {
		var pe *stacclient.ParamError
		if errors.As(err, &pe) {
			pe.Param = param
		}
		return period{}, err
	}
	if norm == "" {
		return period{}, &stacclient.ParamError{Param: param, Got: s, Reason: "empty", Accepted: "a day (2024-06-01) or an interval (2024-06, 2024-06-01/2024-08-31)"}
	}
	parse := func(v string) (time.Time, bool) {
		if v == ".." {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		return t.UTC(), err == nil
	}
	a, b, isRange := strings.Cut(norm, "/")
	p := period{text: norm}
	start, okStart := parse(a)
	end := start
	okEnd := okStart
	if isRange {
		end, okEnd = parse(b)
	}
	p.start, p.end, p.open = start, end, !okStart || !okEnd
	dayOf := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	if !p.open && dayOf(start).Equal(dayOf(end)) {
		p.day = true
		d := dayOf(start)
		p.start, p.end = d, d.Add(24*time.Hour-time.Microsecond)
		p.text = formatInstant(p.start) + "/" + formatInstant(p.end)
	}
	return p, nil
}

// formatInstant writes an instant as the catalogs take it.
func formatInstant(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999999Z") }

// String is the period in words: "2024-06-01" or "2024-06-01/2024-08-31".
func (p period) String() string {
	if p.day {
		return day(p.start)
	}
	a, b, _ := strings.Cut(p.text, "/")
	short := func(v string) string {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil && v != ".." {
			return day(t)
		}
		return v
	}
	return short(a) + "/" + short(b)
}

// seasonMaxItems bounds the items a period's search reads in one call (a
// year of Sentinel-2 over an area across four tiles is about 300).
const seasonMaxItems = 600

// seasonSearch is a period's search over the aoi, its items grouped into
// acquisitions.
type seasonSearch struct {
	*footprintSearch
	acqs []pixel.Acquisition
	// catalogOf is each item's catalog over several catalogs (nil over
	// one): its assets are signed for and read with that catalog's client.
	catalogOf map[*stacclient.Item]*Catalog
}

// itemCatalogs is catalogOf, nil on a nil search.
func (s *seasonSearch) itemCatalogs() map[*stacclient.Item]*Catalog {
	if s == nil {
		return nil
	}
	return s.catalogOf
}

// seasonEnv is the pixel environment of a period's reads: over several
// catalogs, each item's range requests go through its own catalog's
// client (and only a local catalog's own files are read from disk).
func seasonEnv(c *Call, of map[*stacclient.Item]*Catalog) *pixel.Env {
	e := pixelEnv(c)
	if of == nil {
		return e
	}
	fetcher, root := e.Fetcher, e.LocalCatalog
	e.Source = func(it *stacclient.Item) (cog.RangeFetcher, string) {
		if cat := of[it]; cat != nil {
			return cat.Client, cat.Key
		}
		return fetcher, root
	}
	return e
}

// searchSeason searches collections over the aoi in the period and groups
// the items into acquisitions (pixel.AcquisitionRule); items without a
// footprint or a datetime are skipped, saying why. cloud is
// max_cloud_cover (nil: none).
func searchSeason(ctx context.Context, c *Call, tool string, collections StringList, p period, aoi AreaArg, cloud IntArg) (*seasonSearch, error) {
	params, err := AreaSearch{SearchFilter: SearchFilter{Collections: collections, Datetime: p.text}, AOI: aoi}.params(nil)
	if err != nil {
		return nil, err
	}
	fs, err := newFootprintSearch(c, tool, params, nil, seasonMaxItems)
	if err != nil {
		return nil, err
	}
	// Past the configured ceiling of max_items: a period's dates are read
	// from all its items, in pages as large as the catalogs take.
	fs.maxItems, fs.params.Limit = seasonMaxItems, 250
	if fs.cloud, err = newCloudFilter(cloud); err != nil {
		return nil, err
	}
	if err := fs.run(ctx, c); err != nil {
		return nil, err
	}
	s := &seasonSearch{footprintSearch: fs}
	items := make([]*stacclient.Item, 0, len(fs.located))
	if c.Federation != nil {
		s.catalogOf = make(map[*stacclient.Item]*Catalog, len(fs.located))
	}
	for _, l := range fs.located {
		items = append(items, l.item)
		if s.catalogOf != nil {
			s.catalogOf[l.item] = c.Federation.members[l.member]
		}
	}
	acqs, undated := pixel.Acquisitions(items)
	for _, it := range undated {
		s.skipped = append(s.skipped, SkippedItem{ID: it.ID, Reason: "it has no datetime (nor start_datetime), so it belongs to no day"})
	}
	s.acqs = acqs
	if fs.hasMore && !fs.pageFailed {
		of := "more"
		if fs.matched != nil {
			of = fmt.Sprint(*fs.matched)
		}
		s.warnings = append(s.warnings, fmt.Sprintf("only the first %d of %s matching items were grouped into dates (at most %d a call): narrow datetime or the aoi", len(fs.items), of, seasonMaxItems))
	}
	return s, nil
}

// signAcquisitions signs the items' asset hrefs where their catalog needs
// it (the Planetary Computer): each item's catalog is of's, else the
// call's.
func signAcquisitions(ctx context.Context, c *Call, tool string, acqs []pixel.Acquisition, of map[*stacclient.Item]*Catalog) error {
	signers := map[*Catalog]*assetSigning{}
	for _, a := range acqs {
		for _, it := range a.Items {
			cat := c.Catalog
			if of[it] != nil {
				cat = of[it]
			}
			signing := signers[cat]
			if signing == nil {
				mc := *c
				mc.Catalog = cat
				var err error
				if signing, err = newAssetSigning(&mc, c.Deps.signing.isPlanetaryComputer(cat)); err != nil {
					return err
				}
				signers[cat] = signing
			}
			signing.sign(ctx, it)
			if signing.firstErr != nil {
				return actionable(signing.firstErr, "%s: Planetary Computer signing failed, and its assets cannot be read unsigned: %v", tool, signing.firstErr)
			}
		}
	}
	return nil
}

// latticeItem is the item whose grid the acquisitions are read onto: the
// one whose footprint covers most of the area (then the earliest, then by
// id), so that as much as possible is read without resampling.
func latticeItem(acqs []pixel.Acquisition, shape footprint.Shape) *stacclient.Item {
	area, _ := footprint.NewArea(shape)
	var best *stacclient.Item
	bestPct := -1.0
	for _, a := range acqs {
		for _, it := range a.Items {
			pct := 0.0
			if area != nil {
				if o, ok := itemOverlap(area, it); ok {
					pct = o.AreaPercent
				}
			}
			if pct > bestPct+1e-9 {
				best, bestPct = it, pct
			}
		}
	}
	return best
}

// seasonTarget plans the one grid of a set of acquisitions: the lattice
// of the finest band bandsOf picks in the lattice item, at the level that
// fits maxPixels over the whole area.
func seasonTarget(ctx context.Context, env *pixel.Env, tool string, acqs []pixel.Acquisition, shape footprint.Shape, aoi orb.Geometry,
	bandsOf func(*stacclient.Item) ([]pixel.Band, error), maxPixels int) (*pixel.Target, error) {
	item := latticeItem(acqs, shape)
	if item == nil {
		return nil, fmt.Errorf("%s: no item to read", tool)
	}
	bands, err := bandsOf(item)
	if err != nil {
		return nil, pixelError(tool, item, err)
	}
	t, err := env.PlanTarget(ctx, item, bands, aoi, maxPixels)
	if err != nil {
		return nil, pixelError(tool, item, err)
	}
	return t, nil
}

// dayAcquisition picks the acquisition a day's read mosaics: the only one,
// or (several collections or platforms that day) the one whose footprints
// cover most of the area, then the one with most items; the others are
// named in a note.
func dayAcquisition(acqs []pixel.Acquisition, shape footprint.Shape) (pixel.Acquisition, string) {
	if len(acqs) == 1 {
		return acqs[0], ""
	}
	area, _ := footprint.NewArea(shape)
	cover := func(a pixel.Acquisition) float64 {
		sum := 0.0
		for _, it := range a.Items {
			if area != nil {
				if o, ok := itemOverlap(area, it); ok {
					sum += o.AreaPercent
				}
			}
		}
		return math.Min(sum, 100)
	}
	best := 0
	for i := 1; i < len(acqs); i++ {
		ci, cb := cover(acqs[i]), cover(acqs[best])
		if ci > cb+1e-9 || (math.Abs(ci-cb) <= 1e-9 && len(acqs[i].Items) > len(acqs[best].Items)) {
			best = i
		}
	}
	var others []string
	for i, a := range acqs {
		if i != best {
			others = append(others, a.Key())
		}
	}
	return acqs[best], fmt.Sprintf("%d acquisitions that day: %s was read (its footprints cover most of the aoi); not read: %s (name one collection with collections, or give an interval for a composite of all)",
		len(acqs), acqs[best].Key(), strings.Join(others, "; "))
}

// GridInfo is the grid the values lie on, georeferenced (GDAL's
// geotransform), so that they can be placed or exported.
type GridInfo struct {
	EPSG         int        `json:"epsg"`
	GeoTransform [6]float64 `json:"geotransform" jsonschema:"GDAL order: x0, pixel width, 0, y0, 0, -pixel height"`
	Width        int        `json:"width"`
	Height       int        `json:"height"`
}

func gridInfo(t *pixel.Target) GridInfo {
	g := t.Grid
	gt := g.GeoTransform
	for i := range gt {
		gt[i] = math.Round(gt[i]*1e6) / 1e6
	}
	return GridInfo{EPSG: g.CRS.EPSG, GeoTransform: gt, Width: g.Width, Height: g.Height}
}

func (g GridInfo) String() string {
	gt := g.GeoTransform
	n := formatNumber
	return fmt.Sprintf("EPSG:%d, %d×%d px, geotransform [%s, %s, %s, %s, %s, %s]", g.EPSG, g.Width, g.Height, n(gt[0]), n(gt[1]), n(gt[2]), n(gt[3]), n(gt[4]), n(gt[5]))
}

// PeriodRead says what a read of a period was made of: a mosaic of one
// acquisition, or a composite of several.
type PeriodRead struct {
	Datetime string `json:"datetime" jsonschema:"the period read"`
	// Mode is mosaic (one acquisition) or composite (every acquisition
	// of the period, pixel by pixel).
	Mode string `json:"mode" jsonschema:"mosaic or composite"`
	Rule string `json:"rule" jsonschema:"how items make an acquisition"`
	// Method and Observations are a composite's: the per-pixel statistic
	// and the clear observations per pixel of the area.
	Method       string       `json:"method,omitempty"`
	Observations *Observation `json:"observations,omitempty" jsonschema:"clear observations per pixel of the area"`
	Dates        []DateRead   `json:"dates" jsonschema:"per acquisition: what it gave"`
	Grid         GridInfo     `json:"grid"`
}

// Observation is the least, median and most clear observations a pixel
// of the area has.
type Observation struct {
	Min    int `json:"min"`
	Median int `json:"median"`
	Max    int `json:"max"`
}

// DateRead is one acquisition of a mosaic or a composite.
type DateRead struct {
	Date       string   `json:"date" jsonschema:"acquisition: UTC day, platform, collection"`
	Items      []string `json:"items" jsonschema:"the items that gave pixels"`
	ClearShare float64  `json:"clear_share" jsonschema:"of the area, clear with a value"`
	// Status is read, missed (no item's raster reaches the area), failed
	// or not read (the time ran out).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// mosaicDates is a mosaic's one acquisition as PeriodRead dates: the
// items that gave pixels, each with its clear share.
func mosaicPeriod(p period, acq pixel.Acquisition, m *pixel.Mosaic, t *pixel.Target) *PeriodRead {
	clear := 0
	for i, in := range m.Inside {
		if in && m.Keep[i] && hasAllValues(m.Pixels, i) {
			clear++
		}
	}
	dr := DateRead{Date: acq.Key(), Items: m.ItemIDs(), Status: "read"}
	if m.AOIPixels > 0 {
		dr.ClearShare = round4(float64(clear) / float64(m.AOIPixels))
	}
	if dr.Items == nil {
		dr.Items = []string{}
	}
	return &PeriodRead{Datetime: p.String(), Mode: "mosaic", Rule: pixel.AcquisitionRule, Dates: []DateRead{dr}, Grid: gridInfo(t)}
}

// hasAllValues says whether every band of p has a value at pixel i.
func hasAllValues(p *pixel.Pixels, i int) bool {
	for _, v := range p.Valid {
		if !v[i] {
			return false
		}
	}
	return len(p.Valid) > 0
}

// mosaicNotes words a mosaic's items: pixels taken from each, its clear
// share, what its mask removed; and an item whose raster missed the area.
func mosaicNotes(m *pixel.Mosaic) []string {
	var out []string
	for _, it := range m.Items {
		if it.Missed {
			out = append(out, fmt.Sprintf("item %s: its raster does not reach the aoi (its footprint does), so it gave nothing", it.Item.ID))
			continue
		}
		s := fmt.Sprintf("item %s: %d px of the aoi taken from it; it shows %s of the aoi clear with a value", it.Item.ID, it.Pixels, percent(it.ClearShare))
		if r := it.Read; r != nil && r.Mask != nil {
			var parts []string
			for _, x := range r.Mask.Masked {
				parts = append(parts, fmt.Sprintf("%s %d px", x.Class, x.Pixels))
			}
			if len(parts) > 0 {
				s += "; masked " + strings.Join(parts, ", ")
			}
		}
		out = append(out, s)
	}
	return out
}

// calibrationNotes says where the reads of a mosaic or composite were
// calibrated otherwise than the one reported (top): those items' readings.
func calibrationNotes(top pixel.Calibration, reads map[string]*pixel.Pixels) []string {
	var ids []string
	for id, r := range reads {
		if r != nil && (r.Calibration.Used.Name != top.Used.Name || r.Calibration.Overridden != top.Overridden) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var out []string
	for _, id := range ids {
		ci := calibrationInfo(reads[id].Calibration)
		status := "consistent"
		if ci != nil {
			status = ci.Status
		}
		out = append(out, fmt.Sprintf("%s was calibrated otherwise: %s (%s)", id, reads[id].Calibration.Used.Name, status))
	}
	return out
}

// periodText writes a PeriodRead's lines.
func periodText(b *strings.Builder, pr *PeriodRead) {
	if pr == nil {
		return
	}
	fmt.Fprintf(b, "Period %s read as a %s (%s) onto one grid: %s.\n", pr.Datetime, pr.Mode, pr.Rule, pr.Grid)
	if pr.Method != "" && pr.Observations != nil {
		o := pr.Observations
		fmt.Fprintf(b, "Composite: per-pixel %s of the clear observations; observations per pixel of the aoi: min %d, median %d, max %d.\n", pr.Method, o.Min, o.Median, o.Max)
	}
	for _, d := range pr.Dates {
		fmt.Fprintf(b, "Date %s: %s", d.Date, d.Status)
		if len(d.Items) > 0 {
			fmt.Fprintf(b, ", items %s", strings.Join(d.Items, ", "))
		}
		if d.Status == "read" {
			fmt.Fprintf(b, ", clear_share %s", formatNumber(d.ClearShare))
		}
		if d.Reason != "" {
			b.WriteString(": " + d.Reason)
		}
		b.WriteString(".\n")
	}
}

// compositePeriod is a composite's PeriodRead, and the reads of its dates
// by item id (for calibration notes).
func compositePeriod(p period, c *pixel.Composite, t *pixel.Target, tool string) (*PeriodRead, map[string]*pixel.Pixels, *pixel.Pixels) {
	lo, med, hi := c.ObservationRange()
	pr := &PeriodRead{Datetime: p.String(), Mode: "composite", Rule: pixel.AcquisitionRule, Method: c.Method,
		Observations: &Observation{Min: lo, Median: med, Max: hi}, Grid: gridInfo(t), Dates: []DateRead{}}
	reads := map[string]*pixel.Pixels{}
	var top *pixel.Pixels
	best := -1
	for _, d := range c.Dates {
		dr := DateRead{Date: d.Acquisition.Key(), Items: d.Items}
		if dr.Items == nil {
			dr.Items = []string{}
		}
		switch {
		case d.NotRead:
			dr.Status, dr.Reason = "not read", "the call's time ran out first; the composite is of the other dates (narrow datetime, or raise the tool timeout)"
		case d.Missed:
			dr.Status, dr.Reason = "missed", "no item's raster reaches the aoi"
		case d.Err != nil:
			dr.Status, dr.Reason = "failed", errorReason(tool, d.Err)
		default:
			dr.Status = "read"
			if c.AOIPixels > 0 {
				dr.ClearShare = round4(float64(d.Clear) / float64(c.AOIPixels))
			}
			if d.Read != nil {
				reads[d.Acquisition.Key()] = d.Read
				if d.Clear > best {
					best, top = d.Clear, d.Read
				}
			}
		}
		pr.Dates = append(pr.Dates, dr)
	}
	return pr, reads, top
}

// errorReason words an error beneath a date's read, without the tool's
// prefix.
func errorReason(tool string, err error) string {
	var pe *pixel.Error
	if errors.As(err, &pe) && (pe.Kind == pixel.ErrNoBand || pe.Kind == pixel.ErrNoBandInfo) {
		return fmt.Sprintf("item %s has no band %s", pe.Item, orDash(pe.Band))
	}
	return strings.TrimPrefix(renderError(tool, pixelError(tool, nil, err)).Error(), tool+": ")
}

// callStop is when a call stops reading so that it answers before its
// deadline: a tenth of the time left (at least a second, at most three)
// is kept for the reads in flight to stop, the chart and the text (a
// series chart takes about 0.1 s of CPU). Zero without a deadline.
func callStop(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Time{}
	}
	left := time.Until(d)
	reserve := min(max(left/10, time.Second), 3*time.Second)
	return d.Add(-reserve)
}
