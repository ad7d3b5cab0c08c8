package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// GetItemIn names one item.
type GetItemIn struct {
	CatalogArg
	CollectionID string `json:"collection_id" jsonschema:"e.g. sentinel-2-l2a"`
	ItemID       string `json:"item_id" jsonschema:"from search_items"`
	SignAssets   bool   `json:"sign_assets,omitempty" jsonschema:"sign Planetary Computer hrefs (~1 h)"`
}

// GetItemOut is the complete item plus its summary.
type GetItemOut struct {
	Item     map[string]any `json:"item" jsonschema:"the complete STAC Item as the catalog serves it (type, stac_version, geometry, properties, links, assets)"`
	Summary  ItemSummary    `json:"summary"`
	Warnings []string       `json:"warnings" jsonschema:"caveats, e.g. assets left unsigned and why"`
	Notes    []string       `json:"notes" jsonschema:"e.g. that Planetary Computer hrefs need sign_assets to download"`

	// itemSource, when set, is the item as the catalog sent it, of which
	// Item is the decoding: it is written in Item's place (see MarshalJSON).
	itemSource json.RawMessage
	// itemNames are the names of itemSource's members, for the schema
	// check (see decodedForCheck).
	itemNames []string
}

// getItemOutFields is GetItemOut without its methods.
type getItemOutFields GetItemOut

// MarshalJSON writes the item as the catalog sent it when those bytes are
// at hand, instead of encoding Item, their decoding: the same JSON (keys
// in the catalog's order, the catalog's spacing), without another pass
// over a complete item. The bytes are valid JSON (Item was decoded from
// them).
func (o GetItemOut) MarshalJSON() ([]byte, error) {
	rest := getItemOutFields(o)
	if o.itemSource != nil {
		rest.Item = nil
	}
	b, err := json.Marshal(rest)
	if err != nil || o.itemSource == nil {
		return b, err
	}
	// The item is the first member: splice the bytes in for its null.
	const head = `{"item":null`
	if !bytes.HasPrefix(b, []byte(head)) {
		return nil, fmt.Errorf("get_item output encoded as %.20q…, not starting with %s", b, head)
	}
	out := make([]byte, 0, len(b)+len(o.itemSource))
	out = append(out, `{"item":`...)
	out = append(out, o.itemSource...)
	return append(out, b[len(head):]...), nil
}

// decodedForCheck is the output decoded for the schema check: only the
// rest is encoded and decoded. The item is Item when it was decoded (for a
// signed item's text); when it is the catalog's bytes, undecoded, it is an
// object of its members' names, each null: the schema asks that the item
// be an object and leaves every member's value unconstrained ("any JSON
// value", TestGetItemSchemaLeavesItemMembersFree), so the check is the same.
func (o GetItemOut) decodedForCheck() (any, error) {
	rest := getItemOutFields(o)
	rest.Item = map[string]any{}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if o.Item != nil || o.itemSource == nil {
		m["item"] = o.Item
		return m, nil
	}
	item := make(map[string]any, len(o.itemNames))
	for _, name := range o.itemNames {
		item[name] = nil
	}
	m["item"] = item
	return m, nil
}

// GetItem is the get_item tool.
func GetItem() Tool {
	return define(&mcp.Tool{
		Name:  "get_item",
		Title: "Get one item",
		Description: "One complete STAC Item: every property, asset (href, type, roles) and link.\n" +
			`Example: {"collection_id":"sentinel-2-l2a","item_id":"S2B_24MUA_20250731_0_L2A"}`,
		Annotations: readOnlyAnnotations("Get one item"),
	}, true, getItem)
}

func getItem(ctx context.Context, c *Call, in GetItemIn) (GetItemOut, string, error) {
	tool := c.Tool
	fail := failWith[GetItemOut]()
	ref, err := parseItemRef(in.CollectionID, in.ItemID)
	if err != nil {
		return fail(err)
	}
	signing, err := newAssetSigning(c, in.SignAssets)
	if err != nil {
		return GetItemOut{}, "", err
	}
	item, err := ref.fetch(ctx, c, tool)
	if err != nil {
		return fail(err)
	}
	signing.sign(ctx, item)
	out := GetItemOut{Summary: summarizeItem(item), Warnings: signing.warnings(), Notes: signing.notes()}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	// The item as the catalog sent it, when those bytes still describe it
	// (not when signing changed its hrefs): sent on as they are, the text
	// written from them, with no decoding into a map.
	var text string
	if source := item.Source(); source != nil && !in.SignAssets {
		if t, names, ok := fullItemTextRaw(source, out.Summary); ok {
			out.itemSource, out.itemNames, text = source, names, t
		}
	}
	if out.itemSource == nil {
		full, source, err := itemObject(item, in.SignAssets)
		if err != nil {
			return fail(err)
		}
		out.Item, out.itemSource = full, source
		text = fullItemText(full, out.Summary)
	}
	for _, w := range out.Warnings {
		text += "\nWarning: " + w
	}
	for _, n := range out.Notes {
		text += "\nNote: " + n
	}
	return out, text, nil
}

// itemObject is the complete item as a JSON object, and the bytes the
// catalog sent for it when they still describe it (nil otherwise): decoding
// them is one pass, where encoding the typed item and decoding that was
// two, and the answer can carry them as they are. Signed assets changed
// the item, so it is encoded then.
func itemObject(item *stacclient.Item, signed bool) (map[string]any, json.RawMessage, error) {
	if source := item.Source(); source != nil && !signed {
		var m map[string]any
		if err := json.Unmarshal(source, &m); err == nil {
			return m, source, nil
		}
	}
	m, err := toJSONObject(item)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encoding item %q: %w", item.ID, err)
	}
	return m, nil, nil
}

// itemRef names one item by the collection_id and item_id arguments.
type itemRef struct{ collection, item string }

// parseItemRef trims and checks collection_id and item_id.
func parseItemRef(collectionID, itemID string) (itemRef, error) {
	ref := itemRef{collection: strings.TrimSpace(collectionID), item: strings.TrimSpace(itemID)}
	if ref.collection == "" {
		return ref, &stacclient.ParamError{Param: "collection_id", Got: collectionID,
			Reason: "empty", Accepted: "a collection id such as \"sentinel-2-l2a\" (search_collections lists them)"}
	}
	if ref.item == "" {
		return ref, &stacclient.ParamError{Param: "item_id", Got: itemID,
			Reason: "empty", Accepted: "an item id as returned by search_items"}
	}
	return ref, nil
}

// fetch gets the item; when it is not found, the error says whether the
// item or its collection is missing.
func (r itemRef) fetch(ctx context.Context, c *Call, tool string) (*stacclient.Item, error) {
	item, err := c.Catalog.Client.Item(ctx, r.collection, r.item)
	if isKind(err, stacclient.KindNotFound) {
		return nil, notFoundItem(ctx, c, tool, r.collection, r.item, err)
	}
	return item, err
}

// notFoundItem tells a missing item from a missing collection, because the
// next step differs.
func notFoundItem(ctx context.Context, c *Call, tool, collectionID, itemID string, cause error) error {
	if _, err := c.Catalog.Client.Collection(ctx, collectionID); isKind(err, stacclient.KindNotFound) {
		return collectionNotFound(ctx, c, tool, collectionID, cause)
	}
	return actionable(cause, "%s: item '%s' not found in collection '%s' — call search_items with collections [%q] "+
		"(and a bbox or datetime) to find item ids.", tool, itemID, collectionID, collectionID)
}
