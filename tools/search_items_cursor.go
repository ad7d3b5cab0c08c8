package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

// The cursor side of search_items: continuing from a verified cursor, and
// writing the cursor of the next page (adr/0009).

// itemsPosition is what the next cursor of a search is built from.
type itemsPosition struct {
	search   stacclient.SearchParams // the selecting parameters (no limit)
	sent     stacclient.SearchParams // as sent: with the page size
	explicit bool                    // the caller chose the page size (limit)
	first    *stacclient.RequestDiff // the search's first request; nil until its first page
}

// searchParamsJSON is the canonical JSON of a search without its page size:
// what a cursor carries, and what its fingerprint is taken of.
func searchParamsJSON(p stacclient.SearchParams) []byte {
	p.Limit = 0
	b, _ := json.Marshal(p) // plain data
	return b
}

// continueItems resumes the search c.Cursor left off. params are the
// search parameters sent with the cursor (may be none), pageLimit the limit
// sent now (0: none), maxItems this call's budget.
func continueItems(ctx context.Context, c *Call, token string, params stacclient.SearchParams, maxItems int, limits stacclient.SearchLimits) (*stacclient.Search, itemsPosition, []string, error) {
	cur := c.Cursor
	refuse := func(reason string) (*stacclient.Search, itemsPosition, []string, error) {
		return nil, itemsPosition{}, nil, cursorRefusal(token, reason)
	}
	given := params.Limit
	selecting := searchParamsJSON(params)
	raw, err := cursorParams(cur, token, selecting, string(selecting) != string(searchParamsJSON(stacclient.SearchParams{})))
	if err != nil {
		return nil, itemsPosition{}, nil, err
	}
	var carried stacclient.SearchParams
	if err := json.Unmarshal(raw, &carried); err != nil {
		return refuse("its search parameters are unreadable: " + err.Error())
	}
	search, err := carried.Normalized()
	if err != nil {
		return refuse("its search parameters are invalid: " + err.Error())
	}
	search.Limit = 0

	// The page size follows this call: its limit, else the
	// limit the search was started with, else this call's max_items.
	pos := itemsPosition{search: search, sent: search, first: &cur.First}
	switch {
	case given > 0:
		pos.sent.Limit, pos.explicit = given, true
	case cur.ExplicitLimit:
		pos.sent.Limit, pos.explicit = cur.PageSize, true
	default:
		pos.sent.Limit = maxItems
	}
	var notes []string
	if cur.Pos != nil && pos.sent.Limit != cur.PageSize && cur.Pos.PagesByPosition() {
		notes = append(notes, fmt.Sprintf("the catalog pages by position (page or offset), so the page size stays %d to keep the cursor's place", cur.PageSize))
		pos.sent.Limit = cur.PageSize
	}
	diff := cur.First
	if cur.Pos != nil {
		diff = *cur.Pos
	} else {
		notes = append(notes, "the catalog's next link was too large to carry in the cursor, so this call paged again from the start of the search to the cursor's place")
	}
	req, err := c.Catalog.Client.ApplyDiff(ctx, pos.sent, diff)
	if err != nil {
		return refuse("its request may not be sent: " + err.Error())
	}
	sc := stacclient.Position{Request: req, Skip: cur.Skip, Seen: cur.Seen, Offset: cur.Offset, Replay: cur.Pos == nil}
	return c.Catalog.Client.ContinueSearch(sc, limits), pos, notes, nil
}

// nextCursor writes the token that continues at cur, and the arguments the
// caller must send again with it. A position that cannot be continued from
// a cursor (outside the catalog's scope) gives no token and a warning.
func (pos itemsPosition) nextCursor(c *Call, cur *stacclient.Position) (token string, requires []string, warning string) {
	client := c.Catalog.Client
	if pos.first == nil {
		return "", nil, "more items match, but the search's first request could not be recorded for a cursor"
	}
	params := searchParamsJSON(pos.search)
	pc := cursor.Cursor{Kind: cursor.Items, Catalog: cursorCatalogRef(c.Catalog), Params: params,
		PageSize: pos.sent.Limit, ExplicitLimit: pos.explicit,
		First: *pos.first, Offset: cur.Offset, Skip: cur.Skip, Seen: cur.Seen}
	if diff, err := client.DiffRequest(pos.sent, cur.Request); err == nil {
		pc.Pos = &diff
	} // else: replayed from the first request
	if len(cur.Request.Headers) > 0 {
		warning = "the catalog's next link asks for request headers, which a cursor does not carry: the next page is requested without them"
	}
	token, form := cursor.Fit(c.Deps.cursorKey(), pc, params, []byte(catalogKey(c.Catalog)))
	if token == "" {
		return "", nil, "more items match, but this search's position is too large to carry in a cursor; narrow the search or raise max_items"
	}
	if form.Catalog == "" {
		requires = append(requires, "catalog_url")
	}
	if form.Params == nil {
		names := searchParamNames(pos.search)
		if c.Place != nil && c.Place.Param == "bbox" {
			// The place's outline was sent as intersects; the caller
			// sends the place again as it did.
			names = slices.DeleteFunc(names, func(n string) bool { return n == "intersects" })
			names = append(names, "bbox")
		}
		requires = append(requires, names...)
	}
	return token, requires, warning
}

// searchParamNames are the search_items arguments a search sets.
func searchParamNames(p stacclient.SearchParams) []string {
	var names []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"collections", len(p.Collections) > 0}, {"ids", len(p.IDs) > 0}, {"bbox", len(p.BBox) > 0},
		{"intersects", len(p.Intersects) > 0}, {"datetime", p.Datetime != ""}, {"query", len(p.Query) > 0},
		{"filter", len(p.Filter) > 0}, {"filter_lang", p.FilterLang != ""}, {"sortby", len(p.SortBy) > 0},
		{"fields", p.Fields != nil},
	} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}
