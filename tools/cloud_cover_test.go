package tools

import (
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// TestMaxCloudCoverInTheCatalogsDialect: max_cloud_cover
// on map_items, check_coverage and estimate_data_size keeps only items at most that cloudy,
// sent as a CQL2-JSON filter, as query, or applied here, by what the
// catalog supports; a note says which.
func TestMaxCloudCoverInTheCatalogsDialect(t *testing.T) {
	t.Parallel()
	// The five demo Sentinel-2 items over the area are 24.68 % to 56.81 %
	// cloudy; three are at most 35 %.
	for _, c := range []struct {
		name string
		opts stacserver.Options
		note string
	}{
		{"cql2-json", stacserver.Options{}, "CQL2-JSON filter"},
		{"query", stacserver.Options{ConformsTo: conformanceWithout("filter", "cql2")}, `the query {"eo:cloud_cover":{"lte":35}}`},
		{"neither", stacserver.Options{ConformsTo: conformanceWithout("filter", "cql2", "query")}, "applied here"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, c.opts)})
			args := map[string]any{"collections": []string{"sentinel-2-l2a"}, "aoi": []float64{-40.5, -5.3, -37.5, -3.5}, "max_cloud_cover": 35}
			res := callOK(t, cs, "check_coverage", args)
			out := structured[CheckCoverageOut](t, res)
			if out.Items != 3 {
				t.Errorf("measured %d items, want the 3 at most 35 %% cloudy:\n%s", out.Items, resultText(res))
			}
			for _, s := range out.CloudWeightedItems {
				if s.CloudCover > 35 {
					t.Errorf("%s at %.2f %% kept", s.ID, s.CloudCover)
				}
			}
			if !strings.Contains(resultText(res), c.note) {
				t.Errorf("text lacks %q:\n%s", c.note, resultText(res))
			}
			m := structured[MapItemsOut](t, callOK(t, cs, "map_items", args))
			if m.Drawn != 3 {
				t.Errorf("map_items drew %d, want 3", m.Drawn)
			}
			// estimate_data_size sizes the same three.
			res = callOK(t, cs, "estimate_data_size", args)
			if e := structured[EstimateDataSizeOut](t, res); e.ItemCount != 3 {
				t.Errorf("estimate_data_size sized %d items, want 3:\n%s", e.ItemCount, resultText(res))
			}
			if !strings.Contains(resultText(res), c.note) {
				t.Errorf("estimate_data_size text lacks %q:\n%s", c.note, resultText(res))
			}
		})
	}
	cs := newTestSession(t, testSessionOptions{})
	for _, tool := range []string{"map_items", "estimate_data_size"} {
		if msg := callErr(t, cs, tool, map[string]any{"collections": "sentinel-2-l2a", "max_cloud_cover": 150}); !strings.Contains(msg, "max_cloud_cover") {
			t.Errorf("%s max_cloud_cover 150: %s", tool, msg)
		}
	}
}
