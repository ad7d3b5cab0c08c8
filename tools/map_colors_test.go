package tools

import (
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// TestDateColoursAreRankBased: One item dated 2070
// stretched the linear date scale so every 2025 item got one colour; by
// rank, each distinct date gets its own step of the ramp, oldest to newest.
func TestDateColoursAreRankBased(t *testing.T) {
	var items []drawnItem
	for _, dt := range []string{"2025-07-01T00:00:00Z", "2025-07-11T00:00:00Z", "2025-07-21T00:00:00Z", "2070-01-01T00:00:00Z", "2025-07-11T00:00:00Z"} {
		it := &stacclient.Item{ID: dt, Properties: map[string]any{"datetime": dt}}
		items = append(items, drawnItem{item: it, entry: MapLegendEntry{ID: dt}})
	}
	first, last := timeSpan(items)
	var out MapItemsOut
	colorItems(items, colorByDate, first, last, &out)
	seen := map[string]string{}
	for _, d := range items {
		if prev, ok := seen[d.entry.Color]; ok && prev != d.entry.ID {
			t.Errorf("%s and %s share colour %s", prev, d.entry.ID, d.entry.Color)
		}
		seen[d.entry.Color] = d.entry.ID
	}
	if len(seen) != 4 {
		t.Errorf("%d colours for 4 distinct dates: %v", len(seen), seen)
	}
}
