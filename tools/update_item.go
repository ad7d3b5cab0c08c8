package tools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// UpdateItemIn names the item and its change: a complete replacement or a
// merge patch.
type UpdateItemIn struct {
	CatalogArg
	CollectionID string      `json:"collection_id" jsonschema:"id of the item's collection"`
	ItemID       string      `json:"item_id" jsonschema:"id of the item to update"`
	Item         DocumentArg `json:"item,omitempty" jsonschema:"the complete new item, which replaces the old one (its id and collection must match); give item or patch"`
	Patch        DocumentArg `json:"patch,omitempty" jsonschema:"a JSON merge patch (RFC 7386) of the members to change, e.g. {\"properties\":{\"eo:cloud_cover\":12,\"old_field\":null}} (null removes a member); give item or patch"`
	IdempotencyKeyArg
}

// UpdateItem is the update_item tool.
func UpdateItem() Tool {
	return defineWrite(&mcp.Tool{
		Name:  "update_item",
		Title: "Update an item",
		Description: "Change an existing STAC Item (STAC Transaction extension), on a catalog that declares it or a local catalog.json: replace it whole " +
			"with item (PUT), or change some members with patch, a JSON merge patch (PATCH). The resulting item is checked first; a bad one changes " +
			"nothing. An item that does not exist fails with not found (use create_item). Pass a new idempotency_key per change; reuse it on any retry.\n" +
			`Example: {"collection_id": "my-survey", "item_id": "flight-042", "idempotency_key": "9b2d4e6f-8a1c-4d3b-a5e7-c9f0b1d2e3a4", ` +
			`"patch": {"properties": {"eo:cloud_cover": 12, "title": "Flight 42, reprocessed"}}}`,
		Annotations: writeAnnotations("Update an item", true, true),
	}, reliability.SideEffectUpdate, updateItem)
}

func updateItem(ctx context.Context, c *Call, in UpdateItemIn) (WriteOut, string, error) {
	fail := failWith[WriteOut]()
	collectionID, itemID, err := pathIDs(in.CollectionID, &in.ItemID)
	if err != nil {
		return fail(err)
	}
	doc, patch, err := replacementOrPatch(in.Item, "item", in.Patch)
	if err != nil {
		return fail(err)
	}
	if doc != nil {
		doc = writeflow.NormalizeDocument(doc, collectionID)
	}
	op := writeflow.Op{
		Tool: "update_item", SideEffect: reliability.SideEffectUpdate, Scope: stacclient.TxItems, Key: in.IdempotencyKey,
		Out:      WriteOut{CollectionID: collectionID, ItemID: itemID},
		Done:     "updated",
		Describe: fmt.Sprintf("item %q in collection %q", itemID, collectionID),
	}
	err = update{
		target:   itemDocument(c, collectionID, itemID),
		docParam: "item",
		ids:      map[string]any{"collection_id": collectionID, "item_id": itemID},
		keep:     map[string]string{"id": itemID, "collection": collectionID},
		check:    func(doc map[string]any) error { return stacclient.CheckItemWrite(collectionID, itemID, doc) },
		replace: func(ctx context.Context, doc map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.ReplaceItem(ctx, collectionID, itemID, doc, o)
		},
		patch: func(ctx context.Context, patch map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.PatchItem(ctx, collectionID, itemID, patch, o)
		},
	}.fill(&op, doc, patch)
	if err != nil {
		return fail(err)
	}
	return runWrite(ctx, c, op)
}
