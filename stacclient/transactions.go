package stacclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// The STAC API Transaction extensions: POST/PUT/PATCH/DELETE on
// /collections/{id}/items[/{item}] (items) and /collections[/{id}]
// (collections). Each write is checked before it is sent (stacdoc), sent
// once (the reliability layer never retries a POST or PATCH, and retries a
// PUT or DELETE only because it carries an Idempotency-Key), and its answer
// is typed: 409 is an *Error of KindConflict, 404 of KindNotFound, and 202
// a WriteResult with Accepted set.

// TxScope is what a write changes, and so which Transaction class the
// catalog must declare.
type TxScope int

const (
	TxItems       TxScope = iota // .../ogcapi-features/extensions/transaction
	TxCollections                // .../collections/extensions/transaction
)

func (s TxScope) capability() Capability {
	if s == TxCollections {
		return CapCollectionTransaction
	}
	return CapTransaction
}

func (s TxScope) classURI() string {
	if s == TxCollections {
		return "https://api.stacspec.org/v1.0.0/collections/extensions/transaction"
	}
	return "https://api.stacspec.org/v1.0.0/ogcapi-features/extensions/transaction"
}

// WriteOptions go with one write.
type WriteOptions struct {
	// IdempotencyKey is sent as the Idempotency-Key header (catalogs that
	// honour it deduplicate a replay; the reliability layer retries a PUT
	// or DELETE only when it is set).
	IdempotencyKey string
}

// WriteResult is a catalog's successful answer to a write.
type WriteResult struct {
	Status   int  // 200, 201, 202 or 204
	Accepted bool // 202: queued for asynchronous processing, not visible yet
	// Location is the new resource's URL (201), resolved against the request.
	Location string
	// Document is the resource as the catalog returned it, when it did.
	Document map[string]any
}

// MergePatchContentType is the media type of a JSON merge patch (RFC 7386),
// which the Transaction extensions use for PATCH.
const MergePatchContentType = "application/merge-patch+json"

// RequireTransactions fails with a KindUnsupported *Error when the catalog
// does not declare the Transaction class for scope: such a catalog accepts
// no writes, and sending one would only earn a 404 or 405.
func (c *Client) RequireTransactions(ctx context.Context, scope TxScope) error {
	caps, err := c.capabilities(ctx)
	if err != nil {
		return err
	}
	if caps.Has(scope.capability()) {
		return nil
	}
	what := "items"
	if scope == TxCollections {
		what = "collections"
	}
	return &Error{Kind: KindUnsupported, Method: http.MethodGet, URL: c.baseRaw,
		Message: fmt.Sprintf("the catalog does not declare the STAC Transaction extension for %s (conformance class %s), so it accepts no writes to %s",
			what, scope.classURI(), what)}
}

// CreateItem adds item to the collection (POST /collections/{id}/items).
// An item naming another collection is refused before anything is sent.
func (c *Client) CreateItem(ctx context.Context, collectionID string, item map[string]any, o WriteOptions) (*WriteResult, error) {
	if err := checkItemFor(collectionID, "", item); err != nil {
		return nil, err
	}
	return c.write(ctx, TxItems, http.MethodPost, c.endpoint("collections", collectionID, "items"), item, "", o)
}

// ReplaceItem replaces the item (PUT /collections/{c}/items/{id}); its id
// and collection must match the path.
func (c *Client) ReplaceItem(ctx context.Context, collectionID, itemID string, item map[string]any, o WriteOptions) (*WriteResult, error) {
	if err := checkItemFor(collectionID, itemID, item); err != nil {
		return nil, err
	}
	return c.write(ctx, TxItems, http.MethodPut, c.endpoint("collections", collectionID, "items", itemID), item, "", o)
}

// PatchItem applies a JSON merge patch to the item (PATCH
// /collections/{c}/items/{id}). The patch may not change the id or the
// collection; the caller checks the patched result (it needs the item as
// it is now, see stacdoc.MergePatch).
func (c *Client) PatchItem(ctx context.Context, collectionID, itemID string, patch map[string]any, o WriteOptions) (*WriteResult, error) {
	if err := checkPathIDs(collectionID, itemID); err != nil {
		return nil, err
	}
	if err := checkPatchKeeps(patch, map[string]string{"id": itemID, "collection": collectionID}); err != nil {
		return nil, err
	}
	return c.write(ctx, TxItems, http.MethodPatch, c.endpoint("collections", collectionID, "items", itemID), patch, MergePatchContentType, o)
}

// DeleteItem deletes the item (DELETE /collections/{c}/items/{id}).
func (c *Client) DeleteItem(ctx context.Context, collectionID, itemID string, o WriteOptions) (*WriteResult, error) {
	if err := checkPathIDs(collectionID, itemID); err != nil {
		return nil, err
	}
	return c.write(ctx, TxItems, http.MethodDelete, c.endpoint("collections", collectionID, "items", itemID), nil, "", o)
}

// CreateCollection adds a collection (POST /collections).
func (c *Client) CreateCollection(ctx context.Context, collection map[string]any, o WriteOptions) (*WriteResult, error) {
	if err := CheckCollectionWrite("", collection); err != nil {
		return nil, err
	}
	return c.write(ctx, TxCollections, http.MethodPost, c.endpoint("collections"), collection, "", o)
}

// ReplaceCollection replaces a collection's metadata (PUT
// /collections/{id}); its items stay. The id must match the path.
func (c *Client) ReplaceCollection(ctx context.Context, collectionID string, collection map[string]any, o WriteOptions) (*WriteResult, error) {
	if err := CheckCollectionWrite(collectionID, collection); err != nil {
		return nil, err
	}
	return c.write(ctx, TxCollections, http.MethodPut, c.endpoint("collections", collectionID), collection, "", o)
}

// PatchCollection applies a JSON merge patch to a collection (PATCH
// /collections/{id}); the patch may not change the id.
func (c *Client) PatchCollection(ctx context.Context, collectionID string, patch map[string]any, o WriteOptions) (*WriteResult, error) {
	if err := checkPathIDs(collectionID, ""); err != nil {
		return nil, err
	}
	if err := checkPatchKeeps(patch, map[string]string{"id": collectionID}); err != nil {
		return nil, err
	}
	return c.write(ctx, TxCollections, http.MethodPatch, c.endpoint("collections", collectionID), patch, MergePatchContentType, o)
}

// CheckItemWrite is the check CreateItem (itemID "") and ReplaceItem make
// before sending: the ids can name path segments, the item is valid STAC,
// its collection (when it names one) is collectionID and, for a replace,
// its id is itemID. Callers use it to refuse a bad document before doing
// anything else.
func CheckItemWrite(collectionID, itemID string, item map[string]any) error {
	return checkItemFor(collectionID, itemID, item)
}

// CheckCollectionWrite is the check CreateCollection (collectionID "") and
// ReplaceCollection make before sending.
func CheckCollectionWrite(collectionID string, collection map[string]any) error {
	if collectionID != "" {
		if err := checkPathIDs(collectionID, ""); err != nil {
			return err
		}
		if id, _ := collection["id"].(string); id != collectionID {
			return idMismatch("collection.id", id, "collection_id", collectionID)
		}
	}
	return stacdoc.CheckCollection(collection)
}

// CheckPatch is the check PatchItem (keep: id and collection) and
// PatchCollection (keep: id) make: a merge patch may not change them.
func CheckPatch(patch map[string]any, keep map[string]string) error {
	return checkPatchKeeps(patch, keep)
}

func checkItemFor(collectionID, itemID string, item map[string]any) error {
	if err := checkPathIDs(collectionID, itemID); err != nil {
		return err
	}
	if c, ok := item["collection"].(string); ok && c != collectionID {
		return idMismatch("item.collection", c, "collection_id", collectionID)
	}
	if itemID != "" {
		if id, _ := item["id"].(string); id != itemID {
			return idMismatch("item.id", id, "item_id", itemID)
		}
	}
	return stacdoc.CheckItem(item)
}

func checkPathIDs(collectionID, itemID string) error {
	if p := stacdoc.IDProblem(collectionID); p != "" {
		return &ParamError{Param: "collection_id", Got: collectionID, Reason: "the id " + p, Accepted: "a collection id such as \"sentinel-2-l2a\""}
	}
	if itemID == "" {
		return nil
	}
	if p := stacdoc.IDProblem(itemID); p != "" {
		return &ParamError{Param: "item_id", Got: itemID, Reason: "the id " + p, Accepted: "an item id without '/', '\\' or control characters"}
	}
	return nil
}

func idMismatch(member, got, param, want string) *ParamError {
	return &ParamError{Param: member, Got: got, Reason: fmt.Sprintf("it differs from %s %q, which names where the document is written", param, want),
		Accepted: fmt.Sprintf("%q (or leave %s out for it to be filled in)", want, member)}
}

// checkPatchKeeps refuses a merge patch that would change (or remove) any
// of the given members.
func checkPatchKeeps(patch map[string]any, keep map[string]string) error {
	if patch == nil {
		return &ParamError{Param: "patch", Got: "null", Reason: "empty", Accepted: "a JSON merge patch object, e.g. {\"properties\":{\"eo:cloud_cover\":12}}"}
	}
	for member, want := range keep {
		v, present := patch[member]
		if !present {
			continue
		}
		if s, ok := v.(string); !ok || s != want {
			return &ParamError{Param: "patch." + member, Got: fmt.Sprint(v), Reason: "a patch cannot change or remove the " + member,
				Accepted: fmt.Sprintf("%q or leave it out", want)}
		}
	}
	return nil
}

// write sends one transaction and types its answer.
func (c *Client) write(ctx context.Context, scope TxScope, method, href string, doc map[string]any, contentType string, o WriteOptions) (*WriteResult, error) {
	if err := c.RequireTransactions(ctx, scope); err != nil {
		return nil, err
	}
	r := Request{Method: method, URL: href, Headers: map[string]string{}}
	if doc != nil {
		body, err := json.Marshal(doc)
		if err != nil {
			return nil, &ParamError{Param: "document", Got: "(not shown)", Reason: "it cannot be encoded as JSON: " + err.Error()}
		}
		r.Body = body
		if contentType == "" {
			contentType = "application/json"
		}
		r.Headers["Content-Type"] = contentType
	}
	if o.IdempotencyKey != "" {
		r.Headers["Idempotency-Key"] = o.IdempotencyKey
	}
	fb, err := c.send(ctx, r, acceptJSON)
	if err != nil {
		return nil, err
	}
	res := &WriteResult{Status: fb.status, Accepted: fb.status == http.StatusAccepted}
	if loc := strings.TrimSpace(fb.header.Get("Location")); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			res.Location = fb.url.ResolveReference(u).String()
		}
	}
	if trimmed := bytes.TrimSpace(fb.body); len(trimmed) > 0 && trimmed[0] == '{' {
		var m map[string]any
		if decodeBody(fb.body, &m) == nil {
			res.Document = m
		}
	}
	return res, nil
}

// freshKey marks a context whose reads must not be answered from a cache.
type freshKey struct{}

// Fresh returns a context whose requests ask every cache on the way (the
// reliability layer's included) for a current answer (Cache-Control:
// no-cache). A write uses it to look up what it wrote.
func Fresh(ctx context.Context) context.Context { return context.WithValue(ctx, freshKey{}, true) }

func isFresh(ctx context.Context) bool { v, _ := ctx.Value(freshKey{}).(bool); return v }
