package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// This file is what the five write tools (create_item, update_item,
// delete_item, create_collection, update_collection) share as MCP tools:
// their arguments and result, their registration, and runWrite, which
// hands a write to the protocol that makes it happen once whatever the
// model retries (tools/internal/writeflow; adr/0014-idempotent-writes.md).

// Writes turns the write tools on (Deps.Writes; --allow-writes).
type Writes struct {
	// Store keeps the idempotency records: SQLite on disk, or Redis.
	Store idempotency.Store
	// Lease is how long a call may hold a key before another call with the
	// same key presumes it died and recovers it; 0 means the tool timeout
	// plus 5 s.
	Lease time.Duration
}

// WriteTools are the tools that change catalogs, in the order a model
// should meet them. They are registered only when Deps.Writes is set, and
// form the "write" toolset (Tool.SideEffect says which each one is).
func WriteTools() []Tool {
	return inToolset(ToolsetWrite, CreateItem(), UpdateItem(), DeleteItem(), CreateCollection(), UpdateCollection())
}

// IdempotencyKeyArg is the key every write tool requires.
type IdempotencyKeyArg struct {
	IdempotencyKey string `json:"idempotency_key" jsonschema:"a new key (e.g. a UUID, at most 255 characters) per logical write; the SAME key on every retry of it"`
}

// DocumentArg is a JSON object (a STAC Item or Collection, or a merge
// patch), also accepted as a JSON-encoded string.
type DocumentArg json.RawMessage

func (a *DocumentArg) UnmarshalJSON(b []byte) error { *a = keepRaw(b); return nil }
func (a DocumentArg) MarshalJSON() ([]byte, error)  { return rawOrNull(a) }

// object decodes the document; present is false when it was not given.
func (a DocumentArg) object(param string) (doc map[string]any, present bool, err error) {
	v, err := decodeArg(param, a, "a JSON object")
	if err != nil || v == nil {
		return nil, false, err
	}
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, false, nil
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, true, &stacclient.ParamError{Param: param, Got: trimText(s, 200), Reason: "a string that is not JSON: " + err.Error(), Accepted: "a JSON object"}
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, true, &stacclient.ParamError{Param: param, Got: trimText(string(a), 200), Reason: "not a JSON object", Accepted: "a JSON object"}
	}
	return m, true, nil
}

// required is object for an argument that must be given.
func (a DocumentArg) required(param, accepted string) (map[string]any, error) {
	doc, present, err := a.object(param)
	if err == nil && !present {
		err = &stacclient.ParamError{Param: param, Got: "nothing", Reason: "missing", Accepted: accepted}
	}
	return doc, err
}

// WriteOut is the result of every write tool, the same on the first call
// and on every duplicate (which only sets duplicate: true). The write
// protocol stores it under the key, so it is writeflow's Outcome.
type WriteOut = writeflow.Outcome

// checkIdempotencyKey refuses a key the store cannot take.
func checkIdempotencyKey(key string) error {
	accepted := "a string of 1 to 255 characters without control characters, e.g. a new UUID per logical write"
	switch problem := writeflow.KeyProblem(key); problem {
	case "":
		return nil
	case "empty":
		return &stacclient.ParamError{Param: "idempotency_key", Got: key, Reason: problem, Accepted: accepted}
	default:
		return &stacclient.ParamError{Param: "idempotency_key", Got: trimText(key, 60), Reason: problem, Accepted: accepted}
	}
}

// runWrite runs op under its idempotency key (writeflow.Run), on the
// call's catalog, for the call's caller.
func runWrite(ctx context.Context, c *Call, op writeflow.Op) (WriteOut, string, error) {
	fail := failWith[WriteOut]()
	if err := checkIdempotencyKey(op.Key); err != nil {
		return fail(err)
	}
	w := c.Deps.Writes
	if w == nil || w.Store == nil {
		return fail(errors.New(op.Tool + ": writes are not enabled on this server (start it with --allow-writes)"))
	}
	if why := c.Catalog.WriteRefusal; why != "" {
		return fail(errors.New(op.Tool + ": " + why)) // the registry's decision: nothing sent
	}
	lease := w.Lease
	if lease <= 0 {
		lease = c.Deps.Layer.Policy().ToolTimeout + 5*time.Second
	}
	out, text, err := writeflow.Run(ctx, writeflow.Env{
		Store: w.Store, Lease: lease, Caller: writeflow.CallerOf(c.Request), Catalog: c.Catalog, Logger: c.Deps.Logger,
		Render: func(err error) string { return renderError(op.Tool, err).Error() },
	}, op)
	var down *writeflow.StoreDown
	if errors.As(err, &down) {
		return fail(actionable(down.Err, "%s", down.Error())) // phrased already: rendered as it is
	}
	return out, text, err
}

// writeAnnotations are honest about what a write tool does: it changes
// the catalog (readOnlyHint false), destructive when it replaces or
// deletes what is there, idempotent when repeating the same HTTP request
// changes nothing more (PUT, merge PATCH, DELETE; not a create).
func writeAnnotations(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    false,
		DestructiveHint: jsonschema.Ptr(destructive),
		IdempotentHint:  idempotent,
		OpenWorldHint:   jsonschema.Ptr(true),
	}
}

// defineWrite is define for a write tool: its side effect is on the Tool.
func defineWrite[In catalogInput, Out any](def *mcp.Tool, sideEffect string, h Handler[In, Out]) Tool {
	t := define(def, true, h)
	t.SideEffect = sideEffect
	return t
}

// itemDocument and collectionDocument are the document a write tool
// writes, read through the call's catalog client.
func itemDocument(c *Call, collectionID, itemID string) writeflow.Document {
	return writeflow.Document{Kind: "item", Read: func(ctx context.Context) (map[string]any, error) {
		it, err := c.Catalog.Client.Item(ctx, collectionID, itemID)
		if err != nil {
			return nil, err
		}
		return toJSONObject(it)
	}}
}

func collectionDocument(c *Call, collectionID string) writeflow.Document {
	return writeflow.Document{Kind: "collection", Read: func(ctx context.Context) (map[string]any, error) {
		col, err := c.Catalog.Client.Collection(ctx, collectionID)
		if err != nil {
			return nil, err
		}
		return toJSONObject(col)
	}}
}

// pathIDs trims and checks the collection_id and (when itemID is not
// nil) item_id arguments.
func pathIDs(collectionID string, itemID *string) (string, string, error) {
	cid, err := trimmedID("collection_id", collectionID)
	if err != nil || itemID == nil {
		return cid, "", err
	}
	iid, err := trimmedID("item_id", *itemID)
	return cid, iid, err
}

// trimmedID is an id argument without surrounding space, refused when it
// cannot name a path segment.
func trimmedID(param, v string) (string, error) {
	id := strings.TrimSpace(v)
	if p := stacdoc.IDProblem(id); p != "" {
		return "", &stacclient.ParamError{Param: param, Got: v, Reason: "the id " + p, Accepted: "an id such as \"sentinel-2-l2a\" (no '/', '\\' or control characters)"}
	}
	return id, nil
}

// replacementOrPatch reads the two ways the update tools take a change:
// the complete new document (docParam) or a JSON merge patch; exactly one.
func replacementOrPatch(docArg DocumentArg, docParam string, patchArg DocumentArg) (doc, patch map[string]any, err error) {
	doc, hasDoc, err := docArg.object(docParam)
	if err != nil {
		return nil, nil, err
	}
	patch, hasPatch, err := patchArg.object("patch")
	if err != nil {
		return nil, nil, err
	}
	if hasDoc == hasPatch {
		got := "neither"
		if hasDoc {
			got = "both"
		}
		return nil, nil, &stacclient.ParamError{Param: docParam + "/patch", Got: got, Reason: "give exactly one",
			Accepted: docParam + ": the complete new document (replaces it), or patch: a JSON merge patch of the members to change (null removes one)"}
	}
	return doc, patch, nil
}

// update is what update_item and update_collection share: the document
// is replaced whole (PUT) or changed by a JSON merge patch (PATCH).
type update struct {
	target   writeflow.Document
	docParam string         // the argument holding a replacement: "item" or "collection"
	ids      map[string]any // the path arguments (part of the fingerprint)
	keep     map[string]string
	check    func(doc map[string]any) error // a written document must pass it
	replace  func(ctx context.Context, doc map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error)
	patch    func(ctx context.Context, patch map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error)
}

// fill completes op for a replacement doc or a merge patch (one is nil).
// A replacement is checked now; a patch is checked for the members it may
// not change now, and its result, applied to a fresh read, before each
// send (Prepare).
func (u update) fill(op *writeflow.Op, doc, patch map[string]any) error {
	args := map[string]any{}
	for k, v := range u.ids {
		args[k] = v
	}
	op.Args = args
	if doc != nil {
		if err := u.check(doc); err != nil {
			return err
		}
		args[u.docParam] = doc
		op.Send = func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return u.replace(ctx, doc, o)
		}
		op.Applied = u.target.Holds(doc, false)
		return nil
	}
	if err := stacclient.CheckPatch(patch, u.keep); err != nil {
		return err
	}
	args["patch"] = patch
	op.Prepare = func(ctx context.Context) error {
		doc, err := u.target.Read(stacclient.Fresh(ctx))
		if err != nil {
			return err
		}
		if err := u.check(stacdoc.MergePatch(doc, patch)); err != nil {
			return fmt.Errorf("the patched %s would not be valid, so the patch was not sent: %w", u.target.Kind, err)
		}
		return nil
	}
	op.Send = func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
		return u.patch(ctx, patch, o)
	}
	op.Applied = u.target.Holds(patch, true)
	return nil
}
