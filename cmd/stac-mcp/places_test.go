package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Place names through the binary over stdio on the demo catalog: a search
// by a state's name finds the demo's scenes of it, and check_coverage
// measures a country by its outline, not its bbox.
func TestPlacesOverStdio(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	cmd := exec.Command(bin, "--catalog", "demo", "stdio")
	cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=error", "XDG_STATE_HOME="+t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "places-test", Version: "0"}, nil)
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (map[string]any, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			return nil, text
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out, text
	}

	out, text := call("search_items", map[string]any{"collections": "sentinel-2-l2a", "bbox": "Ceará", "max_items": 20})
	if out == nil {
		t.Fatalf("search_items bbox Ceará: %s", text)
	}
	place, _ := out["place"].(map[string]any)
	if place["name"] != "Ceará" || place["kind"] != "region" {
		t.Errorf("place = %v", place)
	}
	items, _ := out["items"].([]any)
	if len(items) != 5 {
		t.Errorf("%d items of Ceará, want the demo's 5", len(items))
	}
	for _, it := range items {
		if id, _ := it.(map[string]any)["id"].(string); !strings.Contains(id, "_24M") {
			t.Errorf("item %s is not of Ceará's tiles", id)
		}
	}
	if !strings.HasPrefix(text, `Place (bbox "Ceará"): Ceará (region, Brazil; Natural Earth 1:10m admin-1 outline`) {
		t.Errorf("text starts %.200q", text)
	}

	out, text = call("check_coverage", map[string]any{"collections": "sentinel-2-l2a", "aoi": "Netherlands", "datetime": "2025"})
	if out == nil {
		t.Fatalf("check_coverage aoi Netherlands: %s", text)
	}
	area, _ := out["aoi_area_km2"].(float64)
	// The Netherlands' outline holds about 37,000 km²; its bbox
	// [3.35, 50.75, 7.2, 53.56] about 85,000.
	if area < 33000 || area > 42000 {
		t.Errorf("aoi_area_km2 = %.0f, want the outline's (about 37,000), not the bbox's", area)
	}
	if place, _ := out["place"].(map[string]any); place["kind"] != "country" {
		t.Errorf("place = %v", place)
	}

	if out, text = call("search_items", map[string]any{"bbox": "Qqqxxxjjjj"}); out != nil || !strings.Contains(text, "no place") {
		t.Errorf("an unknown place: %v %s", out, text)
	}
}
