package tools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// DeleteItemIn names the item to delete.
type DeleteItemIn struct {
	CatalogArg
	CollectionID string `json:"collection_id" jsonschema:"id of the item's collection"`
	ItemID       string `json:"item_id" jsonschema:"id of the item to delete"`
	IdempotencyKeyArg
}

// DeleteItem is the delete_item tool.
func DeleteItem() Tool {
	return defineWrite(&mcp.Tool{
		Name:  "delete_item",
		Title: "Delete an item",
		Description: "Delete one STAC Item (STAC Transaction extension: DELETE /collections/{collection_id}/items/{item_id}), on a catalog that declares it " +
			"or a local catalog.json (its file and its link are removed). An item that does not exist fails with not found. " +
			"Pass a new idempotency_key per deletion; reuse it on any retry.\n" +
			`Example: {"collection_id": "my-survey", "item_id": "flight-042", "idempotency_key": "0e6d2f7a-1b8c-4f3e-a2d9-6c5b4a3f2e10"}`,
		Annotations: writeAnnotations("Delete an item", true, true),
	}, reliability.SideEffectDelete, deleteItem)
}

func deleteItem(ctx context.Context, c *Call, in DeleteItemIn) (WriteOut, string, error) {
	collectionID, itemID, err := pathIDs(in.CollectionID, &in.ItemID)
	if err != nil {
		return failWith[WriteOut]()(err)
	}
	return runWrite(ctx, c, writeflow.Op{
		Tool: "delete_item", SideEffect: reliability.SideEffectDelete, Scope: stacclient.TxItems, Key: in.IdempotencyKey,
		Args:     map[string]any{"collection_id": collectionID, "item_id": itemID},
		Out:      WriteOut{CollectionID: collectionID, ItemID: itemID},
		Done:     "deleted",
		Describe: fmt.Sprintf("item %q of collection %q", itemID, collectionID),
		Send: func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.DeleteItem(ctx, collectionID, itemID, o)
		},
		Applied: itemDocument(c, collectionID, itemID).Gone,
	})
}
