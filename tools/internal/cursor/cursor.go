// Package cursor is the signed cursor token that search_items and
// search_collections return and accept (adr/0009): its binary layout, the
// bounds every decoded field is checked against, the HMAC that makes it
// unforgeable, the fitting that keeps it under MaxBytes, and the key it is
// signed with (NewKey, and the key file stdio and call keep in the state
// directory). What a call does with a cursor (which catalog, which search
// parameters, the argument errors a model sees) is the tools' business.
package cursor

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
	"sync"
	"unicode/utf8"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// A cursor is opaque to the model and small (adr/0009): a signed binary
// record, base64url, at most MaxBytes whatever the search and the
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
	formatVersion = 2
	// MaxBytes bounds every token (adr/0009).
	MaxBytes = 512
	// MACLen is the length of the truncated HMAC a token starts with.
	MACLen     = 16
	maxPayload = MaxBytes/4*3 - MACLen
	// maxCore bounds an inflated core: a cursor whose compressed
	// core inflates past it is refused rather than read.
	maxCore = 32 << 10
	// minSeenKept is how many fingerprints a cursor keeps before it
	// gives up carrying the search parameters.
	minSeenKept = 4
)

// Kind binds a cursor to the tool that issued it.
type Kind byte

// The kinds: the tool a cursor continues.
const (
	Items       Kind = 1 // search_items
	Collections Kind = 2 // search_collections
	// Federated is search_items over several catalogs (federated.go).
	Federated Kind = 3
	Series    Kind = 4 // index_time_series
)

func (k Kind) tool() string {
	switch k {
	case Items, Federated:
		return "search_items"
	case Collections:
		return "search_collections"
	case Series:
		return "index_time_series"
	}
	return fmt.Sprintf("an unknown tool (%d)", k)
}

// Cursor flags.
const (
	flagCatalogHashed = 1 << iota // Catalog is empty, CatalogSum set
	flagParamsHashed              // Params is empty, ParamsSum set
	flagReplay                    // items: no Pos; page from First to Offset+Skip
	flagDeflated                  // the core is DEFLATE-compressed
	flagExplicitLimit             // the caller chose the page size (limit)
	knownFlags        = flagExplicitLimit<<1 - 1
)

// Cursor is the decoded content of a cursor token.
type Cursor struct {
	Kind Kind
	// Catalog is the reference the call's catalog resolves from (a name,
	// "demo", a URL or a path); empty when only CatalogSum, the
	// fingerprint of its key (the tools' catalogKey), fits.
	Catalog    string
	CatalogSum uint64
	// Params are the selecting parameters as JSON (items: SearchParams
	// without limit; collections: the tools' collectionListing without
	// limit); empty when only ParamsSum, their fingerprint, fits: the
	// caller must send them again.
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

	// Federated: each catalog's place, in the order of the call's
	// catalogs (their references are Members[i].Ref, or, with Catalog
	// hashed, in the catalog_url the caller sends again), and the records
	// of the items the next page must not repeat.
	Members []MemberPosition
	Tail    []TailRecord
	// Series: the fingerprint of the acquisitions the series pages
	// through (the catalog's answer may change between calls), how many
	// of them, in the series' reading order, are done, and which of the
	// 64 after the first not done are done too.
	ListSum  uint64
	Done     int
	DoneBits uint64
}

// Bounds on decoded fields (a signed cursor is still checked: the key
// may leak, and a bug must not become an unbounded request).
const (
	MaxString = 4 << 10 // a text field (the tools bound a listing's q by it too)
	maxQuery  = 64
	maxPage   = 10000   // page size and skip: the largest limit accepted
	maxOffset = 1 << 30 // items or collections before the position
	maxListed = 1 << 20
)

// NewKey returns a random 32-byte key to sign cursors with.
func NewKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never returns an error (Go 1.24+): it crashes the program instead
	return key
}

// macOf is the truncated HMAC-SHA256 of a payload.
func macOf(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:MACLen]
}

// Sum64 is the 64-bit fingerprint of a catalog key or of parameters.
func Sum64(b []byte) uint64 {
	s := sha256.Sum256(b)
	return binary.BigEndian.Uint64(s[:8])
}

// Encode signs c as a token as it is, keeping as many of its fingerprints
// as fit, or returns "" when it does not fit in MaxBytes. The tools sign
// with Fit; their tests forge signed cursors with Encode.
func Encode(key []byte, c Cursor) string { return encode(key, c, 0) }

// encode signs c as a token, or returns "" when it does not fit in
// MaxBytes with the fingerprints it must keep (minSeen of them).
func encode(key []byte, c Cursor, minSeen int) string {
	flags := byte(0)
	var core writer
	switch {
	case c.Catalog == "":
		flags |= flagCatalogHashed
		core.u64(c.CatalogSum)
	case c.Kind == Federated:
		core.b = append(core.b, federatedRefs) // each member carries its own
	default:
		core.bytes([]byte(c.Catalog))
	}
	if c.Params == nil {
		flags |= flagParamsHashed
		core.u64(c.ParamsSum)
	} else {
		core.bytes(c.Params)
	}
	if c.ExplicitLimit {
		flags |= flagExplicitLimit
	}
	core.uvarint(uint64(c.PageSize))
	switch c.Kind {
	case Items:
		core.diff(c.First)
		if c.Pos == nil {
			flags |= flagReplay
		} else {
			core.diff(*c.Pos)
		}
		core.uvarint(uint64(c.Offset))
		core.uvarint(uint64(c.Skip))
	case Collections:
		core.uvarint(uint64(c.Listed))
	case Federated:
		core.members(c.Members, c.Catalog == "")
		core.tail(c.Tail)
	case Series:
		core.u64(c.ListSum)
		core.uvarint(uint64(c.Done))
		core.u64(c.DoneBits)
	}
	body := core.b
	if packed := deflate(body); len(packed) < len(body) {
		body, flags = packed, flags|flagDeflated
	}
	var w writer
	w.b = append(w.b, formatVersion, byte(c.Kind), flags)
	w.bytes(body)
	room := (maxPayload - len(w.b)) / 4
	if room < min(minSeen, len(c.Seen)) {
		return ""
	}
	for _, fp := range c.Seen[len(c.Seen)-min(room, len(c.Seen)):] {
		w.b = binary.BigEndian.AppendUint32(w.b, fp)
	}
	return base64.RawURLEncoding.EncodeToString(append(macOf(key, w.b), w.b...))
}

// Fit encodes c in the first form that fits, giving up, in this
// order of cost: the parameters (the caller resends them); the position's
// request (the next call pages again from the first request: more
// upstream requests); both; then the catalog reference (the caller
// resends catalog_url) with each of those. It returns the token and the
// form used, or "" when even the last does not fit.
func Fit(key []byte, c Cursor, params, catalog []byte) (string, Cursor) {
	type form struct{ hashParams, replay, hashCatalog bool }
	forms := []form{{}, {hashParams: true}, {replay: true}, {hashParams: true, replay: true},
		{hashCatalog: true}, {hashCatalog: true, hashParams: true}, {hashCatalog: true, replay: true},
		{hashCatalog: true, hashParams: true, replay: true}}
	for _, f := range forms {
		if f.replay && (c.Kind != Items || c.Pos == nil) {
			continue
		}
		try, minSeen := c, minSeenKept
		if f.hashParams {
			try.Params, try.ParamsSum = nil, Sum64(params)
		}
		if f.replay {
			try.Pos, minSeen = nil, 0
		}
		if f.hashCatalog {
			try.Catalog, try.CatalogSum, minSeen = "", Sum64(catalog), 0
		}
		if token := encode(key, try, minSeen); token != "" {
			return token, try
		}
	}
	return "", c
}

// Decode verifies a token's signature, then reads and bounds every
// field. It does not resolve the catalog or the requests: the caller does,
// through the same checks as for arguments. An error's text is the reason
// the token is refused, phrased for the model that sent it.
func Decode(key []byte, token string, kind Kind) (Cursor, error) {
	bad := func(reason string) (Cursor, error) { return Cursor{}, errors.New(reason) }
	if len(token) > 2*MaxBytes {
		return bad(fmt.Sprintf("%d characters long: not a cursor of this server (they are at most %d)", len(token), MaxBytes))
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return bad("not a cursor issued by this server (not base64url)")
	}
	if len(raw) <= MACLen+3 {
		return bad("too short to be a cursor; it may have been cut")
	}
	mac, payload := raw[:MACLen], raw[MACLen:]
	if !hmac.Equal(mac, macOf(key, payload)) {
		if bytes.HasPrefix(raw[6:], []byte(`{"v":1`)) {
			return bad("issued by an earlier version of stac-mcp, whose cursors are no longer accepted; start the search again without cursor")
		}
		return bad("damaged or not issued by this server: its signature does not match (was it cut or edited? " +
			"A cursor also dies when the server restarts, unless STAC_MCP_CURSOR_KEY or the stdio key file keeps its key)")
	}
	c, err := Read(payload)
	if err != nil {
		return bad("unreadable content: " + err.Error())
	}
	if c.Kind != kind && (kind != Items || c.Kind != Federated) {
		return bad(fmt.Sprintf("it is a %s cursor (from %s); it cannot continue %s", kindNoun(c.Kind), c.Kind.tool(), kind.tool()))
	}
	return c, nil
}

func kindNoun(k Kind) string {
	switch k {
	case Collections:
		return "collections"
	case Series:
		return "time series"
	}
	return "items"
}

// Read parses a payload (a token after its MAC) without verifying it;
// Decode verifies first. Only the tools' fuzz test reads unsigned bytes,
// to sign what decodes and send it through real calls.
func Read(payload []byte) (Cursor, error) {
	r := reader{b: payload}
	version, kind, flags := r.byte(), Kind(r.byte()), r.byte()
	switch {
	case r.err != nil:
		return Cursor{}, r.err
	case version != formatVersion:
		return Cursor{}, fmt.Errorf("version %d, this server reads %d", version, formatVersion)
	case kind != Items && kind != Collections && kind != Federated && kind != Series:
		return Cursor{}, fmt.Errorf("unknown kind %d", kind)
	case flags&^knownFlags != 0:
		return Cursor{}, fmt.Errorf("unknown flags %#x", flags)
	case kind != Items && flags&flagReplay != 0:
		return Cursor{}, errors.New("only a single catalog's items cursor can replay")
	}
	body := r.bytes(MaxString * 8)
	if r.err != nil {
		return Cursor{}, r.err
	}
	if flags&flagDeflated != 0 {
		var err error
		if body, err = inflate(body); err != nil {
			return Cursor{}, err
		}
	}
	c := Cursor{Kind: kind, ExplicitLimit: flags&flagExplicitLimit != 0}
	core := reader{b: body}
	switch {
	case flags&flagCatalogHashed != 0:
		c.CatalogSum = core.u64()
	case kind == Federated:
		// The references are the members'; the field says they are there.
		if core.byte() != federatedRefs && core.err == nil {
			core.err = errors.New("a federated cursor without its catalogs' references")
		}
		c.Catalog = federatedCatalogs
	default:
		if c.Catalog = core.text(MaxString); c.Catalog == "" && core.err == nil {
			core.err = errors.New("empty catalog reference")
		}
	}
	if flags&flagParamsHashed != 0 {
		c.ParamsSum = core.u64()
	} else if c.Params = core.bytes(maxCore); core.err == nil && !json.Valid(c.Params) {
		core.err = errors.New("its parameters are not JSON")
	}
	c.PageSize = int(core.uvarint(maxPage))
	if core.err == nil && c.PageSize < 1 {
		core.err = errors.New("page size 0")
	}
	switch kind {
	case Items:
		c.First = core.diff()
		if flags&flagReplay == 0 {
			pos := core.diff()
			c.Pos = &pos
		}
		c.Offset = int(core.uvarint(maxOffset))
		c.Skip = int(core.uvarint(maxPage))
	case Collections:
		c.Listed = int(core.uvarint(maxListed))
	case Federated:
		c.Members = core.members(flags&flagCatalogHashed != 0)
		c.Tail = core.tail()
	case Series:
		c.ListSum = core.u64()
		c.Done = int(core.uvarint(maxListed))
		c.DoneBits = core.u64()
	}
	switch {
	case core.err != nil:
		return Cursor{}, core.err
	case len(core.b) != 0:
		return Cursor{}, fmt.Errorf("%d bytes after its content", len(core.b))
	}
	seen := r.b
	if len(seen)%4 != 0 || len(seen)/4 > stacclient.MaxPositionSeen || (kind != Items && len(seen) > 0) {
		return Cursor{}, fmt.Errorf("%d trailing bytes", len(seen))
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

// inflate undoes deflate, refusing output over maxCore.
func inflate(b []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxCore+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("its compressed content is damaged (%w)", err)
	case len(out) > maxCore:
		return nil, fmt.Errorf("its content inflates past %d bytes", maxCore)
	}
	return out, nil
}

// writer appends cursor fields.
type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) u64(v uint64)     { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *writer) bytes(p []byte) {
	w.uvarint(uint64(len(p)))
	w.b = append(w.b, p...)
}

// diff writes a RequestDiff: method ('G'/'P'), flags (1: answered), path,
// the query parts (uvarint base<<1, or len<<1|1 and the literal) and the
// patch.
func (w *writer) diff(d stacclient.RequestDiff) {
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

// reader reads cursor fields; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) < 1 {
		r.fail("cut short")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) u64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.fail("cut short")
		return 0
	}
	v := binary.BigEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) uvarint(limit uint64) uint64 {
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

func (r *reader) bytes(limit int) []byte {
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
func (r *reader) text(limit int) string {
	b := r.bytes(limit)
	if r.err == nil && (!utf8.Valid(b) || bytes.ContainsFunc(b, func(c rune) bool { return c < 0x20 || c == 0x7f })) {
		r.fail("a text field is not printable UTF-8")
	}
	return string(b)
}

func (r *reader) diff() stacclient.RequestDiff {
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
	d.Path = r.text(MaxString)
	n := int(r.uvarint(maxQuery))
	for i := 0; i < n && r.err == nil; i++ {
		tag := r.uvarint(MaxString<<1 | 1)
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
	if patch := r.bytes(maxCore); len(patch) > 0 {
		if !json.Valid(patch) {
			r.fail("its body patch is not JSON")
		}
		d.Patch = patch
	}
	return d
}
