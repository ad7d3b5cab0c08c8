package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// A cursor is opaque to the model but plain data to us: the stacclient.Cursor
// (the request of the page an iteration stopped in, and how many of its items
// were already returned) plus what is needed to refuse misuse: the catalog it
// belongs to and a fingerprint of the search it continues. A short checksum
// catches cursors that were cut or edited on the way back, so that a damaged
// cursor is a clear error rather than a silently different search.

const cursorVersion = 1

// cursorChecksumLen is the number of sha256 bytes prefixed to the payload.
const cursorChecksumLen = 6

// Cursor kinds.
const (
	cursorItems       = "items"
	cursorCollections = "collections"
)

// pageCursor is the decoded content of a cursor token.
type pageCursor struct {
	Version     int                `json:"v"`
	Kind        string             `json:"k"`
	Catalog     string             `json:"c"` // catalogKey of the catalog it was issued for
	URL         string             `json:"u"` // that catalog's root URL when it was issued
	Fingerprint string             `json:"f,omitempty"`
	Search      *stacclient.Cursor `json:"s,omitempty"` // items: where the search stopped
	Offset      int                `json:"o,omitempty"` // collections: how many were already returned
	Listing     *collectionListing `json:"l,omitempty"` // collections: the listing being continued
}

// encodeCursor writes a cursor token (base64url, no padding).
func encodeCursor(c pageCursor) string {
	c.Version = cursorVersion
	body, err := json.Marshal(c)
	if err != nil {
		// pageCursor holds only plain data; a marshal failure is a programming error.
		panic(fmt.Sprintf("encoding cursor: %v", err))
	}
	sum := sha256.Sum256(body)
	return base64.RawURLEncoding.EncodeToString(append(sum[:cursorChecksumLen:cursorChecksumLen], body...))
}

const cursorAccepted = "the cursor string exactly as returned by the previous call of the same tool on the same catalog, or no cursor to start from the first page"

// catalogKey identifies a catalog across processes: its URL, except for
// catalogs served in-process (the demo, local catalog.json files), whose
// loopback URL changes with every start. A cursor issued by one
// `stac-mcp call` must still work in the next.
func catalogKey(c *Catalog) string {
	switch c.Name {
	case "demo":
		return "demo"
	case "local":
		return "local:" + c.Ref
	}
	return c.URL
}

// newCursor starts a cursor of kind for catalog c.
func newCursor(kind string, c *Catalog) pageCursor {
	return pageCursor{Kind: kind, Catalog: catalogKey(c), URL: c.URL}
}

// decodeCursor reads a token and checks that it is intact, of the wanted kind
// and issued for catalog cat. A search position issued when an in-process
// catalog had another loopback URL is moved onto the current one.
func decodeCursor(token, kind string, cat *Catalog) (pageCursor, error) {
	bad := func(reason string) error {
		return &stacclient.ParamError{Param: "cursor", Got: trimText(token, 80), Reason: reason, Accepted: cursorAccepted}
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return pageCursor{}, bad("not a cursor issued by this server (not base64url)")
	}
	if len(raw) <= cursorChecksumLen {
		return pageCursor{}, bad("too short to be a cursor; it may have been cut")
	}
	sum, body := raw[:cursorChecksumLen], raw[cursorChecksumLen:]
	want := sha256.Sum256(body)
	if !bytes.Equal(sum, want[:cursorChecksumLen]) {
		return pageCursor{}, bad("damaged: its checksum does not match (was it cut or edited?)")
	}
	var c pageCursor
	if err := json.Unmarshal(body, &c); err != nil {
		return pageCursor{}, bad("unreadable content: " + err.Error())
	}
	switch {
	case c.Version != cursorVersion:
		return pageCursor{}, bad(fmt.Sprintf("issued by another version of this server (v%d, this is v%d)", c.Version, cursorVersion))
	case c.Kind != kind:
		return pageCursor{}, bad(fmt.Sprintf("a %s cursor cannot continue a %s listing", c.Kind, kind))
	case c.Catalog != catalogKey(cat):
		return pageCursor{}, bad(fmt.Sprintf("issued for catalog %s, but this call uses %s", c.Catalog, catalogKey(cat)))
	case kind == cursorItems && c.Search == nil:
		return pageCursor{}, bad("holds no search position")
	case kind == cursorCollections && c.Listing == nil:
		return pageCursor{}, bad("holds no listing")
	case c.Offset < 0:
		return pageCursor{}, bad("holds a negative offset")
	}
	if c.Search != nil && c.URL != cat.URL {
		rest, ok := strings.CutPrefix(c.Search.Request.URL, c.URL)
		if !ok {
			return pageCursor{}, bad("its next request is not on the catalog it was issued for")
		}
		c.Search.Request.URL, c.URL = cat.URL+rest, cat.URL
	}
	return c, nil
}

// fingerprint identifies a set of search arguments, so a cursor can tell
// whether a continuation call asks for the same search.
func fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
