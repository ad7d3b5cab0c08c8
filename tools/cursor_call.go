package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

// How a call with a cursor finds its catalog: the cursor knows
// the catalog it was issued for, so a call may send the cursor alone. Its
// reference goes through Catalogs.Resolve exactly like a catalog_url
// argument (the same checks apply, e.g. that an http client may not name a
// local path), and a catalog_url sent with it must name the same catalog.

// cursorInput is implemented by the inputs of tools that continue from a
// cursor.
type cursorInput interface {
	cursorToken() (string, cursor.Kind)
}

func (in SearchItemsIn) cursorToken() (string, cursor.Kind) { return in.Cursor, cursor.Items }
func (in SearchCollectionsIn) cursorToken() (string, cursor.Kind) {
	return in.Cursor, cursor.Collections
}

// cursorRefusal is a cursor ParamError.
func cursorRefusal(token, reason string) error {
	return &stacclient.ParamError{Param: "cursor", Got: trimText(token, 80), Reason: reason, Accepted: cursorAccepted}
}

const cursorAccepted = "the cursor string exactly as returned by the previous call of the same tool, or no cursor to start from the first page"

// decodeCursor verifies and reads a cursor argument (tools/internal/cursor);
// a token it refuses is an argument error naming the cursor.
func decodeCursor(key []byte, token string, kind cursor.Kind) (cursor.Cursor, error) {
	c, err := cursor.Decode(key, token, kind)
	if err != nil {
		return cursor.Cursor{}, cursorRefusal(token, err.Error())
	}
	return c, nil
}

// resolveCall resolves the catalog of a call, and verifies its cursor.
func resolveCall(ctx context.Context, d *Deps, in catalogInput) (*Catalog, *cursor.Cursor, error) {
	return resolveCallRef(ctx, d, strings.TrimSpace(in.catalogRef()), in)
}

// resolveCallRef is resolveCall with the catalog reference given apart
// (one member of a list catalog_url, a group's only member).
func resolveCallRef(ctx context.Context, d *Deps, ref string, in catalogInput) (*Catalog, *cursor.Cursor, error) {
	ci, ok := in.(cursorInput)
	if !ok {
		cat, err := d.Catalogs.Resolve(ctx, ref)
		return cat, nil, err
	}
	token, kind := ci.cursorToken()
	if token == "" {
		cat, err := d.Catalogs.Resolve(ctx, ref)
		return cat, nil, err
	}
	cur, err := decodeCursor(d.cursorKey(), token, kind)
	if err != nil {
		return nil, nil, err
	}
	if cur.Kind != kind {
		return nil, nil, cursorRefusal(token, "it continues a search of several catalogs; send it to search_items with the same catalog_url (or none)")
	}
	switch {
	case cur.Catalog == "" && ref == "":
		return nil, nil, cursorRefusal(token, "it does not carry its catalog (the reference is too long to fit in a cursor): send it with the catalog_url of the call that returned it")
	case cur.Catalog == "":
		cat, err := d.Catalogs.Resolve(ctx, ref)
		if err != nil {
			return nil, nil, err
		}
		if cursor.Sum64([]byte(catalogKey(cat))) != cur.CatalogSum {
			return nil, nil, cursorRefusal(token, fmt.Sprintf("it was issued for another catalog than catalog_url %q", ref))
		}
		return cat, &cur, nil
	case ref == "":
		cat, err := d.Catalogs.Resolve(ctx, cur.Catalog)
		if err != nil {
			return nil, nil, fmt.Errorf("the cursor's catalog: %w", err)
		}
		return cat, &cur, nil
	}
	cat, err := d.Catalogs.Resolve(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	own, err := d.Catalogs.Resolve(ctx, cur.Catalog)
	if err != nil || own.Client != cat.Client {
		return nil, nil, cursorRefusal(token, fmt.Sprintf("issued for catalog %s, but this call names %s; send the cursor without catalog_url", cur.Catalog, ref))
	}
	return cat, &cur, nil
}

// cursorCatalogRef is how a cursor names its catalog: what resolves to it
// again in another process (the demo's loopback URL changes at every
// start; a preset or configured name keeps what the operator configured
// for it).
func cursorCatalogRef(c *Catalog) string {
	switch c.Name {
	case "":
		return c.URL
	case "local":
		return c.Ref
	}
	return c.Name // "demo", a preset or a configured name
}

// catalogKey identifies a catalog across processes, for a cursor that
// carries only its fingerprint: a name the operator configured (a preset,
// a STAC_MCP_CATALOGS entry, which may be a local catalog served on a
// loopback port that changes at every start, or "demo"), else the path or
// URL as given.
func catalogKey(c *Catalog) string {
	switch c.Name {
	case "":
		return c.URL
	case "local":
		return "local:" + c.Ref
	}
	return c.Name
}

// resendText tells the model which arguments to send again with a cursor
// that could not carry them.
func resendText(requires []string) string {
	if len(requires) == 0 {
		return ""
	}
	return " together with the same search parameters as this call: " + strings.Join(requires, ", ") +
		" (unchanged; they are too large to carry in the cursor)"
}

// cursorParams chooses the parameters a cursor continues with, as JSON:
// those it carries (the caller may repeat them, but not send others), or,
// when it carries only their fingerprint, those the caller sends again,
// which must match. given is the JSON of what the call sent; sent says
// whether it sent any.
func cursorParams(cur *cursor.Cursor, token string, given []byte, sent bool) ([]byte, error) {
	const different = "it continues a different search than the parameters given with it; send the cursor alone " +
		"(with what cursor_requires lists, unchanged), or drop it to start a new search"
	switch {
	case cur.Params != nil && sent && cursor.Sum64(given) != cursor.Sum64(cur.Params):
		return nil, cursorRefusal(token, different)
	case cur.Params != nil:
		return cur.Params, nil
	case !sent:
		return nil, cursorRefusal(token, "it does not carry its search parameters (they are too large to fit in a cursor): "+
			"send it together with exactly the parameters of the call that returned it (its cursor_requires lists them)")
	case cursor.Sum64(given) != cur.ParamsSum:
		return nil, cursorRefusal(token, different)
	}
	return given, nil
}
