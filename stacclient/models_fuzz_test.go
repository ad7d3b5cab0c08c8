package stacclient

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeItem checks that any input either fails to decode or decodes,
// encodes and decodes again to the same bytes (no panic, no drift). The seed
// corpus is every real item in the recordings, so `go test` runs them all.
func FuzzDecodeItem(f *testing.F) {
	for _, item := range recordedItems(f) {
		f.Add([]byte(item))
	}
	for _, seed := range []string{
		`{}`, `null`, `{"id":"x","properties":null,"links":null}`, `{"stac_extensions":[],"title":""}`,
		`{"properties":{"n":1e999,"s":"<&>"},"geometry":{"type":"Point","coordinates":[1,2]}}`,
		`{"assets":{"a":{"href":"x","extra":[{}]}},"links":[{"rel":"next","body":{"a":1},"merge":true,"headers":{"h":["1",2]}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var first Item
		if err := json.Unmarshal(data, &first); err != nil {
			return
		}
		encoded, err := json.Marshal(first)
		if err != nil {
			t.Fatalf("decoded but cannot encode: %v", err)
		}
		var second Item
		if err := json.Unmarshal(encoded, &second); err != nil {
			t.Fatalf("cannot decode own output %s: %v", encoded, err)
		}
		again, err := json.Marshal(second)
		if err != nil {
			t.Fatalf("second encode: %v", err)
		}
		if !bytes.Equal(encoded, again) {
			t.Fatalf("unstable:\n%s\n%s", encoded, again)
		}
	})
}
