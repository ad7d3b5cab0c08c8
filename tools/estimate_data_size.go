package tools

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/sizing"
)

// EstimateDataSizeIn is a search plus how to size it.
type EstimateDataSizeIn struct {
	CatalogsArg
	AreaSearch
	Limit             PageSizeArg `json:"limit,omitempty" jsonschema:"page size"`
	MaxItems          MaxItemsArg `json:"max_items,omitempty" jsonschema:"items to size (default 10)"`
	AssetKeys         StringList  `json:"asset_keys,omitempty" jsonschema:"default: all"`
	ForceMetadataOnly bool        `json:"force_metadata_only,omitempty" jsonschema:"no HEAD requests"`
	PerItem           bool        `json:"per_item,omitempty" jsonschema:"each item's assets"`
	MaxCloudCover     IntArg      `json:"max_cloud_cover,omitempty"`
}

// SizedAsset is one asset's estimate.
type SizedAsset struct {
	Item         string   `json:"item"`
	Key          string   `json:"key"`
	Method       string   `json:"method" jsonschema:"file:size, raster_dtype_shape (uncompressed), head_content_length"`
	Bytes        int64    `json:"bytes"`
	Coverage     *float64 `json:"coverage,omitempty" jsonschema:"fraction of the item inside the requested area (raster assets, when bbox/intersects was given)"`
	ClippedBytes int64    `json:"clipped_bytes" jsonschema:"bytes scaled by coverage (raster assets), else bytes"`
}

// UnsizedAsset is an asset that could not be sized, and why.
type UnsizedAsset struct {
	Item   string `json:"item"`
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// SizeTotal is a subtotal (per collection, per asset key or per method).
type SizeTotal struct {
	Name         string `json:"name"`
	Assets       int    `json:"assets" jsonschema:"assets sized"`
	Unsized      int    `json:"unsized" jsonschema:"assets that could not be sized"`
	Bytes        int64  `json:"bytes"`
	ClippedBytes int64  `json:"clipped_bytes"`
	Human        string `json:"human" jsonschema:"bytes in readable units"`
}

// ItemCoverage is the fraction of one item inside the requested area.
type ItemCoverage struct {
	Item     string  `json:"item"`
	Fraction float64 `json:"fraction"`
}

// EstimateDataSizeOut is the size estimate.
type EstimateDataSizeOut struct {
	PlaceResult
	ItemCount     int    `json:"item_count" jsonschema:"items sized"`
	Matched       *int   `json:"matched,omitempty" jsonschema:"items matching the search, when the catalog reports it"`
	HasMore       bool   `json:"has_more" jsonschema:"true when more items match than were sized (raise max_items, or see extrapolated_bytes)"`
	SizedAssets   int    `json:"sized_assets" jsonschema:"assets whose size is known and in the totals"`
	TotalBytes    int64  `json:"total_bytes" jsonschema:"sum over sized assets (0 with total_human unknown when no asset could be sized)"`
	TotalHuman    string `json:"total_human" jsonschema:"total_bytes in readable units, or unknown when no asset could be sized (see unknown_reason)"`
	UnknownReason string `json:"unknown_reason,omitempty" jsonschema:"why no asset could be sized, when none could"`
	AreaApplied   bool   `json:"area_applied" jsonschema:"true when bbox/intersects coverage scaled the raster assets"`
	ClippedBytes  int64  `json:"clipped_bytes" jsonschema:"total after scaling raster assets by coverage (equals total_bytes without an area)"`
	ClippedHuman  string `json:"clipped_human"`
	// Extrapolation to every matched item, when the catalog reports more
	// matches than were sized.
	ExtrapolatedBytes  *int64           `json:"extrapolated_bytes,omitempty" jsonschema:"estimate for all matched items: the sized items' average (clipped when an area applied) × matched; see extrapolation_basis"`
	ExtrapolatedHuman  string           `json:"extrapolated_human,omitempty"`
	ExtrapolationBasis string           `json:"extrapolation_basis,omitempty" jsonschema:"how extrapolated_bytes was computed and what it assumes"`
	Coverage           []ItemCoverage   `json:"coverage" jsonschema:"per item: fraction of its footprint inside the requested area"`
	ByCollection       []SizeTotal      `json:"by_collection"`
	ByAssetKey         []SizeTotal      `json:"by_asset_key"`
	ByMethod           []SizeTotal      `json:"by_method"`
	Assets             []SizedAsset     `json:"assets" jsonschema:"each sized asset with its method (capped; see assets_omitted)"`
	AssetsOmitted      int              `json:"assets_omitted" jsonschema:"sized assets not listed in assets (they are in every total)"`
	NotSized           []UnsizedAsset   `json:"not_sized" jsonschema:"assets that could not be sized, with the reason (capped; see not_sized_count)"`
	NotSizedCount      int              `json:"not_sized_count"`
	Copies             []UnsizedAsset   `json:"copies" jsonschema:"assets left out of the totals because they hold the same band as an asset that is counted, in another format (e.g. red-jp2 of red); capped, see copies_count. Give asset_keys to count particular files"`
	CopiesCount        int              `json:"copies_count"`
	LeftOut            []LeftOutRole    `json:"left_out" jsonschema:"assets not sized because they are not data (by role: thumbnail, overview, tiles, metadata; or rendered on request by a tiler); asset_keys sizes them"`
	Notes              []string         `json:"notes"`
	Warnings           []string         `json:"warnings"`
	Catalogs           []CatalogOutcome `json:"catalogs,omitempty" jsonschema:"several catalogs: each one's outcome (an acquisition several hold is sized once)"`
	Sources            []ItemProvenance `json:"sources,omitempty" jsonschema:"several catalogs: each item sized, its catalog and its copies elsewhere"`
}

// LeftOutRole counts the assets of one role left out of the sizes.
type LeftOutRole struct {
	Role   string   `json:"role"`
	Assets int      `json:"assets"`
	Keys   []string `json:"keys" jsonschema:"their asset keys"`
}

const (
	maxListedSizedAssets   = 100
	maxListedUnsizedAssets = 50
)

// EstimateDataSize is the estimate_data_size tool.
func EstimateDataSize() Tool {
	return define(&mcp.Tool{
		Name:  "estimate_data_size",
		Title: "Estimate data size",
		Description: "Bytes a search's data assets hold (file:size, else dtype × shape, else HEAD; aoi clips rasters), per " +
			"asset key and method, extrapolated to all matches.\n" +
			`Example: {"collections":["sentinel-2-l2a"],"aoi":[11,46,11.5,46.5],"asset_keys":["red","nir"],"max_items":5}`,
		Annotations: readOnlyAnnotations("Estimate data size"),
	}, true, estimateDataSize).withAliases(areaAliases)
}

// assetJob is one asset on its way to a size.
type assetJob struct {
	item, collection, key string
	mediaType             string
	bands                 string // the band names it holds, for spotting copies; "" when unknown
	href                  string
	raster                bool
	coverage              *float64
	bytes                 int64
	method                string
	reason                string // why it could not be sized; empty when sized
	kind                  string // the reason in a few words, for the summary
	copyOf                string // key of the asset counted instead of this copy
	probe                 *headProbe
}

func estimateDataSize(ctx context.Context, c *Call, in EstimateDataSizeIn) (EstimateDataSizeOut, string, error) {
	tool := c.Tool
	fail := failWith[EstimateDataSizeOut]()
	keys, err := in.AssetKeys.Strings("asset_keys")
	if err != nil {
		return fail(err)
	}
	params, err := in.AreaSearch.params(in.Limit)
	if err != nil {
		return fail(err)
	}
	cloud, err := newCloudFilter(in.MaxCloudCover)
	if err != nil {
		return fail(err)
	}
	maxItems, budgetNote, err := maxItemsArg(in.MaxItems, params.Limit, c.Deps.Limits,
		"the estimate extrapolates from the items it sized to every match")
	if err != nil {
		return fail(err)
	}
	out := EstimateDataSizeOut{Coverage: []ItemCoverage{}, ByCollection: []SizeTotal{}, ByAssetKey: []SizeTotal{}, ByMethod: []SizeTotal{},
		Assets: []SizedAsset{}, NotSized: []UnsizedAsset{}, Copies: []UnsizedAsset{}, LeftOut: []LeftOutRole{}, Notes: []string{}, Warnings: []string{}}
	if budgetNote != "" {
		out.Notes = append(out.Notes, budgetNote)
	}
	out.Warnings = append(out.Warnings, paramWarnings(params)...)
	client := c.Catalog.Client
	if c.Federation == nil {
		// Over several catalogs each one is checked in its own branch.
		warnings, notes, err := searchSupportWarnings(ctx, tool, client, &params)
		if err != nil {
			return fail(err)
		}
		out.Warnings = append(out.Warnings, warnings...)
		out.Notes = append(out.Notes, notes...)
	}

	area, noArea := requestedArea(params)
	if noArea != "" {
		out.Notes = append(out.Notes, noArea+": sizes are not clipped")
	}

	switch {
	case cloud != nil && c.Federation != nil:
		cloud.applyFederated(&params)
	case cloud != nil:
		if err := cloud.apply(ctx, client, &params); err != nil {
			return fail(explainSearchRefusal(ctx, c, tool, err, params, out.Warnings))
		}
	}
	sent := params
	if sent.Limit == 0 {
		sent.Limit = maxItems
	}
	wanted := map[string]bool{}
	for _, k := range keys {
		wanted[k] = true
	}
	seenKeys := map[string]bool{}
	sz := sizer{area: area, wanted: wanted, seenKeys: seenKeys, metadataOnly: in.ForceMetadataOnly,
		offline: offlineAssets(c.Catalog), catalogHost: c.Catalog.Host}
	var jobs []*assetJob
	prog := newProgress(c)
	ctx = withProgress(ctx, prog) // probeSizes reports each HEAD
	pages, pageFailed := 0, false
	var seen seenInItems // what the items showed, for names the catalog ignored
	if c.Federation != nil {
		fjobs, failed, err := sizeFederated(ctx, c, tool, params, maxItems, &sz, &out)
		if err != nil {
			return fail(err)
		}
		jobs, pageFailed = fjobs, failed
		if cloud != nil {
			out.Notes = append(out.Notes, cloud.noteText())
		}
		for _, k := range keys {
			if !seenKeys[k] && out.ItemCount > 0 {
				out.Warnings = append(out.Warnings, fmt.Sprintf("asset key %q is on none of the items (call get_collection for the item_assets keys)", k))
			}
		}
		return finishEstimate(ctx, c, in, client, jobs, &sz, area, cloud, pageFailed, &out)
	}
	search := client.Search(sent, stacclient.SearchLimits{MaxItems: maxItems})
	for page, err := range search.Pages(ctx) {
		if err != nil {
			if !pageFailureKept(ctx, pages, out.ItemCount) {
				return fail(explainSearchRefusal(ctx, c, tool, err, params, out.Warnings))
			}
			pageFailed = true
			out.Warnings = append(out.Warnings, pageFailureWarning(tool, pages, out.ItemCount, err))
			break
		}
		pages++
		items := cloud.keep(page.Items) // as the catalog would have: max_items counted before this
		for i := range items {
			seen.add(&items[i])
			jobs = append(jobs, sz.item(&out, &items[i])...)
		}
		prog.step(ctx, 0, "estimate_data_size: search page %d read, %d of at most %d item(s) so far", pages, out.ItemCount, maxItems)
	}
	if n, ok := search.Matched(); ok {
		out.Matched = &n
	}
	if cloud != nil {
		out.Notes = append(out.Notes, cloud.noteText())
	}
	out.Notes = append(out.Notes, unusableMatchedNotes(search)...)
	out.HasMore = pageFailed || search.Position() != nil
	for _, k := range keys {
		if !seenKeys[k] && out.ItemCount > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf("asset key %q is on none of the items (call get_collection for the item_assets keys)", k))
		}
	}
	ignored, emptyNotes := ignoredSearchArgsSeen(ctx, c, params, seen, out.ItemCount)
	out.Warnings = append(out.Warnings, ignored...)
	out.Notes = append(out.Notes, emptyNotes...)
	return finishEstimate(ctx, c, in, client, jobs, &sz, area, cloud, pageFailed, &out)
}

// finishEstimate probes, tallies and extrapolates the sizes of the items
// the search returned.
func finishEstimate(ctx context.Context, c *Call, in EstimateDataSizeIn, client *stacclient.Client, jobs []*assetJob, sz *sizer, area *footprint.Area,
	cloud *cloudFilter, pageFailed bool, outp *EstimateDataSizeOut) (EstimateDataSizeOut, string, error) {
	out := *outp
	if note := bboxFallbackNote(sz.bboxMeasured); note != "" {
		out.Notes = append(out.Notes, note)
	}
	probeJobs(ctx, client, jobs, &out)
	tally(jobs, area != nil, &out)
	extrapolate(&out, pageFailed)
	if cloud != nil && cloud.clientSide && out.ExtrapolatedBytes != nil {
		out.ExtrapolationBasis += "; matched counts items before max_cloud_cover was applied here, so this is an upper bound"
	}
	out.LeftOut = sz.leftOutRoles()
	if !in.PerItem {
		// The breakdown per item and asset is what made the text long (15 KB
		// for five Sentinel-2 items); the totals above carry the answer.
		if listed := len(out.Coverage) + len(out.Assets) + len(out.NotSized) + len(out.Copies); listed > 0 {
			out.Notes = append(out.Notes, "per_item: true lists each item's assets (sized, not sized, copies) and coverage")
		}
		out.Coverage, out.Assets, out.NotSized, out.Copies, out.AssetsOmitted = []ItemCoverage{}, []SizedAsset{}, []UnsizedAsset{}, []UnsizedAsset{}, 0
	}
	return out, estimateText(out), nil
}

// leftOutRoles lists the assets left out as not data, by role.
func (s *sizer) leftOutRoles() []LeftOutRole {
	out := []LeftOutRole{}
	for _, role := range append(slices.Clone(sizing.NonDataRoles), sizing.RoleRendered) {
		if keys := s.leftOut[role]; len(keys) > 0 {
			out = append(out, LeftOutRole{Role: role, Assets: s.leftOutN[role], Keys: keys})
		}
	}
	return out
}

// sizer turns items into sizing jobs.
type sizer struct {
	area         *footprint.Area
	bboxMeasured []string        // footprints measured by their bbox
	wanted       map[string]bool // asset_keys; empty means every asset
	seenKeys     map[string]bool // every key seen on any item, for the unknown-key warning
	metadataOnly bool
	offline      bool                // asset hosts other than the catalog's are not contacted (the demo)
	catalogHost  string              // host:port of the catalog
	leftOut      map[string][]string // role → distinct keys of the assets left out as not data
	leftOutN     map[string]int      // role → assets left out
}

// Reasons an asset could not be sized, in a few words, for the summary.
const (
	unsizedNoHTTP       = "have no size metadata and a non-HTTP href (s3:// and the like)"
	unsizedMetadataOnly = "have no size metadata (force_metadata_only sends no HEAD)"
	unsizedOffline      = "are on internet hosts, which the offline demo catalog does not contact"
	unsizedHeadFailed   = "failed their HEAD request"
	unsizedNoLength     = "got no Content-Length from HEAD"
	unsizedHeadLimit    = "were over the HEAD limit"
	unsizedDeadline     = "were not probed before the tool deadline"
	unsizedRendered     = "are rendered on request by a tiler, which is not asked"
)

// item counts one item and returns the jobs for its wanted assets: sized
// from metadata when it can be, otherwise queued for a HEAD probe or marked
// unsized with the reason; copies of a band are marked as such.
func (s *sizer) item(out *EstimateDataSizeOut, it *stacclient.Item) []*assetJob {
	out.ItemCount++
	var cov *float64
	if s.area != nil {
		if o, ok := itemOverlap(s.area, it); ok {
			f := round(o.FootprintFraction, 3) // the measure is not more precise; 0.35, not 0.34999999999999987
			cov = &f
			if o.BBoxFallback {
				s.bboxMeasured = append(s.bboxMeasured, it.ID)
			}
			out.Coverage = append(out.Coverage, ItemCoverage{Item: it.ID, Fraction: f})
		} else {
			out.Notes = append(out.Notes, fmt.Sprintf("item %s has no polygon footprint or bbox: its assets are counted whole", it.ID))
		}
	}
	var jobs []*assetJob
	for _, key := range orderedAssetKeys(it.Assets) {
		s.seenKeys[key] = true
		if len(s.wanted) > 0 && !s.wanted[key] {
			continue
		}
		a := it.Assets[key]
		if role := sizing.NonDataRole(a); role != "" && len(s.wanted) == 0 {
			if s.leftOut == nil {
				s.leftOut, s.leftOutN = map[string][]string{}, map[string]int{}
			}
			if !slices.Contains(s.leftOut[role], key) {
				s.leftOut[role] = append(s.leftOut[role], key)
			}
			s.leftOutN[role]++
			continue
		}
		job := &assetJob{item: it.ID, collection: it.Collection, key: key, mediaType: a.Type, bands: sizing.BandNames(a.Extra),
			href: a.Href, raster: sizing.IsRaster(a)}
		if job.raster {
			job.coverage = cov
		}
		switch n, method, ok := sizing.MetadataSize(a, it.Properties); {
		case ok:
			job.bytes, job.method = n, method
		case s.metadataOnly:
			job.reason, job.kind = "no file:size or raster band data types × proj:shape, and force_metadata_only skips HEAD", unsizedMetadataOnly
		case sizing.RenderedHref(a.Href):
			job.reason, job.kind = "a tiler renders it on request (not a file): not asked for a size", unsizedRendered
		case !sizing.Headable(a.Href):
			job.reason, job.kind = fmt.Sprintf("no size metadata, and href %q cannot be probed over HTTP", trimText(a.Href, 80)), unsizedNoHTTP
		case s.offline && !s.reachableOffline(a.Href):
			job.reason, job.kind = fmt.Sprintf("not probed: the demo catalog works offline, and this asset is on %s, a host on the internet", hostOf(a.Href)), unsizedOffline
		default:
			job.probe = &headProbe{href: a.Href}
		}
		jobs = append(jobs, job)
	}
	if len(s.wanted) == 0 {
		markCopies(jobs) // asset_keys names files on purpose: count each one
	}
	return jobs
}

// reachableOffline reports whether an asset host can be reached without a
// network: the catalog's own in-process server, or another loopback host.
func (s *sizer) reachableOffline(href string) bool {
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	if u.Host == s.catalogHost {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
}

// hostOf is an href's host, or the href itself when it has none.
func hostOf(href string) string {
	if u, err := url.Parse(href); err == nil && u.Host != "" {
		return u.Host
	}
	return trimText(href, 80)
}

// extrapolate scales the sized items' average to every matched item, and
// says on what basis; or says that it cannot.
func extrapolate(out *EstimateDataSizeOut, pageFailed bool) {
	if !out.HasMore {
		return
	}
	switch {
	case pageFailed && (out.Matched == nil || *out.Matched <= out.ItemCount):
		return // the failed page's warning says what the totals cover
	case out.Matched == nil || *out.Matched <= out.ItemCount:
		out.Notes = append(out.Notes, fmt.Sprintf("only the first %d matching items were sized and the catalog did not report how many match, "+
			"so the totals cover those items only; raise max_items for more", out.ItemCount))
		return
	case out.SizedAssets == 0:
		return // nothing to scale: unknown_reason says why
	}
	basis, what := out.TotalBytes, "total"
	if out.AreaApplied {
		basis, what = out.ClippedBytes, "clipped (inside the area)"
	}
	perItem := float64(basis) / float64(out.ItemCount)
	n := int64(perItem*float64(*out.Matched) + 0.5)
	out.ExtrapolatedBytes, out.ExtrapolatedHuman = &n, humanBytes(n)
	out.ExtrapolationBasis = fmt.Sprintf("the %d sized item(s) average %s %s per item; × %d matched items = %s, assuming the other items hold the same assets at the same sizes",
		out.ItemCount, humanBytes(int64(perItem+0.5)), what, *out.Matched, humanBytes(n))
	if out.NotSizedCount > 0 {
		out.ExtrapolationBasis += "; a lower bound, like the totals, because some assets could not be sized"
	}
}

// probeJobs runs the HEAD probes (bounded in number) and records results.
func probeJobs(ctx context.Context, client *stacclient.Client, jobs []*assetJob, out *EstimateDataSizeOut) {
	var probes []*headProbe
	skipped := 0
	for _, j := range jobs {
		if j.probe == nil || j.copyOf != "" {
			continue
		}
		if len(probes) >= sizing.MaxHeadProbes {
			j.reason, j.kind = fmt.Sprintf("not probed: at most %d HEAD requests per call", sizing.MaxHeadProbes), unsizedHeadLimit
			j.probe = nil
			skipped++
			continue
		}
		probes = append(probes, j.probe)
	}
	if skipped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d assets were not probed (HEAD limit %d per call); narrow asset_keys or max_items", skipped, sizing.MaxHeadProbes))
	}
	probeSizes(ctx, client, probes)
	for _, j := range jobs {
		if j.probe == nil || j.copyOf != "" {
			continue
		}
		if j.probe.reason != "" {
			j.reason, j.kind = j.probe.reason, j.probe.kind
		} else {
			j.bytes, j.method = j.probe.bytes, sizing.MethodHead
		}
		j.probe = nil
	}
}

// tally fills totals, the asset lists and the notes from finished jobs.
func tally(jobs []*assetJob, areaGiven bool, out *EstimateDataSizeOut) {
	byCollection, byKey, byMethod := map[string]*SizeTotal{}, map[string]*SizeTotal{}, map[string]*SizeTotal{}
	add := func(m map[string]*SizeTotal, name string, j *assetJob, clipped int64) {
		t := m[name]
		if t == nil {
			t = &SizeTotal{Name: name}
			m[name] = t
		}
		if j.reason != "" {
			t.Unsized++
			return
		}
		t.Assets++
		t.Bytes += j.bytes
		t.ClippedBytes += clipped
	}
	unsizedKinds := map[string]int{}
	for _, j := range jobs {
		if j.copyOf != "" {
			out.CopiesCount++
			if len(out.Copies) < maxListedUnsizedAssets {
				out.Copies = append(out.Copies, UnsizedAsset{Item: j.item, Key: j.key,
					Reason: fmt.Sprintf("the same band as %s, in another format (%s): counted once, as %s", j.copyOf, orDash(j.mediaType), j.copyOf)})
			}
			continue
		}
		if j.reason != "" {
			unsizedKinds[j.kind]++
		}
		clipped := j.bytes
		if j.reason == "" && j.coverage != nil {
			clipped = int64(float64(j.bytes)**j.coverage + 0.5)
			out.AreaApplied = true
		}
		add(byCollection, orDash(j.collection), j, clipped)
		add(byKey, j.key, j, clipped)
		if j.reason != "" {
			out.NotSizedCount++
			if len(out.NotSized) < maxListedUnsizedAssets {
				out.NotSized = append(out.NotSized, UnsizedAsset{Item: j.item, Key: j.key, Reason: j.reason})
			}
			add(byMethod, sizing.MethodUnknown, j, 0)
			continue
		}
		add(byMethod, j.method, j, clipped)
		out.SizedAssets++
		out.TotalBytes += j.bytes
		out.ClippedBytes += clipped
		if len(out.Assets) < maxListedSizedAssets {
			sa := SizedAsset{Item: j.item, Key: j.key, Method: j.method, Bytes: j.bytes, ClippedBytes: clipped}
			if j.coverage != nil {
				f := *j.coverage
				sa.Coverage = &f
			}
			out.Assets = append(out.Assets, sa)
		} else {
			out.AssetsOmitted++
		}
	}
	out.ByCollection, out.ByAssetKey, out.ByMethod = sortedTotals(byCollection), sortedTotals(byKey), sortedTotals(byMethod)
	out.TotalHuman, out.ClippedHuman = humanBytes(out.TotalBytes), humanBytes(out.ClippedBytes)
	switch {
	case out.SizedAssets == 0 && out.NotSizedCount > 0:
		out.TotalHuman, out.ClippedHuman = sizeUnknown, sizeUnknown
		out.UnknownReason = fmt.Sprintf("none of the %d asset(s) could be sized: %s", out.NotSizedCount, summarizeKinds(unsizedKinds))
	case out.NotSizedCount > 0:
		out.Notes = append(out.Notes, fmt.Sprintf("%d asset(s) could not be sized and are not in the totals (%s): the totals are a lower bound (each is listed under not sized, with its reason)",
			out.NotSizedCount, summarizeKinds(unsizedKinds)))
	}
	if out.CopiesCount > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d asset(s) hold the same band as another asset in another format (e.g. %s of %s) and are counted once (see copies); give asset_keys to count particular files",
			out.CopiesCount, out.Copies[0].Key, copyOfName(jobs, out.Copies[0])))
	}
	if out.AssetsOmitted > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d sized assets are not listed in assets (limit %d) but are in every total", out.AssetsOmitted, maxListedSizedAssets))
	}
	if byMethod[sizing.MethodDtypeShape] != nil && byMethod[sizing.MethodDtypeShape].Assets > 0 {
		out.Notes = append(out.Notes, "raster_dtype_shape sizes are uncompressed; files on storage are usually smaller")
	}
	if areaGiven && !out.AreaApplied && len(jobs) > 0 {
		out.Notes = append(out.Notes, "no raster asset could be scaled by the area, so clipped_bytes equals total_bytes")
	}
}

// sortedTotals orders subtotals by bytes, largest first.
func sortedTotals(m map[string]*SizeTotal) []SizeTotal {
	out := make([]SizeTotal, 0, len(m))
	for _, t := range m {
		t.Human = humanBytes(t.Bytes)
		if t.Assets == 0 && t.Unsized > 0 {
			t.Human = sizeUnknown
		}
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// sizeUnknown is total_human when no asset could be sized: "0 B" would
// read as an answer.
const sizeUnknown = "unknown"

// summarizeKinds words the counts of unsized reasons, most common first.
func summarizeKinds(kinds map[string]int) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if kinds[names[i]] != kinds[names[j]] {
			return kinds[names[i]] > kinds[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	return strings.Join(parts, ", ")
}

// copyOfName is the key a listed copy was counted as.
func copyOfName(jobs []*assetJob, c UnsizedAsset) string {
	for _, j := range jobs {
		if j.item == c.Item && j.key == c.Key {
			return j.copyOf
		}
	}
	return ""
}

// estimateText is the whole estimate: totals, extrapolation, subtotals,
// coverage, every listed asset, every unsized one with its reason and every
// copy left out.
func estimateText(out EstimateDataSizeOut) string {
	var b strings.Builder
	switch {
	case out.UnknownReason != "":
		fmt.Fprintf(&b, "Size unknown over %d item(s)", out.ItemCount)
	case out.NotSizedCount > 0:
		fmt.Fprintf(&b, "At least %s (%d bytes) over %d item(s)", out.TotalHuman, out.TotalBytes, out.ItemCount)
	default:
		fmt.Fprintf(&b, "%s (%d bytes) over %d item(s)", out.TotalHuman, out.TotalBytes, out.ItemCount)
	}
	if out.Matched != nil {
		fmt.Fprintf(&b, " (of %d matched)", *out.Matched)
	}
	if out.AreaApplied {
		fmt.Fprintf(&b, "; %s (%d bytes) within the requested area", out.ClippedHuman, out.ClippedBytes)
	}
	if out.UnknownReason != "" {
		fmt.Fprintf(&b, ": %s", out.UnknownReason)
	}
	b.WriteString(".\n")
	if out.ExtrapolatedBytes != nil {
		fmt.Fprintf(&b, "About %s (%d bytes) for all %d matched items (%s).\n",
			out.ExtrapolatedHuman, *out.ExtrapolatedBytes, *out.Matched, out.ExtrapolationBasis)
	}
	subtotals := func(label string, totals []SizeTotal) {
		for _, t := range totals {
			fmt.Fprintf(&b, "- %s %s: %s (%d bytes", label, t.Name, t.Human, t.Bytes)
			if out.AreaApplied {
				fmt.Fprintf(&b, ", %d in the area", t.ClippedBytes)
			}
			fmt.Fprintf(&b, ") in %d asset(s)", t.Assets)
			if t.Unsized > 0 {
				fmt.Fprintf(&b, ", %d not sized", t.Unsized)
			}
			b.WriteString("\n")
		}
	}
	subtotals("collection", out.ByCollection)
	subtotals("asset", out.ByAssetKey)
	subtotals("method", out.ByMethod)
	if len(out.Coverage) > 0 {
		parts := make([]string, len(out.Coverage))
		for i, c := range out.Coverage {
			parts[i] = c.Item + " " + formatNumber(c.Fraction)
		}
		fmt.Fprintf(&b, "Coverage (fraction of each item inside the area): %s\n", strings.Join(parts, ", "))
	}
	if len(out.Assets) > 0 {
		b.WriteString("Sized assets (item: key bytes method [clipped bytes at coverage]):\n")
		writeByItem(&b, len(out.Assets), func(i int) (string, string) {
			a := out.Assets[i]
			s := fmt.Sprintf("%s %d %s", a.Key, a.Bytes, a.Method)
			if a.Coverage != nil {
				s += fmt.Sprintf(" [%d at %s]", a.ClippedBytes, formatNumber(*a.Coverage))
			}
			return a.Item, s
		})
		if out.AssetsOmitted > 0 {
			fmt.Fprintf(&b, "(%d more sized assets are counted in the totals but not listed)\n", out.AssetsOmitted)
		}
	}
	unsized := func(title string, list []UnsizedAsset, count int) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s (%d):\n", title, count)
		writeByItem(&b, len(list), func(i int) (string, string) {
			return list[i].Item, list[i].Key + " (" + list[i].Reason + ")"
		})
		if n := count - len(list); n > 0 {
			fmt.Fprintf(&b, "(%d more not listed)\n", n)
		}
	}
	if len(out.LeftOut) > 0 {
		parts := make([]string, len(out.LeftOut))
		for i, l := range out.LeftOut {
			parts[i] = fmt.Sprintf("%s ×%d (%s)", l.Role, l.Assets, strings.Join(l.Keys, ", "))
		}
		fmt.Fprintf(&b, "Left out as not data: %s; name them in asset_keys to size them.\n", strings.Join(parts, "; "))
	}
	unsized("Not sized", out.NotSized, out.NotSizedCount)
	unsized("Copies left out of the totals", out.Copies, out.CopiesCount)
	writeLines(&b, "Warning: ", out.Warnings)
	if len(out.Sources) > 0 {
		parts := make([]string, len(out.Sources))
		for i, p := range out.Sources {
			parts[i] = p.ID + " from " + p.Catalog
			if len(p.AlsoIn) > 0 {
				parts[i] += " (" + alsoInText(p.AlsoIn, p.Kept) + ")"
			}
		}
		b.WriteString("Items: " + strings.Join(parts, "; ") + "\n")
	}
	if len(out.Catalogs) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + "\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}

// writeByItem writes n entries grouped by item, one line per item, in the
// order the items first appear.
func writeByItem(b *strings.Builder, n int, entry func(i int) (item, text string)) {
	var order []string
	byItem := map[string][]string{}
	for i := range n {
		item, text := entry(i)
		if _, seen := byItem[item]; !seen {
			order = append(order, item)
		}
		byItem[item] = append(byItem[item], text)
	}
	for _, item := range order {
		fmt.Fprintf(b, "- %s: %s\n", item, strings.Join(byItem[item], "; "))
	}
}
