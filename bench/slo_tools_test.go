package bench

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools"
)

// sloCall is how the SLO runs call one network tool: arguments that succeed
// on the harness catalog, chosen so that multi-request tools make their
// real number of requests (search_items pages, estimate_data_size HEADs).
// Most calls use the demo's small joplin documents (1.5 KiB items rather
// than Sentinel-2's 33 KiB) to keep the suite fast under -race.
type sloCall struct {
	tool string
	args map[string]any
	why  string // what the call exercises upstream
	// cold calls run on a fresh catalog client: the tools whose whole job
	// is the landing page or the conformance classes. The others run warm
	// (see sloHarness.warm), so they are measured on their own requests.
	cold bool
}

// sloRangeReads are the tools that read byte ranges of COGs side by side
// (the pixel tools): a read that fails for good cancels its siblings,
// which the catalog may never see although the receipt counts them.
var sloRangeReads = map[string]bool{"aoi_statistics": true, "render_aoi": true, "index_time_series": true, "export": true}

// sloCalls covers every network tool of tools.Inventory(); TestSLOCoversEveryNetworkTool
// fails when a new network tool has no entry.
var sloCalls = []sloCall{
	{"get_root", nil, "cold: landing page", true},
	{"get_conformance", map[string]any{"check": []string{"https://api.stacspec.org/v1.0.0/item-search"}}, "cold: landing page, conformance", true},
	{"get_capabilities", nil, "cold: landing page, conformance", true},
	{"search_collections", map[string]any{"q": "sentinel", "limit": 5}, "warm: collection search", false},
	{"get_collection", map[string]any{"collection_id": "joplin"}, "warm: collection", false},
	{"get_queryables", map[string]any{"collection_id": "joplin"}, "warm: queryables", false},
	{"search_items", map[string]any{"collections": []string{"joplin"}, "max_items": 25}, "warm: 3 search pages of at most 10 items", false},
	{"get_item", map[string]any{"collection_id": "joplin", "item_id": "047ab5f0-dce1-4166-a00d-425a3dbefe02"}, "warm: item", false},
	{"get_aggregations", map[string]any{"collections": []string{"joplin"}}, "warm: one aggregation request", false},
	{"estimate_data_size", map[string]any{"collections": []string{sloAssetCollection}, "max_items": 3, "asset_keys": []string{"red", "nir"}}, "warm: search, 6 asset HEADs on a second host", false},
	{"get_item_preview", map[string]any{"collection_id": sloAssetCollection, "item_id": "slo-item-0"}, "warm: item, thumbnail GET on a second host", false},
	{"map_items", map[string]any{"collections": []string{"joplin"}, "max_items": 20}, "warm: 2 search pages, a map of 20 footprints drawn", false},
	{"check_coverage", map[string]any{"collections": []string{sloAssetCollection}, "bbox": []float64{10, 40, 11.5, 41}, "max_items": 3}, "warm: one search page, coverage measured", false},
	// The pixel tools (slo_pixels_test.go): every band file read is a
	// header read and one range per tile row of the area.
	{"aoi_statistics", map[string]any{"collection_id": sloPixelCollection, "item_id": "slo-pixels-0", "aoi": sloPixelAOI, "bands": []string{"red", "nir"}},
		"warm: item, red + nir + SCL: 3 header reads and about 19 tile-row ranges", false},
	{"render_aoi", map[string]any{"collection_id": sloPixelCollection, "item_id": "slo-pixels-1", "aoi": sloPixelAOI, "view": "ndvi"},
		"warm: item, the ranges of aoi_statistics, an NDVI map drawn", false},
	{"index_time_series", map[string]any{"collections": []string{sloPixelCollection}, "aoi": sloPixelAOISmall, "index": "ndvi", "datetime": "2023-06-01/2023-06-12"},
		"warm: one search page, 2 items × (3 header reads and about 10 ranges), a chart drawn", false},
	{"export", map[string]any{"kind": "pixels", "collection_id": sloPixelCollection, "item_id": "slo-pixels-0", "aoi": sloPixelAOISmall, "bands": "ndvi"},
		"warm: item, nir + red + SCL over the small area (14 requests with the item), an NDVI COG written", false},
}

// sloNetworkTools lists the network tools of the inventory.
func sloNetworkTools() []string {
	var names []string
	for _, t := range tools.Inventory() {
		if t.Network {
			names = append(names, t.Def.Name)
		}
	}
	return names
}

// sloAssetCollection is the harness's own collection whose assets carry no
// size in their metadata, so estimate_data_size must HEAD them.
const sloAssetCollection = "slo-assets"

// assetHostPlaceholder stands for the asset server's address (and the
// invocation prefix) in stored hrefs; perInvocation replaces it.
const assetHostPlaceholder = "http://slo-asset-host.invalid"

var (
	sloStoreOnce  sync.Once
	sloStoreValue *stacserver.Store
	sloStoreErr   error
)

// sloStore is the demo catalog plus sloAssetCollection, built once: the
// servers only read it.
func sloStore(tb testing.TB) *stacserver.Store {
	tb.Helper()
	sloStoreOnce.Do(func() { sloStoreValue, sloStoreErr = buildSLOStore() })
	if sloStoreErr != nil {
		tb.Fatal(sloStoreErr)
	}
	return sloStoreValue
}

func buildSLOStore() (*stacserver.Store, error) {
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		return nil, err
	}
	collection := map[string]any{
		"type": "Collection", "stac_version": "1.0.0", "id": sloAssetCollection, "license": "CC0-1.0",
		"description": "SLO harness imagery whose assets are sized by HEAD",
		"extent": map[string]any{
			"spatial":  map[string]any{"bbox": [][]float64{{10, 40, 12, 42}}},
			"temporal": map[string]any{"interval": [][]any{{"2024-01-01T00:00:00Z", nil}}},
		},
		"links": []any{},
	}
	if err := store.AddCollection(mustJSON(collection)); err != nil {
		return nil, err
	}
	for i := range 6 {
		id := fmt.Sprintf("slo-item-%d", i)
		assets := map[string]any{}
		for _, key := range []string{"red", "nir", "visual"} {
			assets[key] = map[string]any{
				"href":  fmt.Sprintf("%s/assets/%s/%s.tif", assetHostPlaceholder, id, key),
				"type":  "image/tiff; application=geotiff; profile=cloud-optimized",
				"roles": []string{"data"},
			}
		}
		assets["thumbnail"] = map[string]any{
			"href": fmt.Sprintf("%s/assets/%s/thumbnail.png", assetHostPlaceholder, id), "type": "image/png", "roles": []string{"thumbnail"},
		}
		item := map[string]any{
			"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": sloAssetCollection,
			"bbox":       []float64{10, 40, 11, 41},
			"geometry":   map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{10, 40}, {11, 40}, {11, 41}, {10, 41}, {10, 40}}}},
			"properties": map[string]any{"datetime": fmt.Sprintf("2024-01-%02dT10:00:00Z", i+1)},
			"assets":     assets, "links": []any{},
		}
		if err := store.AddItem(mustJSON(item)); err != nil {
			return nil, err
		}
	}
	if err := addSLOPixelItems(store); err != nil {
		return nil, err
	}
	return store, nil
}

// mustJSON marshals the harness's own literal documents, which cannot fail.
func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}
