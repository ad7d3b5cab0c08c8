package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/freetext"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

// SearchCollectionsIn narrows the catalog's collections.
type SearchCollectionsIn struct {
	CatalogsArg
	Q        string       `json:"q,omitempty" jsonschema:"words, \"phrases\", +required, -excluded"`
	BBox     BBoxArg      `json:"bbox,omitempty" jsonschema:"[west,south,east,north] or place"`
	Datetime string       `json:"datetime,omitempty" jsonschema:"instant or interval"`
	Limit    ListLimitArg `json:"limit,omitempty" jsonschema:"collections per call (default 10)"`
	Cursor   string       `json:"cursor,omitempty" jsonschema:"from the previous result"`
}

// collectionListing is a validated listing; a collections cursor carries
// its JSON (the filters; the limit is the cursor's page size).
type collectionListing struct {
	Q        string    `json:"q,omitempty"`
	BBox     []float64 `json:"bbox,omitempty"`
	Datetime string    `json:"datetime,omitempty"`
	Limit    int       `json:"-"`
}

// CollectionBrief is one collection in a listing.
type CollectionBrief struct {
	ID                   string    `json:"id"`
	Title                string    `json:"title,omitempty"`
	Description          string    `json:"description" jsonschema:"description, cut at 200 characters (see description_truncated)"`
	DescriptionTruncated bool      `json:"description_truncated" jsonschema:"true when description was cut; get_collection has it complete"`
	License              string    `json:"license,omitempty"`
	BBox                 []float64 `json:"bbox" jsonschema:"overall spatial extent"`
	Interval             []string  `json:"interval" jsonschema:"overall temporal extent [start,end]; \"..\" is open"`
	// Several catalogs (adr/0035).
	Catalog string   `json:"catalog,omitempty" jsonschema:"the catalog it is in"`
	SameAs  []string `json:"same_as,omitempty" jsonschema:"the same product in other listed catalogs, as catalog:collection_id"`
}

// SearchCollectionsOut is one page of collections.
type SearchCollectionsOut struct {
	PlaceResult
	Returned           int               `json:"returned"`
	Matched            *int              `json:"matched,omitempty" jsonschema:"total number of matching collections, when known"`
	HasMore            bool              `json:"has_more"`
	Cursor             string            `json:"cursor,omitempty" jsonschema:"pass as cursor to get the next collections"`
	Resend             []string          `json:"cursor_requires,omitempty" jsonschema:"arguments to send again, unchanged, with cursor (they were too large to carry in it)"`
	FilteredClientSide bool              `json:"filtered_client_side" jsonschema:"true when q, bbox or datetime were applied by this server because the catalog lacks collection search"`
	Collections        []CollectionBrief `json:"collections"`
	Notes              []string          `json:"notes"`
	Catalogs           []CatalogOutcome  `json:"catalogs,omitempty" jsonschema:"several catalogs: each one's outcome"`
}

const (
	defaultCollectionsLimit = 10
	maxCollectionsLimit     = 100
	// collectionScanPages bounds a client-side scan of /collections.
	collectionScanPages = 50
)

// SearchCollections is the search_collections tool.
func SearchCollections() Tool {
	return define(&mcp.Tool{
		Name:  "search_collections",
		Title: "Search collections",
		Description: "List collections, narrowed by free text q, bbox and datetime (applied here when the catalog cannot); cursor pages on.\n" +
			`Example: {"q":"sentinel-2","bbox":[5.9,45.8,10.5,47.8],"limit":5}`,
		Annotations: readOnlyAnnotations("Search collections"),
	}, true, searchCollections)
}

func searchCollections(ctx context.Context, c *Call, in SearchCollectionsIn) (SearchCollectionsOut, string, error) {
	fail := failWith[SearchCollectionsOut]()
	listing, err := in.listing()
	if err != nil {
		return fail(err)
	}
	if c.Federation != nil {
		return searchCollectionsFederated(ctx, c, listing)
	}
	offset := 0
	if c.Cursor != nil {
		if listing, offset, err = continueListing(c.Cursor, in, listing); err != nil {
			return fail(err)
		}
	}

	ctx = withProgress(ctx, newProgress(c)) // the scans report each page
	out := SearchCollectionsOut{Collections: []CollectionBrief{}, Notes: loadNotes(c.Catalog)}
	if w := stacclient.BBoxWarning(listing.BBox); w != "" {
		out.Notes = append(out.Notes, "Warning: "+w)
	}
	filtering := listing.Q != "" || len(listing.BBox) > 0 || listing.Datetime != ""
	serverSide := true
	if filtering {
		caps, err := c.Catalog.Client.Capabilities(ctx)
		if err != nil {
			return fail(err)
		}
		serverSide = caps.Has(stacclient.CapCollectionSearch) && (listing.Q == "" || caps.Has(stacclient.CapFreeText))
	}

	var matches []stacclient.Collection
	var complete bool
	var refused string // why the catalog's list could not be read to its end
	if serverSide {
		matches, out.Matched, refused, err = listServerSide(ctx, c.Catalog.Client, listing, offset)
	} else {
		out.FilteredClientSide = true
		matches, complete, refused, err = listClientSide(ctx, c.Catalog.Client, listing)
		if err == nil && complete && refused == "" {
			n := len(matches)
			out.Matched = &n
		}
		out.Notes = append(out.Notes, "the catalog does not declare collection search (or free text), so q, bbox and datetime were applied by this server over the catalog's collection list"+
			"; q matched whole words (quoted phrases, +required, -excluded), best matches first (id, title and keywords weigh more than the description)")
		if !complete {
			out.Notes = append(out.Notes, fmt.Sprintf("the catalog lists more than %d pages of collections; only those were searched", collectionScanPages))
		}
	}
	if err != nil {
		return fail(err)
	}
	if refused != "" {
		out.Notes = append(out.Notes, refused+"; the catalog's list goes on, but stac-mcp follows next links only with GET or POST, on the catalog's own origin and under its root URL")
	}
	if offset > len(matches) {
		offset = len(matches)
	}
	page := matches[offset:]
	if len(page) > listing.Limit {
		page = page[:listing.Limit]
		out.HasMore = true
	}
	for i := range page {
		out.Collections = append(out.Collections, briefCollection(&page[i]))
	}
	out.Returned = len(out.Collections)
	if out.HasMore {
		out.Cursor, out.Resend = listingCursor(c, listing, offset+out.Returned, argGiven(in.Limit))
	}
	if out.Returned == 0 {
		out.Notes = append(out.Notes, emptyCollectionsNotes(listing, offset)...)
	}
	return out, collectionsText(out), nil
}

// continueListing is the listing a cursor continues, and its offset: the
// cursor's filters (the caller may repeat them; other ones are refused),
// the page size given now or else the cursor's.
func continueListing(cur *cursor.Cursor, in SearchCollectionsIn, given collectionListing) (collectionListing, int, error) {
	refuse := func(reason string) (collectionListing, int, error) {
		return collectionListing{}, 0, cursorRefusal(in.Cursor, reason)
	}
	givenJSON, _ := json.Marshal(given)
	raw, err := cursorParams(cur, in.Cursor, givenJSON, given.Q != "" || len(given.BBox) > 0 || given.Datetime != "")
	if err != nil {
		return collectionListing{}, 0, err
	}
	var l collectionListing
	if err := json.Unmarshal(raw, &l); err != nil {
		return refuse("its listing is unreadable: " + err.Error())
	}
	bbox, err := stacclient.ParseBBox(l.BBox)
	if err != nil {
		return refuse("its bbox is invalid: " + err.Error())
	}
	dt, err := stacclient.ParseDatetime(l.Datetime)
	if err != nil || len(l.Q) > cursor.MaxString {
		return refuse("its datetime or q is invalid")
	}
	l.BBox, l.Datetime, l.Limit = bbox, dt, given.Limit
	if !argGiven(in.Limit) {
		if cur.PageSize > maxCollectionsLimit {
			return refuse(fmt.Sprintf("its limit %d is over %d", cur.PageSize, maxCollectionsLimit))
		}
		l.Limit = cur.PageSize
	}
	return l, cur.Listed, nil
}

// listingCursor is the cursor after listed collections of l, and the
// arguments the caller must send again with it.
func listingCursor(c *Call, l collectionListing, listed int, explicitLimit bool) (string, []string) {
	filters, _ := json.Marshal(l)
	pc := cursor.Cursor{Kind: cursor.Collections, Catalog: cursorCatalogRef(c.Catalog), Params: filters,
		PageSize: l.Limit, ExplicitLimit: explicitLimit, Listed: listed}
	token, form := cursor.Fit(c.Deps.cursorKey(), pc, filters, []byte(catalogKey(c.Catalog)))
	var requires []string
	if form.Catalog == "" {
		requires = append(requires, "catalog_url")
	}
	if form.Params == nil {
		for name, set := range map[string]bool{"q": l.Q != "", "bbox": len(l.BBox) > 0, "datetime": l.Datetime != ""} {
			if set {
				requires = append(requires, name)
			}
		}
		sort.Strings(requires)
	}
	return token, requires
}

// listing validates the arguments.
func (in SearchCollectionsIn) listing() (collectionListing, error) {
	l := collectionListing{Q: strings.TrimSpace(in.Q)}
	var err error
	if l.Limit, err = IntArg(in.Limit).Int("limit", defaultCollectionsLimit, 1, maxCollectionsLimit, "; continue with cursor for more"); err != nil {
		return l, err
	}
	v, err := decodeArg("bbox", in.BBox, "a bbox")
	if err != nil {
		return l, err
	}
	if l.BBox, err = stacclient.ParseBBox(v); err != nil {
		return l, err
	}
	if in.Datetime != "" {
		if l.Datetime, err = stacclient.ParseDatetime(in.Datetime); err != nil {
			return l, err
		}
	}
	return l, nil
}

// listServerSide asks the catalog for offset+limit+1 matches (the extra one
// tells whether more exist), reading pages as needed; refused says why a
// next link was not followed.
func listServerSide(ctx context.Context, client *stacclient.Client, l collectionListing, offset int) (all []stacclient.Collection, matched *int, refused string, err error) {
	want := offset + l.Limit + 1
	// There is no way to resume /collections at an offset (stacclient has no
	// ContinueCollections), so a continuation re-reads from the start: ask
	// for pages big enough to reach the offset in one or two requests.
	q := stacclient.CollectionQuery{Q: l.Q, BBox: l.BBox, Datetime: l.Datetime, Limit: min(want, maxCollectionsLimit)}
	for page, err := range client.CollectionPages(ctx, q, stacclient.SearchLimits{}) {
		if err != nil {
			return nil, nil, "", err
		}
		if matched == nil && page.NumberMatched != nil {
			n := *page.NumberMatched
			matched = &n
		}
		all, refused = append(all, page.Collections...), page.NextRefused
		progressFrom(ctx).step(ctx, 0, "search_collections: read %d collection(s) of the %d needed", len(all), want)
		if len(all) >= want {
			return all, matched, "", nil
		}
	}
	return all, matched, refused, nil
}

// listClientSide reads the whole list (bounded) and filters it here;
// refused says why a next link was not followed.
func listClientSide(ctx context.Context, client *stacclient.Client, l collectionListing) (matches []stacclient.Collection, complete bool, refused string, err error) {
	q := freetext.Parse(l.Q)
	window, err := datetimeWindow(l.Datetime)
	if err != nil {
		return nil, false, "", err
	}
	var kept []stacclient.Collection
	pages := 0
	complete = true
	for page, err := range client.CollectionPages(ctx, stacclient.CollectionQuery{Limit: maxCollectionsLimit}, stacclient.SearchLimits{MaxPages: collectionScanPages}) {
		if err != nil {
			return nil, false, "", err
		}
		pages++
		refused = page.NextRefused
		for _, col := range page.Collections {
			if extentIntersects(col.Extent, l.BBox) && extentOverlaps(col.Extent, window) {
				kept = append(kept, col)
			}
		}
		if pages >= collectionScanPages && page.Next != nil {
			complete = false
		}
		progressFrom(ctx).step(ctx, 0, "search_collections: scanned page %d of at most %d, %d in the area and period so far", pages, collectionScanPages, len(kept))
	}
	// Ranked among the collections in the area and period, as stacserver
	// ranks its own (package freetext's BM25F: id, title and keywords above
	// the description).
	docs := make([]freetext.Doc, len(kept))
	for i, col := range kept {
		docs[i] = freetext.Doc{ID: col.ID, Title: col.Title, Keywords: col.Keywords, Description: col.Description}
	}
	for _, i := range q.Rank(docs) {
		matches = append(matches, kept[i])
	}
	return matches, complete, refused, nil
}

// bboxBounds turns a bbox into one or two bounds (two when it crosses the antimeridian).
func bboxBounds(b []float64) []orb.Bound {
	if len(b) < 4 {
		return nil
	}
	w, s, e, n := b[0], b[1], b[2], b[3]
	if len(b) == 6 {
		w, s, e, n = b[0], b[1], b[3], b[4]
	}
	if w > e {
		return []orb.Bound{
			{Min: orb.Point{w, s}, Max: orb.Point{180, n}},
			{Min: orb.Point{-180, s}, Max: orb.Point{e, n}},
		}
	}
	return []orb.Bound{{Min: orb.Point{w, s}, Max: orb.Point{e, n}}}
}

// extentIntersects reports whether a collection's overall bbox meets the
// query bbox; a collection without a spatial extent is kept.
func extentIntersects(e stacclient.Extent, bbox []float64) bool {
	if len(bbox) == 0 || len(e.Spatial.BBox) == 0 || len(e.Spatial.BBox[0]) < 4 {
		return true
	}
	for _, a := range bboxBounds(bbox) {
		for _, b := range bboxBounds(e.Spatial.BBox[0]) {
			if a.Intersects(b) {
				return true
			}
		}
	}
	return false
}

// timeWindow is a closed interval; zero ends are open.
type timeWindow struct {
	start, end time.Time
	set        bool
}

// datetimeWindow reads a normalised datetime ("instant" or "start/end").
func datetimeWindow(dt string) (timeWindow, error) {
	if dt == "" {
		return timeWindow{}, nil
	}
	parts := strings.Split(dt, "/")
	w := timeWindow{set: true}
	parse := func(s string) (time.Time, error) {
		if s == ".." || s == "" {
			return time.Time{}, nil
		}
		return time.Parse(time.RFC3339Nano, s)
	}
	var err error
	if w.start, err = parse(parts[0]); err != nil {
		return w, &stacclient.ParamError{Param: "datetime", Got: dt, Reason: err.Error(), Accepted: "an RFC 3339 instant or interval"}
	}
	w.end = w.start
	if len(parts) == 2 {
		if w.end, err = parse(parts[1]); err != nil {
			return w, &stacclient.ParamError{Param: "datetime", Got: dt, Reason: err.Error(), Accepted: "an RFC 3339 instant or interval"}
		}
	}
	return w, nil
}

// extentOverlaps reports whether a collection's overall interval overlaps
// the window; unknown or unparseable extents are kept.
func extentOverlaps(e stacclient.Extent, w timeWindow) bool {
	if !w.set || len(e.Temporal.Interval) == 0 || len(e.Temporal.Interval[0]) != 2 {
		return true
	}
	iv := e.Temporal.Interval[0]
	var cs, ce time.Time
	if iv[0] != nil {
		t, err := time.Parse(time.RFC3339Nano, *iv[0])
		if err != nil {
			return true
		}
		cs = t
	}
	if iv[1] != nil {
		t, err := time.Parse(time.RFC3339Nano, *iv[1])
		if err != nil {
			return true
		}
		ce = t
	}
	// Overlap unless one ends before the other starts (zero = open end).
	if !w.end.IsZero() && !cs.IsZero() && w.end.Before(cs) {
		return false
	}
	if !ce.IsZero() && !w.start.IsZero() && ce.Before(w.start) {
		return false
	}
	return true
}

func briefCollection(col *stacclient.Collection) CollectionBrief {
	d, cut := truncateDescription(col.Description, 200)
	b := CollectionBrief{ID: col.ID, Title: col.Title, Description: d, DescriptionTruncated: cut, License: col.License,
		BBox: []float64{}, Interval: []string{}}
	ext := extentInfo(col.Extent)
	if len(ext.BBox) > 0 {
		b.BBox = ext.BBox[0]
	}
	if len(ext.Intervals) > 0 {
		b.Interval = ext.Intervals[0]
	}
	return b
}

func emptyCollectionsNotes(l collectionListing, offset int) []string {
	if offset > 0 {
		return []string{"no collections after this cursor: the listing is exhausted"}
	}
	notes := []string{"no collections matched."}
	if l.Q != "" {
		notes = append(notes, "try fewer or more general words in q (for example the mission name only)")
	}
	if len(l.BBox) > 0 {
		notes = append(notes, "check the bbox order [west,south,east,north], or drop bbox")
	}
	if l.Datetime != "" {
		notes = append(notes, "widen or drop datetime")
	}
	return notes
}

func collectionsText(out SearchCollectionsOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d collection(s)", out.Returned)
	if out.Matched != nil {
		fmt.Fprintf(&b, " of %d", *out.Matched)
	}
	if out.FilteredClientSide {
		b.WriteString(" (filtered by this server: the catalog has no collection search)")
	}
	b.WriteString(".\n")
	for _, col := range out.Collections {
		fmt.Fprintf(&b, "- %s", col.ID)
		if col.Title != "" { // an untitled collection: no "-" a model may read as a title
			fmt.Fprintf(&b, ": %s", col.Title)
		}
		if len(col.Interval) == 2 {
			fmt.Fprintf(&b, " [%s to %s]", col.Interval[0], col.Interval[1])
		}
		if len(col.BBox) > 0 {
			fmt.Fprintf(&b, " bbox %s", bboxText(col.BBox))
		}
		if col.License != "" {
			fmt.Fprintf(&b, " license %s", col.License)
		}
		if col.Catalog != "" {
			fmt.Fprintf(&b, " | in %s", col.Catalog)
		}
		if len(col.SameAs) > 0 {
			fmt.Fprintf(&b, " | same product as %s", strings.Join(col.SameAs, ", "))
		}
		if col.Description != "" {
			b.WriteString("\n  " + col.Description)
			if col.DescriptionTruncated {
				b.WriteString(" (cut: get_collection has all of it)")
			}
		}
		b.WriteString("\n")
	}
	if out.Cursor != "" {
		fmt.Fprintf(&b, "More: call search_collections with cursor %q%s\n", out.Cursor, resendText(out.Resend))
	}
	if len(out.Catalogs) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + "\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
