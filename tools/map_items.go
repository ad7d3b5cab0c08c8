package tools

import (
	"context"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
)

// MapItemsIn is a search to draw, and how to colour it.
type MapItemsIn struct {
	CatalogsArg
	AreaSearch
	MaxItems      MaxItemsArg `json:"max_items,omitempty" jsonschema:"footprints to draw (default 50)"`
	ColorBy       ColorByArg  `json:"color_by,omitempty" jsonschema:"default cloud_cover when items have it"`
	MaxCloudCover IntArg      `json:"max_cloud_cover,omitempty"`
}

// MapItemsOut describes the map sent as image content, and its legend.
type MapItemsOut struct {
	PlaceResult
	imageOutput
	Drawn    int              `json:"drawn" jsonschema:"footprints drawn"`
	Matched  *int             `json:"matched,omitempty" jsonschema:"items matching the search, when the catalog reports it"`
	HasMore  bool             `json:"has_more" jsonschema:"true when more items match than were drawn"`
	ColorBy  string           `json:"color_by" jsonschema:"cloud_cover or date"`
	Extent   []float64        `json:"extent" jsonschema:"the area shown, [west, south, east, north] (west > east across the antimeridian)"`
	ScaleBar string           `json:"scale_bar" jsonschema:"the distance the map's scale bar stands for"`
	AOI      []float64        `json:"aoi" jsonschema:"bbox of the area of interest outlined in red (the search's bbox or intersects); empty when none"`
	Places   []string         `json:"places" jsonschema:"populated places named on the map (GeoNames cities of the offline gazetteer); with none inside, the nearest as \"Name 260 km NW\""`
	Image    ImageInfo        `json:"image"`
	Items    []MapLegendEntry `json:"items" jsonschema:"the legend: each footprint's number on the map, item and colour"`
	Skipped  []SkippedItem    `json:"skipped" jsonschema:"items returned but not drawn, and why"`
	Warnings []string         `json:"warnings"`
	Notes    []string         `json:"notes"`
	Catalogs []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"several catalogs: each one's outcome"`
}

// MapLegendEntry is one footprint of the map.
type MapLegendEntry struct {
	Label      string   `json:"label" jsonschema:"the number drawn on the map"`
	ID         string   `json:"id"`
	Collection string   `json:"collection,omitempty"`
	Datetime   string   `json:"datetime,omitempty"`
	CloudCover *float64 `json:"cloud_cover,omitempty" jsonschema:"eo:cloud_cover in percent"`
	Color      string   `json:"color" jsonschema:"fill colour, #rrggbb"`
	// Over several catalogs (adr/0035).
	Catalog string     `json:"catalog,omitempty" jsonschema:"the catalog this copy is from"`
	AlsoIn  []ItemCopy `json:"also_in,omitempty" jsonschema:"the same acquisition in other catalogs (drawn once)"`
	Kept    string     `json:"kept,omitempty" jsonschema:"why this copy was kept over those in also_in"`
}

const (
	colorByCloud = "cloud_cover"
	colorByDate  = "date"
)

// unknownColor is for items without the property the map is coloured by.
var unknownColor = color.NRGBA{0xb1, 0x59, 0x28, 0xff}

// MapItems is the map_items tool.
func MapItems() Tool {
	return define(&mcp.Tool{
		Name:  "map_items",
		Title: "Map of item footprints",
		Description: "PNG map of a search's footprints, numbered, shaded by cloud cover or date, offline basemap, aoi in " +
			"red; the text is the legend.\n" +
			`Example: {"collections":["sentinel-2-l2a"],"aoi":[-40.5,-5.3,-37.5,-3.5],"datetime":"2025-07","max_items":20}`,
		Annotations: readOnlyAnnotations("Map of item footprints"),
		Meta:        mapViewMeta(),
	}, true, mapItems).withAliases(areaAliases)
}

func mapItems(ctx context.Context, c *Call, in MapItemsIn) (MapItemsOut, string, error) {
	tool := c.Tool
	fail := failWith[MapItemsOut]()
	colorBy, err := checkColorBy(in.ColorBy)
	if err != nil {
		return fail(err)
	}
	out := MapItemsOut{Extent: []float64{}, AOI: []float64{}, Places: []string{}, Items: []MapLegendEntry{}, Skipped: []SkippedItem{}, Warnings: []string{}, Notes: []string{}}
	fs, err := searchFootprintsToDraw(ctx, c, in, &out)
	if err != nil {
		return fail(err)
	}
	items := drawnItems(fs)
	if len(items) == 0 && !fs.hasArea {
		return fail(actionable(nil, "%s: nothing to draw: %s", tool, joinNonEmpty("; ",
			strings.Join(fs.emptyNotes, " "), skippedSummary(out.Skipped))))
	}
	if len(items) == 0 {
		// Nothing to draw over the area: a map of the area alone is 22 KB
		// of image saying less than the notes. Text only.
		out.AOI = roundBBox(footprint.BBox(fs.area.Bound()))
		out.Notes = append(out.Notes, fs.emptyNotes...)
		return out, mapItemsText(out), nil
	}
	out.ColorBy = chooseColorBy(colorBy, items)
	first, last := timeSpan(items)
	colorItems(items, out.ColorBy, first, last, &out)
	spec := mapSpec(fs, items, out.ColorBy, first, last, &out)
	if err := ctx.Err(); err != nil {
		return fail(err) // out of time: do not draw a map nobody will receive
	}
	if err := drawMap(ctx, c, spec, &out); err != nil {
		return fail(err)
	}
	if note := searchedNote("drawn", len(fs.items), fs.boundedSearch); note != "" {
		out.Notes = append(out.Notes, note)
	}
	out.Notes = append(out.Notes, fs.emptyNotes...)
	return out, mapItemsText(out), nil
}

// checkColorBy reads color_by: "" (choose), cloud_cover or date.
func checkColorBy(arg ColorByArg) (string, error) {
	colorBy := strings.ToLower(strings.TrimSpace(string(arg)))
	if colorBy != "" && colorBy != colorByCloud && colorBy != colorByDate {
		return "", &stacclient.ParamError{Param: "color_by", Got: string(arg), Reason: "unknown colouring",
			Accepted: `"cloud_cover" or "date" (default: cloud_cover when the items have it, else date)`}
	}
	return colorBy, nil
}

// searchFootprintsToDraw runs the search and reports in out what it found
// besides the footprints: notes, warnings, the match count, the items that
// cannot be drawn.
func searchFootprintsToDraw(ctx context.Context, c *Call, in MapItemsIn, out *MapItemsOut) (*footprintSearch, error) {
	params, err := in.AreaSearch.params(nil)
	if err != nil {
		return nil, err
	}
	fs, err := newFootprintSearch(c, "map_items", params, in.MaxItems, 50)
	if err != nil {
		return nil, err
	}
	if fs.cloud, err = newCloudFilter(in.MaxCloudCover); err != nil {
		return nil, err
	}
	out.Notes = append(out.Notes, fs.notes...)
	if err := fs.run(ctx, c); err != nil {
		return nil, err
	}
	out.Warnings = append(out.Warnings, fs.warnings...)
	out.Notes = append(out.Notes, fs.filterNotes...)
	out.Matched, out.HasMore = fs.matched, fs.hasMore
	out.Skipped = append(out.Skipped, fs.skipped...)
	out.Catalogs = fs.catalogs
	return fs, nil
}

// drawnItem is an item on the map: its footprint, its legend entry (its
// label is its number) and its colour.
type drawnItem struct {
	item  *stacclient.Item
	shape footprint.Shape
	entry MapLegendEntry
	color color.NRGBA
}

// drawnItems are the located items, numbered in the search's order.
func drawnItems(fs *footprintSearch) []drawnItem {
	var items []drawnItem
	for _, l := range fs.located {
		it := l.item
		items = append(items, drawnItem{item: it, shape: l.shape, entry: MapLegendEntry{Label: fmt.Sprint(len(items) + 1), ID: it.ID,
			Collection: it.Collection, Datetime: itemDatetime(it.Properties), CloudCover: propNumber(it.Properties, "eo:cloud_cover"),
			Catalog: l.catalog, AlsoIn: l.alsoIn, Kept: l.kept}})
	}
	return items
}

// chooseColorBy is the colouring asked for, else by cloud cover when any
// item has it, else by date.
func chooseColorBy(colorBy string, items []drawnItem) string {
	if colorBy != "" {
		return colorBy
	}
	for _, d := range items {
		if d.entry.CloudCover != nil {
			return colorByCloud
		}
	}
	return colorByDate
}

// timeSpan is the earliest and latest item time (zero when none has one).
func timeSpan(items []drawnItem) (first, last time.Time) {
	for _, d := range items {
		if t := itemTime(d.item); !t.IsZero() {
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
	}
	return first, last
}

// colorItems gives each item its colour on the ramp colorBy names (brown
// when it has no value), and lists them in out's legend.
func colorItems(items []drawnItem, colorBy string, first, last time.Time, out *MapItemsOut) {
	rank := dateRanks(items)
	unknown := 0
	for i := range items {
		d := &items[i]
		col, known := unknownColor, false
		switch colorBy {
		case colorByCloud:
			if cc := d.entry.CloudCover; cc != nil {
				col, known = mapimage.CloudRamp.At(*cc/100), true
			}
		case colorByDate:
			if t := itemTime(d.item); !t.IsZero() {
				col, known = mapimage.DateRamp.At(rank[t.Unix()]), true
			}
		}
		if !known {
			unknown++
		}
		d.color = col
		d.entry.Color = hexColor(col)
		out.Items = append(out.Items, d.entry)
	}
	if unknown > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) have no %s and are drawn in brown (%s)", unknown, strings.ReplaceAll(colorBy, "_", " "), hexColor(unknownColor)))
	}
}

// dateRanks places each distinct item time on the date ramp by its rank
// (0 oldest, 1 newest, 0.5 when there is one): a linear scale let one item
// of 2070 paint every 2025 item the same colour.
func dateRanks(items []drawnItem) map[int64]float64 {
	var times []int64
	for _, d := range items {
		if t := itemTime(d.item); !t.IsZero() {
			times = append(times, t.Unix())
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	rank := make(map[int64]float64, len(times))
	for i, t := range times {
		rank[t] = 0.5
		if len(times) > 1 {
			rank[t] = float64(i) / float64(len(times)-1)
		}
	}
	return rank
}

// mapSpec lays the map out. One longitude frame for everything, centred on
// the area of interest when there is one (out.AOI shows it). Drawing
// order: cloudiest (or oldest) first, so the clearest (or newest)
// footprints are on top.
func mapSpec(fs *footprintSearch, items []drawnItem, colorBy string, first, last time.Time, out *MapItemsOut) mapimage.Spec {
	spec := mapimage.Spec{}
	shapes := make([]footprint.Shape, 0, len(items))
	for _, d := range items {
		shapes = append(shapes, d.shape)
	}
	frame := footprint.FrameFor(shapes)
	if fs.hasArea {
		frame = footprint.FrameAround(fs.area)
		spec.AOI = frame.Place(fs.area).Polygons
		out.AOI = roundBBox(footprint.BBox(fs.area.Bound()))
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return drawRank(items[b].item, colorBy) - drawRank(items[a].item, colorBy) })
	for _, i := range order {
		d := items[i]
		spec.Footprints = append(spec.Footprints, mapimage.Footprint{Polygons: frame.Place(d.shape).Polygons, Color: d.color, Label: d.entry.Label})
	}
	spec.Title = mapTitle(out.Items, fs.boundedSearch, first, last, colorBy)
	switch colorBy {
	case colorByCloud:
		spec.Legend = &mapimage.Legend{Title: "cloud cover", Ramp: mapimage.CloudRamp, Low: "0%", High: "100%"}
	case colorByDate:
		spec.Legend = &mapimage.Legend{Title: "date (by rank)", Ramp: mapimage.DateRamp, Low: orDash(day(first)), High: orDash(day(last))}
	}
	return spec
}

// drawMap renders spec (or takes it from the map cache) and puts the image
// and what it shows into out.
func drawMap(ctx context.Context, c *Call, spec mapimage.Spec, out *MapItemsOut) error {
	m, err := c.Deps.maps.renderWithin(ctx, spec, c.Deps.work())
	if err != nil {
		return err
	}
	out.Drawn = len(spec.Footprints)
	out.Extent = roundBBox(footprint.BBox(m.extent)) // as the text writes it
	out.ScaleBar = m.scaleBar
	out.Places = append([]string{}, m.places...)
	out.Image = ImageInfo{MIMEType: picture.MIMEPNG, Width: m.width, Height: m.height, Bytes: len(m.png)}
	out.content = &mcp.ImageContent{Data: m.png, MIMEType: picture.MIMEPNG}
	return nil
}

// drawRank orders drawing: higher ranks are drawn later, on top (the
// clearest or the newest).
func drawRank(it *stacclient.Item, colorBy string) int {
	if colorBy == colorByCloud {
		if cc, ok := it.PropertyFloat("eo:cloud_cover"); ok {
			return -int(cc * 1000)
		}
		return -1 << 30
	}
	if t := itemTime(it); !t.IsZero() {
		return int(t.Unix() / 60)
	}
	return -1 << 30
}

func hexColor(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// mapTitle is the line above the map: how many items, which collections,
// which dates.
func mapTitle(entries []MapLegendEntry, s *boundedSearch, first, last time.Time, colorBy string) string {
	var collections []string
	for _, e := range entries {
		if e.Collection != "" && !slices.Contains(collections, e.Collection) {
			collections = append(collections, e.Collection)
		}
	}
	count := fmt.Sprintf("%d item(s)", len(entries))
	if s.matched != nil && *s.matched > len(entries) {
		count += fmt.Sprintf(" of %d", *s.matched)
	}
	dates := ""
	if !first.IsZero() {
		dates = day(first)
		if day(last) != day(first) {
			dates += " … " + day(last)
		}
	}
	if len(collections) > 3 {
		collections = append(collections[:3], "…")
	}
	return joinNonEmpty(" · ", count, strings.Join(collections, ", "), dates, "by "+strings.ReplaceAll(colorBy, "_", " "))
}

func skippedSummary(skipped []SkippedItem) string {
	if len(skipped) == 0 {
		return ""
	}
	return fmt.Sprintf("%d item(s) had no usable footprint (first: %s: %s)", len(skipped), skipped[0].ID, skipped[0].Reason)
}

// mapItemsText is the legend as text: what the map shows and each item.
func mapItemsText(out MapItemsOut) string {
	var b strings.Builder
	if out.Image.Bytes == 0 {
		fmt.Fprintf(&b, "No map: 0 footprint(s) to draw")
		if out.Matched != nil {
			fmt.Fprintf(&b, " (%d matched)", *out.Matched)
		}
		if len(out.AOI) == 4 {
			fmt.Fprintf(&b, " over the area of interest %s", formatBBox(out.AOI))
		}
		b.WriteString(", so no image is attached.\n")
		for _, s := range out.Skipped {
			fmt.Fprintf(&b, "Not drawn: %s: %s\n", s.ID, s.Reason)
		}
		writeLines(&b, "Warning: ", out.Warnings)
		if len(out.Catalogs) > 0 {
			b.WriteString(catalogsText(out.Catalogs) + "\n")
		}
		writeLines(&b, "Note: ", out.Notes)
		return strings.TrimRight(b.String(), "\n")
	}
	fmt.Fprintf(&b, "Map (%s) of %d footprint(s)", out.Image, out.Drawn)
	if out.Matched != nil {
		fmt.Fprintf(&b, " of %d matched", *out.Matched)
	}
	switch out.ColorBy {
	case colorByCloud:
		b.WriteString(", shaded by cloud cover (color_by cloud_cover: deep blue clear → grey cloudy)")
	case colorByDate:
		b.WriteString(", shaded by date (color_by date: purple oldest → yellow newest, by rank: each date its own step)")
	}
	if len(out.AOI) == 4 {
		fmt.Fprintf(&b, "; area of interest %s outlined in red", formatBBox(out.AOI))
	}
	fmt.Fprintf(&b, ". Extent %s, scale bar %s", formatBBox(out.Extent), out.ScaleBar)
	if len(out.Places) > 0 {
		// For orientation, in words too: the model may not look closely.
		fmt.Fprintf(&b, "; places named: %s", strings.Join(out.Places, ", "))
	}
	b.WriteString(".\n")
	for _, e := range out.Items {
		parts := append(itemHeadParts(e.Label+". "+e.ID, e.Collection, e.Datetime, e.CloudCover), e.Color)
		if e.Catalog != "" {
			parts = append(parts, "from "+e.Catalog)
		}
		if len(e.AlsoIn) > 0 {
			parts = append(parts, alsoInText(e.AlsoIn, e.Kept))
		}
		b.WriteString(strings.Join(parts, " | ") + "\n")
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(&b, "Not drawn: %s: %s\n", s.ID, s.Reason)
	}
	writeLines(&b, "Warning: ", out.Warnings)
	if len(out.Catalogs) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + "\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
