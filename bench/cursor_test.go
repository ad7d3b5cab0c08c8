package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

// BenchmarkCursorBytes reports the size of the cursor search_items returns
// on the first page and after nine continuations (page 10), for a plain
// search and for a search whose intersects is a 400-vertex polygon, over
// the demo catalog (128 items, 3 per page). The cursor is handed to the
// model twice per result (structuredContent and the text block), so its
// size is context spent on every page; adr/0009 bounds it at 512 bytes.
//
//	go test -run '^$' -bench CursorBytes -benchtime 3x ./bench/
func BenchmarkCursorBytes(b *testing.B) {
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"plain", map[string]any{"collections": []string{"sentinel-2-l2a", "naip", "landsat-c2-l2", "cop-dem-glo-30"}}},
		{"polygon", map[string]any{"intersects": worldPolygon(400)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			policy := reliability.DefaultPolicy()
			policy.CacheTTL = 0
			deps := newBenchDeps(b, tools.DemoCatalog, policy, nil, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100})
			srv := &benchServer{session: connectInMemory(b, tools.NewServer(deps, "bench"), "bench")}
			var page1, page10 int
			for b.Loop() {
				args := map[string]any{"max_items": 3}
				for k, v := range c.args {
					args[k] = v
				}
				for page := 1; page <= 10; page++ {
					cursor, requires := cursorOf(b, srv.call(b, "search_items", args))
					switch page {
					case 1:
						page1 = len(cursor)
					case 10:
						page10 = len(cursor)
					}
					args = map[string]any{"cursor": cursor, "max_items": 3}
					for _, name := range requires { // what the cursor could not carry
						args[name] = c.args[name]
					}
				}
			}
			b.ReportMetric(float64(page1), "cursor_bytes_page1")
			b.ReportMetric(float64(page10), "cursor_bytes_page10")
		})
	}
}

// cursorOf is the cursor of a search_items result and the arguments to
// send again with it; a page without one fails the benchmark (the demo
// has more than ten pages of either search).
func cursorOf(b *testing.B, res *mcp.CallToolResult) (string, []string) {
	b.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	var out struct {
		Cursor   string   `json:"cursor"`
		Requires []string `json:"cursor_requires"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Cursor == "" {
		b.Fatalf("no cursor in %s (%v)", raw, err)
	}
	return out.Cursor, out.Requires
}

// worldPolygon is a closed ring of n vertices around the whole globe (every
// item intersects it), written with 6 decimals as a model would send it.
func worldPolygon(n int) map[string]any {
	ring := make([][]float64, 0, n+1)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		lon, _ := json.Number(fmt.Sprintf("%.6f", 179.9*math.Cos(a))).Float64()
		lat, _ := json.Number(fmt.Sprintf("%.6f", 89.9*math.Sin(a))).Float64()
		ring = append(ring, []float64{lon, lat})
	}
	ring = append(ring, ring[0])
	return map[string]any{"type": "Polygon", "coordinates": [][][]float64{ring}}
}
