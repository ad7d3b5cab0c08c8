package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools"
)

// recording is the part of a real-stac-fixture/1 file this benchmark reads.
type recording struct {
	Body struct {
		Collections []json.RawMessage `json:"collections"`
		Features    []json.RawMessage `json:"features"`
	} `json:"body"`
}

// sentinel2Fixture loads the recorded Earth Search Sentinel-2 items (as the
// API sent them, compacted) and the collections they belong to.
func sentinel2Fixture(b *testing.B) (store *stacserver.Store, items [][]byte, collections []string) {
	b.Helper()
	read := func(name string) recording {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		var r recording
		if err := json.Unmarshal(raw, &r); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return r
	}
	store = stacserver.NewStore()
	wanted := map[string]bool{}
	seen := map[string]bool{}
	for _, name := range []string{"0005-POST-v1-search-b80653.json", "0006-POST-v1-search-264dd1.json", "0019-POST-v1-search-6026bb.json"} {
		for _, f := range read(name).Body.Features {
			var head struct{ ID, Collection string }
			if err := json.Unmarshal(f, &head); err != nil {
				b.Fatal(err)
			}
			if !strings.HasPrefix(head.Collection, "sentinel-2") || seen[head.ID] {
				continue
			}
			seen[head.ID] = true
			var compact bytes.Buffer
			if err := json.Compact(&compact, f); err != nil {
				b.Fatal(err)
			}
			items = append(items, compact.Bytes())
			wanted[head.Collection] = true
		}
	}
	for _, c := range read("0003-GET-v1-collections-46a8d5.json").Body.Collections {
		var head struct{ ID string }
		if err := json.Unmarshal(c, &head); err != nil {
			b.Fatal(err)
		}
		if wanted[head.ID] {
			if err := store.AddCollection(c); err != nil {
				b.Fatalf("collection %s: %v", head.ID, err)
			}
			collections = append(collections, head.ID)
		}
	}
	for _, it := range items {
		if err := store.AddItem(it); err != nil {
			b.Fatalf("item: %v", err)
		}
	}
	return store, items, collections
}

// BenchmarkContextEconomy compares the bytes of search_items' outputs per
// item with the full STAC Item JSON, on real Earth Search Sentinel-2 items,
// for both detail modes. summary_to_full_pct is the default output's
// structured result (what structuredContent carries, envelope included,
// divided by the items returned); text_to_full_pct is its readable text
// block, which carries the same data (Claude Desktop forwards only the
// text). Target: the default summary is at most 15% of the full item.
// full_text_bytes/item and full_structured_bytes/item are detail=full's:
// the complete items, in each form.
//
//	go test -run '^$' -bench ContextEconomy -benchtime 20x ./bench/
func BenchmarkContextEconomy(b *testing.B) {
	store, items, collections := sentinel2Fixture(b)
	full := 0
	for _, it := range items {
		full += len(it)
	}
	fullPerItem := float64(full) / float64(len(items))
	srv := newBenchServer(b, store, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100})

	// perItem is the structured and text bytes per item of one call.
	perItem := func(args map[string]any) (structured, text float64) {
		res := srv.call(b, "search_items", args)
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Returned int `json:"returned"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			b.Fatal(err)
		}
		if out.Returned != len(items) {
			b.Fatalf("search_items returned %d of the %d recorded items", out.Returned, len(items))
		}
		return float64(len(raw)) / float64(out.Returned), float64(len(textOf(res))) / float64(out.Returned)
	}
	var summaryStructured, summaryText, fullStructured, fullText float64
	for b.Loop() {
		summaryStructured, summaryText = perItem(map[string]any{"collections": collections, "max_items": len(items)})
		fullStructured, fullText = perItem(map[string]any{"collections": collections, "max_items": len(items), "detail": "full"})
	}
	b.ReportMetric(float64(len(items)), "items")
	b.ReportMetric(fullPerItem, "full_bytes/item")
	b.ReportMetric(summaryStructured, "summary_bytes/item")
	b.ReportMetric(100*summaryStructured/fullPerItem, "summary_to_full_pct")
	b.ReportMetric(summaryText, "text_bytes/item")
	b.ReportMetric(100*summaryText/fullPerItem, "text_to_full_pct")
	b.ReportMetric(fullStructured, "full_structured_bytes/item")
	b.ReportMetric(fullText, "full_text_bytes/item")
	for name, pct := range map[string]float64{"structured": 100 * summaryStructured / fullPerItem, "text": 100 * summaryText / fullPerItem} {
		if pct > summaryBudgetPct {
			b.Errorf("the default summary's %s is %.1f%% of the full item, over the %d%% budget", name, pct, summaryBudgetPct)
		}
	}
}

// summaryBudgetPct is issue 11's ceiling for the default summary, in
// percent of the full item's bytes.
const summaryBudgetPct = 15
