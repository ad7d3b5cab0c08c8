package tools

import (
	"strings"
	"testing"
)

// TestEstimateDataSizeSizesDataAssetsOnly: A Planetary
// Computer-like item: by default only its data asset is sized; thumbnail,
// overview (rendered_preview), tiles (tilejson) and metadata are left out
// and named, with how to include them; the tiler's rendered hrefs are never
// requested, even when asked for by key; fractions are rounded; the
// per-asset breakdown appears only with per_item.
func TestEstimateDataSizeSizesDataAssetsOnly(t *testing.T) {
	t.Parallel()
	host := newAssetHost(t, 0)
	tiff := "image/tiff; application=geotiff; profile=cloud-optimized"
	square := polygonJSON([2]float64{0, 0}, [2]float64{2, 0}, [2]float64{2, 2}, [2]float64{0, 2})
	tiler := host.URL + "/api/data/v1/item/"
	url := sizingCatalog(t, sizingItem("S2B_MSIL2A_1", square, []float64{0, 0, 2, 2}, map[string]any{
		"B04":              map[string]any{"href": host.URL + "/sized/1000", "type": tiff, "roles": []string{"data"}},
		"thumbnail":        map[string]any{"href": host.URL + "/sized/50", "type": "image/png", "roles": []string{"thumbnail"}},
		"rendered_preview": map[string]any{"href": tiler + "preview.png?collection=sizing&item=S2B_MSIL2A_1", "type": "image/png", "roles": []string{"overview"}, "rel": "preview"},
		"tilejson":         map[string]any{"href": tiler + "tilejson.json?collection=sizing&item=S2B_MSIL2A_1", "type": "application/json", "roles": []string{"tiles"}},
		"granule-metadata": map[string]any{"href": host.URL + "/sized/200", "type": "application/xml", "roles": []string{"metadata"}},
	}))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})

	// An area over 0.7 of 2 degrees of longitude: a fraction with many digits.
	res := callOK(t, cs, "estimate_data_size", map[string]any{"collections": "sizing", "aoi": []float64{0, 0, 0.7, 2}})
	out := structured[EstimateDataSizeOut](t, res)
	text := resultText(res)
	if out.TotalBytes != 1000 || out.SizedAssets != 1 {
		t.Errorf("total %d bytes over %d assets, want 1000 over 1 (B04 only)", out.TotalBytes, out.SizedAssets)
	}
	for _, want := range []string{"thumbnail", "overview", "tiles", "metadata", "asset_keys", "per_item"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "preview.png") || strings.Contains(text, "Sized assets") || len(out.Assets) != 0 {
		t.Errorf("per-asset breakdown without per_item:\n%s", text)
	}
	if host.requests.Load() != 1 {
		t.Errorf("%d requests to the asset host, want 1 (HEAD of B04)", host.requests.Load())
	}
	if len(out.Coverage) != 0 {
		t.Errorf("coverage per item without per_item: %+v", out.Coverage)
	}

	// Named by key, the thumbnail is sized; the rendered preview and tilejson
	// are not requested: a tiler renders them on request.
	res = callOK(t, cs, "estimate_data_size", map[string]any{"collections": "sizing", "aoi": []float64{0, 0, 0.7, 2},
		"asset_keys": []string{"thumbnail", "rendered_preview", "tilejson"}, "per_item": true})
	out = structured[EstimateDataSizeOut](t, res)
	text = resultText(res)
	if out.TotalBytes != 50 || out.NotSizedCount != 2 {
		t.Errorf("named: total %d, not sized %d; want 50 and 2:\n%s", out.TotalBytes, out.NotSizedCount, text)
	}
	if host.requests.Load() != 2 {
		t.Errorf("%d requests to the asset host, want 2 (B04 before, the thumbnail now): a tiler href was requested", host.requests.Load())
	}
	if !strings.Contains(text, "render") {
		t.Errorf("text does not say why the tiler hrefs were not sized:\n%s", text)
	}
	for _, c := range out.Coverage {
		if c.Fraction != round(c.Fraction, 3) {
			t.Errorf("coverage fraction %v not rounded", c.Fraction)
		}
	}
	if len(out.Coverage) != 1 || len(out.Assets) != 1 {
		t.Errorf("per_item: coverage %+v, assets %+v; want one each", out.Coverage, out.Assets)
	}
}
