package stacclient

import "encoding/json"

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
// yields exactly the items that were not yet seen.
type Cursor struct {
	Request Request `json:"request"`
	// Skip counts the items of that page, as served, already consumed
	// (yielded, or dropped as duplicates).
	Skip int `json:"skip,omitempty"`
	// SeenIDs are the ids already yielded (the most recent
	// MaxCursorSeenIDs), so that a continued search still drops items a
	// catalog repeats across pages.
	SeenIDs []string `json:"seen_ids,omitempty"`
}

// MaxCursorSeenIDs bounds Cursor.SeenIDs. Duplicates seen in the wild repeat
// items of the adjacent page (Planetary Computer), and a cursor is handed to
// a model, so it must stay a few kilobytes: the most recent 100 ids cover the
// current and previous page at common page sizes.
const MaxCursorSeenIDs = 100
