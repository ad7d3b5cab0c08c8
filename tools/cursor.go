package tools

import (
	"bytes"
	"compress/flate"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// A cursor is opaque to the model and small (adr/0009): a signed binary
// record, base64url, at most maxCursorBytes whatever the search and the
// depth. It is stateless, so any replica with the same key continues it.
// It is bound to its tool (kind), its catalog and its search parameters,
// and the HMAC makes it unforgeable: a token that was cut, edited or made
// up is refused before anything in it is read. Even a validly signed
// cursor is checked field by field, and the request it continues with is
// rebuilt on the catalog's own base URL (stacclient.ApplyDiff), GET or
// POST, under the catalog root, with no headers: a cursor can make the
// server do nothing a search_items call could not.
//
// Layout (before base64url): mac[16] | version | kind | flags |
// uvarint(len core) | core (DEFLATE when that is shorter) | seen[4*n].
// The core holds the catalog reference (or its 64-bit fingerprint), the
// search parameters as JSON (or their fingerprint: the caller resends
// them), the page size, and for items the first request and the position
// as RequestDiffs against the parameters, the offset and the skip. seen
// are the 32-bit fingerprints of the most recent items returned
// (stacclient.MaxPositionSeen at most), raw because they do not compress.

const (
	cursorVersion = 2
	// maxCursorBytes bounds every token (adr/0009; issue 11).
	maxCursorBytes   = 512
	cursorMACLen     = 16
	maxCursorPayload = maxCursorBytes/4*3 - cursorMACLen
	// maxCursorCore bounds an inflated core: a cursor whose compressed
	// core inflates past it is refused rather than read.
	maxCursorCore = 32 << 10
	// minCursorSeen is how many fingerprints a cursor keeps before it
	// gives up carrying the search parameters.
	minCursorSeen = 4
)

// cursorKind binds a cursor to the tool that issued it.
type cursorKind byte

const (
	cursorItems       cursorKind = 1
	cursorCollections cursorKind = 2
)

func (k cursorKind) tool() string {
	switch k {
	case cursorItems:
		return "search_items"
	case cursorCollections:
		return "search_collections"
	}
	return fmt.Sprintf("an unknown tool (%d)", k)
}

// Cursor flags.
const (
	cursorCatalogHashed = 1 << iota // Catalog is empty, CatalogSum set
	cursorParamsHashed              // Params is empty, ParamsSum set
	cursorReplay                    // items: no Pos; page from First to Offset+Skip
	cursorDeflated                  // the core is DEFLATE-compressed
	cursorExplicitLimit             // the caller chose the page size (limit)
	cursorKnownFlags    = cursorExplicitLimit<<1 - 1
)

// pageCursor is the decoded content of a cursor token.
type pageCursor struct {
	Kind cursorKind
	// Catalog is the reference the call's catalog resolves from (a name,
	// "demo", a URL or a path); empty when only CatalogSum, the
	// fingerprint of its catalogKey, fits.
	Catalog    string
	CatalogSum uint64
	// Params are the selecting parameters as JSON (items: SearchParams
	// without limit; collections: collectionListing without limit); empty
	// when only ParamsSum, their fingerprint, fits: the caller must send
	// them again.
	Params    []byte
	ParamsSum uint64
	// PageSize is the page size (items: the limit sent; collections: the
	// listing's limit); ExplicitLimit says the caller chose it.
	PageSize      int
	ExplicitLimit bool

	// Items: the search's first request, and the request of the page the
	// position is in (nil: replay from First), with stacclient.Position's
	// Offset, Skip and Seen.
	First  stacclient.RequestDiff
	Pos    *stacclient.RequestDiff
	Offset int
	Skip   int
	Seen   []uint32

	// Collections: how many were already returned.
	Listed int
}

// Bounds on decoded fields (a signed cursor is still checked: the key
// may leak, and a bug must not become an unbounded request).
const (
	maxCursorString = 4 << 10
	maxCursorQuery  = 64
	maxCursorPage   = 10000   // page size and skip: the largest limit accepted
	maxCursorOffset = 1 << 30 // items or collections before the position
	maxCursorListed = 1 << 20
)

// cursorKeyState holds the process's cursor key, made on first use.
type cursorKeyState struct {
	once sync.Once
	key  []byte
}

// cursorKey is Deps.CursorKey, or a random key for this process when none
// was configured (cursors then die with the process: adr/0009).
func (d *Deps) cursorKey() []byte {
	d.cursorKeys.once.Do(func() {
		if len(d.CursorKey) > 0 {
			d.cursorKeys.key = slices.Clone(d.CursorKey)
		} else {
			d.cursorKeys.key = NewCursorKey()
		}
	})
	return d.cursorKeys.key
}

// NewCursorKey returns a random 32-byte key for Deps.CursorKey.
func NewCursorKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never returns an error (Go 1.24+): it crashes the program instead
	return key
}

// cursorMAC is the truncated HMAC-SHA256 of a payload.
func cursorMAC(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:cursorMACLen]
}

// sum64 is the 64-bit fingerprint of a catalog key or of parameters.
func sum64(b []byte) uint64 {
	s := sha256.Sum256(b)
	return binary.BigEndian.Uint64(s[:8])
}

// encodeCursor signs c as a token, or returns "" when it does not fit in
// maxCursorBytes with the fingerprints it must keep (minSeen of them).
func encodeCursor(key []byte, c pageCursor, minSeen int) string {
	flags := byte(0)
	var core cursorWriter
	if c.Catalog == "" {
		flags |= cursorCatalogHashed
		core.u64(c.CatalogSum)
	} else {
		core.bytes([]byte(c.Catalog))
	}
	if c.Params == nil {
		flags |= cursorParamsHashed
		core.u64(c.ParamsSum)
	} else {
		core.bytes(c.Params)
	}
	if c.ExplicitLimit {
		flags |= cursorExplicitLimit
	}
	core.uvarint(uint64(c.PageSize))
	switch c.Kind {
	case cursorItems:
		core.diff(c.First)
		if c.Pos == nil {
			flags |= cursorReplay
		} else {
			core.diff(*c.Pos)
		}
		core.uvarint(uint64(c.Offset))
		core.uvarint(uint64(c.Skip))
	case cursorCollections:
		core.uvarint(uint64(c.Listed))
	}
	body := core.b
	if packed := deflate(body); len(packed) < len(body) {
		body, flags = packed, flags|cursorDeflated
	}
	var w cursorWriter
	w.b = append(w.b, cursorVersion, byte(c.Kind), flags)
	w.bytes(body)
	room := (maxCursorPayload - len(w.b)) / 4
	if room < min(minSeen, len(c.Seen)) {
		return ""
	}
	for _, fp := range c.Seen[len(c.Seen)-min(room, len(c.Seen)):] {
		w.b = binary.BigEndian.AppendUint32(w.b, fp)
	}
	return base64.RawURLEncoding.EncodeToString(append(cursorMAC(key, w.b), w.b...))
}

// fitCursor encodes c in the first form that fits, giving up, in this
// order of cost: the parameters (the caller resends them); the position's
// request (the next call pages again from the first request: more
// upstream requests); both; then the catalog reference (the caller
// resends catalog_url) with each of those. It returns the token and the
// form used, or "" when even the last does not fit.
func fitCursor(key []byte, c pageCursor, params, catalog []byte) (string, pageCursor) {
	type form struct{ hashParams, replay, hashCatalog bool }
	forms := []form{{}, {hashParams: true}, {replay: true}, {hashParams: true, replay: true},
		{hashCatalog: true}, {hashCatalog: true, hashParams: true}, {hashCatalog: true, replay: true},
		{hashCatalog: true, hashParams: true, replay: true}}
	for _, f := range forms {
		if f.replay && (c.Kind != cursorItems || c.Pos == nil) {
			continue
		}
		try, minSeen := c, minCursorSeen
		if f.hashParams {
			try.Params, try.ParamsSum = nil, sum64(params)
		}
		if f.replay {
			try.Pos, minSeen = nil, 0
		}
		if f.hashCatalog {
			try.Catalog, try.CatalogSum, minSeen = "", sum64(catalog), 0
		}
		if token := encodeCursor(key, try, minSeen); token != "" {
			return token, try
		}
	}
	return "", c
}

// cursorRefusal is a cursor ParamError.
func cursorRefusal(token, reason string) error {
	return &stacclient.ParamError{Param: "cursor", Got: trimText(token, 80), Reason: reason, Accepted: cursorAccepted}
}

const cursorAccepted = "the cursor string exactly as returned by the previous call of the same tool, or no cursor to start from the first page"

// decodeCursor verifies a token's signature, then reads and bounds every
// field. It does not resolve the catalog or the requests: the caller does,
// through the same checks as for arguments.
func decodeCursor(key []byte, token string, kind cursorKind) (pageCursor, error) {
	bad := func(reason string) (pageCursor, error) { return pageCursor{}, cursorRefusal(token, reason) }
	if len(token) > 2*maxCursorBytes {
		return bad(fmt.Sprintf("%d characters long: not a cursor of this server (they are at most %d)", len(token), maxCursorBytes))
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return bad("not a cursor issued by this server (not base64url)")
	}
	if len(raw) <= cursorMACLen+3 {
		return bad("too short to be a cursor; it may have been cut")
	}
	mac, payload := raw[:cursorMACLen], raw[cursorMACLen:]
	if !hmac.Equal(mac, cursorMAC(key, payload)) {
		if bytes.HasPrefix(raw[6:], []byte(`{"v":1`)) {
			return bad("issued by an earlier version of stac-mcp, whose cursors are no longer accepted; start the search again without cursor")
		}
		return bad("damaged or not issued by this server: its signature does not match (was it cut or edited? " +
			"A cursor also dies when the server restarts, unless STAC_MCP_CURSOR_KEY or the stdio key file keeps its key)")
	}
	c, err := readCursor(payload)
	if err != nil {
		return bad("unreadable content: " + err.Error())
	}
	if c.Kind != kind {
		return bad(fmt.Sprintf("it is a %s cursor (from %s); it cannot continue %s", kindNoun(c.Kind), c.Kind.tool(), kind.tool()))
	}
	return c, nil
}

func kindNoun(k cursorKind) string {
	if k == cursorCollections {
		return "collections"
	}
	return "items"
}

// readCursor parses a verified payload.
func readCursor(payload []byte) (pageCursor, error) {
	r := cursorReader{b: payload}
	version, kind, flags := r.byte(), cursorKind(r.byte()), r.byte()
	switch {
	case r.err != nil:
		return pageCursor{}, r.err
	case version != cursorVersion:
		return pageCursor{}, fmt.Errorf("version %d, this server reads %d", version, cursorVersion)
	case kind != cursorItems && kind != cursorCollections:
		return pageCursor{}, fmt.Errorf("unknown kind %d", kind)
	case flags&^cursorKnownFlags != 0:
		return pageCursor{}, fmt.Errorf("unknown flags %#x", flags)
	case kind == cursorCollections && flags&cursorReplay != 0:
		return pageCursor{}, errors.New("a collections cursor cannot replay")
	}
	body := r.bytes(maxCursorString * 8)
	if r.err != nil {
		return pageCursor{}, r.err
	}
	if flags&cursorDeflated != 0 {
		var err error
		if body, err = inflate(body); err != nil {
			return pageCursor{}, err
		}
	}
	c := pageCursor{Kind: kind, ExplicitLimit: flags&cursorExplicitLimit != 0}
	core := cursorReader{b: body}
	if flags&cursorCatalogHashed != 0 {
		c.CatalogSum = core.u64()
	} else if c.Catalog = core.text(maxCursorString); c.Catalog == "" && core.err == nil {
		core.err = errors.New("empty catalog reference")
	}
	if flags&cursorParamsHashed != 0 {
		c.ParamsSum = core.u64()
	} else if c.Params = core.bytes(maxCursorCore); core.err == nil && !json.Valid(c.Params) {
		core.err = errors.New("its parameters are not JSON")
	}
	c.PageSize = int(core.uvarint(maxCursorPage))
	if core.err == nil && c.PageSize < 1 {
		core.err = errors.New("page size 0")
	}
	switch kind {
	case cursorItems:
		c.First = core.diff()
		if flags&cursorReplay == 0 {
			pos := core.diff()
			c.Pos = &pos
		}
		c.Offset = int(core.uvarint(maxCursorOffset))
		c.Skip = int(core.uvarint(maxCursorPage))
	case cursorCollections:
		c.Listed = int(core.uvarint(maxCursorListed))
	}
	switch {
	case core.err != nil:
		return pageCursor{}, core.err
	case len(core.b) != 0:
		return pageCursor{}, fmt.Errorf("%d bytes after its content", len(core.b))
	}
	seen := r.b
	if len(seen)%4 != 0 || len(seen)/4 > stacclient.MaxPositionSeen || (kind != cursorItems && len(seen) > 0) {
		return pageCursor{}, fmt.Errorf("%d trailing bytes", len(seen))
	}
	for i := 0; i < len(seen); i += 4 {
		c.Seen = append(c.Seen, binary.BigEndian.Uint32(seen[i:]))
	}
	return c, nil
}

// deflaters reuse compressors: each holds about a megabyte of state.
var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestCompression) // error only for an invalid level
	return w
}}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// inflate undoes deflate, refusing output over maxCursorCore.
func inflate(b []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxCursorCore+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("its compressed content is damaged (%v)", err)
	case len(out) > maxCursorCore:
		return nil, fmt.Errorf("its content inflates past %d bytes", maxCursorCore)
	}
	return out, nil
}

// cursorWriter appends cursor fields.
type cursorWriter struct{ b []byte }

func (w *cursorWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *cursorWriter) u64(v uint64)     { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *cursorWriter) bytes(p []byte) {
	w.uvarint(uint64(len(p)))
	w.b = append(w.b, p...)
}

// diff writes a RequestDiff: method ('G'/'P'), flags (1: answered), path,
// the query parts (uvarint base<<1, or len<<1|1 and the literal) and the
// patch.
func (w *cursorWriter) diff(d stacclient.RequestDiff) {
	method := byte('G')
	if d.Method == "POST" {
		method = 'P'
	}
	answered := byte(0)
	if d.Answered {
		answered = 1
	}
	w.b = append(w.b, method, answered)
	w.bytes([]byte(d.Path))
	w.uvarint(uint64(len(d.Query)))
	for _, q := range d.Query {
		if q.Base >= 0 {
			w.uvarint(uint64(q.Base) << 1)
		} else {
			w.uvarint(uint64(len(q.Literal))<<1 | 1)
			w.b = append(w.b, q.Literal...)
		}
	}
	w.bytes(d.Patch)
}

// cursorReader reads cursor fields; the first error sticks.
type cursorReader struct {
	b   []byte
	err error
}

func (r *cursorReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *cursorReader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.fail("cut short")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *cursorReader) u64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.fail("cut short")
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *cursorReader) uvarint(limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	switch {
	case n <= 0:
		r.fail("a number is cut short or too large")
		return 0
	case v > limit:
		r.fail("a number (%d) is over its bound %d", v, limit)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *cursorReader) bytes(limit int) []byte {
	n := int(r.uvarint(uint64(limit)))
	if r.err != nil || len(r.b) < n {
		r.fail("cut short")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// text reads a string that must be valid UTF-8 without control characters.
func (r *cursorReader) text(limit int) string {
	b := r.bytes(limit)
	if r.err == nil && (!utf8.Valid(b) || bytes.ContainsFunc(b, func(c rune) bool { return c < 0x20 || c == 0x7f })) {
		r.fail("a text field is not printable UTF-8")
	}
	return string(b)
}

func (r *cursorReader) diff() stacclient.RequestDiff {
	var d stacclient.RequestDiff
	switch r.byte() {
	case 'G':
		d.Method = "GET"
	case 'P':
		d.Method = "POST"
	default:
		r.fail("a request method that is neither GET nor POST")
	}
	switch r.byte() {
	case 0:
	case 1:
		d.Answered = true
	default:
		r.fail("unknown request flags")
	}
	d.Path = r.text(maxCursorString)
	n := int(r.uvarint(maxCursorQuery))
	for i := 0; i < n && r.err == nil; i++ {
		tag := r.uvarint(maxCursorString<<1 | 1)
		if tag&1 == 0 {
			d.Query = append(d.Query, stacclient.QueryPart{Base: int(tag >> 1)})
			continue
		}
		if l := int(tag >> 1); len(r.b) < l {
			r.fail("cut short")
		} else {
			lit := r.b[:l]
			r.b = r.b[l:]
			if !utf8.Valid(lit) {
				r.fail("a query pair is not UTF-8")
			}
			d.Query = append(d.Query, stacclient.QueryPart{Base: -1, Literal: string(lit)})
		}
	}
	if patch := r.bytes(maxCursorCore); len(patch) > 0 {
		if !json.Valid(patch) {
			r.fail("its body patch is not JSON")
		}
		d.Patch = patch
	}
	return d
}
