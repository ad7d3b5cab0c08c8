package cursor

import (
	"encoding/binary"
	"errors"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// A federated cursor (search_items over several catalogs, adr/0035) holds,
// in the same token and the same 512 bytes, each catalog's place: its
// reference (unless the references are hashed together: the caller sends
// catalog_url again), whether it is still searched, and where (its request
// as a RequestDiff against what that catalog is sent, the skip and the
// offset: the single-catalog cursor's fields, one set per catalog); and the
// records of the last items returned, so that the next page drops their
// copies in other catalogs. There is no replay form: a catalog whose
// request does not fit makes the whole cursor not fit.

// MemberState is a catalog's state in a federated cursor.
type MemberState byte

// Member states.
const (
	MemberActive    MemberState = 0 // Pos says where it continues
	MemberExhausted MemberState = 1 // its results ended
	MemberDropped   MemberState = 2 // it failed or was skipped: left out
)

// MemberPosition is one catalog's place in a federated cursor.
type MemberPosition struct {
	Ref    string // empty when the cursor's catalogs are hashed (CatalogSum)
	State  MemberState
	Pos    stacclient.RequestDiff // MemberActive
	Skip   int
	Offset int
}

// TailRecord is an item a later page must not repeat a copy of
// (federation.Record's fields).
type TailRecord struct {
	Kind    byte
	Key     uint32
	Unix    int64
	BBox    [4]int16
	Members uint32 // bits: the catalogs whose copy was taken
}

// Bounds of a federated cursor's lists.
const (
	MaxMembers = 32
	MaxTail    = 16
	// tailGeneric is federation's record kind that carries a bbox.
	tailGeneric = 1
)

// federatedRefs marks, where a single catalog's cursor has its reference,
// that each member carries its own; federatedCatalogs is what Decode puts
// in Catalog then.
const (
	federatedRefs     = 0xff
	federatedCatalogs = "(federated)"
)

func (w *writer) members(ms []MemberPosition, hashed bool) {
	w.uvarint(uint64(len(ms)))
	for _, m := range ms {
		if !hashed {
			w.bytes([]byte(m.Ref))
		}
		w.b = append(w.b, byte(m.State))
		if m.State == MemberActive {
			w.diff(m.Pos)
			w.uvarint(uint64(m.Offset))
			w.uvarint(uint64(m.Skip))
		}
	}
}

func (w *writer) tail(rs []TailRecord) {
	w.uvarint(uint64(len(rs)))
	for _, r := range rs {
		w.b = append(w.b, r.Kind)
		w.b = binary.BigEndian.AppendUint32(w.b, r.Key)
		w.b = binary.AppendVarint(w.b, r.Unix)
		if r.Kind == tailGeneric {
			for _, v := range r.BBox {
				w.b = binary.AppendVarint(w.b, int64(v))
			}
		}
		w.uvarint(uint64(r.Members))
	}
}

func (r *reader) members(hashed bool) []MemberPosition {
	n := int(r.uvarint(MaxMembers))
	if r.err == nil && n < 2 {
		r.fail("a federated cursor of %d catalog(s)", n)
	}
	out := make([]MemberPosition, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		var m MemberPosition
		if !hashed {
			if m.Ref = r.text(MaxString); m.Ref == "" && r.err == nil {
				r.fail("empty catalog reference")
			}
		}
		switch state := MemberState(r.byte()); state {
		case MemberActive:
			m.State = state
			m.Pos = r.diff()
			m.Offset = int(r.uvarint(maxOffset))
			m.Skip = int(r.uvarint(maxPage))
		case MemberExhausted, MemberDropped:
			m.State = state
		default:
			r.fail("unknown catalog state %d", state)
		}
		out = append(out, m)
	}
	return out
}

func (r *reader) tail() []TailRecord {
	n := int(r.uvarint(MaxTail))
	var out []TailRecord
	for i := 0; i < n && r.err == nil; i++ {
		t := TailRecord{Kind: r.byte()}
		if len(r.b) < 4 {
			r.fail("cut short")
			break
		}
		t.Key = binary.BigEndian.Uint32(r.b)
		r.b = r.b[4:]
		t.Unix = r.varint(1 << 40)
		if t.Kind == tailGeneric {
			for j := range t.BBox {
				t.BBox[j] = int16(r.varint(18000))
			}
		}
		t.Members = uint32(r.uvarint(1<<MaxMembers - 1))
		out = append(out, t)
	}
	return out
}

// varint reads a signed number within ±limit.
func (r *reader) varint(limit int64) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	switch {
	case n <= 0:
		r.fail("a number is cut short or too large")
		return 0
	case v > limit || v < -limit:
		r.fail("a number (%d) is over its bound %d", v, limit)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// FitFederated encodes a federated cursor in the first form that fits:
// as it is; its parameters hashed (the caller resends them); its catalogs'
// references hashed (the caller resends catalog_url); both; and, should
// none fit, each again with fewer tail records (the oldest go first: a
// copy of the item they stood for may then come back on a later page, and
// dropped says how many went). catalogs is the key the references are
// hashed from. "" when even the last does not fit.
func FitFederated(key []byte, c Cursor, params, catalogs []byte) (token string, form Cursor, dropped int) {
	if c.Kind != Federated {
		panic(errors.New("FitFederated: not a federated cursor"))
	}
	type variant struct{ hashParams, hashCatalog bool }
	variants := []variant{{}, {hashParams: true}, {hashCatalog: true}, {hashParams: true, hashCatalog: true}}
	for keep := len(c.Tail); keep >= 0; keep-- {
		for _, v := range variants {
			try := c
			try.Tail = c.Tail[len(c.Tail)-keep:]
			if v.hashParams {
				try.Params, try.ParamsSum = nil, Sum64(params)
			}
			if v.hashCatalog {
				try.Catalog, try.CatalogSum = "", Sum64(catalogs)
				try.Members = make([]MemberPosition, len(c.Members))
				for i, m := range c.Members {
					m.Ref = ""
					try.Members[i] = m
				}
			} else {
				try.Catalog = federatedCatalogs
			}
			if token := encode(key, try, 0); token != "" {
				return token, try, len(c.Tail) - keep
			}
		}
	}
	return "", c, 0
}
