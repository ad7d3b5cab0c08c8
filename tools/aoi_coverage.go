package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// How an item meets the requested area, measured once for every tool that
// asks: search_items says, per summary, how much of the search's bbox or
// intersects the item covers (aoi_coverage_pct); estimate_data_size scales a
// raster asset by the share of its item inside the area; check_coverage
// reports the union (footprint.Measure). All three go through
// footprint.Area: footprints and area in one longitude frame (antimeridian
// handled), concave areas as drawn, on an equal-area projection of the
// ellipsoid.

// requestedArea is the search's bbox or intersects, ready to measure
// footprints against; nil when the search has none, or one that has no
// area to measure (a point, a line, a ring that is not a polygon: why says
// so, for a note).
func requestedArea(p stacclient.SearchParams) (area *footprint.Area, why string) {
	shape, ok, err := searchArea(p)
	if err == nil && ok {
		area, err = footprint.NewArea(shape)
	}
	if err != nil {
		return nil, "the requested area cannot be measured (" + paramReason(err) + ")"
	}
	return area, ""
}

// paramReason is the reason of a ParamError, else the error's text.
func paramReason(err error) string {
	var pe *stacclient.ParamError
	if errors.As(err, &pe) && pe.Reason != "" {
		return pe.Reason
	}
	return err.Error()
}

// itemOverlap measures an item's footprint (its geometry, else its bbox)
// against the area; false when the item has neither.
func itemOverlap(area *footprint.Area, it *stacclient.Item) (footprint.Overlap, bool) {
	shape, err := footprint.Parse(it.Geometry, it.BBox)
	if err != nil {
		return footprint.Overlap{}, false
	}
	o, err := area.Overlap(shape)
	return o, err == nil
}

// bboxFallbackNote names the footprints measured by their bounding box
// because their geometry is not a valid polygon ("" for none).
func bboxFallbackNote(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("%d footprint(s) are not valid polygons and were measured by their bounding box: %s",
		len(ids), strings.Join(ids, ", "))
}
