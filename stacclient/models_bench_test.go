package stacclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// largestRecordedPage is the biggest recorded search page (about 350 KB).
func largestRecordedPage(b *testing.B) []byte {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recordings", "eod-catalog-svc-prod.astraea.earth", "0012-GET-search-491349.json"))
	if err != nil {
		b.Fatal(err)
	}
	var f replayFixture
	if err := json.Unmarshal(raw, &f); err != nil {
		b.Fatal(err)
	}
	return f.Body
}

// BenchmarkDecodeItemCollection measures decoding one search page into the
// models (unknown members kept). Compare with BenchmarkDecodeGeneric, the
// cost of the same JSON into map[string]any.
func BenchmarkDecodeItemCollection(b *testing.B) {
	body := largestRecordedPage(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var ic ItemCollection
		if err := json.Unmarshal(body, &ic); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeGeneric(b *testing.B) {
	body := largestRecordedPage(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeItemCollection(b *testing.B) {
	var ic ItemCollection
	if err := json.Unmarshal(largestRecordedPage(b), &ic); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ic); err != nil {
			b.Fatal(err)
		}
	}
}
