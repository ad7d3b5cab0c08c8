package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// GetCollectionIn names one collection.
type GetCollectionIn struct {
	CatalogArg
	CollectionID string `json:"collection_id" jsonschema:"e.g. sentinel-2-l2a"`
}

// ProviderInfo is a collection provider.
type ProviderInfo struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
	URL   string   `json:"url,omitempty"`
}

// ExtentInfo is a collection's extent: the first bbox and interval are the overall ones.
type ExtentInfo struct {
	BBox      [][]float64 `json:"bbox" jsonschema:"spatial extents [west,south,east,north]; the first is the overall one"`
	Intervals [][]string  `json:"intervals" jsonschema:"temporal intervals [start,end]; \"..\" is an open end"`
}

// ItemAssetInfo is the compact form of one item_assets entry.
type ItemAssetInfo struct {
	Key   string   `json:"key"`
	Title string   `json:"title,omitempty"`
	Type  string   `json:"type,omitempty"`
	Roles []string `json:"roles"`
}

// GetCollectionOut is a collection, compacted for a model.
type GetCollectionOut struct {
	ID             string          `json:"id"`
	Title          string          `json:"title,omitempty"`
	Description    string          `json:"description"`
	License        string          `json:"license,omitempty"`
	Extent         ExtentInfo      `json:"extent"`
	Providers      []ProviderInfo  `json:"providers"`
	Keywords       []string        `json:"keywords"`
	StacExtensions []string        `json:"stac_extensions"`
	Summaries      map[string]any  `json:"summaries" jsonschema:"the collection's summaries (value ranges and enumerations of item properties)"`
	ItemAssets     []ItemAssetInfo `json:"item_assets" jsonschema:"the assets every item has (from item_assets), with media type and roles"`
	KeyLinks       []KeyLink       `json:"key_links"`
}

// GetCollection is the get_collection tool.
func GetCollection() Tool {
	return define(&mcp.Tool{
		Name:  "get_collection",
		Title: "Get one collection",
		Description: "One collection: description, license, extent, providers, keywords, summaries, item_assets, key links.\n" +
			`Example: {"collection_id":"sentinel-2-l2a"}`,
		Annotations: readOnlyAnnotations("Get one collection"),
	}, true, getCollection)
}

func getCollection(ctx context.Context, c *Call, in GetCollectionIn) (GetCollectionOut, string, error) {
	tool := c.Tool
	fail := failWith[GetCollectionOut]()
	id := strings.TrimSpace(in.CollectionID)
	if id == "" {
		return fail(&stacclient.ParamError{Param: "collection_id", Got: in.CollectionID,
			Reason: "empty", Accepted: "a collection id such as \"sentinel-2-l2a\" (search_collections lists them)"})
	}
	col, err := c.Catalog.Client.Collection(ctx, id)
	if isKind(err, stacclient.KindNotFound) {
		return GetCollectionOut{}, "", collectionNotFound(ctx, c, tool, id, err)
	}
	if err != nil {
		return fail(err)
	}
	out := compactCollection(col)
	return out, collectionText(out), nil
}

// compactCollection keeps what a model needs from a collection.
func compactCollection(col *stacclient.Collection) GetCollectionOut {
	out := GetCollectionOut{
		ID: col.ID, Title: col.Title, Description: col.Description, License: col.License,
		Extent:         extentInfo(col.Extent),
		Providers:      []ProviderInfo{},
		Keywords:       nonNilStrings(col.Keywords),
		StacExtensions: nonNilStrings(col.StacExtensions),
		Summaries:      map[string]any{},
		ItemAssets:     []ItemAssetInfo{},
		KeyLinks:       keyLinks(col.Links),
	}
	for _, p := range col.Providers {
		out.Providers = append(out.Providers, ProviderInfo{Name: p.Name, Roles: nonNilStrings(p.Roles), URL: p.URL})
	}
	for k, v := range col.Summaries {
		out.Summaries[k] = rawToAny(v)
	}
	keys := make([]string, 0, len(col.ItemAssets))
	for k := range col.ItemAssets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := col.ItemAssets[k]
		out.ItemAssets = append(out.ItemAssets, ItemAssetInfo{Key: k, Title: a.Title, Type: a.Type, Roles: nonNilStrings(a.Roles)})
	}
	return out
}

func extentInfo(e stacclient.Extent) ExtentInfo {
	out := ExtentInfo{BBox: [][]float64{}, Intervals: [][]string{}}
	for _, b := range e.Spatial.BBox {
		out.BBox = append(out.BBox, nonNilFloats(b))
	}
	for _, iv := range e.Temporal.Interval {
		pair := []string{}
		for _, end := range iv {
			if end == nil {
				pair = append(pair, "..")
			} else {
				pair = append(pair, *end)
			}
		}
		out.Intervals = append(out.Intervals, pair)
	}
	return out
}

// collectionText is the whole compact collection: description, extents,
// providers, keywords, extensions, item assets, every summary with its
// values, and the key links.
func collectionText(out GetCollectionOut) string {
	var b strings.Builder
	b.WriteString(out.ID)
	if out.Title != "" {
		fmt.Fprintf(&b, " (%s)", out.Title)
	}
	if out.License != "" {
		fmt.Fprintf(&b, ", license %s", out.License)
	}
	b.WriteString("\n")
	if out.Description != "" {
		b.WriteString(out.Description + "\n")
	}
	for i, box := range out.Extent.BBox {
		fmt.Fprintf(&b, "Spatial extent%s: %s\n", extentLabel(i), bboxText(box))
	}
	for i, iv := range out.Extent.Intervals {
		fmt.Fprintf(&b, "Temporal extent%s: %s\n", extentLabel(i), strings.Join(iv, " to "))
	}
	for _, p := range out.Providers {
		fmt.Fprintf(&b, "Provider: %s", p.Name)
		if len(p.Roles) > 0 {
			fmt.Fprintf(&b, " (roles %s)", strings.Join(p.Roles, ", "))
		}
		if p.URL != "" {
			fmt.Fprintf(&b, " %s", p.URL)
		}
		b.WriteString("\n")
	}
	if len(out.Keywords) > 0 {
		fmt.Fprintf(&b, "Keywords: %s\n", strings.Join(out.Keywords, ", "))
	}
	if len(out.StacExtensions) > 0 {
		fmt.Fprintf(&b, "STAC extensions: %s\n", strings.Join(out.StacExtensions, ", "))
	}
	if len(out.ItemAssets) > 0 {
		fmt.Fprintf(&b, "Item assets (%d):\n", len(out.ItemAssets))
		for _, a := range out.ItemAssets {
			fmt.Fprintf(&b, "- %s [%s] (roles %s)", a.Key, orDash(a.Type), strings.Join(a.Roles, ", "))
			if a.Title != "" {
				fmt.Fprintf(&b, " %q", a.Title)
			}
			b.WriteString("\n")
		}
	}
	if len(out.Summaries) > 0 {
		fmt.Fprintf(&b, "Summaries (%d):\n", len(out.Summaries))
		for _, k := range sortedKeys(out.Summaries) {
			fmt.Fprintf(&b, "- %s: %s\n", k, compactJSON(out.Summaries[k]))
		}
	}
	if len(out.KeyLinks) > 0 {
		b.WriteString("Links:\n")
		for _, l := range out.KeyLinks {
			b.WriteString("- " + keyLinkText(l) + "\n")
		}
	}
	b.WriteString("Next: get_queryables for filterable properties, then search_items.")
	return b.String()
}

// extentLabel marks the first extent as the overall one.
func extentLabel(i int) string {
	if i == 0 {
		return " (overall)"
	}
	return fmt.Sprintf(" %d", i+1)
}
