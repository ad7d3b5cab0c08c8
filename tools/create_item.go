package tools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// CreateItemIn names the collection and the new item.
type CreateItemIn struct {
	CatalogArg
	CollectionID string      `json:"collection_id" jsonschema:"id of the collection the item joins, e.g. my-survey"`
	Item         DocumentArg `json:"item" jsonschema:"the STAC Item: type Feature, stac_version, id, geometry (GeoJSON, or null), bbox (required with a geometry), properties with datetime (RFC 3339, or null with start_datetime and end_datetime), assets ({} when none); links and collection may be left out"`
	IdempotencyKeyArg
}

// CreateItem is the create_item tool.
func CreateItem() Tool {
	return defineWrite(&mcp.Tool{
		Name:  "create_item",
		Title: "Create an item",
		Description: "Add a new STAC Item to a collection (STAC Transaction extension: POST /collections/{collection_id}/items), on a catalog that declares it " +
			"or a local catalog.json (written to its files). The item is checked first by the STAC JSON Schemas (core and declared extensions; UTC RFC 3339 dates): a bad one " +
			"changes nothing; warnings come back in notes. Creating an item that exists fails with a conflict: use update_item. Pass a new idempotency_key per item; reuse it on any retry.\n" +
			`Example: {"collection_id": "my-survey", "idempotency_key": "5f0c9a1e-7c1b-4b8e-9d53-2f1f0a7c4e21", "item": {"type": "Feature", "stac_version": "1.0.0", "id": "flight-042", ` +
			`"geometry": {"type": "Point", "coordinates": [-94.5, 37.1]}, "bbox": [-94.5, 37.1, -94.5, 37.1], "properties": {"datetime": "2024-06-01T10:00:00Z"}, ` +
			`"assets": {"image": {"href": "https://example.com/flight-042.tif", "type": "image/tiff; application=geotiff"}}}}`,
		Annotations: writeAnnotations("Create an item", false, false),
	}, reliability.SideEffectCreate, createItem)
}

func createItem(ctx context.Context, c *Call, in CreateItemIn) (WriteOut, string, error) {
	fail := failWith[WriteOut]()
	collectionID, _, err := pathIDs(in.CollectionID, nil)
	if err != nil {
		return fail(err)
	}
	doc, err := in.Item.required("item", "a STAC Item object")
	if err != nil {
		return fail(err)
	}
	doc = writeflow.NormalizeDocument(doc, collectionID)
	if err := stacclient.CheckItemWrite(collectionID, "", doc); err != nil {
		return fail(err)
	}
	itemID, _ := doc["id"].(string)
	return runWrite(ctx, c, writeflow.Op{
		Tool: "create_item", SideEffect: reliability.SideEffectCreate, Scope: stacclient.TxItems, Key: in.IdempotencyKey,
		Args: map[string]any{"collection_id": collectionID, "item": doc},
		// Warnings (a bbox that does not contain the geometry, an extension
		// whose schema is not embedded: "not validated: <url>") do not stop
		// the write; the notes pass them on.
		Out:      WriteOut{CollectionID: collectionID, ItemID: itemID, Notes: stacdoc.ValidateItem(doc).WarningTexts()},
		Done:     "created",
		Describe: fmt.Sprintf("item %q in collection %q", itemID, collectionID),
		Send: func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.CreateItem(ctx, collectionID, doc, o)
		},
		Applied: itemDocument(c, collectionID, itemID).Holds(doc, false),
	})
}
