package tools

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/stats"
)

// render_aoi over a period: a day's mosaic or an interval's composite,
// drawn as a band composite or an index map; with baseline, the index's
// change from the baseline period to datetime (adr/0041).

// ChangeInfo is an index's change between two periods.
type ChangeInfo struct {
	Of      string `json:"of" jsonschema:"the difference: index later − earlier"`
	Earlier string `json:"earlier"`
	Later   string `json:"later"`
	// Both counts the area's pixels clear on both sides (the difference
	// is over them); EarlierOnly and LaterOnly those clear on one side
	// only (not guessed), Neither those clear on neither.
	Both        int           `json:"both" jsonschema:"pixels of the aoi clear on both sides: the difference's pixels"`
	EarlierOnly int           `json:"earlier_only" jsonschema:"clear only in the earlier period: no difference"`
	LaterOnly   int           `json:"later_only" jsonschema:"clear only in the later period: no difference"`
	Neither     int           `json:"neither"`
	Classes     []ChangeClass `json:"classes" jsonschema:"the aoi's pixels by how much the index changed"`
}

// ChangeClass is the pixels whose change lies in a range, and their share
// of the whole aoi.
type ChangeClass struct {
	Range   string  `json:"range"`
	Meaning string  `json:"meaning"`
	Pixels  int     `json:"pixels"`
	Share   float64 `json:"share" jsonschema:"of the aoi's pixels"`
}

// changeThresholds class an index's change (later − earlier).
var changeThresholds = []float64{-0.2, -0.1, 0.1, 0.2}

// changeSpan is the change map's colour range, ± this.
const changeSpan = 0.5

// changeMeanings words the five classes for an index: strong decrease,
// decrease, little change, increase, strong increase.
func changeMeanings(ix string) [5]string {
	what := map[string]string{"ndvi": "vegetation", "savi": "vegetation", "evi": "vegetation", "ndwi": "surface water", "ndbi": "built-up signal", "nbr": "vegetation (NBR; a loss is burn-like)"}[ix]
	if what == "" {
		what = ix
	}
	return [5]string{"strong " + what + " loss", what + " loss", "little change", what + " gain", "strong " + what + " gain"}
}

// renderPeriod is render_aoi over a period (or two, with baseline).
func renderPeriod(ctx context.Context, c *Call, in RenderAOIIn, src pixelSource, ci int, ix *index.Index, aoi orb.Geometry, shape footprint.Shape) (RenderAOIOut, string, error) {
	tool := c.Tool
	fail := failWith[RenderAOIOut]()
	if in.Baseline != "" {
		return renderChange(ctx, c, in, src, *ix, aoi, shape)
	}
	acqs, s, notes, err := periodAcquisitions(ctx, c, tool, src, in.AOI, shape)
	if err != nil {
		return fail(err)
	}
	env := seasonEnv(c, s.itemCatalogs())
	var bandsOf func(*stacclient.Item) ([]pixel.Band, error)
	var names []string
	if ix != nil {
		bandsOf = func(item *stacclient.Item) ([]pixel.Band, error) { return pixel.IndexBands(item, *ix) }
		names = []string{ix.Name}
	} else {
		comp := composites[ci]
		bandsOf = func(item *stacclient.Item) ([]pixel.Band, error) {
			all := pixel.ItemBands(item)
			var out []pixel.Band
			for _, n := range comp.rgb {
				b, ok := pixel.FindBand(item, all, n...)
				if !ok || b.CommonName == "" {
					return nil, pixel.MissingBand(item, all, n[0], n)
				}
				out = append(out, b)
			}
			return out, nil
		}
		names = []string{"red", "green", "blue"}
		if first, err := bandsOf(acqs[0].Items[0]); err == nil {
			for i, b := range first {
				names[i] = b.Title()
			}
		}
	}
	t, err := seasonTarget(ctx, env, tool, acqs, shape, aoi, bandsOf, periodPixels(c, env, src, len(acqs), len(names)))
	if err != nil {
		return fail(err)
	}
	l, err := readLayer(ctx, env, tool, src, acqs, aoi, t, bandsOf, ix, names)
	if err != nil {
		return fail(err)
	}
	defer l.release()
	bbox := roundBBox(footprint.BBox(shape.Bound()))
	out := RenderAOIOut{Collection: orDash(acqs[0].Collection), Datetime: src.period.String(), AOI: bbox, Resolution: l.facts.Resolution,
		Bands: l.facts.Bands, Calibration: l.facts.Calibration, Stretch: []StretchRange{}, Requests: l.requests, Bytes: l.bytes,
		Items: l.items, Period: l.period, Notes: append(append(append([]string{}, l.facts.Notes...), notes...), l.notes...)}
	out.ItemCatalogs, out.Catalogs = itemCatalogs(l.items, s.itemCatalogs()), s.catalogs
	frame := plot.Frame{Width: l.area.W, Height: l.area.H, Inside: l.inside, Outline: l.area.Outline, PixelMetres: l.area.PixelMetres}
	what := l.period.Mode + " " + src.period.String()
	facts := l.facts
	facts.Notes, facts.Catalogs = out.Notes, out.Catalogs
	if ix != nil {
		st := bandStats(l.stats[0])
		out.View, out.Formula, out.Stats = ix.Name, ix.Formula, &st
		if l.stats[0].Valid == 0 {
			out.Notes = append(out.Notes, "no clear pixel with a value in the area, so no map is attached")
			return out, renderIndexText(out, facts), nil
		}
		frame.Title = fmt.Sprintf("%s · %s", strings.ToUpper(ix.Name), what)
		pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) {
			return plot.IndexMap(l.values[0], frame, plot.RampNamed(ix.Ramp), ix.Low, ix.High, strings.ToUpper(ix.Name))
		})
		if err != nil {
			return fail(err)
		}
		attachPicture(&out, pic, data)
		out.ColorMap = fmt.Sprintf("%s from %s to %s, %s; grey: no clear value; pale: outside the aoi; red line: the aoi",
			ix.Name, formatNumber(ix.Low), formatNumber(ix.High), rampWords(ix.Ramp))
		return out, renderIndexText(out, facts), nil
	}
	comp := composites[ci]
	out.View = comp.name
	var st [3]plot.Stretch
	err = env.WithCPU(ctx, func() error {
		for k := range 3 {
			keep := make([]bool, len(l.values[k]))
			for i, v := range l.values[k] {
				keep[i] = l.inside[i] && !math.IsNaN(v) && (l.keep == nil || l.keep[i])
			}
			ps := stats.Percentiles(l.values[k], keep, 2, 98)
			if math.IsNaN(ps[0]) {
				for i, v := range l.values[k] {
					keep[i] = l.inside[i] && !math.IsNaN(v)
				}
				ps = stats.Percentiles(l.values[k], keep, 2, 98)
			}
			if math.IsNaN(ps[0]) {
				return actionable(nil, "%s: the %s has no value of %s inside the area", tool, what, names[k])
			}
			st[k] = plot.Stretch{Low: round4(ps[0]), High: round4(ps[1])}
			out.Stretch = append(out.Stretch, StretchRange{Band: names[k], Low: st[k].Low, High: st[k].High})
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	frame.Title = fmt.Sprintf("%s · %s", comp.name, what)
	legend := fmt.Sprintf("R %s, G %s, B %s · 2–98 %% stretch", names[0], names[1], names[2])
	pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) {
		return plot.Composite(l.values[0], l.values[1], l.values[2], st, frame, legend)
	})
	if err != nil {
		return fail(err)
	}
	attachPicture(&out, pic, data)
	return out, renderAOIText(out, comp.title, facts), nil
}

// attachPicture puts a drawn picture in out.
func attachPicture(out *RenderAOIOut, pic *plot.Picture, data []byte) {
	out.Image = &ImageInfo{MIMEType: picture.MIMEPNG, Width: pic.Image.Bounds().Dx(), Height: pic.Image.Bounds().Dy(), Bytes: len(data)}
	out.content = &mcp.ImageContent{Data: data, MIMEType: picture.MIMEPNG}
	out.ScaleBar = pic.ScaleBar
}

// renderChange draws an index's change from baseline to datetime.
func renderChange(ctx context.Context, c *Call, in RenderAOIIn, later pixelSource, ix index.Index, aoi orb.Geometry, shape footprint.Shape) (RenderAOIOut, string, error) {
	tool := c.Tool
	fail := failWith[RenderAOIOut]()
	bp, err := readPeriod("baseline", in.Baseline)
	if err != nil {
		return fail(err)
	}
	earlier := pixelSource{collections: later.collections, period: bp}
	if bp.open || later.period.open {
		return fail(&stacclient.ParamError{Param: "baseline", Got: in.Baseline, Reason: "a change compares two closed periods", Accepted: "a day or an interval with both ends, for baseline and datetime"})
	}
	if !bp.end.Before(later.period.start) {
		if later.period.end.Before(bp.start) {
			earlier, later = later, earlier // the difference is always later − earlier
		} else {
			return fail(&stacclient.ParamError{Param: "baseline", Got: in.Baseline,
				Reason:   fmt.Sprintf("it overlaps datetime %s: a change compares two separate periods", later.period),
				Accepted: "a day or an interval wholly before (or after) datetime"})
		}
	}
	ea, es, enotes, err := periodAcquisitions(ctx, c, tool, earlier, in.AOI, shape)
	if err != nil {
		return fail(err)
	}
	la, ls, lnotes, err := periodAcquisitions(ctx, c, tool, later, in.AOI, shape)
	if err != nil {
		return fail(err)
	}
	var of map[*stacclient.Item]*Catalog
	if es.itemCatalogs() != nil || ls.itemCatalogs() != nil {
		of = map[*stacclient.Item]*Catalog{}
		maps.Copy(of, es.itemCatalogs())
		maps.Copy(of, ls.itemCatalogs())
	}
	env := seasonEnv(c, of)
	bandsOf := func(item *stacclient.Item) ([]pixel.Band, error) { return pixel.IndexBands(item, ix) }
	px := min(periodPixels(c, env, earlier, len(ea), 1), periodPixels(c, env, later, len(la), 1))
	t, err := seasonTarget(ctx, env, tool, append(append([]pixel.Acquisition{}, ea...), la...), shape, aoi, bandsOf, px)
	if err != nil {
		return fail(err)
	}
	el, err := readLayer(ctx, env, tool, earlier, ea, aoi, t, bandsOf, &ix, []string{ix.Name})
	if err != nil {
		return fail(err)
	}
	defer el.release()
	ll, err := readLayer(ctx, env, tool, later, la, aoi, t, bandsOf, &ix, []string{ix.Name})
	if err != nil {
		return fail(err)
	}
	defer ll.release()
	var ch *pixel.Change
	if err := env.WithCPU(ctx, func() error {
		var err error
		ch, err = pixel.Diff(ll.area, "Δ"+ix.Name, el.values[0], ll.values[0], changeThresholds)
		return err
	}); err != nil {
		return fail(err)
	}
	meanings := changeMeanings(ix.Name)
	info := &ChangeInfo{Of: ix.Name + " later − earlier", Earlier: earlier.period.String() + " (" + el.period.Mode + ")", Later: later.period.String() + " (" + ll.period.Mode + ")",
		Both: ch.Both, EarlierOnly: ch.EarlierOnly, LaterOnly: ch.LaterOnly, Neither: ch.Neither}
	for k, cl := range ch.Classes {
		info.Classes = append(info.Classes, ChangeClass{Range: "Δ" + ix.Name + " " + cl.Label(), Meaning: meanings[k], Pixels: cl.Pixels, Share: round4(cl.Share)})
	}
	st := bandStats(ch.Stats)
	items := append(append([]string{}, el.items...), ll.items...)
	out := RenderAOIOut{Collection: orDash(la[0].Collection), Datetime: later.period.String(), View: ix.Name, Formula: ix.Formula, Stats: &st,
		AOI: roundBBox(footprint.BBox(shape.Bound())), Resolution: ll.facts.Resolution, Bands: ll.facts.Bands, Calibration: ll.facts.Calibration,
		Stretch: []StretchRange{}, Requests: el.requests + ll.requests, Bytes: el.bytes + ll.bytes, Items: items,
		Period: ll.period, Baseline: el.period, Change: info}
	out.ItemCatalogs, out.Catalogs = itemCatalogs(items, of), mergeOutcomes(es.catalogs, ls.catalogs)
	for _, n := range slices.Concat(ll.facts.Notes, enotes, lnotes, el.notes, ll.notes) {
		if !slices.Contains(out.Notes, n) {
			out.Notes = append(out.Notes, n)
		}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if ch.EarlierOnly+ch.LaterOnly > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d px of the aoi are clear on one side only (%d earlier, %d later): no difference is computed there, they are grey on the map",
			ch.EarlierOnly+ch.LaterOnly, ch.EarlierOnly, ch.LaterOnly))
	}
	facts := ll.facts
	facts.Notes, facts.Requests, facts.Bytes, facts.Catalogs = out.Notes, out.Requests, out.Bytes, out.Catalogs
	if ch.Both == 0 {
		out.Notes = append(out.Notes, "no pixel of the aoi is clear on both sides, so no map is attached")
		return out, renderChangeText(out, facts), nil
	}
	frame := plot.Frame{Width: ch.W, Height: ch.H, Inside: ch.Inside, Outline: ch.Outline, PixelMetres: ch.PixelMetres,
		Title: fmt.Sprintf("Δ%s · %s → %s", strings.ToUpper(ix.Name), earlier.period, later.period)}
	pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) {
		return plot.IndexMap(ch.Values, frame, plot.Diverging, -changeSpan, changeSpan, "Δ"+strings.ToUpper(ix.Name)+" (later − earlier)")
	})
	if err != nil {
		return fail(err)
	}
	attachPicture(&out, pic, data)
	out.ColorMap = fmt.Sprintf("Δ%s from −%s to +%s (beyond: the end colours), brown (decrease) → white (no change) → teal (increase); grey: not clear on both sides; pale: outside the aoi; red line: the aoi",
		ix.Name, formatNumber(changeSpan), formatNumber(changeSpan))
	return out, renderChangeText(out, facts), nil
}

func renderChangeText(out RenderAOIOut, facts readFacts) string {
	var b strings.Builder
	ch := out.Change
	fmt.Fprintf(&b, "Change of %s = %s over the area %s: %s, from %s to %s.\n", out.View, out.Formula, formatBBox(out.AOI), ch.Of, ch.Earlier, ch.Later)
	for _, c := range ch.Classes {
		fmt.Fprintf(&b, "%s (%s): %s of the aoi (share %s, %d px).\n", c.Range, c.Meaning, percent(c.Share), formatNumber(c.Share), c.Pixels)
	}
	fmt.Fprintf(&b, "Pixels of the aoi: both %d (the difference), earlier_only %d, later_only %d, neither %d.\n", ch.Both, ch.EarlierOnly, ch.LaterOnly, ch.Neither)
	b.WriteString(statsLine(*out.Stats) + "\n")
	b.WriteString("Earlier side: ")
	periodText(&b, out.Baseline)
	b.WriteString("Later side: ")
	periodText(&b, out.Period)
	readText(&b, facts, strings.ToUpper(out.View))
	if out.Image != nil {
		fmt.Fprintf(&b, "Map (%s): %s; scale bar %s.\n", out.Image, out.ColorMap, out.ScaleBar)
	}
	writeLines(&b, "Note: ", out.Notes[len(facts.Notes):])
	return strings.TrimRight(b.String(), "\n")
}
