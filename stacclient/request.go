package stacclient

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
)

// Request is one HTTP request the client makes or will make: the first page
// of a search, or a next link resolved exactly as the server gave it. It is
// plain data so that a cursor can carry it across tool calls.
type Request struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Body    json.RawMessage   `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Cursor says where an iteration stopped: the request of the page it was in
// and how many of that page's items were already yielded. Continuing from it
// yields exactly the items that were not yet seen. ContinueSearch sends its
// request only when it is in the catalog's scope (GET or POST, the
// catalog's origin, under its root path), like a next link.
type Cursor struct {
	Request Request
	// Skip counts the items of that page, as served, already consumed
	// (yielded, or dropped as duplicates).
	Skip int
	// Seen are KeyFingerprints of the most recently yielded items (at most
	// MaxCursorSeen, oldest first), so that a continued search still drops
	// items a catalog repeats across pages.
	Seen []uint32
	// Offset counts the items served (as served, duplicates included)
	// on the pages before Request's, from the search's first request.
	Offset int
	// Replay says that Request is the search's first request and the
	// position is Offset+Skip items further on: ContinueSearch pages there
	// again without yielding what it passes. It is how a position is kept
	// when the next request itself is too large to carry; the page size
	// may differ from the one the position was reached with.
	Replay bool
}

// MaxCursorSeen bounds Cursor.Seen. Duplicates seen in the wild repeat
// items at the boundary of adjacent pages (Planetary Computer, when sort
// keys tie), so the most recent keys are the ones worth remembering; a
// cursor is handed to a model and must stay small.
const MaxCursorSeen = 16

// KeyFingerprint is the 32-bit fingerprint of a de-duplication key that a
// Cursor carries. A false match needs two keys to share 32 bits of SHA-256:
// about one in 270 million per item against a full set of 16.
func KeyFingerprint(key string) uint32 {
	sum := sha256.Sum256([]byte(key))
	return binary.BigEndian.Uint32(sum[:4])
}

// itemKey identifies an item for de-duplication: STAC ids are unique only
// within a collection, so the same id in two collections is two items.
func itemKey(it *Item) string {
	if it.ID == "" {
		return ""
	}
	return it.Collection + "\x00" + it.ID
}
