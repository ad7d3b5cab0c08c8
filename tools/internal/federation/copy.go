package federation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/catalog"
)

// A scene whose data cannot be read here (Earth Search's Landsat, on
// requester-pays s3://) may have a copy that can (Planetary Computer's, on
// HTTPS): the pixel tools and previews look for it among the catalogs the
// operator put together, and say which copy they read.

// MaxCopySources bounds the catalogs searched for one scene's copy.
const MaxCopySources = 3

// MemberOf is a resolved catalog as the engine takes it.
func MemberOf(c *catalog.Catalog) Member {
	return Member{Name: memberName(c), Preset: presetOf(c), Host: c.Host, Client: c.Client}
}

// memberName is how results name a catalog: its preset or configured
// name, "demo", else its URL (credentials redacted) or path.
func memberName(c *catalog.Catalog) string {
	switch c.Name {
	case "":
		return c.Shown()
	case "local":
		return c.Ref
	}
	return c.Name
}

// presetOf is the preset a catalog is, named or by its URL ("" for any
// other).
func presetOf(c *catalog.Catalog) string {
	for _, p := range catalog.Presets() {
		if c.Name == p.Name || strings.TrimRight(p.URL, "/") == c.Key {
			return p.Name
		}
	}
	return ""
}

// CopySources are the catalogs where a scene of from may have another
// copy, in the order to search them: the other catalogs of the call
// (others), then those of the configured groups from belongs to, then,
// when from is a remote catalog, the presets the collection table lists
// for the scene's product (the embedded demo and local catalogs stay
// offline: only what the call or a group names is asked). At most
// MaxCopySources; from itself never. A reference that does not resolve is
// left out.
func CopySources(ctx context.Context, reg *catalog.Registry, from *catalog.Catalog, others []*catalog.Catalog, it *stacclient.Item) []*catalog.Catalog {
	var out []*catalog.Catalog
	seen := map[string]bool{from.Key: true}
	add := func(c *catalog.Catalog) {
		if c != nil && !seen[c.Key] && len(out) < MaxCopySources {
			seen[c.Key] = true
			out = append(out, c)
		}
	}
	for _, c := range others {
		add(c)
	}
	var refs []string
	for _, g := range reg.GroupsOf(from) {
		refs = append(refs, g.Members...)
	}
	if from.Label() == "" { // remote: its URL is its name
		refs = append(refs, PresetsHolding(FamilyID(presetOf(from), it.Collection))...)
	}
	for _, r := range refs {
		if len(out) >= MaxCopySources {
			break
		}
		if c, err := reg.Resolve(ctx, r); err == nil {
			add(c)
		}
	}
	return out
}

// FoundCopy is a readable copy of a scene in another catalog.
type FoundCopy struct {
	Member   Member
	Item     *stacclient.Item
	Evidence string // why it is the same scene (Match's words)
}

// FindReadableCopy searches sources, in order, for it's scene (as Match
// tells it) with data assets that can be read here, by its product's
// collection ids there, its footprint's bbox and its time within the
// product's tolerance. It returns the first such copy, or nil, what each
// source answered (for the result's notes), and the sources' failures
// joined (nil when none failed), so that a caller that fails for want of a
// copy keeps the upstream causes in its error.
func FindReadableCopy(ctx context.Context, it *stacclient.Item, from Member, sources []Member) (*FoundCopy, []string, error) {
	want := Identify(FamilyID(from.Preset, it.Collection), it)
	t, ok := it.Datetime()
	if !ok {
		return nil, []string{"the item has no datetime to look its scene up by"}, nil
	}
	window := GenericTolerance
	if want.kind == kindS2 {
		window = S2Tolerance
	}
	if want.kind == kindLandsat {
		window = 12 * time.Hour // the scene id's date; catalogs date the scene within it
	}
	var tried []string
	var errs []error
	for _, m := range sources {
		if ctx.Err() != nil {
			break
		}
		mapping, err := MapCollections(ctx, m, []string{it.Collection})
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", m.Name, err))
			errs = append(errs, err)
			continue
		}
		if len(mapping.IDs) == 0 {
			tried = append(tried, fmt.Sprintf("%s: no %s collection", m.Name, want.Family))
			continue
		}
		p := stacclient.SearchParams{Collections: mapping.IDs, Limit: 20,
			Datetime: t.Add(-window).UTC().Format(time.RFC3339) + "/" + t.Add(window).UTC().Format(time.RFC3339)}
		if len(it.BBox) >= 4 {
			p.BBox = slices.Clone(flat(it.BBox))
		} else if len(it.Geometry) > 0 {
			p.Intersects = it.Geometry
		}
		found, n, err := findIn(ctx, m, p, want)
		switch {
		case err != nil:
			tried = append(tried, fmt.Sprintf("%s: the search failed (%v)", m.Name, err))
			errs = append(errs, err)
		case found != nil:
			return found, tried, nil
		case n == 0:
			tried = append(tried, fmt.Sprintf("%s: no copy of the scene", m.Name))
		default:
			tried = append(tried, fmt.Sprintf("%s: its copy's data cannot be read here either", m.Name))
		}
	}
	return nil, tried, errors.Join(errs...)
}

// findIn searches one catalog: the first readable copy, or how many
// copies it has (unreadable ones).
func findIn(ctx context.Context, m Member, p stacclient.SearchParams, want Identity) (*FoundCopy, int, error) {
	copies := 0
	s := m.Client.Search(p, stacclient.SearchLimits{MaxItems: 40, MaxPages: 2})
	for item, err := range s.Items(ctx) {
		if err != nil {
			return nil, copies, err
		}
		id := Identify(FamilyID(m.Preset, item.Collection), item)
		ok, why := Match(want, id)
		if !ok {
			continue
		}
		copies++
		if AccessOf(item).Readable > 0 {
			return &FoundCopy{Member: m, Item: item, Evidence: why}, copies, nil
		}
	}
	return nil, copies, nil
}
