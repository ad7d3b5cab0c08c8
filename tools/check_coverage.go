package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// CheckCoverageIn is an area of interest and a search to measure over it.
type CheckCoverageIn struct {
	CatalogsArg
	AreaSearch
	MaxItems      MaxItemsArg `json:"max_items,omitempty" jsonschema:"items to measure (default 100)"`
	WindowDays    IntArg      `json:"window_days,omitempty" jsonschema:"days per window (default 1)"`
	TargetPercent IntArg      `json:"target_percent,omitempty" jsonschema:"1..100, default 95: the smallest set's aim"`
	MaxCloudCover IntArg      `json:"max_cloud_cover,omitempty"`
}

// CheckCoverageOut is how much of the area the matching items cover.
type CheckCoverageOut struct {
	PlaceResult
	AOIBBox              []float64        `json:"aoi_bbox" jsonschema:"bbox of the area of interest"`
	AOIAreaKm2           float64          `json:"aoi_area_km2" jsonschema:"area of interest on the WGS 84 ellipsoid, km²"`
	Items                int              `json:"items" jsonschema:"items measured"`
	Matched              *int             `json:"matched,omitempty" jsonschema:"items matching the search, when the catalog reports it"`
	HasMore              bool             `json:"has_more" jsonschema:"true when more items match than were measured: coverage is then a lower bound"`
	CoveredPercent       float64          `json:"covered_percent" jsonschema:"share of the area inside at least one footprint"`
	CoveredKm2           float64          `json:"covered_km2"`
	UncoveredPercent     float64          `json:"uncovered_percent"`
	UncoveredBBox        []float64        `json:"uncovered_bbox" jsonschema:"bbox of what is left uncovered (west > east across the antimeridian); empty when covered, slivers under 0.05 % left out"`
	WindowDays           int              `json:"window_days"`
	ByWindow             []CoverageWindow `json:"by_window" jsonschema:"coverage of the items of each day window, oldest first (undated items are in no window)"`
	SmallestSet          CoverageSet      `json:"smallest_set" jsonschema:"a small set of items reaching the target share, chosen greedily"`
	CloudWeightedPercent *float64         `json:"cloud_weighted_percent,omitempty" jsonschema:"expected clear share of the area: each point through its least cloudy covering item, weighted by (1 − eo:cloud_cover/100); only items with eo:cloud_cover count"`
	CloudWeightedItems   []CloudSource    `json:"cloud_weighted_items,omitempty" jsonschema:"the items behind cloud_weighted_percent (each point's least cloudy covering item), largest share first; at most 10"`
	CloudItems           int              `json:"cloud_items" jsonschema:"items with eo:cloud_cover in the cloud-weighted figure"`
	Outside              []string         `json:"outside" jsonschema:"items returned whose footprint does not reach the area"`
	Skipped              []SkippedItem    `json:"skipped" jsonschema:"items not measured, and why"`
	Method               string           `json:"method" jsonschema:"how areas are measured"`
	Warnings             []string         `json:"warnings"`
	Notes                []string         `json:"notes"`
	Catalogs             []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"several catalogs: each one's outcome (an acquisition several hold is measured once)"`
}

// CoverageWindow is the coverage of one window of days.
type CoverageWindow struct {
	Start          string  `json:"start" jsonschema:"first day, YYYY-MM-DD (UTC)"`
	End            string  `json:"end" jsonschema:"last day, inclusive"`
	Items          int     `json:"items"`
	CoveredPercent float64 `json:"covered_percent"`
}

// CoverageSet is the greedy selection.
type CoverageSet struct {
	TargetPercent  float64        `json:"target_percent" jsonschema:"the share aimed for (or all the items cover, when less)"`
	ReachedPercent float64        `json:"reached_percent"`
	Items          []CoveragePick `json:"items" jsonschema:"in the order picked: each adds the most area not yet covered"`
}

// CloudSource is an item behind the cloud-weighted figure.
type CloudSource struct {
	ID          string  `json:"id"`
	CloudCover  float64 `json:"cloud_cover" jsonschema:"eo:cloud_cover, percent"`
	AreaPercent float64 `json:"area_percent" jsonschema:"share of the area it is the least cloudy item over"`
}

// maxCloudSources bounds the items named behind the cloud-weighted figure.
const maxCloudSources = 10

// CoveragePick is one item of the smallest set.
type CoveragePick struct {
	ID                string  `json:"id"`
	AddedPercent      float64 `json:"added_percent"`
	CumulativePercent float64 `json:"cumulative_percent"`
	Catalog           string  `json:"catalog,omitempty" jsonschema:"several catalogs: the item's"`
}

// coverageMethod says, in the output, how the numbers were computed.
const coverageMethod = "areas on the WGS 84 ellipsoid (equal-area projection, edges densified to 0.1°); unions and " +
	"intersections in longitude/latitude, where STAC footprint edges are straight (simplefeatures)"

// CheckCoverage is the check_coverage tool.
func CheckCoverage() Tool {
	return define(&mcp.Tool{
		Name:  "check_coverage",
		Title: "Area coverage",
		Description: "Share of aoi a search's footprints cover (equal-area): overall, per window_days, uncovered bbox, " +
			"smallest set for target_percent, cloud-weighted share.\n" +
			`Example: {"collections":["sentinel-2-l2a"],"aoi":[-40.5,-5.3,-37.5,-3.5],"datetime":"2025-07","max_cloud_cover":30}`,
		Annotations: readOnlyAnnotations("Area coverage"),
		Meta:        mapViewMeta(),
	}, true, checkCoverage).withAliases(areaAliases)
}

func checkCoverage(ctx context.Context, c *Call, in CheckCoverageIn) (CheckCoverageOut, string, error) {
	fail := failWith[CheckCoverageOut]()
	fs, windowDays, target, err := coverageArgs(c, in)
	if err != nil {
		return fail(err)
	}
	out := CheckCoverageOut{UncoveredBBox: []float64{}, WindowDays: windowDays, ByWindow: []CoverageWindow{},
		SmallestSet: CoverageSet{Items: []CoveragePick{}}, Outside: []string{}, Skipped: []SkippedItem{}, Method: coverageMethod,
		Warnings: []string{}, Notes: append([]string{}, fs.notes...)}
	if err := fs.run(ctx, c); err != nil {
		return fail(err)
	}
	out.Warnings = append(out.Warnings, fs.warnings...)
	out.Notes = append(out.Notes, fs.filterNotes...)
	out.Matched, out.HasMore = fs.matched, fs.hasMore
	out.Skipped = append(out.Skipped, fs.skipped...)
	out.Catalogs = fs.catalogs
	catalogOf := map[string]string{}
	items := make([]footprint.Item, 0, len(fs.located))
	for _, l := range fs.located {
		catalogOf[l.item.ID] = l.catalog
		items = append(items, footprint.Item{ID: l.item.ID, Shape: l.shape, Time: itemTime(l.item), CloudCover: propNumber(l.item.Properties, "eo:cloud_cover")})
	}
	out.Items = len(items)
	r, err := measureCoverage(ctx, c, fs.area, items, windowDays, target)
	if err != nil {
		return fail(err)
	}
	out.AOIBBox = roundBBox(footprint.BBox(fs.area.Bound()))
	coverageFigures(&out, r, target, catalogOf)
	coverageNotes(&out, r, target)
	if note := searchedNote("measured", len(fs.items), fs.boundedSearch); note != "" {
		out.Notes = append(out.Notes, note+"; coverage is a lower bound")
	}
	out.Notes = append(out.Notes, fs.emptyNotes...)
	return out, coverageText(out), nil
}

// coverageArgs reads check_coverage's arguments: the footprint search
// (which must name an area), the window and the target.
func coverageArgs(c *Call, in CheckCoverageIn) (fs *footprintSearch, windowDays, target int, err error) {
	params, err := in.AreaSearch.params(nil)
	if err != nil {
		return nil, 0, 0, err
	}
	if fs, err = newFootprintSearch(c, "check_coverage", params, in.MaxItems, 100); err != nil {
		return nil, 0, 0, err
	}
	if fs.cloud, err = newCloudFilter(in.MaxCloudCover); err != nil {
		return nil, 0, 0, err
	}
	if !fs.hasArea {
		return nil, 0, 0, &stacclient.ParamError{Param: "aoi", Got: "(no area given)", Reason: "check_coverage measures an area of interest",
			Accepted: `aoi: [west, south, east, north], or a GeoJSON Polygon or MultiPolygon (bbox, intersects and aoi_geojson are accepted for it too)`}
	}
	if windowDays, err = in.WindowDays.Int("window_days", 1, 1, 3660, ""); err != nil {
		return nil, 0, 0, err
	}
	if target, err = in.TargetPercent.Int("target_percent", 95, 1, 100, ""); err != nil {
		return nil, 0, 0, err
	}
	return fs, windowDays, target, nil
}

// measureCoverage measures items over area. The geometry is the CPU-heavy
// part: it takes one of the process's CPU slots (queued behind other heavy
// calls, and behind calls that passed their deadline but are still
// stopping).
func measureCoverage(ctx context.Context, c *Call, area footprint.Shape, items []footprint.Item, windowDays, target int) (*footprint.Report, error) {
	release, err := c.Deps.work().cpuSlot(ctx)
	if err != nil {
		return nil, err
	}
	r, err := footprint.Measure(ctx, area, items, footprint.Options{WindowDays: windowDays, TargetPercent: float64(target)})
	release()
	var tooMany *footprint.VertexLimitError
	if errors.As(err, &tooMany) {
		return nil, actionable(err, "check_coverage: %s. Measure fewer items (max_items), narrow the search (datetime, collections), "+
			"or draw the area with fewer vertices.", tooMany)
	}
	if err != nil {
		return nil, fmt.Errorf("measuring coverage: %w", err)
	}
	return r, nil
}

// coverageFigures puts the measure's figures in out, rounded: the area,
// what is covered, by window, the smallest set and the cloud-weighted share.
func coverageFigures(out *CheckCoverageOut, r *footprint.Report, target int, catalogOf map[string]string) {
	out.AOIAreaKm2 = round(r.AreaKm2, 3)
	out.CoveredPercent, out.CoveredKm2 = round(r.CoveredPercent, 3), round(r.CoveredKm2, 3)
	out.UncoveredPercent = round(100-r.CoveredPercent, 3)
	if r.UncoveredBBox != nil {
		out.UncoveredBBox = roundBBox(r.UncoveredBBox)
	}
	for _, w := range r.Windows {
		out.ByWindow = append(out.ByWindow, CoverageWindow{Start: day(w.Start), End: day(w.End), Items: w.Items, CoveredPercent: round(w.CoveredPercent, 3)})
	}
	out.SmallestSet.TargetPercent = math.Min(float64(target), round(r.CoveredPercent, 3))
	out.SmallestSet.ReachedPercent = round(r.GreedyPercent, 3)
	for _, p := range r.Greedy {
		out.SmallestSet.Items = append(out.SmallestSet.Items, CoveragePick{ID: p.ID, AddedPercent: round(p.AddedPercent, 3), CumulativePercent: round(p.CumulativePercent, 3),
			Catalog: catalogOf[p.ID]})
	}
	if r.CloudWeightedPercent != nil {
		p := round(*r.CloudWeightedPercent, 3)
		out.CloudWeightedPercent = &p
	}
	out.CloudItems = r.CloudItems
	for i, src := range r.CloudSources {
		if i == maxCloudSources {
			break // coverageNotes says how many more
		}
		out.CloudWeightedItems = append(out.CloudWeightedItems, CloudSource{ID: src.ID, CloudCover: round(src.CloudCover, 2), AreaPercent: round(src.Percent, 2)})
	}
	out.Outside = append(out.Outside, r.Outside...)
}

// coverageNotes says what the figures leave out: a target the items cannot
// reach, the cloud sources not listed, footprints measured by their bbox,
// and items without a cloud cover.
func coverageNotes(out *CheckCoverageOut, r *footprint.Report, target int) {
	if out.Items > 0 && r.CoveredPercent < float64(target) {
		out.Notes = append(out.Notes, fmt.Sprintf("the items cover %s%%, less than target_percent %d: the smallest set covers all they cover",
			formatNumber(round(r.CoveredPercent, 2)), target))
	}
	if more := r.CloudSources[min(maxCloudSources, len(r.CloudSources)):]; len(more) > 0 {
		rest := 0.0
		for _, o := range more {
			rest += o.Percent
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%d more item(s) are behind the cloud-weighted figure, over %s%% of the area together",
			len(more), formatNumber(round(rest, 2))))
	}
	if note := bboxFallbackNote(r.BBoxFallback); note != "" {
		out.Notes = append(out.Notes, note)
	}
	if without := r.Touching - r.CloudItems; r.CloudItems > 0 && without > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) without eo:cloud_cover are left out of the cloud-weighted share", without))
	}
}

// round keeps d decimals: the measure is not more precise than that, and
// shorter numbers read better.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

func coverageText(out CheckCoverageOut) string {
	pct := func(f float64) string { return formatNumber(f) + "%" }
	var b strings.Builder
	fmt.Fprintf(&b, "Area %s (%s km²): %s covered by %d item(s)", formatBBox(out.AOIBBox), formatNumber(out.AOIAreaKm2),
		pct(out.CoveredPercent), out.Items)
	if out.Matched != nil {
		fmt.Fprintf(&b, " of %d matched", *out.Matched)
	}
	fmt.Fprintf(&b, " (%s km²).\n", formatNumber(out.CoveredKm2))
	if len(out.UncoveredBBox) == 4 {
		fmt.Fprintf(&b, "Uncovered: %s, within bbox %s.\n", pct(out.UncoveredPercent), formatBBox(out.UncoveredBBox))
	}
	if len(out.ByWindow) > 0 {
		unit := "day"
		if out.WindowDays > 1 {
			unit = fmt.Sprintf("%d-day window", out.WindowDays)
		}
		fmt.Fprintf(&b, "By %s:\n", unit)
		for _, w := range out.ByWindow {
			span := w.Start
			if w.End != w.Start {
				span += " … " + w.End
			}
			fmt.Fprintf(&b, "- %s: %s (%d item(s))\n", span, pct(w.CoveredPercent), w.Items)
		}
	}
	if set := out.SmallestSet; len(set.Items) > 0 {
		fmt.Fprintf(&b, "Smallest set (greedy; of items adding within %s point of the most, the least cloudy) for %s: %d item(s) reaching %s (item +added → cumulative):",
			formatNumber(footprint.TiePercent),
			pct(set.TargetPercent), len(set.Items), pct(set.ReachedPercent))
		picks := make([]string, len(set.Items))
		for i, p := range set.Items {
			picks[i] = fmt.Sprintf("%s +%s → %s", p.ID, pct(p.AddedPercent), pct(p.CumulativePercent))
			if p.Catalog != "" {
				picks[i] += " (" + p.Catalog + ")"
			}
		}
		b.WriteString(" " + strings.Join(picks, "; ") + "\n")
	}
	if out.CloudWeightedPercent != nil {
		fmt.Fprintf(&b, "Cloud-weighted: %s%% expected clear (least cloudy item per point, %d item(s) with eo:cloud_cover)",
			formatNumber(*out.CloudWeightedPercent), out.CloudItems)
		srcs := make([]string, len(out.CloudWeightedItems))
		for i, s := range out.CloudWeightedItems {
			srcs[i] = fmt.Sprintf("%s %s%% → %s%%", s.ID, formatNumber(s.CloudCover), formatNumber(s.AreaPercent))
		}
		if len(srcs) > 0 {
			b.WriteString("; from (item cloud cover → share of the area it is the least cloudy over): " + strings.Join(srcs, "; "))
		}
		b.WriteString(".\n")
	}
	if len(out.Outside) > 0 {
		fmt.Fprintf(&b, "Outside the area: %s\n", strings.Join(out.Outside, ", "))
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(&b, "Not measured: %s: %s\n", s.ID, s.Reason)
	}
	fmt.Fprintf(&b, "Method: %s.\n", out.Method)
	writeLines(&b, "Warning: ", out.Warnings)
	if len(out.Catalogs) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + "\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
