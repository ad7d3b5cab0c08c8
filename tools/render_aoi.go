package tools

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/stats"
)

// ViewArg names what render_aoi draws: a band combination or an index.
type ViewArg string

// composites are the band combinations render_aoi draws, as red, green,
// blue, each a list of common names (preferred first).
var composites = []struct {
	name  string
	title string
	rgb   [3][]string
}{
	{"true-color", "true colour (red, green, blue)", [3][]string{{"red"}, {"green"}, {"blue"}}},
	{"false-color", "false colour (nir, red, green: vegetation red)", [3][]string{{"nir", "nir08"}, {"red"}, {"green"}}},
	{"swir", "SWIR false colour (swir22, nir, red: burn scars and bare soil brown, vegetation green)", [3][]string{{"swir22"}, {"nir", "nir08"}, {"red"}}},
}

// viewNames are the composites, then the indices.
func viewNames() []string {
	var names []string
	for _, c := range composites {
		names = append(names, c.name)
	}
	return append(names, index.Names()...)
}

// RenderAOIIn names an item, an area and what to draw.
type RenderAOIIn struct {
	PixelItemArgs
	View     ViewArg `json:"view,omitempty" jsonschema:"default true-color"`
	Baseline string  `json:"baseline,omitempty" jsonschema:"earlier day or interval: change map"`
}

// RenderAOIOut describes the picture sent.
type RenderAOIOut struct {
	PlaceResult
	imageOutput
	ItemID      string           `json:"item_id"`
	Collection  string           `json:"collection"`
	Datetime    string           `json:"datetime,omitempty"`
	ReadFrom    *ReadCopy        `json:"read_from,omitempty" jsonschema:"the scene's copy in another catalog read, when the item's own data cannot be read here"`
	View        string           `json:"view"`
	Formula     string           `json:"formula,omitempty" jsonschema:"an index's, in eo:bands common names, on reflectance"`
	Stats       *BandStats       `json:"stats,omitempty" jsonschema:"an index's statistics over the clear pixels of the area"`
	Mask        *MaskInfo        `json:"mask,omitempty" jsonschema:"the cloud mask applied to an index"`
	Calibration *CalibrationInfo `json:"calibration,omitempty" jsonschema:"the product convention and reading applied, checked against the pixels"`
	ColorMap    string           `json:"color_map,omitempty" jsonschema:"what an index map's colours mean"`
	AOI         []float64        `json:"aoi"`
	Resolution  Resolution       `json:"resolution"`
	Bands       []BandRead       `json:"bands_read" jsonschema:"as red, green, blue"`
	Stretch     []StretchRange   `json:"stretch" jsonschema:"per channel: the 2nd and 98th percentiles mapped to black and full"`
	Image       *ImageInfo       `json:"image,omitempty"`
	ScaleBar    string           `json:"scale_bar,omitempty"`
	Requests    int              `json:"requests"`
	Bytes       int              `json:"bytes"`
	Items       []string         `json:"items,omitempty" jsonschema:"a period's items that gave pixels"`
	// ItemCatalogs and Catalogs are a period's over several catalogs.
	ItemCatalogs []string         `json:"item_catalogs,omitempty" jsonschema:"over several catalogs: each item's catalog, as items"`
	Catalogs     []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"per catalog, when catalog_url names several"`
	Period       *PeriodRead      `json:"period,omitempty" jsonschema:"a period read: its mosaic or composite (with baseline: the later side)"`
	Baseline     *PeriodRead      `json:"baseline,omitempty" jsonschema:"the earlier side of a change"`
	Change       *ChangeInfo      `json:"change,omitempty"`
	Notes        []string         `json:"notes"`
}

// StretchRange is one channel's stretch.
type StretchRange struct {
	Band string  `json:"band"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// RenderAOI is the render_aoi tool.
func RenderAOI() Tool {
	return define(&mcp.Tool{
		Name:  "render_aoi",
		Title: "Picture of an area",
		Description: "PNG of an item or a period (day mosaic, interval composite) over aoi: composite, index map with statistics, or its change since baseline.\n" +
			`Example: {"collection_id":"sentinel-2-l2a-synthetic","item_id":"S2A_13TDE_20230803_0_L2A_synthetic","aoi":[-105.25,40.05,-105.21,40.08],"view":"ndvi"}`,
		Annotations: readOnlyAnnotations("Picture of an area"),
	}, true, renderAOI)
}

func renderAOI(ctx context.Context, c *Call, in RenderAOIIn) (RenderAOIOut, string, error) {
	ctx = pixelCall(ctx)
	tool := c.Tool
	fail := failWith[RenderAOIOut]()
	name := strings.ToLower(strings.TrimSpace(string(in.View)))
	if name == "" {
		name = composites[0].name
	}
	ci := -1
	for i, cp := range composites {
		if cp.name == name {
			ci = i
		}
	}
	ix, ixErr := index.Lookup(name)
	if ci < 0 && ixErr != nil {
		return fail(&stacclient.ParamError{Param: "view", Got: string(in.View), Reason: "unknown view", Accepted: strings.Join(viewNames(), ", ")})
	}
	aoi, shape, km2, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	src, err := in.source()
	if err != nil {
		return fail(err)
	}
	if in.Baseline != "" && (src.item || ci >= 0) {
		return fail(&stacclient.ParamError{Param: "baseline", Got: in.Baseline,
			Reason: "a change map compares an index between two periods of a search", Accepted: "baseline with datetime and an index view (ndvi, ndwi, …), without item_id"})
	}
	if !src.item {
		var ixp *index.Index
		if ci < 0 {
			ixp = &ix
		}
		return renderPeriod(ctx, c, in, src, ci, ixp, aoi, shape)
	}
	r, err := pixelItem(ctx, c, tool, in.CollectionID, in.ItemID)
	if err != nil {
		return fail(err)
	}
	item := r.item
	env := pixelEnv(r.call)
	req := pixel.Request{Item: item, AOI: aoi, AOIKm2: km2}
	if ci < 0 {
		return renderIndex(ctx, env, tool, req, ix, footprint.BBox(shape.Bound()), r)
	}
	comp := composites[ci]
	all := pixel.ItemBands(item)
	for _, names := range comp.rgb {
		b, ok := pixel.FindBand(item, all, names...)
		if !ok || b.CommonName == "" {
			return fail(pixelError(tool, item, pixel.MissingBand(item, all, names[0], names)))
		}
		req.Bands = append(req.Bands, b)
	}
	// The picture shows the clouds; the mask is read only so that the
	// stretch comes from the clear pixels (a cloud's brightness would
	// otherwise set the top of every channel and darken the ground).
	req.Mask = true
	p, err := env.Read(ctx, req)
	if err != nil {
		return fail(pixelError(tool, item, err))
	}
	facts := describeRead(p)
	facts.Copy = r.copy
	out := RenderAOIOut{ItemID: r.asked.ID, Collection: orDash(r.asked.Collection), Datetime: itemDatetime(r.asked.Properties), View: comp.name,
		ReadFrom: r.copy, AOI: roundBBox(footprint.BBox(shape.Bound())), Resolution: facts.Resolution, Bands: facts.Bands, Calibration: facts.Calibration,
		Stretch: []StretchRange{}, Requests: facts.Requests, Bytes: facts.Bytes, Notes: append([]string{}, facts.Notes...)}
	var st [3]plot.Stretch
	err = env.WithCPU(ctx, func() error {
		for k := range 3 {
			// The stretch comes from the clear pixels with a value (an
			// alpha band's or a mask's transparent pixels are no value).
			ps := stats.Percentiles(p.Values[k], pixel.AndKeep(p.Keep, p.Valid[k]), 2, 98)
			if math.IsNaN(ps[0]) { // nothing clear: stretch over every pixel of the area
				ps = stats.Percentiles(p.Values[k], pixel.AndKeep(p.Inside, p.Valid[k]), 2, 98)
			}
			if math.IsNaN(ps[0]) {
				return actionable(nil, "%s: item %s has no value of %s inside the area", tool, item.ID, p.Bands[k].Band)
			}
			st[k] = plot.Stretch{Low: round4(ps[0]), High: round4(ps[1])}
			out.Stretch = append(out.Stretch, StretchRange{Band: p.Bands[k].Band, Low: st[k].Low, High: st[k].High})
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	title := fmt.Sprintf("%s · %s · %s", comp.name, item.ID, day(itemTime(item)))
	legend := fmt.Sprintf("R %s, G %s, B %s · 2–98 %% stretch", p.Bands[0].Band, p.Bands[1].Band, p.Bands[2].Band)
	pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) {
		return plot.Composite(p.Values[0], p.Values[1], p.Values[2], st,
			plot.Frame{Title: title, Width: p.W, Height: p.H, Inside: p.Inside, Outline: p.Outline, PixelMetres: p.PixelMetres}, legend)
	})
	if err != nil {
		return fail(err)
	}
	out.Image = &ImageInfo{MIMEType: picture.MIMEPNG, Width: pic.Image.Bounds().Dx(), Height: pic.Image.Bounds().Dy(), Bytes: len(data)}
	out.content = &mcp.ImageContent{Data: data, MIMEType: picture.MIMEPNG}
	out.ScaleBar = pic.ScaleBar
	return out, renderAOIText(out, comp.title, facts), nil
}

// sourceWords names what a result read: "item X (collection, datetime)",
// or "the mosaic of 2024-06-01 (collection; items a, b)".
func sourceWords(itemID, collection, datetime string, items []string, pr *PeriodRead) string {
	if pr != nil {
		return fmt.Sprintf("the %s of %s (%s; items %s)", pr.Mode, pr.Datetime, collection, strings.Join(items, ", "))
	}
	s := fmt.Sprintf("item %s (%s", itemID, collection)
	if datetime != "" {
		s += ", " + datetime
	}
	return s + ")"
}

func renderAOIText(out RenderAOIOut, title string, facts readFacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Picture (%s) of %s over the area %s, outlined in red: view %s, %s; scale bar %s; grey: no value; pale: outside the aoi.\n",
		out.Image, sourceWords(out.ItemID, out.Collection, out.Datetime, withCatalogs(out.Items, out.ItemCatalogs), out.Period), formatBBox(out.AOI), out.View, title, out.ScaleBar)
	periodText(&b, out.Period)
	readText(&b, facts, "")
	for _, s := range out.Stretch {
		fmt.Fprintf(&b, "Stretch of %s: %s (black) to %s (full), the 2nd and 98th percentiles of the clear pixels (the mask is not drawn).\n",
			s.Band, formatNumber(s.Low), formatNumber(s.High))
	}
	return strings.TrimRight(b.String(), "\n")
}

// renderIndex draws an index over the area, with its statistics.
// r is the item read (and the one asked for).
func renderIndex(ctx context.Context, env *pixel.Env, tool string, req pixel.Request, ix index.Index, bbox []float64, r *pixelRead) (RenderAOIOut, string, error) {
	fail := failWith[RenderAOIOut]()
	item := req.Item
	p, values, st, err := env.IndexOver(ctx, req, ix)
	if err != nil {
		return fail(pixelError(tool, item, err))
	}
	facts := describeRead(p)
	facts.Copy = r.copy
	stats := bandStats(st)
	out := RenderAOIOut{ItemID: r.asked.ID, Collection: orDash(r.asked.Collection), Datetime: itemDatetime(r.asked.Properties), ReadFrom: r.copy,
		View: ix.Name, Formula: ix.Formula, AOI: roundBBox(bbox), Resolution: facts.Resolution, Bands: facts.Bands, Mask: facts.Mask,
		Calibration: facts.Calibration, Stats: &stats, Stretch: []StretchRange{}, Requests: facts.Requests, Bytes: facts.Bytes,
		Notes: append([]string{}, facts.Notes...)}
	if st.Valid == 0 {
		out.Notes = append(out.Notes, "no clear pixel with a value in the area, so no map is attached")
		return out, renderIndexText(out, facts), nil
	}
	title := fmt.Sprintf("%s · %s · %s", strings.ToUpper(ix.Name), item.ID, day(itemTime(item)))
	pic, data, err := drawPicture(ctx, env, func() (*plot.Picture, error) {
		return plot.IndexMap(values, plot.Frame{Title: title, Width: p.W, Height: p.H, Inside: p.Inside, Outline: p.Outline, PixelMetres: p.PixelMetres},
			plot.RampNamed(ix.Ramp), ix.Low, ix.High, strings.ToUpper(ix.Name))
	})
	if err != nil {
		return fail(err)
	}
	out.Image = &ImageInfo{MIMEType: picture.MIMEPNG, Width: pic.Image.Bounds().Dx(), Height: pic.Image.Bounds().Dy(), Bytes: len(data)}
	out.content = &mcp.ImageContent{Data: data, MIMEType: picture.MIMEPNG}
	out.ScaleBar = pic.ScaleBar
	out.ColorMap = fmt.Sprintf("%s from %s to %s, %s; grey: no value or masked; pale: outside the aoi; red line: the aoi",
		ix.Name, formatNumber(ix.Low), formatNumber(ix.High), rampWords(ix.Ramp))
	return out, renderIndexText(out, facts), nil
}

func renderIndexText(out RenderAOIOut, facts readFacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s of %s over the area %s.\n", out.View, out.Formula, sourceWords(out.ItemID, out.Collection, out.Datetime, withCatalogs(out.Items, out.ItemCatalogs), out.Period),
		formatBBox(out.AOI))
	periodText(&b, out.Period)
	readText(&b, facts, strings.ToUpper(out.View))
	b.WriteString(statsLine(*out.Stats) + "\n")
	if out.Image != nil {
		fmt.Fprintf(&b, "Map (%s): %s; scale bar %s.\n", out.Image, out.ColorMap, out.ScaleBar)
	}
	writeLines(&b, "Note: ", out.Notes[len(facts.Notes):])
	return strings.TrimRight(b.String(), "\n")
}
