package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/freetext"
)

// Helpful misses: when a collection id is unknown or a search finds
// nothing, the answer says why as specifically as the catalog lets us
// tell: "did you mean sentinel-2-l2a?" for an id that is close to a real
// one, and which constraint emptied a search inside an existing collection
// (its extent against the bbox or datetime asked). The extra requests are
// made only on a miss, inside the call's deadline, through the same
// reliability layer (and its response cache).

const (
	suggestScanPages = 5 // pages of /collections read to find close ids
	maxSuggestions   = 3
)

// collectionNotFound is the error of a tool that was given a collection id
// the catalog does not have: what to call next, and the closest ids.
func collectionNotFound(ctx context.Context, c *Call, tool, id string, cause error) error {
	if staticOverHTTP(ctx, c) {
		return actionable(cause, "%s: catalog %s is a static STAC catalog (a catalog.json with child and item links, no STAC API endpoints): "+
			"stac-mcp reads STAC APIs and local static catalogs, and does not crawl a static catalog over HTTP, so collection '%s' and its items were not read. "+
			"Download the catalog and give the path of its catalog.json as catalog_url (or configure it: STAC_MCP_CATALOGS name=path).", tool, c.Catalog.Shown(), id)
	}
	next := "call search_collections to list collection ids."
	if ids := suggestCollectionIDs(ctx, c.Catalog.Client, id); len(ids) > 0 {
		next = "did you mean " + strings.Join(ids, " or ") + "? Otherwise " + next
	}
	return actionable(cause, "%s: collection '%s' not found in catalog %s — %s", tool, id, c.Catalog.Shown(), next)
}

// didYouMean writes suggestions as ": did you mean a or b?" ("" for none).
func didYouMean(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ": did you mean " + strings.Join(ids, " or ") + "?"
}

// suggestCollectionIDs lists the catalog's collection ids closest to id:
// the same id in another case first, then ids within a small edit distance,
// then ids containing it or contained in it (at least 4 characters); at
// most maxSuggestions. A catalog that cannot list its collections gets no
// suggestion (the miss is still reported).
func suggestCollectionIDs(ctx context.Context, client *stacclient.Client, id string) []string {
	var ids []string
	for page, err := range client.CollectionPages(ctx, stacclient.CollectionQuery{Limit: maxCollectionsLimit},
		stacclient.SearchLimits{MaxPages: suggestScanPages}) {
		if err != nil {
			break
		}
		for _, col := range page.Collections {
			ids = append(ids, col.ID)
		}
	}
	return closestIDs(id, ids)
}

// closestIDs ranks candidates by how close they are to id (see
// suggestCollectionIDs); id itself is never suggested.
func closestIDs(id string, candidates []string) []string {
	want := strings.ToLower(strings.TrimSpace(id))
	type scored struct {
		id    string
		class int // 0 same but for case, 1 edit distance, 2 containment
		dist  int
	}
	var found []scored
	limit := max(2, len([]rune(want))/5)
	for _, cand := range candidates {
		if cand == id {
			continue
		}
		lc := strings.ToLower(cand)
		switch d := freetext.EditDistance(want, lc); {
		case d == 0:
			found = append(found, scored{cand, 0, 0})
		case d <= limit:
			found = append(found, scored{cand, 1, d})
		case len(want) >= 4 && (strings.Contains(lc, want) || strings.Contains(want, lc)):
			found = append(found, scored{cand, 2, d})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int {
		if a.class != b.class {
			return a.class - b.class
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.id, b.id)
	})
	var out []string
	for _, f := range found[:min(len(found), maxSuggestions)] {
		if f.class != found[0].class {
			break // only the closest kind: "Sentinel-2-L2A" gets sentinel-2-l2a alone
		}
		out = append(out, f.id)
	}
	return out
}

// emptySearchNotes says why a search found nothing: for each collection
// asked, whether it exists (with the closest ids when it does not) and,
// when it does, whether its extent rules out the bbox, intersects or
// datetime asked; then which filter to relax. continued is true when the
// search continued from a cursor (then it is simply exhausted).
func emptySearchNotes(ctx context.Context, c *Call, p stacclient.SearchParams, continued bool) []string {
	if continued {
		return []string{"no items after this cursor: the search is exhausted"}
	}
	notes := []string{"no items matched."}
	diagnosed := false
	for _, id := range p.Collections {
		col, err := c.Catalog.Client.Collection(ctx, id)
		switch {
		case isKind(err, stacclient.KindNotFound):
			notes = append(notes, missingCollectionNote(ctx, c, id))
			diagnosed = true
		case err == nil:
			if why := extentMisses(col, p); why != "" {
				notes = append(notes, why)
				diagnosed = true
			}
		}
	}
	if diagnosed {
		return notes
	}
	if len(p.IDs) > 0 {
		notes = append(notes, "check the item ids: ids must match exactly; drop ids to search by area and time instead")
	}
	switch {
	case c.Place != nil && (p.BBox != nil || p.Intersects != nil):
		// The area came from a place name: its coordinates are right.
		notes = append(notes, fmt.Sprintf("the catalog has nothing over %s here: widen the area (a larger place) or the other conditions", c.Place.Name))
	case p.BBox != nil:
		notes = append(notes, "check the bbox order is [west,south,east,north] in degrees (longitude first), or widen it")
	case p.Intersects != nil:
		notes = append(notes, "check the intersects geometry uses [longitude, latitude] order, or widen it")
	}
	if p.Datetime != "" {
		notes = append(notes, fmt.Sprintf("widen datetime %s (the collection's temporal extent is in get_collection)", p.Datetime))
	}
	if p.Query != nil || p.Filter != nil {
		notes = append(notes, "relax query/filter (e.g. a higher eo:cloud_cover threshold); get_queryables lists property names")
	}
	if len(notes) == 1 {
		notes = append(notes, "the catalog returned no items at all: check collections with search_collections")
	}
	return notes
}

// missingCollections notes the ids the catalog does not have.
func missingCollections(ctx context.Context, c *Call, ids []string) []string {
	var notes []string
	for _, id := range ids {
		if _, err := c.Catalog.Client.Collection(ctx, id); isKind(err, stacclient.KindNotFound) {
			notes = append(notes, missingCollectionNote(ctx, c, id)+".")
		}
	}
	return notes
}

func missingCollectionNote(ctx context.Context, c *Call, id string) string {
	return fmt.Sprintf("collection '%s' does not exist in this catalog%s (ids are exact and case-sensitive; search_collections lists them)",
		id, didYouMean(suggestCollectionIDs(ctx, c.Catalog.Client, id)))
}

// extentMisses says which constraint of p lies outside the collection's
// overall extent ("" when both overlap, or the extent is unknown).
func extentMisses(col *stacclient.Collection, p stacclient.SearchParams) string {
	var outside []string
	ext := extentInfo(col.Extent)
	if len(ext.BBox) > 0 && len(ext.BBox[0]) >= 4 {
		area := p.BBox
		if area == nil && p.Intersects != nil {
			if g, err := geojson.UnmarshalGeometry(p.Intersects); err == nil && g.Geometry() != nil {
				b := g.Geometry().Bound()
				area = []float64{b.Min[0], b.Min[1], b.Max[0], b.Max[1]}
			}
		}
		if area != nil && !extentIntersects(col.Extent, area) {
			what := "bbox " + bboxText(p.BBox)
			if p.BBox == nil {
				what = "intersects geometry (bounds " + bboxText(area) + ")"
			}
			outside = append(outside, fmt.Sprintf("its spatial extent %s does not meet the %s", bboxText(ext.BBox[0]), what))
		}
	}
	if p.Datetime != "" && len(ext.Intervals) > 0 {
		if w, err := datetimeWindow(p.Datetime); err == nil && !extentOverlaps(col.Extent, w) {
			outside = append(outside, fmt.Sprintf("its temporal extent %s does not overlap datetime %s",
				strings.Join(ext.Intervals[0], " to "), p.Datetime))
		}
	}
	if len(outside) == 0 {
		return ""
	}
	return fmt.Sprintf("collection '%s': %s; that is what emptied the search", col.ID, strings.Join(outside, ", and "))
}

// staticOverHTTP says whether the catalog is a remote static catalog: its
// landing page declares no STAC API part (collections, features, item
// search) by conformance class or link. A local catalog is served as an
// API in process, so it never is one.
func staticOverHTTP(ctx context.Context, c *Call) bool {
	if c.Catalog == nil || c.Catalog.Label() != "" {
		return false
	}
	caps, err := c.Catalog.Client.Capabilities(ctx)
	if err != nil {
		return false
	}
	return !caps.Has(stacclient.CapCollections) && !caps.Has(stacclient.CapFeatures) && !caps.Has(stacclient.CapItemSearch)
}
