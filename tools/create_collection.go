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

// CreateCollectionIn is the new collection.
type CreateCollectionIn struct {
	CatalogArg
	Collection DocumentArg `json:"collection" jsonschema:"the STAC Collection: type Collection, stac_version, id, description, license, extent {spatial {bbox [[w,s,e,n]]}, temporal {interval [[start, end]]}}; links may be left out"`
	IdempotencyKeyArg
}

// CreateCollection is the create_collection tool.
func CreateCollection() Tool {
	return defineWrite(&mcp.Tool{
		Name:  "create_collection",
		Title: "Create a collection",
		Description: "Add a new STAC Collection (STAC Transaction extension for collections: POST /collections), on a catalog that declares it or a local " +
			"catalog.json (written as <id>/collection.json, linked from the root catalog). The collection is checked first: a bad one changes nothing. " +
			"A collection that exists fails with a conflict: use update_collection. Pass a new idempotency_key per collection; reuse it on any retry.\n" +
			`Example: {"idempotency_key": "3a8e1c52-9d6f-4e07-b1a4-7f2c8d9e0b13", "collection": {"type": "Collection", "stac_version": "1.0.0", "id": "my-survey", ` +
			`"description": "Drone flights over Joplin, 2024", "license": "CC-BY-4.0", "extent": {"spatial": {"bbox": [[-94.6, 37.0, -94.4, 37.2]]}, ` +
			`"temporal": {"interval": [["2024-06-01T00:00:00Z", null]]}}}}`,
		Annotations: writeAnnotations("Create a collection", false, false),
	}, reliability.SideEffectCreate, createCollection)
}

func createCollection(ctx context.Context, c *Call, in CreateCollectionIn) (WriteOut, string, error) {
	fail := failWith[WriteOut]()
	doc, err := in.Collection.required("collection", "a STAC Collection object")
	if err != nil {
		return fail(err)
	}
	doc = writeflow.NormalizeDocument(doc, "")
	if err := stacclient.CheckCollectionWrite("", doc); err != nil {
		return fail(err)
	}
	collectionID, _ := doc["id"].(string)
	return runWrite(ctx, c, writeflow.Op{
		Tool: "create_collection", SideEffect: reliability.SideEffectCreate, Scope: stacclient.TxCollections, Key: in.IdempotencyKey,
		Args:     map[string]any{"collection": doc},
		Out:      WriteOut{CollectionID: collectionID, Notes: stacdoc.ValidateCollection(doc).WarningTexts()}, // warnings do not stop the write
		Done:     "created",
		Describe: fmt.Sprintf("collection %q", collectionID),
		Send: func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.CreateCollection(ctx, doc, o)
		},
		Applied: collectionDocument(c, collectionID).Holds(doc, false),
	})
}
