package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// SearchItemsIn is an item search: the STAC search parameters plus how much
// to return and where to continue.
type SearchItemsIn struct {
	CatalogsArg
	SearchArgs
	MaxItems   MaxItemsArg `json:"max_items,omitempty" jsonschema:"items to return (default 10)"`
	Cursor     string      `json:"cursor,omitempty" jsonschema:"from the previous result"`
	Detail     DetailArg   `json:"detail,omitempty" jsonschema:"default summary"`
	SignAssets bool        `json:"sign_assets,omitempty" jsonschema:"sign Planetary Computer hrefs (~1 h)"`
}

// SearchItemsOut is one page of search results, shaped for a model.
type SearchItemsOut struct {
	PlaceResult
	Returned       int              `json:"returned" jsonschema:"number of items in this result"`
	Matched        *int             `json:"matched,omitempty" jsonschema:"total matches, only when the catalog reports it"`
	HasMore        bool             `json:"has_more" jsonschema:"true when more items match: pass cursor to get them"`
	Truncated      bool             `json:"truncated" jsonschema:"true when this output leaves something out: more matching items (has_more), or summaries that detail only part of their assets"`
	Cursor         string           `json:"cursor,omitempty" jsonschema:"pass as cursor to continue exactly after the last item returned"`
	Resend         []string         `json:"cursor_requires,omitempty" jsonschema:"arguments to send again, unchanged, with cursor (they were too large to carry in it)"`
	Detail         string           `json:"detail" jsonschema:"summary or full"`
	Method         string           `json:"method,omitempty" jsonschema:"HTTP method used for the search (GET or POST)"`
	ClientFiltered int              `json:"client_filtered,omitempty" jsonschema:"items the catalog returned although they contradict datetime, query or filter (it ignored them): removed by this server, see warnings"`
	StopReason     string           `json:"stop_reason,omitempty" jsonschema:"why paging stopped: max_items, no_next_link, empty_page, max_pages, cycle, no_new_ids, next_link_refused"`
	Items          []ItemSummary    `json:"items" jsonschema:"item summaries (detail=summary); empty for detail=full"`
	Features       []map[string]any `json:"features" jsonschema:"complete STAC Items (detail=full); empty for detail=summary"`
	Search         map[string]any   `json:"search" jsonschema:"the normalised search that was sent (datetime expanded, filter language inferred); empty when continuing from a cursor"`
	Warnings       []string         `json:"warnings" jsonschema:"parameters the catalog may not support, and other caveats"`
	Notes          []string         `json:"notes" jsonschema:"what to try next, e.g. which filter to relax when nothing matched"`
	// Set when catalog_url names several catalogs (adr/0035).
	Catalogs   []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"several catalogs: each one's outcome"`
	Provenance []ItemProvenance `json:"provenance,omitempty" jsonschema:"several catalogs, detail=full: each item's catalog and copies, in the order of features"`

	// featureSources holds, for each of Features, the bytes the catalog
	// sent for it (nil where it was encoded, as a signed item is): they
	// are written in its place (see MarshalJSON), as get_item does.
	featureSources []json.RawMessage
}

// searchItemsOutFields is SearchItemsOut without its methods.
type searchItemsOutFields SearchItemsOut

// MarshalJSON writes each complete item as the catalog sent it when those
// bytes are at hand, instead of encoding its decoding again.
func (o SearchItemsOut) MarshalJSON() ([]byte, error) {
	if len(o.featureSources) == 0 {
		return json.Marshal(searchItemsOutFields(o))
	}
	features := make([]json.RawMessage, len(o.Features))
	for i, m := range o.Features {
		if i < len(o.featureSources) && o.featureSources[i] != nil {
			features[i] = o.featureSources[i]
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		features[i] = b
	}
	// The outer Features hides the embedded one (a shallower field wins).
	return json.Marshal(struct {
		searchItemsOutFields
		Features []json.RawMessage `json:"features"`
	}{searchItemsOutFields(o), features})
}

// decodedForCheck is the output decoded for the schema check: the
// complete items are Features, already decoded for the text; only the
// rest is encoded and decoded.
func (o SearchItemsOut) decodedForCheck() (any, error) {
	rest := searchItemsOutFields(o)
	rest.Features = []map[string]any{}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	features := make([]any, len(o.Features))
	for i, f := range o.Features {
		features[i] = f
	}
	m["features"] = features
	return m, nil
}

// SearchItems is the search_items tool.
func SearchItems() Tool {
	return define(&mcp.Tool{
		Name:  "search_items",
		Title: "Search items",
		Description: "Search items (STAC /search): up to max_items summaries, or complete items with detail full; cursor " +
			"continues.\n" +
			`Example: {"collections":["sentinel-2-l2a"],"bbox":[-105.3,39.9,-105.1,40.1],"datetime":"2024-06",` +
			`"query":{"eo:cloud_cover":{"lt":20}},"max_items":5}`,
		Annotations: readOnlyAnnotations("Search items"),
		Meta:        mapViewMeta(),
	}, true, searchItems)
}

// fullDetailWarnBytes is the size of full items above which the output
// warns that it crowds a model's context.
const fullDetailWarnBytes = 100 << 10 // about 25k tokens

const (
	detailSummary = "summary"
	detailFull    = "full"
)

func parseDetail(s DetailArg) (string, error) {
	switch strings.ToLower(strings.TrimSpace(string(s))) {
	case "", detailSummary:
		return detailSummary, nil
	case detailFull:
		return detailFull, nil
	}
	return "", &stacclient.ParamError{Param: "detail", Got: string(s), Reason: "unknown detail level", Accepted: `"summary" (default) or "full"`}
}

// itemLimits are the configured default and ceiling of max_items.
func itemLimits(lim Limits) (def, ceiling int) {
	def, ceiling = lim.MaxItemsDefault, lim.MaxItemsCeiling
	if def <= 0 {
		def = 10
	}
	if ceiling <= 0 {
		ceiling = 100
	}
	return def, max(ceiling, def)
}

// maxItemsArg reads max_items against the configured default and ceiling.
// When max_items is absent but limit is given, limit also caps the total, as
// it did in the Python stac-mcp ("latest ⇒ limit=1" prompts keep working);
// the note says so, because limit is otherwise only the page size. forMore
// says how to get past the ceiling with this tool.
func maxItemsArg(a MaxItemsArg, pageLimit int, lim Limits, forMore string) (int, string, error) {
	def, ceiling := itemLimits(lim)
	if !argGiven(a) && pageLimit > 0 {
		n := min(pageLimit, ceiling)
		note := fmt.Sprintf("max_items was not given, so it follows limit (%d); limit alone is only the page size", pageLimit)
		if n < pageLimit {
			note += fmt.Sprintf(", capped at the ceiling %d: continue with cursor", ceiling)
		}
		return n, note, nil
	}
	n, err := IntArg(a).Int("max_items", def, 1, ceiling,
		fmt.Sprintf("; default %d, ceiling %d (STAC_MCP_MAX_ITEMS_CEILING): %s", def, ceiling, forMore))
	return n, "", err
}

// argGiven reports whether a loose argument was sent with a value.
func argGiven(raw []byte) bool {
	t := strings.TrimSpace(string(raw))
	return t != "" && t != "null"
}

func searchItems(ctx context.Context, c *Call, in SearchItemsIn) (SearchItemsOut, string, error) {
	fail := failWith[SearchItemsOut]()
	call, err := checkSearchItemsArgs(c, in)
	if err != nil {
		return fail(err)
	}
	out := SearchItemsOut{Detail: call.detail, Items: []ItemSummary{}, Features: []map[string]any{}, Search: map[string]any{},
		Warnings: []string{}, Notes: []string{}}
	if call.budgetNote != "" {
		out.Notes = append(out.Notes, call.budgetNote)
	}
	out.Warnings = append(out.Warnings, paramWarnings(call.params)...)
	if c.Federation != nil {
		text, err := searchItemsFederated(ctx, c, in, call, &out)
		if err != nil {
			return fail(err)
		}
		return out, text, nil
	}
	search, position, err := startOrContinueSearch(ctx, c, in, call, &out)
	if err != nil {
		return fail(err)
	}
	read, err := readItemPages(ctx, c, call, search, &position, &out)
	if err != nil {
		return fail(err)
	}
	reportWhereSearchStopped(c, call, search, position, read, &out)
	addSearchItemsNotes(ctx, c, in, call, read, &out)
	return out, searchItemsText(out, read.heads), nil
}

// searchItemsCall is a search_items call's checked arguments.
type searchItemsCall struct {
	detail     string
	params     stacclient.SearchParams
	maxItems   int
	budgetNote string // why max_items was lowered, if it was
	areaNote   string // that the area was cut at the antimeridian, if it was
	limits     stacclient.SearchLimits
	signing    *assetSigning
}

// checkSearchItemsArgs reads and checks the arguments.
func checkSearchItemsArgs(c *Call, in SearchItemsIn) (searchItemsCall, error) {
	detail, err := parseDetail(in.Detail)
	if err != nil {
		return searchItemsCall{}, err
	}
	params, err := in.params()
	if err != nil {
		return searchItemsCall{}, err
	}
	var areaNote string
	if area, ok, err := searchArea(params); err == nil && ok && params.Intersects != nil {
		// An area across the antimeridian is searched cut at ±180 (here, so
		// that a cursor given with the same arguments sees the same search).
		if areaNote, err = splitAreaAtAntimeridian(&params, area); err != nil {
			return searchItemsCall{}, err
		}
	}
	maxItems, budgetNote, err := maxItemsArg(in.MaxItems, params.Limit, c.Deps.Limits, "for more, call again with the returned cursor")
	if err != nil {
		return searchItemsCall{}, err
	}
	// Over several catalogs each one gets its own (memberSignings).
	signing, err := newAssetSigning(c, in.SignAssets && c.Federation == nil)
	if err != nil {
		return searchItemsCall{}, err
	}
	return searchItemsCall{detail: detail, params: params, maxItems: maxItems, budgetNote: budgetNote, areaNote: areaNote,
		limits: stacclient.SearchLimits{MaxItems: maxItems}, signing: signing}, nil
}

// startOrContinueSearch continues the search the call's cursor left off,
// or starts the one its arguments describe (out.Search shows it, and
// out.Warnings what the catalog may not support of it); the position is
// what the next cursor will be built from.
func startOrContinueSearch(ctx context.Context, c *Call, in SearchItemsIn, call searchItemsCall, out *SearchItemsOut) (*stacclient.Search, itemsPosition, error) {
	if c.Cursor != nil {
		search, position, notes, err := continueItems(ctx, c, in.Cursor, call.params, call.maxItems, call.limits)
		if err != nil {
			return nil, itemsPosition{}, err
		}
		out.Notes = append(out.Notes, notes...)
		return search, position, nil
	}
	params := call.params
	if call.areaNote != "" {
		out.Notes = append(out.Notes, call.areaNote)
	}
	warnings, notes, err := searchSupportWarnings(ctx, "search_items", c.Catalog.Client, &params)
	if err != nil {
		return nil, itemsPosition{}, err
	}
	if m, err := toJSONObject(params); err == nil {
		out.Search = m // as sent: a filter may have been converted
		if c.Place != nil && m["intersects"] != nil {
			// A place's outline runs to thousands of points: the place
			// line says what it is, the search names it.
			m["intersects"] = fmt.Sprintf("(the area of the place %s: %s)", c.Place.Query, c.Place.Source)
		}
	}
	out.Warnings = append(out.Warnings, warnings...)
	out.Notes = append(out.Notes, notes...)
	sent := params
	if sent.Limit == 0 {
		// Pages no larger than what this call returns: a catalog's default
		// page (up to 250 full items) would be fetched only to be cut.
		sent.Limit = call.maxItems
	}
	position := itemsPosition{search: params, sent: sent, explicit: params.Limit > 0}
	position.search.Limit = 0
	return c.Catalog.Client.Search(sent, call.limits), position, nil
}

// itemPagesRead is what reading a search's pages gathered besides out.
type itemPagesRead struct {
	check        *filterCheck    // the search's conditions, whether given now or carried by the cursor
	heads        []ItemSummary   // the headlines of full items, for the text
	area         *footprint.Area // the requested area, for aoi_coverage_pct
	noArea       string          // why there is none
	bboxMeasured []string        // footprints measured by their bbox
	seen         seenInItems     // collections and properties of the items returned
}

// readItemPages reads the search's pages into out, dropping items that
// contradict its conditions, and records the search's first request in
// position (the next cursor's anchor).
func readItemPages(ctx context.Context, c *Call, call searchItemsCall, search *stacclient.Search, position *itemsPosition, out *SearchItemsOut) (*itemPagesRead, error) {
	read := &itemPagesRead{check: newFilterCheck(position.search)}
	read.area, read.noArea = requestedArea(position.search)
	// Pages rather than Items: the loop never stops early (the engine
	// enforces max_items), and a page is the unit progress is reported in.
	prog := newProgress(c)
	pages := 0
	for page, err := range search.Pages(ctx) {
		if err != nil {
			return nil, explainSearchRefusal(ctx, c, "search_items", err, call.params, out.Warnings)
		}
		pages++
		if position.first == nil {
			if first, err := c.Catalog.Client.DiffRequest(position.sent, page.Request); err == nil {
				position.first = &first
			}
		}
		for i := range page.Items {
			it := &page.Items[i]
			if read.check.drops(it) {
				continue
			}
			call.signing.sign(ctx, it)
			read.seen.add(it)
			if err := read.add(call.detail, call.signing.requested, it, out); err != nil {
				return nil, err
			}
			out.Returned++
		}
		prog.step(ctx, 0, "search_items: page %d read, %d of at most %d item(s) so far", pages, out.Returned, call.maxItems)
	}
	return read, nil
}

// add puts one item into out: complete (detail=full), or summarised with
// its share of the requested area.
func (read *itemPagesRead) add(detail string, signed bool, it *stacclient.Item, out *SearchItemsOut) error {
	if detail == detailFull {
		m, source, err := itemObject(it, signed)
		if err != nil {
			return err
		}
		out.Features = append(out.Features, m)
		if source != nil || out.featureSources != nil {
			// Sources line up with Features: nil for the items before.
			out.featureSources = append(out.featureSources, make([]json.RawMessage, len(out.Features)-1-len(out.featureSources))...)
			out.featureSources = append(out.featureSources, source)
		}
		read.heads = append(read.heads, summarizeItem(it))
		return nil
	}
	s := summarizeItem(it)
	if read.area != nil {
		if o, ok := itemOverlap(read.area, it); ok {
			pct := round(o.AreaPercent, 1)
			s.AOICoverage = &pct
			if o.BBoxFallback {
				read.bboxMeasured = append(read.bboxMeasured, it.ID)
			}
		}
	}
	out.Items = append(out.Items, s)
	out.Truncated = out.Truncated || len(s.OtherAssetKeys) > 0
	return nil
}

// mayExceed reports whether the complete items of out may encode to more
// than limit bytes. Items sent as the catalog's bytes are not encoded just
// to be measured when they cannot reach it: encoding a decoded value
// writes at most 6 bytes per byte of its source (a character escaped as
// \u0026, a number such as 1e20 written out in full).
func mayExceed(out *SearchItemsOut, limit int) bool {
	n := 0
	for i := range out.Features {
		if i >= len(out.featureSources) || out.featureSources[i] == nil {
			return true // measured by encoding, as before
		}
		n += len(out.featureSources[i])
	}
	return 6*n+len(out.Features)+2 > limit
}

// reportWhereSearchStopped fills what the search's end says: its size,
// the signing's caveats, method, stop reason and match count, the items
// removed client-side, and the cursor when more items match.
func reportWhereSearchStopped(c *Call, call searchItemsCall, search *stacclient.Search, position itemsPosition, read *itemPagesRead, out *SearchItemsOut) {
	if call.detail == detailFull && out.Returned > 0 && mayExceed(out, fullDetailWarnBytes) {
		if b, err := json.Marshal(out.Features); err == nil && len(b) > fullDetailWarnBytes {
			out.Warnings = append(out.Warnings, fmt.Sprintf("detail=full output is %s for %d items: prefer detail=summary, fields to drop members, or a smaller max_items",
				humanBytes(int64(len(b))), out.Returned))
		}
	}
	out.Warnings = append(out.Warnings, call.signing.warnings()...)
	out.Notes = append(out.Notes, call.signing.notes()...)
	out.Method = search.Method()
	out.StopReason = string(search.StopReason())
	check := read.check
	if n, ok := search.Matched(); ok && (check == nil || check.dropped == 0) {
		out.Matched = &n // a catalog that ignored a condition counted without it
	}
	out.Notes = append(out.Notes, unusableMatchedNotes(search)...)
	out.Warnings = append(out.Warnings, check.warnings()...)
	if check != nil && check.dropped > 0 {
		out.ClientFiltered = check.dropped
	}
	if cur := search.Position(); cur != nil {
		out.HasMore, out.Truncated = true, true
		var warning string
		out.Cursor, out.Resend, warning = position.nextCursor(c, cur)
		if warning != "" {
			out.Warnings = append(out.Warnings, warning)
		}
	}
	if search.StopReason() == stacclient.StopNextRefused {
		// More items match; has_more stays honest, but there is no cursor.
		out.HasMore, out.Truncated = true, true
		out.Warnings = append(out.Warnings, search.Refusal()+
			"; more items match, but stac-mcp follows next links only with GET or POST, on the catalog's own origin and under its root URL")
	}
	out.Notes = append(out.Notes, stopNotes(search.StopReason())...)
}

// addSearchItemsNotes explains aoi_coverage_pct (or its absence) and, when
// nothing was returned, what to relax.
func addSearchItemsNotes(ctx context.Context, c *Call, in SearchItemsIn, call searchItemsCall, read *itemPagesRead, out *SearchItemsOut) {
	if call.detail == detailSummary && out.Returned > 0 {
		switch {
		case read.area != nil:
			out.Notes = append(out.Notes, "aoi_coverage_pct is the share of the requested area inside each item's footprint "+
				"(equal-area, as check_coverage measures)")
			if note := bboxFallbackNote(read.bboxMeasured); note != "" {
				out.Notes = append(out.Notes, note)
			}
		case read.noArea != "":
			out.Notes = append(out.Notes, "no aoi_coverage_pct: "+read.noArea)
		}
	}
	if in.Cursor != "" {
		if out.Returned == 0 {
			out.Notes = append(out.Notes, emptySearchNotes(ctx, c, call.params, true)...)
		}
		return
	}
	out.Warnings = append(out.Warnings, unknownListedCollections(ctx, c, call.params, read.seen, out.Returned)...)
	fieldWarnings, replacesRelax := ignoredFieldNotes(ctx, c, call.params, read.seen, out.Returned)
	out.Warnings = append(out.Warnings, fieldWarnings...)
	if out.Returned == 0 {
		notes := emptySearchNotes(ctx, c, call.params, false)
		if replacesRelax {
			notes = slices.DeleteFunc(notes, func(n string) bool { return strings.HasPrefix(n, "relax query/filter") })
		}
		out.Notes = append(out.Notes, notes...)
	}
}

// explainSearchRefusal adds the likely cause when a catalog refuses a
// search with a 4xx: a parameter we warned it may not support, or a search
// without collections on catalogs that require them (Planetary Computer,
// CDSE answer "collection is required"), or a collection that does not
// exist (with the closest ids; some catalogs answer 404 for it).
func explainSearchRefusal(ctx context.Context, c *Call, tool string, err error, p stacclient.SearchParams, warnings []string) error {
	if !isKind(err, stacclient.KindBadRequest) && !isKind(err, stacclient.KindNotFound) {
		return err
	}
	var causes []string
	if len(p.Collections) == 0 && strings.Contains(strings.ToLower(err.Error()), "collection") {
		causes = append(causes, "this catalog wants collections in every search: pass collections (search_collections lists the ids).")
	}
	causes = append(causes, missingCollections(ctx, c, p.Collections)...)
	causes = append(causes, warnings...)
	if len(causes) == 0 {
		return err
	}
	return actionable(err, "%s Likely cause: %s", renderError(tool, err).Error(), strings.Join(causes, " "))
}

// stopNotes explains the stop reasons a model should know about.
func stopNotes(reason stacclient.StopReason) []string {
	switch reason {
	case stacclient.StopMaxPages:
		return []string{"paging stopped at the page limit before max_items was reached; continue with cursor"}
	case stacclient.StopCycle:
		return []string{"the catalog's next link repeated an earlier page, so paging stopped: results may be incomplete"}
	case stacclient.StopNoNewIDs:
		return []string{"the catalog's next page held only items already returned, so paging stopped: results may be incomplete"}
	}
	return nil
}

// searchItemsText is the readable result: the count, each item (a
// summary, or the complete item for detail=full), how to continue, the
// search that was sent, warnings and notes. heads are the full items'
// headlines.
func searchItemsText(out SearchItemsOut, heads []ItemSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d item(s)", out.Returned)
	if out.Matched != nil {
		fmt.Fprintf(&b, " of %d matched", *out.Matched)
	}
	if out.HasMore {
		b.WriteString("; more available")
	}
	fmt.Fprintf(&b, " (detail %s).\n", out.Detail)
	// Warnings before the items: one about the search itself (a bbox read
	// as crossing the antimeridian, a field the catalog ignored) changes
	// what the list means, and a model reads on from the top.
	writeLines(&b, "Warning: ", out.Warnings)
	var types typeAbbreviations
	for _, s := range out.Items {
		b.WriteString("- " + summaryText(s, &types) + "\n")
	}
	for i, f := range out.Features {
		fmt.Fprintf(&b, "Item %d of %d:\n%s\n", i+1, len(out.Features), fullItemText(f, heads[i]))
		if i < len(out.Provenance) {
			b.WriteString(provenanceText(out.Provenance[i]) + "\n")
		}
	}
	if legend := types.legend(); legend != "" {
		b.WriteString(legend + "\n")
	}
	if out.Cursor != "" {
		fmt.Fprintf(&b, "Next page: call search_items with cursor %q%s\n", out.Cursor, resendText(out.Resend))
	}
	if len(out.Search) > 0 && out.Method == "" {
		fmt.Fprintf(&b, "Search sent: %s\n", compactJSON(out.Search))
	} else if len(out.Search) > 0 {
		fmt.Fprintf(&b, "Search sent (%s): %s\n", out.Method, compactJSON(out.Search))
	} else if out.Method != "" {
		fmt.Fprintf(&b, "Continued with %s.\n", out.Method)
	}
	if out.StopReason != "" {
		fmt.Fprintf(&b, "Paging stopped: %s.\n", out.StopReason)
	}
	if len(out.Catalogs) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + "\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}

// provenanceText is a complete item's catalog and copies.
func provenanceText(p ItemProvenance) string {
	s := "From " + p.Catalog
	if len(p.AlsoIn) > 0 {
		s += "; " + alsoInText(p.AlsoIn, p.Kept)
	}
	return s + "."
}
