package tools

import (
	"slices"
	"testing"
)

func TestClosestIDs(t *testing.T) {
	t.Parallel()
	ids := []string{"sentinel-2-l2a", "sentinel-2-l1c", "sentinel2_l2a", "landsat-c2-l2", "landsat-8-l1", "cop-dem-glo-30", "naip"}
	for _, c := range []struct {
		id   string
		want []string
	}{
		{"Sentinel-2-L2A", []string{"sentinel-2-l2a"}},                  // case only: nothing else
		{"sentinel-2-l2", []string{"sentinel-2-l2a", "sentinel-2-l1c"}}, // edit distance 1, then 2
		{"sentinal-2-l2a", []string{"sentinel-2-l2a"}},
		{"landsat", []string{"landsat-8-l1", "landsat-c2-l2"}}, // contained
		{"NAIP", []string{"naip"}},
		{"modis", nil},
		{"sentinel-2-l2a", []string{"sentinel-2-l1c", "sentinel2_l2a"}}, // itself excluded
	} {
		if got := closestIDs(c.id, ids); !slices.Equal(got, c.want) {
			t.Errorf("closestIDs(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
