package tools

import (
	"strings"
	"testing"
)

// TestCheckCoverageRecommendsTheClearScene: in Groningen on
// landsat-8-c2-l2, of two scenes covering the whole area, the smallest set
// named the 72.3 % cloudy one (smaller id). It must name the 0.99 % one, say
// how ties are broken, and name the items behind the cloud-weighted figure.
func TestCheckCoverageRecommendsTheClearScene(t *testing.T) {
	t.Parallel()
	scene := func(id string, cloud float64) map[string]any {
		it := sizingItem(id, polygonJSON([2]float64{6.0, 53.0}, [2]float64{7.2, 53.0}, [2]float64{7.2, 53.7}, [2]float64{6.0, 53.7}),
			[]float64{6.0, 53.0, 7.2, 53.7}, map[string]any{})
		it["properties"].(map[string]any)["eo:cloud_cover"] = cloud
		return it
	}
	url := sizingCatalog(t, scene("LC08_L2SP_196023_20240601", 72.3), scene("LC08_L2SP_197023_20240601", 0.99))
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	res := callOK(t, cs, "check_coverage", map[string]any{"collections": "sizing", "aoi": []float64{6.4, 53.2, 6.9, 53.5}})
	out := structured[CheckCoverageOut](t, res)
	text := resultText(res)
	if len(out.SmallestSet.Items) != 1 || out.SmallestSet.Items[0].ID != "LC08_L2SP_197023_20240601" {
		t.Errorf("smallest set %+v, want the 0.99 %% cloudy scene", out.SmallestSet.Items)
	}
	if len(out.CloudWeightedItems) != 1 || out.CloudWeightedItems[0].ID != "LC08_L2SP_197023_20240601" {
		t.Errorf("cloud-weighted items %+v, want the clear scene alone", out.CloudWeightedItems)
	}
	for _, want := range []string{"least cloudy", "LC08_L2SP_197023_20240601 0.99% → 100%"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
