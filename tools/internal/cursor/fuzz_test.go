package cursor

import (
	"encoding/base64"
	"reflect"
	"testing"
)

// FuzzRead feeds random payloads to Read. Properties: reading never
// panics, and a payload that reads re-encodes to a token that decodes to
// the same cursor. (FuzzCursor in tools sends such cursors through real
// tool calls.)
//
//	go test -run '^$' -fuzz FuzzRead -fuzztime 60s ./tools/internal/cursor/
func FuzzRead(f *testing.F) {
	replay := sampleItemsCursor()
	replay.Pos = nil
	for _, c := range []Cursor{sampleItemsCursor(), replay,
		{Kind: Collections, Catalog: "demo", Params: []byte(`{"q":"dem"}`), PageSize: 5, Listed: 15}} {
		raw, _ := base64.RawURLEncoding.DecodeString(Encode(testKey, c))
		f.Add(raw[MACLen:])
	}
	f.Add([]byte{formatVersion, byte(Items), flagReplay})

	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := Read(payload)
		if err != nil {
			return
		}
		token := Encode(testKey, c)
		if token == "" {
			return // a payload may hold more than a token has room for
		}
		back, err := Decode(testKey, token, c.Kind)
		if err != nil || !reflect.DeepEqual(normalised(back), normalised(c)) {
			t.Fatalf("re-encoded cursor %+v decodes to %+v (%v)", c, back, err)
		}
	})
}
