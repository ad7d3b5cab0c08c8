package stacclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/origin"
)

// Continuing a search: where an iteration stopped (Position, with the
// Request of its page), and that request written small, as a RequestDiff
// against the search's own parameters, so that a cursor token (package
// tools) can carry it across tool calls and ApplyDiff can rebuild it on
// the catalog's own base URL. The token's format and signature are the
// tools' business (tools/internal/cursor); this file knows nothing of them.

// Request is one HTTP request the client makes or will make: the first page
// of a search, or a next link resolved exactly as the server gave it. It is
// plain data so that a Position can hold it.
type Request struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Body    json.RawMessage   `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Position says where an iteration stopped: the request of the page it was in
// and how many of that page's items were already yielded. Continuing from it
// yields exactly the items that were not yet seen. ContinueSearch sends its
// request only when it is in the catalog's scope (GET or POST, the
// catalog's origin, under its root path), like a next link.
type Position struct {
	Request Request
	// Skip counts the items of that page, as served, already consumed
	// (yielded, or dropped as duplicates).
	Skip int
	// Seen are keyFingerprints of the most recently yielded items (at most
	// MaxPositionSeen, oldest first), so that a continued search still drops
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

// MaxPositionSeen bounds Position.Seen. Duplicates seen in the wild repeat
// items at the boundary of adjacent pages (Planetary Computer, when sort
// keys tie), so the most recent keys are the ones worth remembering; a
// cursor is handed to a model and must stay small.
const MaxPositionSeen = 16

// keyFingerprint is the 32-bit fingerprint of a de-duplication key that a
// Position carries. A false match needs two keys to share 32 bits of SHA-256:
// about one in 270 million per item against a full set of 16.
func keyFingerprint(key string) uint32 {
	sum := sha256.Sum256([]byte(key))
	return binary.BigEndian.Uint32(sum[:4])
}

// ContinueSearch resumes a search from a position returned by Search.Position.
func (c *Client) ContinueSearch(pos Position, lim SearchLimits) *Search {
	start := pos.Request
	s := &Search{client: c, start: &start, lim: lim,
		resume: pagerStart{skip: pos.Skip, seen: pos.Seen, offset: pos.Offset, replay: pos.Replay}}
	s.pager()
	return s
}

// itemKey identifies an item for de-duplication: STAC ids are unique only
// within a collection, so the same id in two collections is two items.
func itemKey(it *Item) string {
	if it.ID == "" {
		return ""
	}
	return it.Collection + "\x00" + it.ID
}

// A cursor must stay small whatever the search, yet the request it
// continues with (a next link) usually repeats the whole search: the POST
// body with a page token added, or the GET query with one more parameter.
// RequestDiff writes such a request as the difference from what the search
// parameters themselves produce, so a cursor that can rebuild the
// parameters carries only the token. It holds no absolute URL: the path is
// relative to the catalog root, and ApplyDiff rebuilds the URL on the
// client's own base, so a diff cannot name another host.

// RequestDiff is a search request written against the requests its
// SearchParams produce (PostBody for POST, QueryString for GET).
type RequestDiff struct {
	Method string // GET or POST
	// Path is the request's escaped path below the catalog root: "/search"
	// for https://host/v1/search when the catalog is https://host/v1, ""
	// for the root itself.
	Path string
	// Answered says the path is below the URL the landing page was
	// answered from (after a redirect), not the configured base URL.
	Answered bool
	// Query is the request's query string, pair by pair: most pairs are
	// those of the parameters' query string (or of the catalog URL's own
	// query, an API key say), referenced by index; the others are literal.
	Query []QueryPart
	// Patch (POST only) sets the members of the request body that differ
	// from the parameters' POST body, and removes with null those it lacks.
	// Empty means the body is the parameters' own.
	Patch json.RawMessage
}

// QueryPart is one key=value pair of a query string, as sent.
type QueryPart struct {
	Base    int    // the index of the pair in the base query; -1 for Literal
	Literal string // a raw key=value pair
}

// positionalParams are page parameters that count items or pages from the
// start, so that their meaning depends on the page size.
var positionalParams = []string{"page", "offset", "startindex", "start", "startrecord", "skip", "pagenumber"}

// PagesByPosition reports whether the request pages by position (page=3,
// offset=40) rather than by an opaque token: continuing it with another
// page size would skip or repeat items.
func (d RequestDiff) PagesByPosition() bool {
	for _, q := range d.Query {
		if q.Base < 0 {
			key, _, _ := strings.Cut(q.Literal, "=")
			if k, err := url.QueryUnescape(key); err == nil && slices.Contains(positionalParams, strings.ToLower(k)) {
				return true
			}
		}
	}
	var patch map[string]json.RawMessage
	if json.Unmarshal(d.Patch, &patch) == nil {
		for k := range patch {
			if slices.Contains(positionalParams, strings.ToLower(k)) {
				return true
			}
		}
	}
	return false
}

// DiffRequest writes r against the requests p produces. It fails when r
// cannot be continued from a cursor: outside the catalog's scope, or a POST
// whose body is not a JSON object. Link headers are not part of a diff.
func (c *Client) DiffRequest(p SearchParams, r Request) (RequestDiff, error) {
	why, u := c.checkScope(r)
	if why != "" {
		return RequestDiff{}, errors.New(why)
	}
	d := RequestDiff{Method: methodOrGet(r.Method)}
	root := c.base
	if !underScopeRoot(u, root) {
		root, d.Answered = c.rootLinkBase(), true
	}
	d.Path = strings.TrimPrefix(u.EscapedPath(), strings.TrimSuffix(rootDir(root.EscapedPath()), "/"))
	base := baseQuery(root, p, d.Method)
	for _, pair := range splitQuery(u.RawQuery) {
		d.Query = append(d.Query, queryPart(pair, base))
	}
	if d.Method == http.MethodPost {
		patch, err := topLevelPatch(p.PostBody(), r.Body)
		if err != nil {
			return RequestDiff{}, fmt.Errorf("its POST body is not a JSON object: %w", err)
		}
		d.Patch = patch
	}
	return d, nil
}

// ApplyDiff rebuilds the request d describes from p, on the client's own
// base URL, and checks it against the catalog's scope like a next link.
// ctx is used only when the diff is relative to the landing page's
// answering URL and the landing page was not fetched yet.
func (c *Client) ApplyDiff(ctx context.Context, p SearchParams, d RequestDiff) (Request, error) {
	if why := methodProblem(d.Method); why != "" || d.Method == "" {
		return Request{}, errors.New(cmp.Or(why, "it names no method"))
	}
	ref, err := url.Parse(d.Path)
	if err != nil || ref.Scheme != "" || ref.Host != "" || ref.User != nil || ref.Opaque != "" ||
		ref.RawQuery != "" || ref.ForceQuery || ref.Fragment != "" || (d.Path != "" && !strings.HasPrefix(d.Path, "/")) {
		return Request{}, fmt.Errorf("its path %q is not a path below the catalog root", d.Path)
	}
	root := c.base
	if d.Answered {
		if _, err := c.Root(ctx); err != nil {
			return Request{}, err
		}
		root = c.rootLinkBase()
	}
	u := *root
	u.Path = strings.TrimSuffix(rootDir(root.Path), "/") + ref.Path
	u.RawPath = strings.TrimSuffix(rootDir(root.EscapedPath()), "/") + ref.EscapedPath()
	u.Fragment, u.RawFragment = "", ""
	base := baseQuery(root, p, d.Method)
	pairs := make([]string, 0, len(d.Query))
	for _, q := range d.Query {
		switch {
		case q.Base >= 0 && q.Base < len(base):
			pairs = append(pairs, base[q.Base])
		case q.Base >= 0:
			return Request{}, fmt.Errorf("its query refers to parameter %d of %d", q.Base, len(base))
		case q.Literal == "" || strings.ContainsAny(q.Literal, "&#") || !validQueryPair(q.Literal):
			return Request{}, fmt.Errorf("its query pair %q is not a key=value pair", q.Literal)
		default:
			pairs = append(pairs, q.Literal)
		}
	}
	u.RawQuery, u.ForceQuery = strings.Join(pairs, "&"), false
	r := Request{Method: d.Method, URL: u.String()}
	if d.Method == http.MethodPost {
		if r.Body, err = applyTopLevelPatch(p.PostBody(), d.Patch); err != nil {
			return Request{}, fmt.Errorf("its body patch is not a JSON object: %w", err)
		}
	}
	if why, _ := c.checkScope(r); why != "" {
		return Request{}, errors.New(why)
	}
	return r, nil
}

// underScopeRoot reports whether u is on root's origin, under its path.
func underScopeRoot(u, root *url.URL) bool {
	return origin.Of(u) == origin.Of(root) && underRoot(u.Path, root.Path)
}

// baseQuery is the pairs a diff's query refers to: the catalog URL's own
// query, then (GET) the parameters' query string.
func baseQuery(root *url.URL, p SearchParams, method string) []string {
	base := splitQuery(root.RawQuery)
	if method == http.MethodGet {
		base = append(base, splitQuery(p.QueryString())...)
	}
	return base
}

func splitQuery(raw string) []string {
	var out []string
	for pair := range strings.SplitSeq(raw, "&") {
		if pair != "" {
			out = append(out, pair)
		}
	}
	return out
}

// queryPart refers to a base pair equal to pair (as written, or decoded:
// servers re-encode the parameters they echo in next links), else keeps
// pair literally.
func queryPart(pair string, base []string) QueryPart {
	if i := slices.Index(base, pair); i >= 0 {
		return QueryPart{Base: i}
	}
	if v, err := url.ParseQuery(pair); err == nil {
		for i, b := range base {
			if bv, err := url.ParseQuery(b); err == nil && equalValues(v, bv) {
				return QueryPart{Base: i}
			}
		}
	}
	return QueryPart{Base: -1, Literal: pair}
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		if !slices.Equal(va, b[k]) {
			return false
		}
	}
	return true
}

func validQueryPair(pair string) bool {
	v, err := url.ParseQuery(pair)
	return err == nil && len(v) == 1
}

// topLevelPatch is the patch that turns base into target: the members of
// target that differ from base, and null for members target lacks. Member
// values are replaced whole.
func topLevelPatch(base, target json.RawMessage) (json.RawMessage, error) {
	var b, t map[string]json.RawMessage
	if err := json.Unmarshal(base, &b); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(target, &t); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errors.New("null")
	}
	patch := map[string]json.RawMessage{}
	for k, v := range t {
		if bv, ok := b[k]; !ok || canonicalJSON(bv) != canonicalJSON(v) {
			patch[k] = v
		}
	}
	for k := range b {
		if _, ok := t[k]; !ok {
			patch[k] = json.RawMessage("null")
		}
	}
	if len(patch) == 0 {
		return nil, nil
	}
	return json.Marshal(patch)
}

// applyTopLevelPatch applies a topLevelPatch to base.
func applyTopLevelPatch(base, patch json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(patch)) == 0 {
		return base, nil
	}
	var b, p map[string]json.RawMessage
	if err := json.Unmarshal(base, &b); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("null")
	}
	if b == nil {
		b = map[string]json.RawMessage{}
	}
	for k, v := range p {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return json.Marshal(b)
}
