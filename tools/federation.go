package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/catalog"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
	"github.com/stacmcp/stac-mcp/tools/internal/federation"
)

// Searching several catalogs in one call (adr/0035): catalog_url names
// them (CatalogsArg); the engine (tools/internal/federation) fans out,
// merges and deduplicates; the adapters here decide what each catalog is
// sent and word the outcome.

// fedCall is a call's catalogs when catalog_url names several.
type fedCall struct {
	members []*Catalog
}

// federatedInput is implemented by the inputs of the tools that search
// several catalogs at once.
type federatedInput interface {
	catalogRefs() ([]string, error)
}

// maxCatalogs is the configured bound on catalogs per call.
func maxCatalogs(lim Limits) int {
	if lim.MaxCatalogs > 0 {
		return lim.MaxCatalogs
	}
	return catalog.DefaultMaxMembers
}

// resolveAnyCall resolves a call's catalog, or its catalogs when
// catalog_url names several (a list, or a group), and verifies its cursor.
func resolveAnyCall(ctx context.Context, d *Deps, in catalogInput) (*Catalog, *fedCall, *cursor.Cursor, error) {
	fi, ok := in.(federatedInput)
	if !ok {
		cat, cur, err := resolveCall(ctx, d, in)
		return cat, nil, cur, err
	}
	refs, err := fi.catalogRefs()
	if err != nil {
		return nil, nil, nil, err
	}
	expanded := expandGroups(d, refs)
	var cur *cursor.Cursor
	if ci, ok := in.(cursorInput); ok {
		if token, kind := ci.cursorToken(); token != "" {
			c, err := decodeCursor(d.cursorKey(), token, kind)
			if err != nil {
				return nil, nil, nil, err
			}
			if c.Kind == cursor.Federated {
				fed, err := resolveFederatedCursor(ctx, d, token, &c, expanded)
				if err != nil {
					return nil, nil, nil, err
				}
				return fed.members[0], fed, &c, nil
			}
			if c.Kind == cursor.Series && len(expanded) > 1 {
				// A series over several catalogs is bound to them by
				// fingerprint: the call resends catalog_url with the
				// other arguments.
				fed, err := resolveMembers(ctx, d, expanded)
				if err != nil {
					return nil, nil, nil, err
				}
				if c.Catalog != "" || len(fed.members) < 2 || cursor.Sum64([]byte(fed.key())) != c.CatalogSum {
					return nil, nil, nil, cursorRefusal(token, "it continues a series of other catalogs than catalog_url names: send exactly the arguments of the call that returned it")
				}
				return fed.members[0], fed, &c, nil
			}
			if len(expanded) > 1 {
				return nil, nil, nil, cursorRefusal(token, "it continues a search of one catalog, and catalog_url names several; send the cursor alone")
			}
		}
	}
	if len(expanded) <= 1 {
		ref := ""
		if len(expanded) == 1 {
			ref = expanded[0]
		}
		cat, cur, err := resolveCallRef(ctx, d, ref, in)
		return cat, nil, cur, err
	}
	fed, err := resolveMembers(ctx, d, expanded)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(fed.members) == 1 {
		// The list named one catalog several times.
		return fed.members[0], nil, cur, nil
	}
	return fed.members[0], fed, cur, nil
}

// expandGroups replaces each group name by its members, in order.
func expandGroups(d *Deps, refs []string) []string {
	var out []string
	for _, r := range refs {
		if g, ok := d.Catalogs.Group(r); ok {
			out = append(out, g.Members...)
			continue
		}
		out = append(out, r)
	}
	return out
}

// resolveMembers resolves each reference; the same catalog named twice is
// searched once.
func resolveMembers(ctx context.Context, d *Deps, refs []string) (*fedCall, error) {
	if n, limit := len(refs), maxCatalogs(d.Limits); n > limit {
		return nil, &stacclient.ParamError{Param: "catalog_url", Got: strings.Join(refs, ", "),
			Reason:   fmt.Sprintf("it names %d catalogs, and this server searches at most %d at once (STAC_MCP_MAX_CATALOGS_PER_CALL)", n, limit),
			Accepted: fmt.Sprintf("at most %d catalogs (a group counts as its members)", limit)}
	}
	fed := &fedCall{}
	seen := map[string]bool{}
	for _, r := range refs {
		cat, err := d.Catalogs.Resolve(ctx, r)
		if err != nil {
			return nil, err
		}
		if seen[cat.Key] {
			continue
		}
		seen[cat.Key] = true
		fed.members = append(fed.members, cat)
	}
	return fed, nil
}

// resolveFederatedCursor resolves the catalogs a federated cursor was
// issued for: its own references, or, when it carries only their
// fingerprint, catalog_url's, which must be the same catalogs.
func resolveFederatedCursor(ctx context.Context, d *Deps, token string, c *cursor.Cursor, given []string) (*fedCall, error) {
	if c.Catalog == "" {
		if len(given) == 0 {
			return nil, cursorRefusal(token, "it does not carry its catalogs (too long to fit in a cursor): send it with the catalog_url of the call that returned it")
		}
		fed, err := resolveMembers(ctx, d, given)
		if err != nil {
			return nil, err
		}
		if len(fed.members) != len(c.Members) || cursor.Sum64([]byte(fed.key())) != c.CatalogSum {
			return nil, cursorRefusal(token, "it was issued for other catalogs than catalog_url names")
		}
		return fed, nil
	}
	refs := make([]string, len(c.Members))
	for i, m := range c.Members {
		refs[i] = m.Ref
	}
	fed, err := resolveMembers(ctx, d, refs)
	if err != nil {
		return nil, fmt.Errorf("the cursor's catalogs: %w", err)
	}
	if len(fed.members) != len(c.Members) {
		return nil, cursorRefusal(token, "its catalogs are not distinct")
	}
	if len(given) > 0 {
		other, err := resolveMembers(ctx, d, given)
		if err != nil {
			return nil, err
		}
		if other.key() != fed.key() {
			return nil, cursorRefusal(token, fmt.Sprintf("issued for catalogs %s, but this call names %s; send the cursor without catalog_url",
				strings.Join(fed.names(), ", "), strings.Join(other.names(), ", ")))
		}
	}
	return fed, nil
}

// key identifies the catalogs, in order, across processes.
func (f *fedCall) key() string {
	keys := make([]string, len(f.members))
	for i, m := range f.members {
		keys[i] = catalogKey(m)
	}
	return strings.Join(keys, "\n")
}

// names are the members as results name them.
func (f *fedCall) names() []string {
	out := make([]string, len(f.members))
	for i, m := range f.members {
		out[i] = memberName(m)
	}
	return out
}

// memberName is how results name a catalog of a federated call: its
// preset or configured name, "demo", else its URL (credentials redacted)
// or path.
func memberName(c *Catalog) string { return federation.MemberOf(c).Name }

// engineMembers are the members as the engine takes them.
func (f *fedCall) engineMembers() []federation.Member {
	out := make([]federation.Member, len(f.members))
	for i, m := range f.members {
		out[i] = federation.MemberOf(m)
	}
	return out
}

// CatalogOutcome is one catalog's part of a call over several catalogs.
type CatalogOutcome struct {
	Catalog  string   `json:"catalog"`
	Status   string   `json:"status" jsonschema:"answered, timeout, error or skipped"`
	Matched  *int     `json:"matched,omitempty" jsonschema:"its match count, when it reports one (items in several catalogs count in each)"`
	Returned int      `json:"returned" jsonschema:"its copies among the items returned"`
	MS       int64    `json:"ms" jsonschema:"time spent on it in this call"`
	Error    string   `json:"error,omitempty"`
	Notes    []string `json:"notes,omitempty" jsonschema:"what it was sent and what was applied here instead"`
}

// memberPlan decides what one member is sent (federation.Options.Prepare):
// the asked collections under its ids (a member with none of them is
// skipped), the filter in an encoding it declares, sortby when it
// declares sorting (the merge needs each catalog's items in the merged
// order), fields when it declares them; what it does not support is
// applied here where it can be (filterCheck) and said per catalog.
type memberPlan struct {
	tool    string
	params  stacclient.SearchParams
	order   federation.Order
	members []federation.Member
	sortby  bool // send the merged order as sortby
}

func (p memberPlan) prepare(ctx context.Context, i int) (federation.Prepared, error) {
	m := p.members[i]
	sent := p.params
	var prep federation.Prepared
	if len(sent.Collections) > 0 {
		mapping, err := federation.MapCollections(ctx, m, sent.Collections)
		if err != nil {
			return federation.Prepared{}, err
		}
		if len(mapping.IDs) == 0 {
			prep.Skip = fmt.Sprintf("it has no collection %s, nor the same product under another id", strings.Join(mapping.Missing, ", "))
			return prep, nil
		}
		if len(mapping.Missing) > 0 {
			prep.Notes = append(prep.Notes, fmt.Sprintf("it has no collection %s: searched in %s only", strings.Join(mapping.Missing, ", "), strings.Join(mapping.IDs, ", ")))
		}
		prep.Notes = append(prep.Notes, mapping.Notes...)
		sent.Collections = mapping.IDs
	}
	caps, err := m.Client.Capabilities(ctx)
	if errors.As(err, new(*stacclient.LandingPageError)) {
		return federation.Prepared{}, err
	}
	if err != nil {
		prep.Notes = append(prep.Notes, "its capabilities could not be read ("+renderError(p.tool, err).Error()+"); parameters were sent unchecked")
		caps = nil
	}
	if caps != nil {
		if converted, note, convErr := sent.ConvertFilterFor(caps); convErr == nil && note != "" {
			sent = converted
			prep.Notes = append(prep.Notes, note)
		}
		for _, w := range unsupportedWarnings(caps, sent) {
			if strings.HasPrefix(w, "sortby was sent") || strings.HasPrefix(w, "fields was sent") {
				continue // decided below
			}
			prep.Notes = append(prep.Notes, w+" Items contradicting it are removed here.")
		}
	}
	if p.sortby {
		if caps == nil || caps.Has(stacclient.CapSort) {
			sent.SortBy = p.order.Fields()
			prep.Sorted = true
		} else {
			sent.SortBy = nil
			prep.Notes = append(prep.Notes, "it does not declare sorting, so sortby was not sent: its items come in its own order, merged as they come")
		}
	}
	if sent.Fields != nil && caps != nil && !caps.Has(stacclient.CapFields) {
		sent.Fields = nil
		prep.Notes = append(prep.Notes, "it does not declare the fields extension, so fields was not sent; complete items came back")
	}
	prep.Params = sent
	return prep, nil
}

// outcomes words the members' outcomes for the result, and the notes that
// say what the result is missing.
func outcomesOf(members []federation.Member, res *federation.Result) (out []CatalogOutcome, notes []string) {
	var answered, failed []string
	for i, o := range res.Outcomes {
		co := CatalogOutcome{Catalog: members[i].Name, Status: string(o.Status), Matched: o.Matched, Returned: o.Returned,
			MS: o.Elapsed.Milliseconds(), Notes: o.Notes}
		if co.Notes == nil {
			co.Notes = []string{}
		}
		switch o.Status {
		case federation.Answered:
			answered = append(answered, members[i].Name)
			if o.Folded > 0 {
				co.Notes = append(co.Notes, fmt.Sprintf("%d of its items were copies of items returned from another catalog, or on an earlier page (also_in names them)", o.Folded))
			}
			if o.Dropped > 0 {
				co.Notes = append(co.Notes, fmt.Sprintf("%d of its items contradicted the search (it ignored a condition) and were removed here", o.Dropped))
			}
		case federation.Skipped:
			co.Error = o.Why
		case federation.Timeout:
			failed = append(failed, members[i].Name)
			co.Error = errorText(o.Err)
			if o.Later {
				notes = append(notes, fmt.Sprintf("%s did not answer its next page in %s: this page ends where its items resume; the cursor asks it again",
					members[i].Name, secondsText(o.Elapsed)))
			} else {
				notes = append(notes, fmt.Sprintf("%s did not answer in %s", members[i].Name, secondsText(o.Elapsed)))
			}
		case federation.Failed:
			failed = append(failed, members[i].Name)
			co.Error = errorText(o.Err)
			if o.Later {
				notes = append(notes, fmt.Sprintf("%s's next page failed (%s): this page ends where its items resume; the cursor asks it again", members[i].Name, co.Error))
			} else {
				notes = append(notes, fmt.Sprintf("%s failed: %s", members[i].Name, co.Error))
			}
		}
		out = append(out, co)
	}
	if len(failed) > 0 && len(notes) > 0 {
		switch {
		case len(answered) == 0:
			notes[len(notes)-1] += "; no catalog answered"
		default:
			notes[len(notes)-1] += "; results are from " + strings.Join(answered, " and ") + " only"
		}
	}
	return out, notes
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return trimText(err.Error(), 300)
}

// secondsText is a duration as the notes write it: "4.1 s", "350 ms".
func secondsText(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// catalogsText is the per-catalog line of a federated result's text.
func catalogsText(outs []CatalogOutcome) string {
	parts := make([]string, 0, len(outs))
	for _, o := range outs {
		s := fmt.Sprintf("%s %s", o.Catalog, o.Status)
		var detail []string
		if o.Status == string(federation.Answered) || o.Returned > 0 {
			detail = append(detail, fmt.Sprintf("%d returned", o.Returned))
		}
		if o.Matched != nil {
			detail = append(detail, fmt.Sprintf("%d matched", *o.Matched))
		}
		if o.Status != string(federation.Skipped) {
			detail = append(detail, fmt.Sprintf("%d ms", o.MS))
		}
		if o.Error != "" {
			detail = append(detail, o.Error)
		}
		if len(detail) > 0 {
			s += " (" + strings.Join(detail, ", ") + ")"
		}
		for _, n := range o.Notes {
			s += "; " + n
		}
		parts = append(parts, s)
	}
	return "Catalogs: " + strings.Join(parts, ". ")
}

// federatedRun runs a search over the call's catalogs with the shared
// settings: the layer's learned latencies for the straggler wait, the
// attempt timeout for a catalog whose searches are not learned yet, and
// the call's attempts pooled (its answer needs every catalog's page).
func federatedRun(ctx context.Context, c *Call, members []federation.Member, starts []federation.Start, opts federation.Options) *federation.Result {
	opts.Latency = c.Deps.pages.get(c.Deps)
	opts.ColdWait = c.Deps.Layer.Policy().AttemptTimeout
	return federation.Run(reliability.PoolAttempts(ctx), members, starts, opts)
}

// itemCopies are an entry's other copies, named by catalog.
func itemCopies(members []federation.Member, e *federation.Entry) []ItemCopy {
	out := make([]ItemCopy, 0, len(e.AlsoIn))
	for _, cp := range e.AlsoIn {
		out = append(out, ItemCopy{Catalog: members[cp.Member].Name, ID: cp.ID, Collection: cp.Collection})
	}
	slices.SortStableFunc(out, func(a, b ItemCopy) int { return strings.Compare(a.Catalog, b.Catalog) })
	return out
}

// ItemCopy is another catalog's copy of a returned item.
type ItemCopy struct {
	Catalog    string `json:"catalog"`
	ID         string `json:"id"`
	Collection string `json:"collection,omitempty"`
}

// runBoundedSearchFederated is runBoundedSearch over several catalogs:
// the merged, deduplicated items up to maxItems, with each one's catalog.
func runBoundedSearchFederated(ctx context.Context, c *Call, tool string, params stacclient.SearchParams, maxItems int) (*boundedSearch, error) {
	members := c.Federation.engineMembers()
	order := federation.NewOrder(params.SortBy)
	sent := params
	if sent.Limit == 0 {
		sent.Limit = maxItems
	}
	plan := memberPlan{tool: tool, params: sent, order: order, members: members, sortby: true}
	check := newFilterCheck(params)
	res := federatedRun(ctx, c, members, nil, federation.Options{Order: order, MaxItems: maxItems, MaxRounds: maxFederatedRounds,
		Prepare: plan.prepare, Keep: func(_ int, it *stacclient.Item) bool { return !check.drops(it) }})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if allFailed(res) {
		return nil, federatedFailure(members, res)
	}
	out := &boundedSearch{warnings: check.warnings()}
	var notes []string
	out.catalogs, notes = outcomesOf(members, res)
	for _, e := range res.Entries {
		out.items = append(out.items, *e.Item)
		out.sources = append(out.sources, members[e.Member].Name)
		out.members = append(out.members, e.Member)
		out.copies = append(out.copies, itemCopies(members, e))
		out.kept = append(out.kept, e.Kept)
	}
	out.filterNotes = append(notes, federatedMergeNote(order, members, res))
	if res.EndedEarly != "" {
		out.filterNotes = append(out.filterNotes, res.EndedEarly)
	}
	out.hasMore = res.HasMore
	out.pageFailed = res.EndedEarly != ""
	return out, nil
}

// sizeFederated is estimate_data_size's search over several catalogs:
// the merged items' asset jobs, each probed through its own catalog's
// client, and whether the merge ended early.
func sizeFederated(ctx context.Context, c *Call, tool string, params stacclient.SearchParams, maxItems int, sz *sizer, out *EstimateDataSizeOut) ([]*assetJob, bool, error) {
	s, err := runBoundedSearchFederated(ctx, c, tool, params, maxItems)
	if err != nil {
		return nil, false, err
	}
	out.Catalogs = s.catalogs
	out.Warnings = append(out.Warnings, s.warnings...)
	out.Notes = append(out.Notes, s.filterNotes...)
	out.HasMore = s.hasMore
	var jobs []*assetJob
	for i := range s.items {
		m := c.Federation.members[s.members[i]]
		sz.offline, sz.catalogHost = offlineAssets(m), m.Host
		out.Sources = append(out.Sources, ItemProvenance{ID: s.items[i].ID, Catalog: s.sources[i], AlsoIn: s.copies[i], Kept: s.kept[i]})
		for _, j := range sz.item(out, &s.items[i]) {
			if j.probe != nil {
				j.probe.client = m.Client
			}
			jobs = append(jobs, j)
		}
	}
	if len(s.items) > 0 {
		out.Notes = append(out.Notes, "no extrapolation to every match over several catalogs: each one's count is in catalogs, and an acquisition several hold counts in each")
	}
	return jobs, s.pageFailed, nil
}

// getAggregationsFederated runs get_aggregations on each catalog side by
// side, each with the asked collections under its own ids. The results
// stay per catalog: a scene several catalogs hold counts in each, and no
// aggregation can tell which, so nothing is summed.
func getAggregationsFederated(ctx context.Context, c *Call, params stacclient.SearchParams, names []string) (GetAggregationsOut, string, error) {
	members := c.Federation.engineMembers()
	results := make([]GetAggregationsOut, len(members))
	errs := make([]error, len(members))
	skips := make([]string, len(members))
	mapped := make([][]string, len(members))
	hosts := make([]string, len(members))
	for i, m := range members {
		hosts[i] = m.Host
	}
	branches := federation.FanOut(reliability.PoolAttempts(ctx), hosts, c.Deps.Layer, c.Deps.Layer.Policy().AttemptTimeout, func(ctx context.Context, i int) error {
		p := params
		if len(p.Collections) > 0 {
			mapping, err := federation.MapCollections(ctx, members[i], p.Collections)
			if err != nil {
				errs[i] = err
				return err
			}
			if len(mapping.IDs) == 0 {
				skips[i] = fmt.Sprintf("it has no collection %s, nor the same product under another id", strings.Join(mapping.Missing, ", "))
				return errSkippedBranch
			}
			p.Collections, mapped[i] = mapping.IDs, mapping.Notes
		}
		mc := *c
		mc.Catalog, mc.Federation = c.Federation.members[i], nil
		results[i], errs[i] = aggregateOne(ctx, &mc, p, names)
		return errs[i]
	})
	if err := ctx.Err(); err != nil {
		return GetAggregationsOut{}, "", err
	}
	out := GetAggregationsOut{Available: []AggregationDef{}, Results: []AggregationValue{}, Notes: []string{}}
	answered := 0
	for i, m := range members {
		co := CatalogOutcome{Catalog: m.Name, MS: branches[i].End.Sub(branches[i].Start).Milliseconds(), Notes: append([]string{}, mapped[i]...)}
		switch {
		case skips[i] != "":
			co.Status, co.Error = string(federation.Skipped), skips[i]
		case branches[i].Cut:
			co.Status = string(federation.Timeout)
			co.Error = fmt.Sprintf("did not answer within %s, when the other catalogs had answered and its own answer times no longer justified waiting",
				secondsText(branches[i].End.Sub(branches[i].Start)))
			out.Notes = append(out.Notes, fmt.Sprintf("%s did not answer in %s", m.Name, secondsText(branches[i].End.Sub(branches[i].Start))))
		case errs[i] != nil:
			co.Status, co.Error = string(federation.Failed), renderError("get_aggregations", errs[i]).Error()
			out.Notes = append(out.Notes, fmt.Sprintf("%s failed: %s", m.Name, trimText(co.Error, 300)))
		default:
			answered++
			r := results[i]
			co.Status, co.Matched = string(federation.Answered), r.Matched
			out.Supported = out.Supported || r.Supported
			out.ByCatalog = append(out.ByCatalog, CatalogAggregations{Catalog: m.Name, Supported: r.Supported, Reason: r.Reason,
				Available: r.Available, Results: r.Results, Matched: r.Matched, Notes: r.Notes})
		}
		out.Catalogs = append(out.Catalogs, co)
	}
	if answered == 0 {
		return GetAggregationsOut{}, "", actionable(nil, "no catalog answered the aggregation: %s", failedOutcomes(out.Catalogs))
	}
	if !out.Supported {
		out.Reason = "none of these catalogs declares the aggregation extension; use search_items and read each catalog's matched instead"
	}
	out.Notes = append(out.Notes, "aggregations are per catalog and never summed: a scene held by several catalogs counts in each (search_items lists it once)")
	return out, aggregationsText(out), nil
}

var errSkippedBranch = errors.New("skipped")

// searchCollectionsFederated lists each catalog's matching collections
// side by side: up to limit from each, each naming its catalog and the
// same product among the others' (the collection table). It has no
// cursor: a catalog's list is paged further with that catalog alone.
func searchCollectionsFederated(ctx context.Context, c *Call, listing collectionListing) (SearchCollectionsOut, string, error) {
	members := c.Federation.engineMembers()
	type listed struct {
		matches    []stacclient.Collection
		matched    *int
		clientSide bool
		notes      []string
	}
	lists := make([]listed, len(members))
	errs := make([]error, len(members))
	hosts := make([]string, len(members))
	for i, m := range members {
		hosts[i] = m.Host
	}
	ctx = withProgress(ctx, newProgress(c))
	branches := federation.FanOut(reliability.PoolAttempts(ctx), hosts, c.Deps.Layer, c.Deps.Layer.Policy().AttemptTimeout, func(ctx context.Context, i int) error {
		client := members[i].Client
		l := &lists[i]
		serverSide := true
		if listing.Q != "" || len(listing.BBox) > 0 || listing.Datetime != "" {
			caps, err := client.Capabilities(ctx)
			if err != nil {
				errs[i] = err
				return err
			}
			serverSide = caps.Has(stacclient.CapCollectionSearch) && (listing.Q == "" || caps.Has(stacclient.CapFreeText))
		}
		var refused string
		var err error
		if serverSide {
			l.matches, l.matched, refused, err = listServerSide(ctx, client, listing, 0)
		} else {
			var complete bool
			l.clientSide = true
			l.matches, complete, refused, err = listClientSide(ctx, client, listing)
			if err == nil && complete && refused == "" {
				n := len(l.matches)
				l.matched = &n
			}
			l.notes = append(l.notes, "it does not declare collection search (or free text): q, bbox and datetime were applied by this server over its list")
		}
		if refused != "" {
			l.notes = append(l.notes, refused)
		}
		errs[i] = err
		return err
	})
	if err := ctx.Err(); err != nil {
		return SearchCollectionsOut{}, "", err
	}
	out := SearchCollectionsOut{Collections: []CollectionBrief{}, Notes: []string{}}
	answered := 0
	for i, m := range members {
		co := CatalogOutcome{Catalog: m.Name, MS: branches[i].End.Sub(branches[i].Start).Milliseconds(), Notes: lists[i].notes}
		switch {
		case branches[i].Cut:
			co.Status = string(federation.Timeout)
			co.Error = fmt.Sprintf("did not answer within %s", secondsText(branches[i].End.Sub(branches[i].Start)))
			out.Notes = append(out.Notes, m.Name+" "+co.Error)
		case errs[i] != nil:
			co.Status, co.Error = string(federation.Failed), renderError("search_collections", errs[i]).Error()
			out.Notes = append(out.Notes, fmt.Sprintf("%s failed: %s", m.Name, trimText(co.Error, 300)))
		default:
			answered++
			co.Status, co.Matched = string(federation.Answered), lists[i].matched
			page := lists[i].matches
			if len(page) > listing.Limit {
				page = page[:listing.Limit]
				out.HasMore = true
				co.Notes = append(co.Notes, fmt.Sprintf("more match: call search_collections with catalog_url %q alone and its cursor to page on", m.Name))
			}
			for j := range page {
				b := briefCollection(&page[j])
				b.Catalog = m.Name
				out.Collections = append(out.Collections, b)
			}
			co.Returned = len(page)
			out.FilteredClientSide = out.FilteredClientSide || lists[i].clientSide
		}
		if co.Notes == nil {
			co.Notes = []string{}
		}
		out.Catalogs = append(out.Catalogs, co)
	}
	if answered == 0 {
		return SearchCollectionsOut{}, "", actionable(nil, "no catalog answered: %s", failedOutcomes(out.Catalogs))
	}
	// The same product in several catalogs, by the collection table (or
	// the same id), named on each.
	presetOf := map[string]string{}
	for _, m := range members {
		presetOf[m.Name] = m.Preset
	}
	for i := range out.Collections {
		a := &out.Collections[i]
		fa := federation.FamilyID(presetOf[a.Catalog], a.ID)
		for _, b := range out.Collections {
			if b.Catalog != a.Catalog && federation.FamilyID(presetOf[b.Catalog], b.ID) == fa {
				a.SameAs = append(a.SameAs, b.Catalog+":"+b.ID)
			}
		}
	}
	out.Returned = len(out.Collections)
	out.Notes = append(out.Notes, fmt.Sprintf("up to %d collections from each catalog, in its order; no cursor over several catalogs", listing.Limit))
	return out, collectionsText(out), nil
}

// pageTimes is the process's federation.PageTimes, its fallback the
// layer's answer times, set on first use.
type pageTimes struct {
	once  sync.Once
	times federation.PageTimes
}

func (p *pageTimes) get(d *Deps) *federation.PageTimes {
	p.once.Do(func() { p.times.Fallback = d.Layer })
	return &p.times
}

// failedOutcomes words the catalogs' outcomes when none answered:
// "earth-search: timeout (…); planetary-computer: error (…)".
func failedOutcomes(cs []CatalogOutcome) string {
	parts := make([]string, 0, len(cs))
	for _, co := range cs {
		parts = append(parts, co.Catalog+": "+co.Status+" ("+co.Error+")")
	}
	return strings.Join(parts, "; ")
}
