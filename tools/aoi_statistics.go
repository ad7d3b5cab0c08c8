package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// PixelItemArgs name the item a pixel tool reads, and the area.
type PixelItemArgs struct {
	CatalogArg
	CollectionID string  `json:"collection_id"`
	ItemID       string  `json:"item_id"`
	AOI          AreaArg `json:"aoi"`
}

// AOIStatisticsIn names an item, an area and the bands to measure.
type AOIStatisticsIn struct {
	PixelItemArgs
	Bands StringList `json:"bands,omitempty"` // default: defaultStatBands
}

// AOIStatisticsOut are the bands' statistics over the area.
type AOIStatisticsOut struct {
	PlaceResult
	ItemID     string      `json:"item_id"`
	Collection string      `json:"collection"`
	Datetime   string      `json:"datetime,omitempty"`
	AOI        []float64   `json:"aoi" jsonschema:"bbox of the area measured"`
	Resolution Resolution  `json:"resolution"`
	Bands      []BandRead  `json:"bands_read"`
	Mask       *MaskInfo   `json:"mask,omitempty" jsonschema:"the cloud mask applied, when the item has one"`
	Stats      []BandStats `json:"stats" jsonschema:"per band, over the clear pixels of the area, calibrated"`
	Requests   int         `json:"requests" jsonschema:"range requests sent, header reads included"`
	Bytes      int         `json:"bytes" jsonschema:"bytes the range requests returned, header reads included"`
	Notes      []string    `json:"notes"`
}

// defaultStatBands are measured when bands is not given (those the item has).
var defaultStatBands = []string{"blue", "green", "red", "nir"}

// AOIStatistics is the aoi_statistics tool.
func AOIStatistics() Tool {
	return define(&mcp.Tool{
		Name:  "aoi_statistics",
		Title: "Band statistics over an area",
		Description: "Band statistics over aoi, clouds masked: valid share, range, mean, std, percentiles, histogram.\n" +
			`Example: {"collection_id": "sentinel-2-l2a", "item_id": "S2B_24MUA_20250731_0_L2A", "aoi": [-39.6,-4.6,-39.5,-4.5]}`,
		Annotations: readOnlyAnnotations("Band statistics over an area"),
	}, true, aoiStatistics)
}

func aoiStatistics(ctx context.Context, c *Call, in AOIStatisticsIn) (AOIStatisticsOut, string, error) {
	ctx = pixelCall(ctx)
	const tool = "aoi_statistics"
	fail := failWith[AOIStatisticsOut]()
	aoi, shape, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	names, err := in.Bands.Strings("bands")
	if err != nil {
		return fail(err)
	}
	item, err := pixelItem(ctx, c, tool, in.CollectionID, in.ItemID)
	if err != nil {
		return fail(err)
	}
	all := itemBands(item)
	var bands []itemBand
	if len(names) == 0 {
		for _, n := range defaultStatBands {
			alts := []string{n}
			if n == "nir" {
				alts = append(alts, "nir08")
			}
			if b, ok := findBand(item, all, alts...); ok {
				bands = append(bands, b)
			}
		}
		if len(bands) == 0 {
			return fail(missingBand(item, all, "blue, green, red or nir", defaultStatBands))
		}
	}
	var repeated []string
	for _, n := range names {
		b, ok := findBand(item, all, n)
		if !ok {
			return fail(missingBand(item, all, n, []string{n}))
		}
		// A band named twice (or by common name and asset key) is read
		// once: every band read reserves its pixels from the process
		// budget, so repeats would turn a small request into a refusal.
		if slices.ContainsFunc(bands, func(o itemBand) bool { return o.AssetKey == b.AssetKey && o.Band == b.Band }) {
			repeated = append(repeated, n)
			continue
		}
		bands = append(bands, b)
	}
	p, err := readAOI(ctx, c, readRequest{item: item, bands: bands, mask: true, aoi: aoi})
	if err != nil {
		return fail(err)
	}
	if len(repeated) > 0 {
		p.Notes = append(p.Notes, "bands named again were measured once: "+strings.Join(repeated, ", "))
	}
	out := AOIStatisticsOut{ItemID: item.ID, Collection: orDash(item.Collection), Datetime: itemDatetime(item.Properties),
		AOI: roundBBox(footprint.BBox(shape.Bound())), Resolution: p.Resolution, Bands: p.Bands, Mask: p.Mask,
		Requests: p.Requests, Bytes: p.Bytes, Notes: append([]string{}, p.Notes...)}
	if err := withCPU(ctx, c, func() error {
		for k, br := range p.Bands {
			out.Stats = append(out.Stats, bandStats(br.Band, p.Values[k], p.Inside, andKeep(p.keep, p.Valid[k])))
		}
		return nil
	}); err != nil {
		return fail(err)
	}
	return out, aoiStatisticsText(out, p), nil
}

// andKeep is keep && valid per pixel.
func andKeep(keep, valid []bool) []bool {
	out := make([]bool, len(keep))
	for i := range keep {
		out[i] = keep[i] && (valid == nil || valid[i])
	}
	return out
}

func aoiStatisticsText(out AOIStatisticsOut, p *aoiPixels) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Statistics of item %s (%s", out.ItemID, out.Collection)
	if out.Datetime != "" {
		b.WriteString(", " + out.Datetime)
	}
	fmt.Fprintf(&b, ") over the area %s.\n", formatBBox(out.AOI))
	readText(&b, p)
	for _, s := range out.Stats {
		b.WriteString(statsLine(s) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
