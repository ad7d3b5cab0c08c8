package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
)

// PixelItemArgs name the item a pixel tool reads (or a period of a
// search: collections and datetime), and the area.
type PixelItemArgs struct {
	// A list names several catalogs: a period is read from all of them
	// (each scene once); an item is looked up in the first, and the others
	// are where a readable copy is looked for first.
	CatalogsArg
	CollectionID string     `json:"collection_id,omitempty" jsonschema:"item_id's"`
	ItemID       string     `json:"item_id,omitempty" jsonschema:"from search_items"`
	Collections  StringList `json:"collections,omitempty" jsonschema:"with datetime, not item_id"`
	Datetime     string     `json:"datetime,omitempty" jsonschema:"day: mosaic; interval: composite"`
	AOI          AreaArg    `json:"aoi" jsonschema:"bbox, GeoJSON or place"`
}

// AOIStatisticsIn names an item, an area and the bands to measure.
type AOIStatisticsIn struct {
	PixelItemArgs
	Bands StringList `json:"bands,omitempty" jsonschema:"common names, asset keys or B08"` // default: defaultStatBands
}

// AOIStatisticsOut are the bands' statistics over the area.
type AOIStatisticsOut struct {
	PlaceResult
	ItemID      string           `json:"item_id"`
	Collection  string           `json:"collection"`
	Datetime    string           `json:"datetime,omitempty"`
	AOI         []float64        `json:"aoi" jsonschema:"bbox of the area measured"`
	ReadFrom    *ReadCopy        `json:"read_from,omitempty" jsonschema:"the scene's copy in another catalog read, when the item's own data cannot be read here"`
	Resolution  Resolution       `json:"resolution"`
	Bands       []BandRead       `json:"bands_read"`
	Calibration *CalibrationInfo `json:"calibration,omitempty" jsonschema:"the product convention and reading applied, checked against the pixels"`
	Mask        *MaskInfo        `json:"mask,omitempty" jsonschema:"the cloud mask applied, when the item has one"`
	Stats       []BandStats      `json:"stats" jsonschema:"per band, over the clear pixels of the area, calibrated"`
	Requests    int              `json:"requests" jsonschema:"range requests sent, header reads included"`
	Bytes       int              `json:"bytes" jsonschema:"bytes the range requests returned, header reads included"`
	Items       []string         `json:"items,omitempty" jsonschema:"a period's items that gave pixels"`
	// ItemCatalogs and Catalogs are a period's over several catalogs.
	ItemCatalogs []string         `json:"item_catalogs,omitempty" jsonschema:"over several catalogs: each item's catalog, as items"`
	Catalogs     []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"per catalog, when catalog_url names several"`
	Period       *PeriodRead      `json:"period,omitempty" jsonschema:"a period read: its mosaic or composite"`
	Notes        []string         `json:"notes"`
}

// defaultStatBands are measured when bands is not given (those the item has).
var defaultStatBands = []string{"blue", "green", "red", "nir"}

// AOIStatistics is the aoi_statistics tool.
func AOIStatistics() Tool {
	return define(&mcp.Tool{
		Name:  "aoi_statistics",
		Title: "Band statistics over an area",
		Description: "Band statistics over aoi, clouds masked, of an item or a period (day mosaic, interval composite): valid share, range, mean, std, percentiles, histogram.\n" +
			`Example: {"collection_id":"sentinel-2-l2a-synthetic","item_id":"S2A_13TDE_20230803_0_L2A_synthetic","aoi":[-105.25,40.05,-105.21,40.08]}`,
		Annotations: readOnlyAnnotations("Band statistics over an area"),
	}, true, aoiStatistics)
}

func aoiStatistics(ctx context.Context, c *Call, in AOIStatisticsIn) (AOIStatisticsOut, string, error) {
	ctx = pixelCall(ctx)
	tool := c.Tool
	fail := failWith[AOIStatisticsOut]()
	aoi, shape, km2, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	names, err := in.Bands.Strings("bands")
	if err != nil {
		return fail(err)
	}
	src, err := in.source()
	if err != nil {
		return fail(err)
	}
	if !src.item {
		return aoiStatisticsPeriod(ctx, c, in, src, names, aoi, shape)
	}
	r, err := pixelItem(ctx, c, tool, in.CollectionID, in.ItemID)
	if err != nil {
		return fail(err)
	}
	item := r.item
	bands, repeated, err := statBands(item, names)
	if err != nil {
		return fail(pixelError(tool, item, err))
	}
	env := pixelEnv(r.call)
	p, err := env.Read(ctx, pixel.Request{Item: item, Bands: bands, Mask: true, AOI: aoi, AOIKm2: km2})
	if err != nil {
		return fail(pixelError(tool, item, err))
	}
	facts := describeRead(p)
	facts.Copy = r.copy
	if len(repeated) > 0 {
		facts.Notes = append(facts.Notes, "bands named again were measured once: "+strings.Join(repeated, ", "))
	}
	out := AOIStatisticsOut{ItemID: r.asked.ID, Collection: orDash(r.asked.Collection), Datetime: itemDatetime(r.asked.Properties),
		AOI: roundBBox(footprint.BBox(shape.Bound())), ReadFrom: r.copy, Resolution: facts.Resolution, Bands: facts.Bands, Calibration: facts.Calibration,
		Mask: facts.Mask, Requests: facts.Requests, Bytes: facts.Bytes, Notes: append([]string{}, facts.Notes...)}
	if err := env.WithCPU(ctx, func() error {
		for k, br := range p.Bands {
			out.Stats = append(out.Stats, bandStats(p.Stats(br.Band, p.Values[k], p.Valid[k])))
		}
		return nil
	}); err != nil {
		return fail(err)
	}
	return out, aoiStatisticsText(out, facts), nil
}

// statBands are the bands aoi_statistics measures: those named (by common
// name, asset key or band name), else the default ones the item has. A
// band named twice (or by common name and asset key) is read once: every
// band read reserves its pixels from the process budget, so repeats would
// turn a small request into a refusal.
func statBands(item *stacclient.Item, names []string) (bands []pixel.Band, repeated []string, err error) {
	all := pixel.ItemBands(item)
	if len(names) == 0 {
		for _, n := range defaultStatBands {
			alts := []string{n}
			if n == "nir" {
				alts = append(alts, "nir08")
			}
			if b, ok := pixel.FindBand(item, all, alts...); ok && b.CommonName != "" {
				bands = append(bands, b)
			}
		}
		if len(bands) == 0 {
			return nil, nil, pixel.MissingBand(item, all, "blue, green, red or nir", defaultStatBands)
		}
		return bands, nil, nil
	}
	for _, n := range names {
		b, ok := pixel.FindBand(item, all, n)
		if !ok {
			return nil, nil, pixel.MissingBand(item, all, n, []string{n})
		}
		if slices.ContainsFunc(bands, func(o pixel.Band) bool { return o.AssetKey == b.AssetKey && o.Index == b.Index }) {
			repeated = append(repeated, n)
			continue
		}
		bands = append(bands, b)
	}
	return bands, repeated, nil
}

// aoiStatisticsPeriod measures a period: a day's mosaic or a composite.
func aoiStatisticsPeriod(ctx context.Context, c *Call, in AOIStatisticsIn, src pixelSource, names []string, aoi orb.Geometry, shape footprint.Shape) (AOIStatisticsOut, string, error) {
	tool := c.Tool
	fail := failWith[AOIStatisticsOut]()
	acqs, s, notes, err := periodAcquisitions(ctx, c, tool, src, in.AOI, shape)
	if err != nil {
		return fail(err)
	}
	// Called for several items side by side: it keeps nothing.
	bandsOf := func(item *stacclient.Item) ([]pixel.Band, error) {
		bands, _, err := statBands(item, names)
		return bands, err
	}
	first := acqs[0].Items[0]
	firstBands, repeated, err := statBands(first, names)
	if err != nil {
		return fail(pixelError(tool, first, err))
	}
	titles := make([]string, len(firstBands))
	for i, b := range firstBands {
		titles[i] = b.Title()
	}
	env := seasonEnv(c, s.itemCatalogs())
	t, err := seasonTarget(ctx, env, tool, acqs, shape, aoi, bandsOf, periodPixels(c, env, src, len(acqs), len(titles)))
	if err != nil {
		return fail(err)
	}
	l, err := readLayer(ctx, env, tool, src, acqs, aoi, t, bandsOf, nil, titles)
	if err != nil {
		return fail(err)
	}
	defer l.release()
	out := AOIStatisticsOut{Collection: orDash(acqs[0].Collection), Datetime: src.period.String(), AOI: roundBBox(footprint.BBox(shape.Bound())),
		Resolution: l.facts.Resolution, Bands: l.facts.Bands, Calibration: l.facts.Calibration, Requests: l.requests, Bytes: l.bytes,
		Items: l.items, Period: l.period, Notes: append(append(append([]string{}, l.facts.Notes...), notes...), l.notes...)}
	out.ItemCatalogs, out.Catalogs = itemCatalogs(l.items, s.itemCatalogs()), s.catalogs
	if len(repeated) > 0 {
		out.Notes = append(out.Notes, "bands named again were measured once: "+strings.Join(repeated, ", "))
	}
	for _, st := range l.stats {
		out.Stats = append(out.Stats, bandStats(st))
	}
	facts := l.facts
	facts.Notes, facts.Catalogs = out.Notes, out.Catalogs
	return out, aoiStatisticsText(out, facts), nil
}

func aoiStatisticsText(out AOIStatisticsOut, facts readFacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Statistics of %s over the area %s.\n", sourceWords(out.ItemID, out.Collection, out.Datetime, withCatalogs(out.Items, out.ItemCatalogs), out.Period),
		formatBBox(out.AOI))
	periodText(&b, out.Period)
	readText(&b, facts, "")
	for _, s := range out.Stats {
		b.WriteString(statsLine(s) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
