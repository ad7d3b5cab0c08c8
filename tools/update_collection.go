package tools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// UpdateCollectionIn names the collection and its change: a complete
// replacement of its metadata or a merge patch.
type UpdateCollectionIn struct {
	CatalogArg
	CollectionID string      `json:"collection_id" jsonschema:"id of the collection to update"`
	Collection   DocumentArg `json:"collection,omitempty" jsonschema:"the complete new collection metadata (its id must match; its items stay); give collection or patch"`
	Patch        DocumentArg `json:"patch,omitempty" jsonschema:"a JSON merge patch (RFC 7386) of the members to change, e.g. {\"title\":\"Joplin survey\",\"keywords\":[\"drone\"]} (null removes a member); give collection or patch"`
	IdempotencyKeyArg
}

// UpdateCollection is the update_collection tool.
func UpdateCollection() Tool {
	return defineWrite(&mcp.Tool{
		Name:  "update_collection",
		Title: "Update a collection",
		Description: "Change an existing STAC Collection's metadata (STAC Transaction extension for collections), on a catalog that declares it or a local " +
			"catalog.json: replace it whole with collection (PUT), or change some members with patch, a JSON merge patch (PATCH). Its items stay. " +
			"The result is checked first; a bad one changes nothing. Pass a new idempotency_key per change; reuse it on any retry.\n" +
			`Example: {"collection_id": "my-survey", "idempotency_key": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f", "patch": {"title": "Joplin drone survey", "keywords": ["drone", "joplin"]}}`,
		Annotations: writeAnnotations("Update a collection", true, true),
	}, reliability.SideEffectUpdate, updateCollection)
}

func updateCollection(ctx context.Context, c *Call, in UpdateCollectionIn) (WriteOut, string, error) {
	fail := failWith[WriteOut]()
	collectionID, _, err := pathIDs(in.CollectionID, nil)
	if err != nil {
		return fail(err)
	}
	doc, patch, err := replacementOrPatch(in.Collection, "collection", in.Patch)
	if err != nil {
		return fail(err)
	}
	if doc != nil {
		doc = writeflow.NormalizeDocument(doc, "")
	}
	op := writeflow.Op{
		Tool: "update_collection", SideEffect: reliability.SideEffectUpdate, Scope: stacclient.TxCollections, Key: in.IdempotencyKey,
		Out:      WriteOut{CollectionID: collectionID},
		Done:     "updated",
		Describe: fmt.Sprintf("collection %q", collectionID),
	}
	err = update{
		target:   collectionDocument(c, collectionID),
		docParam: "collection",
		ids:      map[string]any{"collection_id": collectionID},
		keep:     map[string]string{"id": collectionID},
		check:    func(doc map[string]any) error { return stacclient.CheckCollectionWrite(collectionID, doc) },
		replace: func(ctx context.Context, doc map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.ReplaceCollection(ctx, collectionID, doc, o)
		},
		patch: func(ctx context.Context, patch map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return c.Catalog.Client.PatchCollection(ctx, collectionID, patch, o)
		},
	}.fill(&op, doc, patch)
	if err != nil {
		return fail(err)
	}
	return runWrite(ctx, c, op)
}
