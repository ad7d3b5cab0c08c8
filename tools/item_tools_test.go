package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

func TestGetItemReturnsTheCompleteItem(t *testing.T) {
	t.Parallel()
	id := demoItemIDs(t, "sentinel-2-l2a")[0]
	for name, opts := range map[string]stacserver.Options{
		"features endpoint":          {},
		"search fallback (no items)": {DisableFeatures: true},
	} {
		t.Run(name, func(t *testing.T) {
			cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, opts)})
			res := callOK(t, cs, "get_item", map[string]any{"collection_id": "sentinel-2-l2a", "item_id": id})
			out := structured[GetItemOut](t, res)
			for _, key := range []string{"type", "stac_version", "id", "geometry", "bbox", "properties", "links", "assets", "collection"} {
				if _, ok := out.Item[key]; !ok {
					t.Errorf("item lacks %q", key)
				}
			}
			if out.Item["type"] != "Feature" || out.Item["id"] != id {
				t.Errorf("item type %v id %v", out.Item["type"], out.Item["id"])
			}
			assets, _ := out.Item["assets"].(map[string]any)
			if len(assets) != out.Summary.AssetCount || len(assets) < 20 {
				t.Errorf("item has %d assets, summary counts %d", len(assets), out.Summary.AssetCount)
			}
			props, _ := out.Item["properties"].(map[string]any)
			if _, ok := props["grid:code"]; !ok {
				t.Error("extension property grid:code was dropped from the complete item")
			}
			text := resultText(res)
			// The text carries every property and every asset (key, type,
			// roles, href): Claude Desktop's model sees nothing else.
			if !strings.Contains(text, id) || !strings.Contains(text, fmt.Sprintf("properties (%d):", len(props))) ||
				!strings.Contains(text, fmt.Sprintf("assets (%d):", len(assets))) {
				t.Errorf("text lacks the headline, properties or assets:\n%s", text)
			}
			for key, v := range props {
				if !strings.Contains(text, "- "+key+": ") {
					t.Errorf("text lacks property %s = %v", key, v)
				}
			}
			for key, v := range assets {
				a := v.(map[string]any)
				line := key + " [" + a["type"].(string) + "] (roles "
				if !strings.Contains(text, line) || !strings.Contains(text, a["href"].(string)) {
					t.Errorf("text lacks asset %s (%q and its href)", key, line)
				}
			}
		})
	}
}

func TestGetItemNotFoundSaysWhatToDo(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	msg := callErr(t, cs, "get_item", map[string]any{"collection_id": "joplin", "item_id": "no-such-item"})
	if !strings.Contains(msg, "item 'no-such-item' not found in collection 'joplin'") || !strings.Contains(msg, "search_items") {
		t.Errorf("error %q should say the item is missing and to call search_items", msg)
	}
	msg = callErr(t, cs, "get_item", map[string]any{"collection_id": "no-such-collection", "item_id": "x"})
	if !strings.Contains(msg, "collection 'no-such-collection' not found") || !strings.Contains(msg, "search_collections") {
		t.Errorf("error %q should say the collection is missing and to call search_collections", msg)
	}
	msg = callErr(t, cs, "get_item", map[string]any{"collection_id": "joplin", "item_id": ""})
	if !strings.Contains(msg, "item_id") {
		t.Errorf("empty item_id error %q does not name item_id", msg)
	}
	msg = callErr(t, cs, "get_item", map[string]any{"collection_id": "joplin"})
	if !strings.Contains(msg, "item_id") {
		t.Errorf("missing item_id error %q does not name item_id", msg)
	}
}

func TestGetQueryablesGlobalAndPerCollection(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	global := structured[GetQueryablesOut](t, callOK(t, cs, "get_queryables", map[string]any{}))
	if global.CollectionID != "" || global.Count == 0 || global.Count != len(global.Queryables) {
		t.Fatalf("global queryables: %+v", global)
	}
	for _, form := range []any{"joplin", []string{"joplin"}, `["joplin"]`} {
		out := structured[GetQueryablesOut](t, callOK(t, cs, "get_queryables", map[string]any{"collection_id": form}))
		byName := map[string]QueryableInfo{}
		for _, q := range out.Queryables {
			byName[q.Name] = q
		}
		if out.CollectionID != "joplin" || byName["gsd"].Type != "number" || byName["datetime"].Format != "date-time" {
			t.Errorf("collection_id %v: %+v", form, out)
		}
	}
	if msg := callErr(t, cs, "get_queryables", map[string]any{"collection_id": []string{"joplin", "naip"}}); !strings.Contains(msg, "collection_id") || !strings.Contains(msg, "one collection id") {
		t.Errorf("two ids: error %q", msg)
	}
	if msg := callErr(t, cs, "get_queryables", map[string]any{"collection_id": "nope"}); !strings.Contains(msg, "collection 'nope' not found") {
		t.Errorf("unknown collection: error %q", msg)
	}
}

func TestGetQueryablesUnsupportedCatalog(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, stacserver.Options{DisableQueryables: true})})
	msg := callErr(t, cs, "get_queryables", map[string]any{})
	if !strings.Contains(msg, "does not publish queryables") || !strings.Contains(msg, "get_collection") {
		t.Errorf("error %q should say queryables are missing and where to look instead", msg)
	}
}

func TestGetAggregationsListsAndComputes(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	listed := structured[GetAggregationsOut](t, callOK(t, cs, "get_aggregations", map[string]any{}))
	if !listed.Supported || len(listed.Available) == 0 || len(listed.Results) != 0 {
		t.Fatalf("listing: %+v", listed)
	}
	out := structured[GetAggregationsOut](t, callOK(t, cs, "get_aggregations", map[string]any{
		"collections": "joplin", "aggregations": `["total_count","datetime_frequency"]`}))
	if out.Matched == nil || *out.Matched != 30 || len(out.Results) != 2 {
		t.Fatalf("aggregate: matched %v, %d results", out.Matched, len(out.Results))
	}
	results := map[string]AggregationValue{}
	for _, r := range out.Results {
		results[r.Name] = r
	}
	if v, ok := results["total_count"].Value.(float64); !ok || v != 30 {
		t.Errorf("total_count value = %v, want 30", results["total_count"].Value)
	}
	sum := 0
	for _, b := range results["datetime_frequency"].Buckets {
		sum += b.Frequency
	}
	if sum != 30 {
		t.Errorf("datetime_frequency buckets sum to %d, want 30", sum)
	}
	msg := callErr(t, cs, "get_aggregations", map[string]any{"aggregations": "total_count,cloudiness"})
	if !strings.Contains(msg, `"aggregations"`) || !strings.Contains(msg, "cloudiness") || !strings.Contains(msg, "total_count") {
		t.Errorf("unknown aggregation error %q should name the parameter, the bad name and the offered ones", msg)
	}
}

func TestGetAggregationsUnsupportedIsStructuredNotAnError(t *testing.T) {
	t.Parallel()
	url := demoServer(t, stacserver.Options{DisableAggregation: true})
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[GetAggregationsOut](t, callOK(t, cs, "get_aggregations", map[string]any{"aggregations": "total_count"}))
	if out.Supported || out.Reason == "" || len(out.Results) != 0 {
		t.Errorf("got %+v, want supported:false with a reason", out)
	}
}
