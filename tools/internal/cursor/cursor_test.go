package cursor

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

var testKey = []byte("test cursor key: 32 bytes long!!")

func sampleItemsCursor() Cursor {
	pos := stacclient.RequestDiff{Method: "POST", Path: "/search", Patch: []byte(`{"next":"t2"}`),
		Query: []stacclient.QueryPart{{Base: 0}, {Base: -1, Literal: "api=1"}}}
	return Cursor{Kind: Items, Catalog: "earth-search", Params: []byte(`{"collections":["sentinel-2-l2a"]}`),
		PageSize: 10, ExplicitLimit: true, First: stacclient.RequestDiff{Method: "POST", Path: "/search"}, Pos: &pos,
		Offset: 30, Skip: 2, Seen: []uint32{1, 2, 0xffffffff}}
}

func TestCursorRoundTrip(t *testing.T) {
	replay := sampleItemsCursor()
	replay.Pos, replay.Params, replay.ParamsSum = nil, nil, 42
	hashedCatalog := sampleItemsCursor()
	hashedCatalog.Catalog, hashedCatalog.CatalogSum = "", 7
	for name, in := range map[string]Cursor{
		"items":          sampleItemsCursor(),
		"items replay":   replay,
		"hashed catalog": hashedCatalog,
		"collections":    {Kind: Collections, Catalog: "demo", Params: []byte(`{"q":"dem"}`), PageSize: 5, Listed: 15},
		"series": {Kind: Series, Catalog: "earth-search", Params: []byte(`{"datetime":"2024"}`), PageSize: 71,
			ListSum: 0xfeedfacecafebeef, Done: 24, DoneBits: 1<<63 | 5},
	} {
		token := Encode(testKey, in)
		if token == "" || len(token) > MaxBytes || strings.ContainsAny(token, "+/=") {
			t.Errorf("%s: token %q: want unpadded base64url of at most %d bytes", name, token, MaxBytes)
			continue
		}
		got, err := Decode(testKey, token, in.Kind)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(normalised(got), normalised(in)) {
			t.Errorf("%s: decoded %+v\nwant %+v", name, got, in)
		}
		if in.Kind == Series {
			if _, err := Decode(testKey, token, Items); err == nil || !strings.Contains(err.Error(), "time series cursor") {
				t.Errorf("a series cursor continued search_items: %v", err)
			}
		}
	}
}

// normalised makes empty and nil slices compare equal.
func normalised(c Cursor) Cursor {
	fix := func(d *stacclient.RequestDiff) {
		if len(d.Query) == 0 {
			d.Query = nil
		}
		if len(d.Patch) == 0 {
			d.Patch = nil
		}
	}
	fix(&c.First)
	if c.Pos != nil {
		p := *c.Pos
		fix(&p)
		c.Pos = &p
	}
	if len(c.Seen) == 0 {
		c.Seen = nil
	}
	return c
}

// signPayload makes a token of any payload, as a holder of the key could.
func signPayload(key, payload []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(macOf(key, payload), payload...))
}

// A validly signed cursor is still read field by field: a leaked key, or a
// bug, must not turn into an unbounded or odd request.
func TestSignedCursorsAreStillValidated(t *testing.T) {
	core := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	str := func(s string) []byte { return append(binary.AppendUvarint(nil, uint64(len(s))), s...) }
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	diff := func(method byte, path string) []byte { return core([]byte{method, 0}, str(path), uv(0), str("")) }
	payload := func(kind, flags byte, body []byte, seen int) []byte {
		p := append([]byte{formatVersion, kind, flags}, str(string(body))...)
		return append(p, make([]byte, 4*seen)...)
	}
	good := core(str("demo"), str(`{}`), uv(10), diff('P', "/search"), diff('G', "/search"), uv(0), uv(0))
	if _, err := Decode(testKey, signPayload(testKey, payload(1, 0, good, 2)), Items); err != nil {
		t.Fatalf("the well-formed baseline is refused: %v", err)
	}
	var bomb bytes.Buffer
	w, _ := flate.NewWriter(&bomb, flate.BestCompression)
	_, _ = w.Write(make([]byte, maxCore+1))
	_ = w.Close()
	for name, p := range map[string][]byte{
		"version 3":        append([]byte{3}, payload(1, 0, good, 0)[1:]...),
		"unknown kind":     payload(9, 0, good, 0),
		"unknown flag":     payload(1, 0x80, good, 0),
		"method DELETE":    payload(1, 0, core(str("demo"), str(`{}`), uv(10), diff('D', "/search"), diff('G', "/search"), uv(0), uv(0)), 0),
		"page size 0":      payload(1, 0, core(str("demo"), str(`{}`), uv(0), diff('P', "/search"), diff('G', "/search"), uv(0), uv(0)), 0),
		"page size 10001":  payload(1, 0, core(str("demo"), str(`{}`), uv(10001), diff('P', "/search"), diff('G', "/search"), uv(0), uv(0)), 0),
		"skip 10001":       payload(1, 0, core(str("demo"), str(`{}`), uv(10), diff('P', "/search"), diff('G', "/search"), uv(0), uv(10001)), 0),
		"params not JSON":  payload(1, 0, core(str("demo"), str(`{`), uv(10), diff('P', "/search"), diff('G', "/search"), uv(0), uv(0)), 0),
		"control in ref":   payload(1, 0, core(str("de\nmo"), str(`{}`), uv(10), diff('P', "/search"), diff('G', "/search"), uv(0), uv(0)), 0),
		"empty ref":        payload(1, 0, core(str(""), str(`{}`), uv(10), diff('P', "/search"), diff('G', "/search"), uv(0), uv(0)), 0),
		"trailing core":    payload(1, 0, append(bytes.Clone(good), 0), 0),
		"cut core":         payload(1, 0, good[:len(good)-3], 0),
		"17 fingerprints":  payload(1, 0, good, 17),
		"ragged seen":      append(payload(1, 0, good, 1), 1, 2),
		"inflates too far": payload(1, flagDeflated, bomb.Bytes(), 0),
		"bad deflate":      payload(1, flagDeflated, []byte{1, 2, 3}, 0),
		"replay listing":   payload(2, flagReplay, core(str("demo"), str(`{}`), uv(10), uv(0)), 0),
		"seen on listing":  payload(2, 0, core(str("demo"), str(`{}`), uv(10), uv(0)), 1),
	} {
		kind := Kind(p[1])
		if kind != Collections {
			kind = Items
		}
		if c, err := Decode(testKey, signPayload(testKey, p), kind); err == nil {
			t.Errorf("%s: accepted as %+v", name, c)
		}
	}
}

// Fit keeps every cursor within MaxBytes by giving up what
// does not fit, cheapest first: the parameters, the position's request,
// the catalog reference.
func TestFitCursorDegradesInOrder(t *testing.T) {
	noise := func(n int) string { // incompressible, like a real polygon or page token
		r := rand.New(rand.NewPCG(1, uint64(n)))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return base64.RawURLEncoding.EncodeToString(b)[:n]
	}
	big := []byte(`{"intersects":"` + noise(600) + `"}`)
	for name, c := range map[string]struct {
		edit func(*Cursor)
		want func(Cursor) bool
	}{
		"fits as is": {func(*Cursor) {}, func(f Cursor) bool { return f.Params != nil && f.Pos != nil && len(f.Seen) == 3 }},
		"large params": {func(c *Cursor) { c.Params = big }, func(f Cursor) bool {
			return f.Params == nil && f.ParamsSum == Sum64(big) && f.Pos != nil && f.Catalog != ""
		}},
		"large next request": {func(c *Cursor) { c.Pos.Patch = []byte(`{"token":"` + noise(400) + `"}`) }, func(f Cursor) bool {
			return f.Params != nil && f.Pos == nil && f.Catalog != ""
		}},
		"large params and next request": {func(c *Cursor) { c.Params, c.Pos.Patch = big, []byte(`{"token":"`+noise(400)+`"}`) }, func(f Cursor) bool {
			return f.Params == nil && f.Pos == nil && f.Catalog != ""
		}},
		"large catalog URL": {func(c *Cursor) { c.Catalog = "https://stac.example.test/" + noise(400) }, func(f Cursor) bool {
			return f.Catalog == "" && f.CatalogSum == Sum64([]byte("catalog key"))
		}},
	} {
		in := sampleItemsCursor()
		pos := *in.Pos
		in.Pos = &pos
		c.edit(&in)
		token, form := Fit(testKey, in, in.Params, []byte("catalog key"))
		if token == "" || len(token) > MaxBytes || !c.want(form) {
			t.Errorf("%s: %d-byte token, params %d bytes, pos %v, catalog %q", name, len(token), len(form.Params), form.Pos != nil, form.Catalog[:min(40, len(form.Catalog))])
			continue
		}
		got, err := Decode(testKey, token, Items)
		if err != nil || !reflect.DeepEqual(normalised(got), normalised(form)) {
			t.Errorf("%s: decoded %+v (%v), want %+v", name, got, err, form)
		}
	}
}
