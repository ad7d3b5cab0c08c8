package places

import (
	"testing"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// Outlines are valid polygons (OGC simple features), as the tools' area
// measure requires: every country's, and all regions' but the few the
// converter could not repair (data/README.md), which it keeps rather than
// drop land.
func TestOutlinesAreValid(t *testing.T) {
	ix, err := load()
	if err != nil {
		t.Fatal(err)
	}
	owner := map[int]string{}
	for _, g := range ix.data.Regions {
		owner[g.Outline] = "region " + g.Name
	}
	for _, c := range ix.data.Countries {
		owner[c.Outline] = "country " + c.Name
	}
	invalidRegions := map[string]bool{}
	for i := range ix.data.Outlines {
		mp, err := ix.data.Outlines[i].geometry()
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range mp {
			s, err := footprint.FromGeometry(p)
			if err == nil {
				err = s.Valid()
			}
			if err == nil {
				continue
			}
			if owner[i][:7] == "country" {
				t.Errorf("%s, polygon %d (%.0f km²): %v", owner[i], j, areaKm2(orb.MultiPolygon{p}), err)
			}
			invalidRegions[owner[i]] = true
		}
	}
	if len(invalidRegions) > 25 {
		t.Errorf("%d regions have an invalid polygon, want at most the 23 the data README counts: %v", len(invalidRegions), invalidRegions)
	}
}
