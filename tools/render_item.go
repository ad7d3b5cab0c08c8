package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// The readable text of items. Hosts differ in what they forward to the
// model (Claude Desktop the text content only, Claude Code the
// structuredContent only), so a text block carries every datum its
// structured output has, written compactly: a complete item as labelled
// lines with JSON values, a summary as a headline, its bbox and its main
// assets.

// fullItemText renders a complete STAC Item (as toJSONObject decodes it):
// the headline, bbox, geometry, every property, every asset (key, media
// type, roles, href, then its other members as JSON), every link, and any
// other member.
func fullItemText(item map[string]any, s ItemSummary) string {
	t := newItemText()
	b := &t.b
	b.WriteString(summaryLine(s))
	b.WriteByte('\n')
	if len(s.BBox) > 0 {
		b.WriteString("bbox " + bboxText(s.BBox) + "\n")
	}
	if g, ok := item["geometry"]; ok {
		b.WriteString("geometry ")
		t.json(g)
		b.WriteByte('\n')
	}
	props, _ := item["properties"].(map[string]any)
	fmt.Fprintf(b, "properties (%d):\n", len(props))
	for _, k := range sortedKeys(props) {
		b.WriteString("- " + k + ": ")
		t.value(props[k])
		b.WriteByte('\n')
	}
	assets, _ := item["assets"].(map[string]any)
	fmt.Fprintf(b, "assets (%d):\n", len(assets))
	for _, k := range orderedAssetKeysOf(assets) {
		a, _ := assets[k].(map[string]any)
		b.WriteString("- ")
		t.asset(k, a)
		b.WriteByte('\n')
	}
	links, _ := item["links"].([]any)
	fmt.Fprintf(b, "links (%d; rel href):\n", len(links))
	for _, l := range links {
		m, _ := l.(map[string]any)
		b.WriteString("- ")
		t.link(m)
		b.WriteByte('\n')
	}
	b.WriteString("type ")
	t.value(item["type"])
	b.WriteString(", stac_version ")
	t.value(item["stac_version"])
	if ext, _ := item["stac_extensions"].([]any); len(ext) > 0 {
		b.WriteString(", stac_extensions ")
		t.json(ext)
	}
	if rest := without(item, itemTextMembers); len(rest) > 0 {
		b.WriteString("\nother members ")
		t.json(rest)
	}
	return b.String()
}

// The members fullItemText, its assets and its links write on their own;
// the others follow as JSON.
var (
	itemTextMembers = map[string]bool{"id": true, "collection": true, "bbox": true, "geometry": true, "properties": true,
		"assets": true, "links": true, "type": true, "stac_version": true, "stac_extensions": true}
	assetTextMembers = map[string]bool{"href": true, "type": true, "roles": true}
	linkTextMembers  = map[string]bool{"rel": true, "href": true}
)

// itemText is the buffer of an item's text, with one encoder writing
// values as compactJSON writes them: a complete item has a hundred values,
// and an encoder and a buffer per value were most of the rendering's
// allocations.
type itemText struct {
	b       strings.Builder
	scratch bytes.Buffer // the encoder's output, one value at a time
	enc     *json.Encoder
}

func newItemText() *itemText {
	t := &itemText{}
	t.b.Grow(32 << 10) // a Sentinel-2 item's text is about 20 KB
	t.enc = json.NewEncoder(&t.scratch)
	t.enc.SetEscapeHTML(false)
	return t
}

// json writes v as compactJSON does.
func (t *itemText) json(v any) {
	t.scratch.Reset()
	if err := t.enc.Encode(v); err != nil {
		fmt.Fprintf(&t.b, "%v", v)
		return
	}
	t.b.Write(bytes.TrimSuffix(t.scratch.Bytes(), []byte("\n"))) // Encode ends the value with a newline
}

// value writes v as valueText does.
func (t *itemText) value(v any) {
	if s, ok := v.(string); ok {
		t.b.WriteString(s)
		return
	}
	t.json(v)
}

// asset writes one asset: key [media type] (roles) href, and its other
// members as JSON (title, file:size, raster:bands, ...).
func (t *itemText) asset(key string, a map[string]any) {
	b := &t.b
	b.WriteString(key)
	if typ, _ := a["type"].(string); typ != "" {
		b.WriteString(" [" + typ + "]")
	}
	if roles, _ := a["roles"].([]any); len(roles) > 0 {
		b.WriteString(" (roles ")
		for i, r := range roles {
			if i > 0 {
				b.WriteString(", ")
			}
			t.value(r)
		}
		b.WriteString(")")
	}
	href, _ := a["href"].(string)
	b.WriteString(" " + href)
	if rest := without(a, assetTextMembers); len(rest) > 0 {
		b.WriteString(" ")
		t.json(rest)
	}
}

// link writes one link: rel href, then its other members as JSON.
func (t *itemText) link(l map[string]any) {
	rel, _ := l["rel"].(string)
	href, _ := l["href"].(string)
	t.b.WriteString(rel + " " + href)
	if rest := without(l, linkTextMembers); len(rest) > 0 {
		t.b.WriteString(" ")
		t.json(rest)
	}
}

// summaryText renders an item summary: the headline, the bbox, the
// detailed assets one per line (media types shortened through types, whose
// legend typeLegend writes once per result) and the keys of the others.
func summaryText(s ItemSummary, types *typeAbbreviations) string {
	var b strings.Builder
	b.WriteString(summaryLine(s))
	if len(s.BBox) > 0 {
		fmt.Fprintf(&b, "\n  bbox %s", bboxText(s.BBox))
	}
	if s.AOICoverage != nil {
		fmt.Fprintf(&b, "\n  covers %s%% of the requested area", formatNumber(*s.AOICoverage))
	}
	for _, a := range s.Assets {
		fmt.Fprintf(&b, "\n  - %s", a.Key)
		if a.Type != "" {
			fmt.Fprintf(&b, " [%s]", types.short(a.Type))
		}
		b.WriteString(" " + a.Href)
	}
	if n := len(s.OtherAssetKeys); n > 0 {
		fmt.Fprintf(&b, "\n  + %d more asset(s) (get_item has them): %s", n, strings.Join(s.OtherAssetKeys, ", "))
	}
	if len(s.AlsoIn) > 0 {
		b.WriteString("\n  " + alsoInText(s.AlsoIn, s.Kept))
	}
	return b.String()
}

// alsoInText names an item's copies in other catalogs and why this one
// was kept.
func alsoInText(copies []ItemCopy, kept string) string {
	parts := make([]string, len(copies))
	for i, c := range copies {
		parts[i] = c.Catalog + " as " + c.ID
		if c.Collection != "" {
			parts[i] += " (" + c.Collection + ")"
		}
	}
	s := "also in " + strings.Join(parts, ", ")
	if kept != "" {
		s += "; " + kept
	}
	return s
}

// summaryLine is a summary's headline: id, collection, datetime, cloud
// cover, platform, gsd and the number of assets.
func summaryLine(s ItemSummary) string {
	parts := itemHeadParts(s.ID, s.Collection, s.Datetime, s.CloudCover)
	if s.Platform != "" {
		parts = append(parts, s.Platform)
	}
	if s.GSD != nil {
		parts = append(parts, "gsd "+formatNumber(*s.GSD)+" m")
	}
	parts = append(parts, fmt.Sprintf("%d assets", s.AssetCount))
	if s.Catalog != "" {
		parts = append(parts, "from "+s.Catalog)
	}
	return strings.Join(parts, " | ")
}

// itemHeadParts are the first fields of an item's line in a text block
// (search_items' summaries, map_items' legend), joined with " | ": id,
// collection, datetime and cloud cover, each when known.
func itemHeadParts(id, collection, datetime string, cloudCover *float64) []string {
	parts := []string{id}
	if collection != "" {
		parts = append(parts, collection)
	}
	if datetime != "" {
		parts = append(parts, datetime)
	}
	if cloudCover != nil {
		parts = append(parts, "cloud "+formatNumber(*cloudCover)+"%")
	}
	return parts
}

// typeAbbreviations shortens the long media types of summaries (a COG's
// is 56 bytes, repeated on every asset line) and remembers which it used,
// so the text can spell them out once.
type typeAbbreviations struct{ used map[string]string }

var mediaTypeShort = map[string]string{
	"image/tiff; application=geotiff; profile=cloud-optimized": "COG",
	"image/tiff; application=geotiff":                          "GeoTIFF",
}

func (t *typeAbbreviations) short(mediaType string) string {
	short, ok := mediaTypeShort[mediaType]
	if !ok {
		return mediaType
	}
	if t.used == nil {
		t.used = map[string]string{}
	}
	t.used[short] = mediaType
	return short
}

// legend spells out the abbreviations used ("" when none was).
func (t *typeAbbreviations) legend() string {
	if len(t.used) == 0 {
		return ""
	}
	parts := make([]string, 0, len(t.used))
	for _, short := range sortedKeys(t.used) {
		parts = append(parts, short+" = "+t.used[short])
	}
	return "Media types: " + strings.Join(parts, "; ")
}

// orderedAssetKeysOf orders the assets of a decoded item as
// orderedAssetKeys does (data first, HTTP-fetchable first).
func orderedAssetKeysOf(assets map[string]any) []string {
	typed := make(map[string]stacclient.Asset, len(assets))
	for k, v := range assets {
		m, _ := v.(map[string]any)
		a := stacclient.Asset{}
		a.Href, _ = m["href"].(string)
		if roles, ok := m["roles"].([]any); ok {
			for _, r := range roles {
				if s, ok := r.(string); ok {
					a.Roles = append(a.Roles, s)
				}
			}
		}
		typed[k] = a
	}
	return orderedAssetKeys(typed)
}

// valueText writes a JSON value for a text line: a string as it is,
// anything else as compact JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compactJSON(v)
}

// compactJSON is v as compact JSON, without HTML escaping (hrefs keep
// their & and <>).
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// bboxText writes a bbox exactly, as the catalog gave it.
func bboxText(b []float64) string {
	parts := make([]string, len(b))
	for i, f := range b {
		parts[i] = formatNumber(f)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// without is m minus the given keys (nil when nothing is left).
func without(m map[string]any, keys map[string]bool) map[string]any {
	var rest map[string]any
	for k, v := range m {
		if !keys[k] {
			if rest == nil {
				rest = map[string]any{}
			}
			rest[k] = v
		}
	}
	return rest
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
