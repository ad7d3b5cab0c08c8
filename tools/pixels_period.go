package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// aoi_statistics and render_aoi over a period (a search) rather than an
// item: a day is read as that day's acquisition mosaicked over the aoi, a
// longer interval as a per-pixel composite of its acquisitions (adr/0040).

// pixelSource is what a pixel tool's arguments name: one item, or a
// period of a search.
type pixelSource struct {
	item        bool
	collections StringList
	period      period
}

// source reads the item or period arguments.
func (a PixelItemArgs) source() (pixelSource, error) {
	const accepted = `item_id (with collection_id) for one item, or datetime (a day: that day's mosaic; an interval: a composite) with collections`
	hasPeriod := a.Datetime != "" || argGiven(a.Collections)
	switch {
	case a.ItemID != "" && hasPeriod:
		return pixelSource{}, &stacclient.ParamError{Param: "item_id", Got: a.ItemID,
			Reason: "item_id names one item, while collections and datetime read a search: give one or the other", Accepted: accepted}
	case a.ItemID != "":
		return pixelSource{item: true}, nil
	case a.Datetime == "":
		return pixelSource{}, &stacclient.ParamError{Param: "datetime", Got: "(none)", Reason: "no item_id and no datetime: nothing names what to read", Accepted: accepted}
	}
	p, err := readPeriod("datetime", a.Datetime)
	if err != nil {
		return pixelSource{}, err
	}
	src := pixelSource{collections: a.Collections, period: p}
	if !argGiven(a.Collections) && a.CollectionID != "" {
		src.collections = StringList(mustJSONString(a.CollectionID))
	}
	return src, nil
}

// mustJSONString is s as a JSON string.
func mustJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// compositeMaxDates bounds the acquisitions one composite reads; a longer
// period is sampled evenly (and says so).
const compositeMaxDates = 60

// periodAcquisitions searches the period and returns its acquisitions (a
// day: the one read; an interval: at most compositeMaxDates, evenly
// sampled) with the notes about them, or an error when nothing matched.
func periodAcquisitions(ctx context.Context, c *Call, tool string, src pixelSource, aoiArg AreaArg, shape footprint.Shape) ([]pixel.Acquisition, *seasonSearch, []string, error) {
	s, err := searchSeason(ctx, c, tool, src.collections, src.period, aoiArg, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var notes []string
	if len(s.acqs) == 0 {
		notes := s.emptyNotes
		if c.Federation == nil {
			notes = emptySearchNotes(ctx, c, s.params, false)
		}
		var why []string
		for _, n := range notes {
			if n != "no items matched." {
				why = append(why, strings.TrimSuffix(n, "."))
			}
		}
		because := ""
		if len(why) > 0 {
			because = ": " + strings.Join(why, "; ")
		}
		return nil, s, nil, actionable(nil, "%s: no item over the aoi in %s%s, so there is nothing to read%s. Widen datetime or the aoi, or check collections "+
			"(datetime: a day reads its mosaic, an interval a composite)", tool, src.period, collectionsWords(src.collections), because)
	}
	acqs := s.acqs
	if src.period.day {
		acq, note := dayAcquisition(acqs, shape)
		if note != "" {
			notes = append(notes, note)
		}
		acqs = []pixel.Acquisition{acq}
	} else if len(acqs) > compositeMaxDates {
		var kept []pixel.Acquisition
		for _, i := range pixel.EvenSample(len(acqs), compositeMaxDates) {
			kept = append(kept, acqs[i])
		}
		notes = append(notes, fmt.Sprintf("%d acquisitions in the period: the composite reads %d of them, evenly spread (narrow datetime for all)", len(acqs), len(kept)))
		acqs = kept
	}
	if err := signAcquisitions(ctx, c, tool, acqs, s.catalogOf); err != nil {
		return nil, nil, nil, err
	}
	return acqs, s, notes, nil
}

// collectionsWords is " of collections a, b", "" when none were named.
func collectionsWords(l StringList) string {
	names, err := l.Strings("collections")
	if err != nil || len(names) == 0 {
		return ""
	}
	return " of collections " + strings.Join(names, ", ")
}

// periodPixels is the pixel budget of one period read: a mosaic's is the
// read budget; a composite's also keeps its stack of observations within
// half the decode budget.
func periodPixels(c *Call, env *pixel.Env, src pixelSource, dates, layers int) int {
	px := env.ReadPixels
	if px <= 0 {
		px = pixel.DefaultReadPixels
	}
	if src.period.day {
		return px
	}
	size := int64(0)
	if env.Decode != nil {
		size = env.Decode.Size()
	}
	return min(px, pixel.CompositePixels(size, dates, layers))
}

// layer is one layer read over a period on a target grid: a mosaic's or a
// composite's values (NaN: no clear value), with what the text says of it.
type layer struct {
	area     pixel.Area
	values   [][]float64 // per band (or the index)
	inside   []bool
	keep     []bool   // the mosaic's clear pixels (nil for a composite: its values are clear)
	valid    [][]bool // a mosaic's bands: where each has a value (nil: where values are not NaN)
	period   *PeriodRead
	facts    readFacts // the top read's bands and calibration, the target's resolution
	items    []string
	reads    []*pixel.Pixels // each item's (a mosaic) or date's (a composite) read facts, by id
	notes    []string
	stats    []pixel.Stats // per layer, over the area
	release  func()
	requests int
	bytes    int
}

// readLayer reads src's period over the aoi on t: a day's mosaic (of the
// bands bandsOf picks, or of ix) or a composite of the acquisitions.
// names are the layers' names (the bands' titles, or the index's).
func readLayer(ctx context.Context, env *pixel.Env, tool string, src pixelSource, acqs []pixel.Acquisition, aoi orb.Geometry, t *pixel.Target,
	bandsOf func(*stacclient.Item) ([]pixel.Band, error), ix *index.Index, names []string) (*layer, error) {
	if src.period.day {
		acq := acqs[0]
		req := pixel.MosaicRequest{Items: acq.Items, Bands: bandsOf, Mask: true, AOI: aoi, Grid: t, Index: ix}
		var m *pixel.Mosaic
		var values []float64
		var ixStats pixel.Stats
		var err error
		if ix != nil {
			m, values, ixStats, err = env.MosaicIndex(ctx, req, *ix)
		} else {
			m, err = env.Mosaic(ctx, req)
		}
		if err != nil {
			return nil, pixelError(tool, acq.Items[0], err)
		}
		l := &layer{area: m.Area(), inside: m.Inside, keep: m.Keep, period: mosaicPeriod(src.period, acq, m, t), items: m.ItemIDs(),
			release: m.Release, requests: m.Requests, bytes: m.Bytes}
		l.facts = describeRead(m.Pixels)
		l.facts.Mask = nil // per item, in the notes
		reads := map[string]*pixel.Pixels{}
		for _, it := range m.Items {
			if it.Read != nil {
				reads[it.Item.ID] = it.Read
			}
		}
		l.reads = sortedReads(reads)
		l.notes = append(mosaicNotes(m), calibrationNotes(m.Calibration, reads)...)
		if ix != nil {
			l.values, l.stats = [][]float64{values}, []pixel.Stats{ixStats}
			return l, nil
		}
		l.values, l.valid = m.Values, m.Valid
		err = env.WithCPU(ctx, func() error {
			for k, v := range l.values {
				l.stats = append(l.stats, m.Stats(names[k], v, m.Valid[k]))
			}
			return nil
		})
		if err != nil {
			m.Release()
			return nil, err
		}
		return l, nil
	}
	c, err := env.Composite(ctx, pixel.CompositeRequest{Acquisitions: acqs, Bands: bandsOf, Names: names, Index: ix, AOI: aoi, Grid: t, Stop: callStop(ctx)})
	if err != nil {
		return nil, pixelError(tool, acqs[0].Items[0], err)
	}
	pr, reads, top := compositePeriod(src.period, c, t, tool)
	l := &layer{area: c.Area, inside: c.Inside, values: c.Values, period: pr, release: c.Release, requests: c.Requests, bytes: c.Bytes}
	if top == nil {
		c.Release()
		return nil, actionable(nil, "%s: no acquisition of %s could be read over the aoi: %s", tool, src.period, datesWords(pr.Dates))
	}
	l.facts = describeRead(top)
	l.facts.Mask = nil
	l.facts.Requests, l.facts.Bytes = c.Requests, c.Bytes
	l.notes = calibrationNotes(top.Calibration, reads)
	l.reads = sortedReads(reads)
	seen := map[string]bool{}
	for _, d := range pr.Dates {
		for _, id := range d.Items {
			if !seen[id] {
				seen[id] = true
				l.items = append(l.items, id)
			}
		}
	}
	p := &pixel.Pixels{Inside: c.Inside, Keep: c.Inside, AOIPixels: c.AOIPixels}
	err = env.WithCPU(ctx, func() error {
		for k, v := range c.Values {
			valid := make([]bool, len(v))
			for i := range v {
				valid[i] = !math.IsNaN(v[i])
			}
			l.stats = append(l.stats, p.Stats(names[k], v, valid))
		}
		return nil
	})
	if err != nil {
		c.Release()
		return nil, err
	}
	l.notes = append(l.notes, "a composite's pixels without a value are those no date shows clear (statistics count them as no value, none as masked)")
	return l, nil
}

// sortedReads are the reads by their keys' order.
func sortedReads(reads map[string]*pixel.Pixels) []*pixel.Pixels {
	keys := make([]string, 0, len(reads))
	for k := range reads {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*pixel.Pixels, 0, len(keys))
	for _, k := range keys {
		out = append(out, reads[k])
	}
	return out
}

// datesWords is each date's status in a line.
func datesWords(dates []DateRead) string {
	var parts []string
	for _, d := range dates {
		s := d.Date + " " + d.Status
		if d.Reason != "" {
			s += " (" + d.Reason + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
