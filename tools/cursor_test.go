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

func TestCursorRoundTrip(t *testing.T) {
	in := pageCursor{Kind: cursorItems, Catalog: "https://example.test/stac", Fingerprint: "abc",
		Search: &stacclient.Cursor{Request: stacclient.Request{Method: "POST", URL: "https://example.test/stac/search", Body: json.RawMessage(`{"next":"t2"}`)}, Skip: 2}}
	token := encodeCursor(in)
	if strings.ContainsAny(token, "+/=") {
		t.Errorf("token %q is not unpadded base64url", token)
	}
	got, err := decodeCursor(token, cursorItems, "https://example.test/stac")
	if err != nil {
		t.Fatal(err)
	}
	in.Version = cursorVersion
	if !reflect.DeepEqual(got, in) {
		t.Errorf("decoded %+v, want %+v", got, in)
	}
}

func TestCursorRejectsMisuseWithAClearError(t *testing.T) {
	catalog := "https://example.test/stac"
	items := encodeCursor(pageCursor{Kind: cursorItems, Catalog: catalog, Search: &stacclient.Cursor{}})
	raw, _ := base64.RawURLEncoding.DecodeString(items)
	flipped := append([]byte(nil), raw...)
	flipped[len(flipped)-3] ^= 0x20
	forged := func(c pageCursor) string { // a well-formed token with the checksum recomputed
		return encodeCursor(c)
	}
	for _, c := range []struct {
		name, token, kind, catalog, want string
	}{
		{"not base64", "%%%", cursorItems, catalog, "not base64url"},
		{"too short", "AAAA", cursorItems, catalog, "too short"},
		{"edited", base64.RawURLEncoding.EncodeToString(flipped), cursorItems, catalog, "checksum"},
		{"cut", items[:len(items)-6], cursorItems, catalog, "checksum"},
		{"other kind", items, cursorCollections, catalog, "cannot continue"},
		{"other catalog", items, cursorItems, "https://elsewhere.test", "issued for catalog"},
		{"no position", forged(pageCursor{Kind: cursorItems, Catalog: catalog}), cursorItems, catalog, "no search position"},
		{"no listing", forged(pageCursor{Kind: cursorCollections, Catalog: catalog}), cursorCollections, catalog, "no listing"},
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
