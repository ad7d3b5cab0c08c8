package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// What the visual tools (get_item_preview, map_items, check_coverage)
// share: a bounded search, the footprints of its items, and the area of
// interest named by bbox or intersects.

// imageOutput is the image a visual tool attaches to its result (see
// contentAttacher), and what the structured output says about it.
type imageOutput struct {
	content *mcp.ImageContent
}

func (o imageOutput) attachedContent() []mcp.Content {
	if o.content == nil {
		return nil
	}
	return []mcp.Content{o.content}
}

// ImageInfo describes the image content a result carries.
type ImageInfo struct {
	MIMEType string `json:"mime_type" jsonschema:"media type of the image content block (image/png or image/jpeg)"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Bytes    int    `json:"bytes" jsonschema:"size of the image before base64"`
}

// String is the image in the words of a text block: "800×555 image/png,
// 45661 bytes (44.59 KiB)".
func (i ImageInfo) String() string {
	return fmt.Sprintf("%d×%d %s, %d bytes (%s)", i.Width, i.Height, i.MIMEType, i.Bytes, humanBytes(int64(i.Bytes)))
}

// boundedSearch is a search run to at most maxItems items, for tools that
// need the items together rather than page by page.
type boundedSearch struct {
	items       []stacclient.Item
	matched     *int
	hasMore     bool
	pageFailed  bool // a page after the first failed; warnings say which and why
	warnings    []string
	filterNotes []string // a filter converted to the catalog's CQL2 encoding
	// Over several catalogs (adr/0035): each item's catalog and copies,
	// aligned with items, and each catalog's outcome.
	sources  []string
	members  []int // the index of each item's catalog in the call's
	copies   [][]ItemCopy
	kept     []string // why each item's copy was kept over its others
	catalogs []CatalogOutcome
}

// sourceOf is item i's catalog, copies and why this copy was kept (""
// and nil from one catalog).
func (s *boundedSearch) sourceOf(i int) (string, []ItemCopy, string) {
	if i < len(s.sources) {
		return s.sources[i], s.copies[i], s.kept[i]
	}
	return "", nil, ""
}

// runBoundedSearch runs params (checked against the catalog's capabilities
// as search_items does) and keeps every item up to maxItems.
func runBoundedSearch(ctx context.Context, c *Call, tool string, params stacclient.SearchParams, maxItems int) (*boundedSearch, error) {
	if c.Federation != nil {
		return runBoundedSearchFederated(ctx, c, tool, params, maxItems)
	}
	client := c.Catalog.Client
	warnings, notes, err := searchSupportWarnings(ctx, tool, client, &params)
	if err != nil {
		return nil, err
	}
	sent := params
	if sent.Limit == 0 {
		sent.Limit = maxItems
	}
	search := client.Search(sent, stacclient.SearchLimits{MaxItems: maxItems})
	out := &boundedSearch{warnings: warnings, filterNotes: notes}
	prog := newProgress(c)
	pages := 0
	for page, err := range search.Pages(ctx) {
		if err != nil {
			if !pageFailureKept(ctx, pages, len(out.items)) {
				return nil, explainSearchRefusal(ctx, c, tool, err, params, warnings)
			}
			out.pageFailed = true
			out.warnings = append(out.warnings, pageFailureWarning(tool, pages, len(out.items), err))
			break
		}
		pages++
		out.items = append(out.items, page.Items...)
		prog.step(ctx, 0, "%s: search page %d read, %d of at most %d item(s) so far", tool, pages, len(out.items), maxItems)
	}
	if n, ok := search.Matched(); ok {
		out.matched = &n
	}
	out.hasMore = out.pageFailed || search.Position() != nil
	return out, nil
}

// pageFailureKept reports whether a search whose next page failed still has
// an answer: pages were read and hold items, and the call is not over (a
// cancelled or timed-out call reports that instead).
func pageFailureKept(ctx context.Context, pagesRead, items int) bool {
	return pagesRead > 0 && items > 0 && ctx.Err() == nil
}

// pageFailureWarning says which page failed and why, what the answer is
// over, and what helps when paging (not the search) failed.
func pageFailureWarning(tool string, pagesRead, items int, err error) string {
	read := "page 1"
	if pagesRead > 1 {
		read = fmt.Sprintf("pages 1–%d", pagesRead)
	}
	return fmt.Sprintf("page %d of the search failed (%s), so %s answered over the %d item(s) of %s only; the first page was accepted, "+
		"so the search itself is fine: call again (the failure may pass), or narrow the search (aoi, datetime, collections) "+
		"so fewer pages are needed", pagesRead+1, err.Error(), tool, items, read)
}

// visualItemLimits are max_items' default and ceiling for the tools that
// draw or measure a search: the configured ceiling, and a default of
// preferred (50 for maps, 100 for coverage) within it.
func visualItemLimits(lim Limits, preferred int) Limits {
	_, ceiling := itemLimits(lim)
	return Limits{MaxItemsDefault: min(preferred, ceiling), MaxItemsCeiling: ceiling}
}

// footprintSearch is the search of a tool that draws or measures
// footprints: its parameters and area of interest and, once run, the items
// with a usable footprint and those without.
type footprintSearch struct {
	tool     string
	params   stacclient.SearchParams
	maxItems int
	area     footprint.Shape
	hasArea  bool
	notes    []string     // about the arguments: fields ignored, max_items taken from limit
	cloud    *cloudFilter // max_cloud_cover, nil when not given

	*boundedSearch // after run
	located        []locatedItem
	skipped        []SkippedItem
	emptyNotes     []string // why nothing was returned, when nothing was (ignoredSearchArgs)
}

// locatedItem is a searched item and its footprint.
type locatedItem struct {
	item    *stacclient.Item
	shape   footprint.Shape
	catalog string     // over several catalogs: the item's
	member  int        // its index among the call's catalogs (0 over one)
	alsoIn  []ItemCopy // and its copies in the others
	kept    string     // and why this copy was kept
}

// newFootprintSearch takes the search and max_items (default preferred,
// within the configured ceiling).
func newFootprintSearch(c *Call, tool string, params stacclient.SearchParams, maxItems MaxItemsArg, preferred int) (*footprintSearch, error) {
	f := &footprintSearch{tool: tool, params: params}
	var err error
	var note string
	if f.maxItems, note, err = maxItemsArg(maxItems, params.Limit, visualItemLimits(c.Deps.Limits, preferred),
		"for all of a larger search, narrow it (aoi, datetime, collections) and call again"); err != nil {
		return nil, err
	}
	if note != "" {
		f.notes = append(f.notes, note)
	}
	if f.area, f.hasArea, err = searchArea(params); err != nil {
		return nil, err
	}
	if f.hasArea && params.Intersects != nil {
		note, err := splitAreaAtAntimeridian(&f.params, f.area)
		if err != nil {
			return nil, err
		}
		if note != "" {
			f.notes = append(f.notes, note)
		}
	}
	return f, nil
}

// splitAreaAtAntimeridian makes a search's intersects the area cut at
// ±180 when it crosses the antimeridian (RFC 7946 §3.1.9), and says so:
// the area is measured as one piece, but a catalog reads a polygon
// literally and would search the long way round (check_coverage
// then finds nothing and reports 0 %).
func splitAreaAtAntimeridian(p *stacclient.SearchParams, area footprint.Shape) (note string, err error) {
	mp, changed, err := area.SplitAtAntimeridian()
	if err != nil || !changed {
		return "", err
	}
	var g orb.Geometry = mp
	if len(mp) == 1 {
		g = mp[0]
	}
	raw, err := geojson.NewGeometry(g).MarshalJSON()
	if err != nil {
		return "", err
	}
	p.Intersects = raw
	return fmt.Sprintf("the area crosses the antimeridian: the catalog was searched with it cut at ±180° into %d polygon(s) (RFC 7946 §3.1.9)", len(mp)), nil
}

// run searches and reads each item's footprint.
func (f *footprintSearch) run(ctx context.Context, c *Call) error {
	switch {
	case f.cloud != nil && c.Federation != nil:
		f.cloud.applyFederated(&f.params)
	case f.cloud != nil:
		if err := f.cloud.apply(ctx, c.Catalog.Client, &f.params); err != nil {
			return err
		}
	}
	s, err := runBoundedSearch(ctx, c, f.tool, f.params, f.maxItems)
	if err != nil {
		return err
	}
	if f.cloud != nil {
		s.items = f.cloud.keep(s.items)
		s.filterNotes = append(s.filterNotes, f.cloud.noteText())
	}
	if c.Federation == nil {
		// These look names up in the one catalog; over several, each
		// catalog's notes say what it was sent.
		warnings, emptyNotes := ignoredSearchArgs(ctx, c, f.params, s.items)
		s.warnings = append(s.warnings, warnings...)
		f.emptyNotes = emptyNotes
	} else if len(s.items) == 0 {
		f.emptyNotes = []string{"no catalog returned an item: each catalog's outcome is in catalogs"}
	}
	f.boundedSearch = s
	for i := range s.items {
		it := &s.items[i]
		shape, why := itemFootprint(it)
		if why != "" {
			f.skipped = append(f.skipped, SkippedItem{ID: it.ID, Reason: why})
			continue
		}
		source, copies, kept := s.sourceOf(i)
		l := locatedItem{item: it, shape: shape, catalog: source, alsoIn: copies, kept: kept}
		if i < len(s.members) {
			l.member = s.members[i]
		}
		f.located = append(f.located, l)
	}
	return nil
}

// SkippedItem is an item left out of a map or a measurement, and why.
type SkippedItem struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// itemFootprint reads an item's footprint, or says why it has none usable.
func itemFootprint(it *stacclient.Item) (footprint.Shape, string) {
	s, err := footprint.Parse(it.Geometry, it.BBox)
	switch {
	case err == nil:
		return s, ""
	case errors.Is(err, footprint.ErrEncirclesPole):
		return s, "its footprint encircles a pole without reaching it, which longitude/latitude cannot hold as a polygon"
	case errors.Is(err, footprint.ErrNoArea):
		return s, "it has no polygon geometry and no bbox"
	}
	return s, "its footprint is not usable: " + err.Error()
}

// searchArea is the area of interest of a search: its bbox, or its
// intersects geometry when that is a Polygon or MultiPolygon. ok is false
// when the search names no area; an error when it names one that cannot be
// used as an area (a point, a line, a ring round a pole).
func searchArea(params stacclient.SearchParams) (area footprint.Shape, ok bool, err error) {
	switch {
	case params.BBox != nil:
		s, err := footprint.FromBBox(params.BBox)
		if err != nil {
			return s, false, &stacclient.ParamError{Param: "aoi", Got: formatBBox(params.BBox), Reason: err.Error(),
				Accepted: "[west, south, east, north] in degrees with south < north (west > east crosses the antimeridian)"}
		}
		return s, true, nil
	case params.Intersects != nil:
		s, err := footprint.ParseArea(params.Intersects)
		if err == nil {
			err = s.Valid()
		}
		if err != nil {
			return s, false, &stacclient.ParamError{Param: "aoi", Got: trimText(string(params.Intersects), 120), Reason: err.Error(),
				Accepted: "a GeoJSON Polygon or MultiPolygon (or a Feature holding one) in [longitude, latitude]"}
		}
		return s, true, nil
	}
	return footprint.Shape{}, false, nil
}

// day formats a time as a UTC date, "" for the zero time.
func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// itemTime is the item's datetime (or start_datetime), zero when absent.
func itemTime(it *stacclient.Item) time.Time {
	t, _ := it.Datetime()
	return t
}

// searchedNote says that only part of the matching items were used.
func searchedNote(what string, used int, s *boundedSearch) string {
	if !s.hasMore || s.pageFailed {
		return "" // a failed page has its own warning and advice
	}
	of := "more"
	if s.matched != nil {
		of = fmt.Sprint(*s.matched)
	}
	return fmt.Sprintf("only the first %d of %s matching items were %s: raise max_items (up to the server's ceiling) or narrow the search", used, of, what)
}

// joinNonEmpty joins the non-empty strings with sep.
func joinNonEmpty(sep string, parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
