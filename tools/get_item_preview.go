package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/federation"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// GetItemPreviewIn names an item and, optionally, which asset to show.
type GetItemPreviewIn struct {
	CatalogArg
	CollectionID string `json:"collection_id"`
	ItemID       string `json:"item_id" jsonschema:"from search_items"`
	AssetKey     string `json:"asset_key,omitempty" jsonschema:"default: the thumbnail, else the overview"`
}

// GetItemPreviewOut says which image was shown, or why none could be.
type GetItemPreviewOut struct {
	imageOutput
	Available    bool             `json:"available" jsonschema:"true when the result carries the preview as image content"`
	ItemID       string           `json:"item_id"`
	Collection   string           `json:"collection"`
	AssetKey     string           `json:"asset_key,omitempty" jsonschema:"the asset shown"`
	Href         string           `json:"href,omitempty" jsonschema:"the asset's href as the catalog gives it (never with a signing token)"`
	Image        *ImageInfo       `json:"image,omitempty" jsonschema:"the image content sent: re-encoded, at most 512 px on its long side and about 150 kB"`
	SourceFormat string           `json:"source_format,omitempty" jsonschema:"format of the fetched asset: jpeg, png, webp, gif or tiff"`
	SourceWidth  int              `json:"source_width,omitempty"`
	SourceHeight int              `json:"source_height,omitempty"`
	SourceBytes  int              `json:"source_bytes,omitempty"`
	Reason       string           `json:"reason,omitempty" jsonschema:"why no preview could be shown (when available is false)"`
	Tried        []PreviewAttempt `json:"tried" jsonschema:"the preview assets considered, in order, with what happened to each"`
	Notes        []string         `json:"notes"`
	Copy         *PreviewCopy     `json:"copy,omitempty" jsonschema:"the scene's copy in another catalog whose preview is shown, when the item's own could not be read here"`
}

// PreviewAttempt is one asset considered as the preview.
type PreviewAttempt struct {
	AssetKey string `json:"asset_key"`
	Href     string `json:"href"`
	Outcome  string `json:"outcome" jsonschema:"shown, or why not"`
}

// Limits of a preview.
const (
	// previewFetchBytes caps the asset download: four times the largest
	// thumbnail seen in the large catalogs, far below an overview COG.
	previewFetchBytes = 16 << 20
	// previewAttempts bounds the assets tried when one fails.
	previewAttempts = 3
)

// GetItemPreview is the get_item_preview tool.
func GetItemPreview() Tool {
	return define(&mcp.Tool{
		Name:  "get_item_preview",
		Title: "Item preview image",
		Description: "An item's thumbnail or overview as image content (512 px, 150 kB at most); without one, " +
			"why not.\n" +
			`Example: {"collection_id":"sentinel-2-l2a","item_id":"S2B_24MUA_20250731_0_L2A"}`,
		Annotations: readOnlyAnnotations("Item preview image"),
	}, true, getItemPreview)
}

func getItemPreview(ctx context.Context, c *Call, in GetItemPreviewIn) (GetItemPreviewOut, string, error) {
	tool := c.Tool
	fail := failWith[GetItemPreviewOut]()
	ref, err := parseItemRef(in.CollectionID, in.ItemID)
	if err != nil {
		return fail(err)
	}
	item, err := ref.fetch(ctx, c, tool)
	if err != nil {
		return fail(err)
	}
	out := GetItemPreviewOut{ItemID: item.ID, Collection: orDash(item.Collection), Tried: []PreviewAttempt{}, Notes: []string{}}
	candidates, err := previewCandidates(item, in.AssetKey)
	if err != nil {
		return fail(err)
	}
	if len(candidates) == 0 {
		out.Reason = fmt.Sprintf("item %s has no thumbnail or overview asset (assets: %s)", item.ID, strings.Join(orderedAssetKeys(item.Assets), ", "))
		return out, previewText(out, item), nil
	}

	if err := showPreview(ctx, c, item, candidates, "", &out); err != nil {
		return fail(err)
	}
	if !out.Available && strings.TrimSpace(in.AssetKey) == "" {
		if err := previewFromCopy(ctx, c, item, &out); err != nil {
			return fail(err)
		}
	}
	if !out.Available {
		out.Reason = "no preview asset could be shown: " + attemptsSummary(out.Tried)
	}
	return out, previewText(out, item), nil
}

// PreviewCopy is the scene's copy in another catalog whose preview was
// shown because the item's own could not be read here.
type PreviewCopy struct {
	Catalog    string `json:"catalog"`
	ID         string `json:"id"`
	Collection string `json:"collection,omitempty"`
	Evidence   string `json:"evidence" jsonschema:"why it is the same scene"`
}

// previewFromCopy looks for the scene in the other catalogs the operator
// put together (the call's, the groups', the presets that hold the
// product: federation.CopySources) and shows its copy's preview, saying
// so; the notes say where it looked when none could be shown.
func previewFromCopy(ctx context.Context, c *Call, item *stacclient.Item, out *GetItemPreviewOut) error {
	var others []*Catalog
	if c.Federation != nil {
		others = c.Federation.members
	}
	sources := federation.CopySources(ctx, c.Deps.Catalogs, c.Catalog, others, item)
	if len(sources) == 0 {
		return ctx.Err()
	}
	members := make([]federation.Member, len(sources))
	for i, s := range sources {
		members[i] = federation.MemberOf(s)
	}
	found, tried, _ := federation.FindReadableCopy(ctx, item, federation.MemberOf(c.Catalog), members)
	if err := ctx.Err(); err != nil {
		return err
	}
	if found == nil {
		out.Notes = append(out.Notes, "no readable copy of the scene in another catalog: "+strings.Join(tried, "; "))
		return nil
	}
	var cat *Catalog
	for i, m := range members {
		if m.Name == found.Member.Name {
			cat = sources[i]
		}
	}
	candidates, _ := previewCandidates(found.Item, "") // no asset key: never an error
	if len(candidates) == 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%s has the scene as %s, with no preview asset", found.Member.Name, found.Item.ID))
		return nil
	}
	mc := *c
	mc.Catalog = cat
	if err := showPreview(ctx, &mc, found.Item, candidates, found.Member.Name+": ", out); err != nil {
		return err
	}
	if out.Available {
		out.Copy = &PreviewCopy{Catalog: found.Member.Name, ID: found.Item.ID, Collection: found.Item.Collection, Evidence: found.Evidence}
		out.Notes = append(out.Notes, fmt.Sprintf("the item's own preview assets could not be read here, so this is the preview of %s's copy %s (%s)",
			found.Member.Name, found.Item.ID, found.Evidence))
	}
	return nil
}

// showPreview tries item's candidates in order (at most previewAttempts
// fetched) and puts the first that shows into out; each attempt is added
// to out.Tried, its asset key prefixed with prefix (a copy's catalog).
func showPreview(ctx context.Context, c *Call, item *stacclient.Item, candidates []previewCandidate, prefix string, out *GetItemPreviewOut) error {
	// Hrefs as the catalog gives them, kept before signing: a signed href
	// carries a token, which never goes into a result.
	unsigned := map[string]string{}
	for key, a := range item.Assets {
		unsigned[key] = a.Href
	}
	signing, err := newAssetSigning(c, c.Deps.signing.isPlanetaryComputer(c.Catalog))
	if err != nil {
		return err
	}
	signing.sign(ctx, item)
	if signing.firstErr != nil {
		out.Notes = append(out.Notes, "Planetary Computer signing failed, so the preview was requested unsigned: "+signing.firstErr.Error())
	}

	tried := 0
	for _, cand := range candidates {
		attempt := PreviewAttempt{AssetKey: prefix + cand.key, Href: unsigned[cand.key], Outcome: cand.skip}
		if attempt.Outcome == "" && tried >= previewAttempts {
			attempt.Outcome = fmt.Sprintf("not tried: at most %d assets are fetched per call", previewAttempts)
		}
		href := assetHref(item, cand.key)
		if attempt.Outcome == "" && c.Catalog.Name == DemoCatalog && !sameHost(href, c.Catalog.URL) {
			attempt.Outcome = "not fetched: the demo catalog is offline by design, and this asset is on its original host " + orDash(hrefHost(href))
		}

		if attempt.Outcome != "" {
			out.Tried = append(out.Tried, attempt)
			continue
		}
		tried++
		pic, size, why, err := fetchPreview(ctx, c, href)
		if err != nil {
			return err // the call's deadline passed or it was cancelled
		}
		if why != "" {
			attempt.Outcome = why
			if localCatalogFile(c, unsigned[cand.key]) {
				attempt.Outcome += " (a local catalog serves only the files inside its folder that exist; open this one directly)"
			}
			out.Tried = append(out.Tried, attempt)
			continue
		}
		attempt.Outcome = "shown"
		out.Tried = append(out.Tried, attempt)
		out.Available, out.AssetKey, out.Href = true, cand.key, unsigned[cand.key]
		out.Image = &ImageInfo{MIMEType: pic.MIMEType, Width: pic.Width, Height: pic.Height, Bytes: len(pic.Data)}
		out.SourceFormat, out.SourceWidth, out.SourceHeight, out.SourceBytes = pic.SourceFormat, pic.SourceWidth, pic.SourceHeight, size
		out.content = &mcp.ImageContent{Data: pic.Data, MIMEType: pic.MIMEType}
		if pic.Stretch != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("16-bit values stretched for display: %d..%d mapped to black..white (2nd–98th percentile)",
				pic.Stretch.Low, pic.Stretch.High))
		}
		break
	}
	return nil
}

// previewCandidate is an asset that may be the preview, and why it would
// not be fetched (skip), when that is known before fetching.
type previewCandidate struct {
	key  string
	tier int
	kind int // media-type rank: decodable image, TIFF, unknown
	skip string
}

// previewKeys are asset keys that name a preview even without a role.
var previewKeys = []string{"thumbnail", "overview", "rendered_preview", "preview"}

// previewCandidates lists the item's preview assets in the order they are
// tried: role thumbnail, role overview, then the preview keys; within one
// tier, formats we decode before TIFF before unknown types. With assetKey,
// only that asset.
func previewCandidates(item *stacclient.Item, assetKey string) ([]previewCandidate, error) {
	if key := strings.TrimSpace(assetKey); key != "" {
		a, ok := item.Assets[key]
		if !ok {
			return nil, &stacclient.ParamError{Param: "asset_key", Got: assetKey, Reason: "the item has no such asset",
				Accepted: "one of the item's asset keys: " + strings.Join(orderedAssetKeys(item.Assets), ", ")}
		}
		kind, skip := previewKind(a)
		return []previewCandidate{{key: key, kind: kind, skip: skip}}, nil
	}
	var out []previewCandidate
	for key, a := range item.Assets {
		tier := -1
		switch {
		case slices.Contains(a.Roles, "thumbnail"):
			tier = 0
		case slices.Contains(a.Roles, "overview"):
			tier = 1
		case slices.Contains(previewKeys, key):
			tier = 2 + slices.Index(previewKeys, key)
		}
		if tier < 0 {
			continue
		}
		kind, skip := previewKind(a)
		out = append(out, previewCandidate{key: key, tier: tier, kind: kind, skip: skip})
	}
	slices.SortFunc(out, func(a, b previewCandidate) int {
		if a.tier != b.tier {
			return a.tier - b.tier
		}
		if (a.skip == "") != (b.skip == "") {
			if a.skip == "" {
				return -1
			}
			return 1
		}
		if a.kind != b.kind {
			return a.kind - b.kind
		}
		return strings.Compare(a.key, b.key)
	})
	return out, nil
}

// previewKind ranks an asset's media type (0 decodable image, 1 TIFF, 2
// unknown) and says why it cannot be shown at all, when its type or href
// already tell.
func previewKind(a stacclient.Asset) (int, string) {
	mt := strings.ToLower(strings.TrimSpace(a.Type))
	kind := 2
	switch {
	case strings.HasPrefix(mt, "image/png"), strings.HasPrefix(mt, "image/jpeg"), strings.HasPrefix(mt, "image/jpg"),
		strings.HasPrefix(mt, "image/webp"), strings.HasPrefix(mt, "image/gif"):
		kind = 0
	case strings.HasPrefix(mt, "image/tiff"):
		kind = 1
	case strings.HasPrefix(mt, "image/jp2"), strings.HasPrefix(mt, "image/jpx"), strings.HasPrefix(mt, "application/x.mrf"),
		strings.HasPrefix(mt, "application/x-hdf"), strings.HasPrefix(mt, "application/x-netcdf"):
		return 3, "skipped: " + mt + " is not a format this server decodes (PNG, JPEG, WebP, GIF, TIFF)"
	}
	u, err := url.Parse(strings.TrimSpace(a.Href))
	switch {
	case err != nil || a.Href == "":
		return kind, "skipped: the href is not a URL"
	case u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https":
		return kind, "skipped: " + u.Scheme + ":// hrefs cannot be fetched over HTTP"
	}
	return kind, ""
}

// fetchPreview fetches and converts one asset. why says what went wrong
// with this asset (the next may do better); err is returned only when the
// call itself is out of time or cancelled.
func fetchPreview(ctx context.Context, c *Call, href string) (pic *picture.Picture, size int, why string, err error) {
	body, err := c.Catalog.Client.FetchAsset(ctx, href, previewFetchBytes, "image/png, image/jpeg, image/webp, image/*;q=0.8, */*;q=0.1")
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, "", err
		}
		var se *stacclient.Error
		if errors.As(err, &se) && se.Kind == stacclient.KindTooLarge {
			return nil, 0, fmt.Sprintf("larger than the %s preview cap", humanBytes(previewFetchBytes)), nil
		}
		return nil, 0, "could not be fetched: " + headFailure(err), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, "", err // out of time: do not decode what nobody will receive
	}
	// Decoding is CPU- and memory-heavy: it takes a CPU slot, then
	// reserves the image's decoded pixels in the process's budget (read
	// from its header, before any pixel is decoded).
	w := c.Deps.work()
	release, err := w.cpuSlot(ctx)
	if err != nil {
		return nil, 0, "", err // the server is busy: the call fails, saying to retry
	}
	pic, err = picture.MakeContext(ctx, body.Body, picture.Options{Pixels: w.pixelBudget()})
	release()
	var tooLarge *picture.TooLargeError
	var overBudget *workbudget.TooLargeError
	var busy *workbudget.BusyError
	switch {
	case errors.As(err, &busy), err != nil && ctx.Err() != nil:
		return nil, 0, "", err
	case errors.As(err, &overBudget):
		return nil, len(body.Body), "refused before decoding: " + err.Error(), nil
	case errors.Is(err, picture.ErrUnknownFormat):
		return nil, len(body.Body), "not an image this server decodes" +
			bodyDetail(c, href, fmt.Sprintf(" (Content-Type %q, %s)", orDash(body.ContentType), humanBytes(int64(len(body.Body))))), nil
	case errors.As(err, &tooLarge):
		return nil, len(body.Body), "refused before decoding" + bodyDetail(c, href, ": "+err.Error()), nil
	case err != nil:
		return nil, len(body.Body), "could not be decoded" + bodyDetail(c, href, ": "+err.Error()), nil //nolint:nilerr // a preview that does not decode is reported in the result, as the cases above
	}
	return pic, len(body.Body), "", nil
}

// bodyDetail is detail (what a fetched body turned out to be: its type,
// size, dimensions or decoder error) when the caller may see it: over http
// (untrusted callers) nothing is said about an answer from another host
// than the catalog's, since an item's asset href can name any URL this
// server can reach and the detail would describe it.
func bodyDetail(c *Call, href, detail string) string {
	if c.Deps.Catalogs.UntrustedCallers() && !sameHost(href, c.Catalog.URL) {
		return " (what another host than the catalog's answered is not described to http clients)"
	}
	return detail
}

// localCatalogFile reports an href that is an absolute file path given by
// a local catalog served in-process (stacserver Options.AssetDir).
func localCatalogFile(c *Call, href string) bool {
	return filepath.IsAbs(href) && strings.HasSuffix(hrefHost(c.Catalog.URL), ".local."+inmemory.Domain)
}

// assetHref is an asset's href resolved against the item's self link (a
// relative href is relative to the item document); without a self link,
// FetchAsset resolves it against the catalog.
//
// A local catalog served in-process gives the files of its directory as
// paths on this machine (stacserver Options.AssetDir) and serves them at
// {self}/assets/{key}: that URL is what is fetched.
func assetHref(item *stacclient.Item, key string) string {
	href := strings.TrimSpace(item.Assets[key].Href)
	self := stacclient.FindLink(item.Links, "self")
	if self == nil {
		return href
	}
	base, err := url.Parse(self.Href)
	if err == nil && filepath.IsAbs(href) && strings.HasSuffix(base.Hostname(), ".local."+inmemory.Domain) {
		return strings.TrimSuffix(self.Href, "/") + "/assets/" + url.PathEscape(key)
	}
	ref, rerr := url.Parse(href)
	if err != nil || rerr != nil || !base.IsAbs() {
		return href
	}
	return base.ResolveReference(ref).String()
}

// sameHost reports whether href is on the host of base.
func sameHost(href, base string) bool {
	h, b := hrefHost(href), hrefHost(base)
	return h != "" && h == b
}

// hrefHost is an href's host, or "" when it has none.
func hrefHost(href string) string {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return ""
	}
	return u.Host
}

// attemptsSummary joins what happened to each asset.
func attemptsSummary(tried []PreviewAttempt) string {
	parts := make([]string, len(tried))
	for i, a := range tried {
		parts[i] = fmt.Sprintf("%s %s", a.AssetKey, a.Outcome)
	}
	return strings.Join(parts, "; ")
}

// previewText is the one-line description (plus notes), or why there is
// no preview and what to call instead.
func previewText(out GetItemPreviewOut, item *stacclient.Item) string {
	var b strings.Builder
	if out.Available {
		fmt.Fprintf(&b, "Preview of %s (%s) from asset %q (%s): %s (source %s %d×%d, %d bytes).",
			out.ItemID, out.Collection, out.AssetKey, out.Href, out.Image, out.SourceFormat, out.SourceWidth, out.SourceHeight, out.SourceBytes)
		if cp := out.Copy; cp != nil {
			fmt.Fprintf(&b, "\nShown from %s's copy %s (%s): %s.", cp.Catalog, cp.ID, cp.Collection, cp.Evidence)
		}
	} else {
		fmt.Fprintf(&b, "No preview image for %s (%s): %s. To see where the item lies, call map_items with %s.",
			out.ItemID, out.Collection, out.Reason, mapItemsArgsFor(item))
	}
	if len(out.Tried) > 0 {
		b.WriteString("\nTried:")
		for _, a := range out.Tried {
			fmt.Fprintf(&b, "\n- %s (%s): %s", a.AssetKey, a.Href, a.Outcome)
		}
	}
	for _, n := range out.Notes {
		b.WriteString("\nNote: " + n)
	}
	return b.String()
}

// mapItemsArgsFor is the map_items call that draws one item.
func mapItemsArgsFor(item *stacclient.Item) string {
	if item.Collection == "" {
		return fmt.Sprintf(`{"ids": [%q]}`, item.ID)
	}
	return fmt.Sprintf(`{"collections": [%q], "ids": [%q]}`, item.Collection, item.ID)
}
