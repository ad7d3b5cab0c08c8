package tools

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

var testCursorKey = []byte("test cursor key: 32 bytes long!!")

// A misused cursor argument is refused as an argument error naming the
// cursor, whose reason says what is wrong (the codec's checks are
// tools/internal/cursor's tests).
func TestCursorRejectsMisuseWithAClearError(t *testing.T) {
	token := cursor.Encode(testCursorKey, cursor.Cursor{Kind: cursor.Items, Catalog: "earth-search", Params: []byte(`{"collections":["sentinel-2-l2a"]}`),
		PageSize: 10, First: stacclient.RequestDiff{Method: "POST", Path: "/search"}, Seen: []uint32{1, 2}})
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	cases := map[string]struct {
		token, want string
		kind        cursor.Kind
	}{
		"not base64":      {"%%%", "not base64url", cursor.Items},
		"too short":       {"AAAA", "too short", cursor.Items},
		"cut":             {token[:len(token)-6], "signature does not match", cursor.Items},
		"other key":       {cursor.Encode([]byte("another key, also 32 bytes long!"), cursor.Cursor{Kind: cursor.Items, Catalog: "earth-search", Params: []byte(`{}`), PageSize: 10, First: stacclient.RequestDiff{Method: "POST", Path: "/search"}}), "signature does not match", cursor.Items},
		"other kind":      {token, "items cursor (from search_items); it cannot continue search_collections", cursor.Collections},
		"too long":        {strings.Repeat("A", 3*cursor.MaxBytes), "characters long", cursor.Items},
		"earlier version": {base64.RawURLEncoding.EncodeToString(append([]byte("123456"), `{"v":1,"k":"items"}`...)), "earlier version", cursor.Items},
	}
	// Every single-bit change anywhere is caught.
	for i := range raw {
		edited := bytes.Clone(raw)
		edited[i] ^= 0x04
		cases["bit flipped at "+string(rune('A'+i%26))+strings.Repeat("'", i/26)] = struct {
			token, want string
			kind        cursor.Kind
		}{base64.RawURLEncoding.EncodeToString(edited), "signature does not match", cursor.Items}
	}
	for name, c := range cases {
		_, err := decodeCursor(testCursorKey, c.token, c.kind)
		var pe *stacclient.ParamError
		if !errors.As(err, &pe) || pe.Param != "cursor" || !strings.Contains(pe.Reason, c.want) || pe.Accepted == "" {
			t.Errorf("%s: err = %v, want a cursor ParamError whose reason mentions %q", name, err, c.want)
		}
	}
}

// A configured catalog (a local one among them, served on a loopback port
// that changes at every start) is known to a cursor by its name, so a
// cursor carrying only the catalog's fingerprint still works after a
// restart.
func TestCatalogKeyOfConfiguredCatalogsIsTheirName(t *testing.T) {
	a := &Catalog{Name: "archive", URL: "http://127.0.0.1:40001"}
	b := &Catalog{Name: "archive", URL: "http://127.0.0.1:40002"}
	if catalogKey(a) != catalogKey(b) || catalogKey(a) != "archive" {
		t.Fatalf("catalogKey = %q and %q, want both \"archive\"", catalogKey(a), catalogKey(b))
	}
	if got := catalogKey(&Catalog{URL: "https://stac.example/v1"}); got != "https://stac.example/v1" {
		t.Fatalf("catalogKey of a plain URL = %q", got)
	}
}
