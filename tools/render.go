package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/sizing"
)

// maxSummaryAssets caps the assets detailed in an item summary; the keys of
// the rest are still listed, with their count.
const maxSummaryAssets = 8

// ItemSummary is the compact form of a STAC Item used by search_items and
// get_item: enough to choose an item and its assets, a small fraction of the
// full item's bytes.
type ItemSummary struct {
	ID             string         `json:"id" jsonschema:"item id"`
	Collection     string         `json:"collection,omitempty" jsonschema:"collection id"`
	Datetime       string         `json:"datetime,omitempty" jsonschema:"properties.datetime, or start/end when the item has a range"`
	BBox           []float64      `json:"bbox" jsonschema:"item bounding box [west,south,east,north]; empty when the item has none"`
	CloudCover     *float64       `json:"cloud_cover,omitempty" jsonschema:"eo:cloud_cover in percent"`
	Platform       string         `json:"platform,omitempty" jsonschema:"platform (satellite) name"`
	GSD            *float64       `json:"gsd,omitempty" jsonschema:"ground sample distance in metres"`
	AssetCount     int            `json:"asset_count" jsonschema:"number of assets the item has"`
	Assets         []AssetSummary `json:"assets" jsonschema:"the first assets (data assets first), each with key, media type and href"`
	OtherAssetKeys []string       `json:"other_asset_keys" jsonschema:"keys of the assets not detailed in assets (get_item returns them all)"`
	AOICoverage    *float64       `json:"aoi_coverage_pct,omitempty" jsonschema:"percent of the requested area (bbox or intersects) inside this item's footprint"`
	// Set when catalog_url names several catalogs (adr/0035).
	Catalog string     `json:"catalog,omitempty" jsonschema:"the catalog this copy is from"`
	AlsoIn  []ItemCopy `json:"also_in,omitempty" jsonschema:"the same acquisition in other catalogs"`
	Kept    string     `json:"kept,omitempty" jsonschema:"why this copy was kept over those in also_in"`
}

// AssetSummary is one asset of an item summary. Roles are left out to keep
// summaries small (they only order the list: data first); get_item has them.
type AssetSummary struct {
	Key  string `json:"key"`
	Type string `json:"type,omitempty" jsonschema:"media type"`
	Href string `json:"href"`
}

// KeyLink is a link worth showing a model.
type KeyLink struct {
	Rel    string `json:"rel"`
	Href   string `json:"href"`
	Type   string `json:"type,omitempty"`
	Title  string `json:"title,omitempty"`
	Method string `json:"method,omitempty"`
}

// keyLinkRels are the relations a model can act on; everything else
// (children, items, alternates…) is counted, not listed.
var keyLinkRels = map[string]bool{
	"self": true, "root": true, "parent": true, "search": true, "collections": true, "conformance": true,
	"data": true, "queryables": true, "http://www.opengis.net/def/rel/ogc/1.0/queryables": true,
	"aggregate": true, "aggregations": true, "service-desc": true, "service-doc": true, "license": true,
	"items": true, "describedby": true, "about": true, "cite-as": true,
}

// keyLinks keeps the actionable links, one per rel+method.
func keyLinks(links []stacclient.Link) []KeyLink {
	out := []KeyLink{}
	seen := map[string]bool{}
	for _, l := range links {
		if !keyLinkRels[l.Rel] || seen[l.Rel+" "+l.Method+" "+l.Type] {
			continue
		}
		seen[l.Rel+" "+l.Method+" "+l.Type] = true
		out = append(out, KeyLink{Rel: l.Rel, Href: l.Href, Type: l.Type, Title: l.Title, Method: l.Method})
	}
	return out
}

// summarizeItem builds the compact summary of an item.
func summarizeItem(it *stacclient.Item) ItemSummary {
	s := ItemSummary{
		ID:             it.ID,
		Collection:     it.Collection,
		BBox:           nonNilFloats(it.BBox),
		Platform:       propString(it.Properties, "platform"),
		CloudCover:     propNumber(it.Properties, "eo:cloud_cover"),
		GSD:            propNumber(it.Properties, "gsd"),
		AssetCount:     len(it.Assets),
		Assets:         []AssetSummary{},
		OtherAssetKeys: []string{},
	}
	s.Datetime = itemDatetime(it.Properties)
	for i, key := range orderedAssetKeys(it.Assets) {
		a := it.Assets[key]
		if i < maxSummaryAssets {
			s.Assets = append(s.Assets, AssetSummary{Key: key, Type: a.Type, Href: a.Href})
		} else {
			s.OtherAssetKeys = append(s.OtherAssetKeys, key)
		}
	}
	return s
}

// itemDatetime is properties.datetime, or "start/end" for a range.
func itemDatetime(props map[string]any) string {
	if dt := propString(props, "datetime"); dt != "" {
		return dt
	}
	start, end := propString(props, "start_datetime"), propString(props, "end_datetime")
	if start != "" || end != "" {
		return orDots(start) + "/" + orDots(end)
	}
	return ""
}

func orDots(s string) string {
	if s == "" {
		return ".."
	}
	return s
}

// assetRank orders assets so the data a user came for comes first.
func assetRank(a stacclient.Asset) int {
	has := func(role string) bool {
		for _, r := range a.Roles {
			if r == role {
				return true
			}
		}
		return false
	}
	switch {
	case has("data"):
		return 0
	case has("visual"):
		return 1
	case has("overview") || has("thumbnail"):
		return 2
	case has("metadata"):
		return 4
	}
	return 3
}

// assetOrder ranks an asset for listing: by role, HTTP-fetchable first.
func assetOrder(a stacclient.Asset) int {
	if !sizing.Headable(a.Href) && a.Href != "" {
		return assetRank(a) + 10
	}
	return assetRank(a)
}

// orderedAssetKeys sorts asset keys by rank, then name; assets a client
// cannot fetch over HTTP (s3:// duplicates of the COGs, for instance) go last.
func orderedAssetKeys(assets map[string]stacclient.Asset) []string {
	// Each asset is ranked once: ranking parses its href, which inside the
	// sort's comparisons was most of an item's rendering.
	type ranked struct {
		key  string
		rank int
	}
	rs := make([]ranked, 0, len(assets))
	for k, a := range assets {
		rs = append(rs, ranked{k, assetOrder(a)})
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].rank != rs[j].rank {
			return rs[i].rank < rs[j].rank
		}
		return rs[i].key < rs[j].key
	})
	keys := make([]string, len(rs))
	for i, r := range rs {
		keys[i] = r.key
	}
	return keys
}

// propString reads a string property.
func propString(props map[string]any, key string) string {
	s, _ := props[key].(string)
	return s
}

// propNumber reads a numeric property (json.Number or float64).
func propNumber(props map[string]any, key string) *float64 {
	if f, ok := toFloat(props[key]); ok {
		return &f
	}
	return nil
}

// toFloat converts decoded JSON numbers of either flavour.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func nonNilFloats(f []float64) []float64 {
	if f == nil {
		return []float64{}
	}
	return f
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// toJSONObject re-encodes a STAC object (with its extension members) as a
// generic JSON object for outputs that must carry it complete.
func toJSONObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// rawToAny decodes a raw JSON value (nil when empty or invalid).
func rawToAny(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// bboxDecimals is how many decimals of a degree formatBBox writes (about
// 10 m): a bbox a tool computes is rounded to it, so the text and the
// structured output say the same.
const bboxDecimals = 4

// roundBBox rounds a computed bbox to bboxDecimals.
func roundBBox(b []float64) []float64 {
	out := make([]float64, len(b))
	for i, f := range b {
		out[i] = round(f, bboxDecimals)
	}
	return out
}

// formatBBox writes a bbox compactly, to bboxDecimals.
func formatBBox(b []float64) string {
	parts := make([]string, len(b))
	for i, f := range b {
		parts[i] = formatNumber(round(f, bboxDecimals))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// humanBytes writes a byte count with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// truncateDescription cuts long descriptions for listings and says so.
func truncateDescription(s string, limit int) (string, bool) {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= limit {
		return string(r), false
	}
	return string(r[:limit]) + "…", true
}

// unusableMatchedNotes says that the catalog's match count was ignored
// because it was not a count, so a missing "matched" is not a mystery.
func unusableMatchedNotes(search *stacclient.Search) []string {
	if _, ok := search.Matched(); ok {
		return nil
	}
	if u := search.UnusableMatched(); u != "" {
		return []string{fmt.Sprintf("the catalog sent %s, which is not a count of items, so the number of matches is not given", trimText(u, 60))}
	}
	return nil
}

// writeLines writes each line after prefix ("Warning: ", "Note: "), one a
// row: how every tool's text ends with what its structured output's
// warnings and notes say.
func writeLines(b io.StringWriter, prefix string, lines []string) {
	for _, line := range lines {
		_, _ = b.WriteString(prefix + line + "\n")
	}
}
