package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
	"github.com/stacmcp/stac-mcp/tools/internal/federation"
)

// search_items over several catalogs (adr/0035): one merged, deduplicated
// list in the search's order (newest first without sortby), each item
// naming its catalog and its copies elsewhere, each catalog's outcome, and
// one cursor holding every catalog's place.

// maxFederatedRounds bounds the page fetches of one call per catalog.
const maxFederatedRounds = 10

// searchItemsFederated answers a search_items call whose catalog_url names
// several catalogs.
func searchItemsFederated(ctx context.Context, c *Call, in SearchItemsIn, call searchItemsCall, out *SearchItemsOut) (string, error) {
	fed := c.Federation
	members := fed.engineMembers()
	params, pageSize, explicit, starts, tail, err := federatedStart(c, in, call, out)
	if err != nil {
		return "", err
	}
	order := federation.NewOrder(params.SortBy)
	sent := params
	sent.Limit = pageSize
	plan := memberPlan{tool: "search_items", params: sent, order: order, members: members, sortby: true}
	check := newFilterCheck(params)
	signings, err := memberSignings(c, in.SignAssets)
	if err != nil {
		return "", err
	}
	prog := newProgress(c)
	res := federatedRun(ctx, c, members, starts, federation.Options{
		Order: order, MaxItems: call.maxItems, MaxRounds: maxFederatedRounds, Tail: tail, Prepare: plan.prepare,
		Keep: func(_ int, it *stacclient.Item) bool { return !check.drops(it) },
	})
	if err := ctx.Err(); err != nil {
		return "", err
	}
	prog.step(ctx, 0, "search_items: %d catalog(s) merged, %d item(s)", len(members), len(res.Entries))
	outs, notes := outcomesOf(members, res)
	out.Catalogs = outs
	if allFailed(res) {
		return "", federatedFailure(members, res)
	}
	read := &itemPagesRead{check: check}
	read.area, read.noArea = requestedArea(params)
	for _, e := range res.Entries {
		signings[e.Member].sign(ctx, e.Item)
		read.seen.add(e.Item)
		if err := read.add(call.detail, signings[e.Member].requested, e.Item, out); err != nil {
			return "", err
		}
		prov := ItemProvenance{ID: e.Item.ID, Catalog: members[e.Member].Name, AlsoIn: itemCopies(members, e), Kept: e.Kept}
		if call.detail == detailFull {
			out.Provenance = append(out.Provenance, prov)
		} else {
			s := &out.Items[len(out.Items)-1]
			s.Catalog, s.AlsoIn, s.Kept = prov.Catalog, prov.AlsoIn, prov.Kept
		}
		out.Returned++
	}
	if call.detail == detailFull {
		for i := range read.heads {
			read.heads[i].Catalog = members[res.Entries[i].Member].Name
		}
	}
	for _, s := range signings {
		out.Warnings = append(out.Warnings, s.warnings()...)
		out.Notes = append(out.Notes, s.notes()...)
	}
	out.Warnings = append(out.Warnings, check.warnings()...)
	if check != nil && check.dropped > 0 {
		out.ClientFiltered = check.dropped
	}
	out.Notes = append(out.Notes, notes...)
	if res.EndedEarly != "" {
		out.Notes = append(out.Notes, res.EndedEarly+"; continue with cursor")
	}
	if res.EarlierCopies > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) were copies of items an earlier page returned and were left out", res.EarlierCopies))
	}
	out.Notes = append(out.Notes, federatedMergeNote(order, members, res))
	if res.HasMore {
		out.HasMore, out.Truncated = true, true
		token, requires, warning := federatedCursor(c, params, pageSize, explicit, res)
		out.Cursor, out.Resend = token, requires
		if warning != "" {
			out.Warnings = append(out.Warnings, warning)
		}
	}
	if call.detail == detailSummary && out.Returned > 0 && read.area != nil {
		out.Notes = append(out.Notes, "aoi_coverage_pct is the share of the requested area inside each item's footprint "+
			"(equal-area, as check_coverage measures)")
	}
	return searchItemsText(*out, read.heads), nil
}

// federatedStart is where the call starts: the search of its arguments,
// or the one its cursor continues, with each catalog's place and the
// records of the items returned before.
func federatedStart(c *Call, in SearchItemsIn, call searchItemsCall, out *SearchItemsOut) (params stacclient.SearchParams, pageSize int, explicit bool,
	starts []federation.Start, tail []federation.Record, err error) {
	if c.Cursor == nil {
		params = call.params
		if call.areaNote != "" {
			out.Notes = append(out.Notes, call.areaNote)
		}
		if m, err := toJSONObject(params); err == nil {
			out.Search = m
		}
		pageSize, explicit = params.Limit, params.Limit > 0
		if pageSize == 0 {
			pageSize = call.maxItems
		}
		params.Limit = 0
		return params, pageSize, explicit, nil, nil, nil
	}
	cur := c.Cursor
	selecting := searchParamsJSON(call.params)
	raw, err := cursorParams(cur, in.Cursor, selecting, string(selecting) != string(searchParamsJSON(stacclient.SearchParams{})))
	if err != nil {
		return params, 0, false, nil, nil, err
	}
	if err := json.Unmarshal(raw, &params); err != nil {
		return params, 0, false, nil, nil, cursorRefusal(in.Cursor, "its search parameters are unreadable: "+err.Error())
	}
	if params, err = params.Normalized(); err != nil {
		return params, 0, false, nil, nil, cursorRefusal(in.Cursor, "its search parameters are invalid: "+err.Error())
	}
	params.Limit = 0
	pageSize, explicit = cur.PageSize, cur.ExplicitLimit
	if call.params.Limit > 0 && call.params.Limit != pageSize {
		out.Notes = append(out.Notes, fmt.Sprintf("the page size stays %d, as the search started: each catalog's place in the cursor is a page of that size", pageSize))
	}
	for _, m := range cur.Members {
		s := federation.Start{State: federation.State(m.State)}
		switch m.State {
		case cursor.MemberActive:
			s.Resume = &federation.Resume{Diff: m.Pos, Skip: m.Skip, Offset: m.Offset}
		case cursor.MemberDropped:
			s.Why = "it failed or was skipped on an earlier page of this search; its items are not in it (search again without cursor to include them)"
		}
		starts = append(starts, s)
	}
	for _, r := range cur.Tail {
		tail = append(tail, federation.Record(r))
	}
	return params, pageSize, explicit, starts, tail, nil
}

// federatedCursor writes the cursor of the next page: every catalog's
// place and the tail records.
func federatedCursor(c *Call, params stacclient.SearchParams, pageSize int, explicit bool, res *federation.Result) (token string, requires []string, warning string) {
	fed := c.Federation
	pc := cursor.Cursor{Kind: cursor.Federated, Params: searchParamsJSON(params), PageSize: pageSize, ExplicitLimit: explicit}
	for i, p := range res.Positions {
		m := cursor.MemberPosition{Ref: cursorCatalogRef(fed.members[i]), State: cursor.MemberState(p.State)}
		if p.State == federation.Active {
			if p.Position == nil {
				m.State = cursor.MemberExhausted
			} else {
				diff, err := fed.members[i].Client.DiffRequest(p.Params, p.Position.Request)
				if err != nil {
					return "", nil, fmt.Sprintf("more items match, but %s's next request cannot be carried in a cursor (%v)", memberName(fed.members[i]), err)
				}
				m.Pos, m.Skip, m.Offset = diff, p.Position.Skip, p.Position.Offset
				if len(p.Position.Request.Headers) > 0 {
					warning = memberName(fed.members[i]) + "'s next link asks for request headers, which a cursor does not carry: its next page is requested without them"
				}
			}
		}
		pc.Members = append(pc.Members, m)
	}
	for _, r := range res.Tail {
		pc.Tail = append(pc.Tail, cursor.TailRecord(r))
	}
	token, form, dropped := cursor.FitFederated(c.Deps.cursorKey(), pc, pc.Params, []byte(fed.key()))
	if token == "" {
		return "", nil, "more items match, but the catalogs' places are too large to carry in a cursor; narrow the search or raise max_items"
	}
	if form.Catalog == "" {
		requires = append(requires, "catalog_url")
	}
	if form.Params == nil {
		requires = append(requires, searchParamNames(params)...)
	}
	if dropped > 0 {
		warning = strings.TrimPrefix(warning+fmt.Sprintf("; the cursor could not carry %d of the records that keep copies of this page's items off the next page: one may appear again there", dropped), "; ")
	}
	return token, requires, warning
}

// memberSignings are each catalog's asset signing: Planetary Computer's
// hrefs are signed when sign_assets asks for it.
func memberSignings(c *Call, requested bool) ([]*assetSigning, error) {
	out := make([]*assetSigning, len(c.Federation.members))
	anyPC := false
	for i, m := range c.Federation.members {
		mc := *c
		mc.Catalog = m
		pc := c.Deps.signing.isPlanetaryComputer(m)
		anyPC = anyPC || pc
		s, err := newAssetSigning(&mc, requested && pc)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	if requested && !anyPC {
		return nil, &stacclient.ParamError{Param: "sign_assets", Got: "true",
			Reason:   "asset signing exists only for Microsoft Planetary Computer, and none of these catalogs is it",
			Accepted: "false or omitted for these catalogs"}
	}
	return out, nil
}

// allFailed reports a call in which no catalog answered.
func allFailed(res *federation.Result) bool {
	for _, o := range res.Outcomes {
		if o.Status == federation.Answered {
			return false
		}
	}
	for _, o := range res.Outcomes {
		if o.Status == federation.Timeout || o.Status == federation.Failed {
			return true
		}
	}
	return false // every catalog skipped: an empty answer that says why
}

// federatedFailure is the error of a call none of whose catalogs answered.
func federatedFailure(members []federation.Member, res *federation.Result) error {
	var parts []string
	var first error
	for i, o := range res.Outcomes {
		switch o.Status {
		case federation.Timeout, federation.Failed:
			parts = append(parts, fmt.Sprintf("%s: %s", members[i].Name, errorText(o.Err)))
			if first == nil {
				first = o.Err
			}
		case federation.Skipped:
			parts = append(parts, fmt.Sprintf("%s: skipped, %s", members[i].Name, o.Why))
		}
	}
	return actionable(first, "no catalog answered the search. %s", strings.Join(parts, "; "))
}

// federatedMergeNote says how the list was merged and deduplicated.
func federatedMergeNote(order federation.Order, members []federation.Member, res *federation.Result) string {
	var fields []string
	for _, f := range order.Fields() {
		fields = append(fields, f.Direction+" "+f.Field)
	}
	unsorted := []string{}
	for i, o := range res.Outcomes {
		if o.Status == federation.Answered && !o.Sorted {
			unsorted = append(unsorted, members[i].Name)
		}
	}
	note := fmt.Sprintf("merged across %d catalogs by %s; an item held by several catalogs is listed once, under the catalog whose copy was kept, "+
		"the others in also_in (Sentinel-2: platform, MGRS tile and product or sensing time within %s; Landsat: path, row and date; "+
		"other products: datetime within %s and footprints %.0f%% shared)",
		len(members), strings.Join(fields, ", "), durationWords(federation.S2Tolerance), durationWords(federation.GenericTolerance), 100*federation.MinOverlap)
	if len(unsorted) > 0 {
		note += "; " + strings.Join(unsorted, ", ") + " could not sort, so its items are in its own order"
	}
	return note
}

// ItemProvenance is where a complete item (detail full) of a search over
// several catalogs came from.
type ItemProvenance struct {
	ID      string     `json:"id"`
	Catalog string     `json:"catalog"`
	AlsoIn  []ItemCopy `json:"also_in,omitempty"`
	Kept    string     `json:"kept,omitempty"`
}

// durationWords is a tolerance as notes write it: "60 minutes", "60 seconds".
func durationWords(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
	return fmt.Sprintf("%d seconds", int(d/time.Second))
}
