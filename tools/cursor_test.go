package tools

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

var cursorTestCatalog = &Catalog{Ref: "https://example.test/stac", URL: "https://example.test/stac"}

func TestCursorRoundTrip(t *testing.T) {
	in := newCursor(cursorItems, cursorTestCatalog)
	in.Fingerprint = "abc"
	in.Search = &stacclient.Cursor{Request: stacclient.Request{Method: "POST", URL: "https://example.test/stac/search", Body: json.RawMessage(`{"next":"t2"}`)}, Skip: 2}
	token := encodeCursor(in)
	if strings.ContainsAny(token, "+/=") {
		t.Errorf("token %q is not unpadded base64url", token)
	}
	got, err := decodeCursor(token, cursorItems, cursorTestCatalog)
	if err != nil {
		t.Fatal(err)
	}
	in.Version = cursorVersion
	if !reflect.DeepEqual(got, in) {
		t.Errorf("decoded %+v, want %+v", got, in)
	}
}

// An in-process catalog (demo, local) gets a new loopback URL at every
// start; a cursor from the previous process must follow it there.
func TestCursorFollowsAnInProcessCatalogToItsNewURL(t *testing.T) {
	before := &Catalog{Ref: "demo", Name: "demo", URL: "http://127.0.0.1:4000"}
	after := &Catalog{Ref: "demo", Name: "demo", URL: "http://127.0.0.1:5000"}
	c := newCursor(cursorItems, before)
	c.Search = &stacclient.Cursor{Request: stacclient.Request{Method: "GET", URL: "http://127.0.0.1:4000/search?next=x"}}
	got, err := decodeCursor(encodeCursor(c), cursorItems, after)
	if err != nil {
		t.Fatal(err)
	}
	if got.Search.Request.URL != "http://127.0.0.1:5000/search?next=x" {
		t.Errorf("request URL = %q, want it moved to the new port", got.Search.Request.URL)
	}
	if _, err := decodeCursor(encodeCursor(c), cursorItems, &Catalog{URL: "http://127.0.0.1:5000"}); err == nil {
		t.Error("a demo cursor was accepted by a plain URL catalog")
	}
}

func TestCursorRejectsMisuseWithAClearError(t *testing.T) {
	base := newCursor(cursorItems, cursorTestCatalog)
	base.Search = &stacclient.Cursor{Request: stacclient.Request{URL: "https://example.test/stac/search"}}
	items := encodeCursor(base)
	raw, _ := base64.RawURLEncoding.DecodeString(items)
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-3] ^= 0x20
	noPosition := newCursor(cursorItems, cursorTestCatalog)
	noListing := newCursor(cursorCollections, cursorTestCatalog)
	elsewhere := newCursor(cursorItems, &Catalog{Name: "demo", URL: "http://127.0.0.1:1"})
	elsewhere.Search = &stacclient.Cursor{Request: stacclient.Request{URL: "https://evil.test/search"}}
	for _, c := range []struct {
		name, token, kind string
		catalog           *Catalog
		want              string
	}{
		{"not base64", "%%%", cursorItems, cursorTestCatalog, "not base64url"},
		{"too short", "AAAA", cursorItems, cursorTestCatalog, "too short"},
		{"edited", base64.RawURLEncoding.EncodeToString(flipped), cursorItems, cursorTestCatalog, "checksum"},
		{"cut", items[:len(items)-6], cursorItems, cursorTestCatalog, "checksum"},
		{"other kind", items, cursorCollections, cursorTestCatalog, "cannot continue"},
		{"other catalog", items, cursorItems, &Catalog{URL: "https://elsewhere.test"}, "issued for catalog"},
		{"no position", encodeCursor(noPosition), cursorItems, cursorTestCatalog, "no search position"},
		{"no listing", encodeCursor(noListing), cursorCollections, cursorTestCatalog, "no listing"},
		{"request off its catalog", encodeCursor(elsewhere), cursorItems, &Catalog{Name: "demo", URL: "http://127.0.0.1:2"}, "not on the catalog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeCursor(c.token, c.kind, c.catalog)
			var pe *stacclient.ParamError
			if !errors.As(err, &pe) || pe.Param != "cursor" || !strings.Contains(pe.Reason, c.want) || pe.Accepted == "" {
				t.Errorf("err = %#v, want a cursor ParamError whose reason mentions %q", err, c.want)
			}
		})
	}
}

func TestFingerprintDistinguishesSearches(t *testing.T) {
	a := fingerprint(stacclient.SearchParams{Collections: []string{"a"}})
	if a != fingerprint(stacclient.SearchParams{Collections: []string{"a"}}) {
		t.Error("equal searches have different fingerprints")
	}
	if a == fingerprint(stacclient.SearchParams{Collections: []string{"b"}}) {
		t.Error("different searches share a fingerprint")
	}
}
