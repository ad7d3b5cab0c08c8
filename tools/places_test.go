package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The demo holds Sentinel-2 scenes of Ceará (north-eastern Brazil): a
// search by the state's name finds them, by its outline.
func TestSearchItemsByPlaceName(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "search_items", map[string]any{"collections": []string{"sentinel-2-l2a"}, "bbox": "Ceará", "max_items": 20})
	out := structured[SearchItemsOut](t, res)
	if out.Place == nil || out.Place.Name != "Ceará" || out.Place.Kind != "region" || out.Place.Country != "Brazil" {
		t.Fatalf("place = %+v", out.Place)
	}
	if out.Returned != 5 {
		t.Errorf("found %d items of Ceará, want the demo's 5: %+v", out.Returned, out.Items)
	}
	for _, it := range out.Items {
		if !strings.Contains(it.ID, "24M") {
			t.Errorf("item %s is not of Ceará's MGRS tiles (24M…)", it.ID)
		}
	}
	text := resultText(res)
	if !strings.HasPrefix(text, `Place (bbox "Ceará"): Ceará (region, Brazil; Natural Earth 1:10m admin-1 outline`) {
		t.Errorf("text starts %q", text[:min(len(text), 200)])
	}
	if s, _ := out.Search["intersects"].(string); !strings.Contains(s, "Ceará") {
		t.Errorf("the search echoes intersects as %v, want the place named", out.Search["intersects"])
	}
	if len(text) > 20000 {
		t.Errorf("text is %d bytes: the outline is written out", len(text))
	}
	t.Log(text[:min(len(text), 2000)])
}

// check_coverage measures against a country's outline, not its bbox: the
// Netherlands' land is under half of its bbox's area.
func TestCheckCoverageMeasuresThePlaceOutline(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "check_coverage", map[string]any{"collections": []string{"sentinel-2-l2a"}, "aoi": "Netherlands", "datetime": "2025-07"})
	out := structured[CheckCoverageOut](t, res)
	if out.Place == nil || out.Place.Name != "Netherlands" {
		t.Fatalf("place = %+v", out.Place)
	}
	t.Logf("%s", resultText(res))
	if out.AOIAreaKm2 < 30000 || out.AOIAreaKm2 > 45000 {
		t.Errorf("aoi_area_km2 = %.0f, want the Netherlands' outline (about 35,000 km² of land), not its bbox (about 80,000)", out.AOIAreaKm2)
	}
}

// Every tool with an area argument reports the place it was given.
func TestEveryAreaToolReportsItsPlace(t *testing.T) {
	t.Parallel()
	for _, tool := range Inventory() {
		in := tool.Def.InputSchema.(*jsonschema.Schema)
		area := false
		for _, name := range []string{"bbox", "intersects", "aoi"} {
			if in.Properties[name] != nil {
				area = true
			}
		}
		out := tool.Def.OutputSchema.(*jsonschema.Schema)
		if area != (out.Properties["place"] != nil) {
			t.Errorf("%s: area argument %v, place in its output %v", tool.Def.Name, area, out.Properties["place"] != nil)
		}
	}
}

func TestPlaceErrorsAndAmbiguity(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	msg := callErr(t, cs, "map_items", map[string]any{"collections": "sentinel-2-l2a", "aoi": "Fortalezzaxx"})
	if !strings.Contains(msg, `"aoi"`) || !strings.Contains(msg, `did you mean "Fortaleza"`) {
		t.Errorf("unknown place: %s", msg)
	}
	msg = callErr(t, cs, "search_items", map[string]any{"bbox": "Lisbon", "intersects": "Portugal"})
	if !strings.Contains(msg, "already names a place") {
		t.Errorf("two places: %s", msg)
	}
	res := callOK(t, cs, "search_items", map[string]any{"collections": "sentinel-2-l2a", "bbox": "Paris", "max_items": 1})
	out := structured[SearchItemsOut](t, res)
	if out.Place == nil || !slices.Contains(out.Place.Alternatives, "Paris, Texas, US") {
		t.Fatalf("place %+v", out.Place)
	}
	if text := resultText(res); !strings.Contains(text, "Also: ") || !strings.Contains(text, "Paris, Texas, US") {
		t.Errorf("text does not name the other places named Paris: %.400s", text)
	}
	// search_collections takes a bbox only: the place's bbox is sent.
	sc := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"bbox": "Colorado"}))
	if sc.Place == nil || sc.Place.Name != "Colorado" {
		t.Errorf("search_collections place %+v", sc.Place)
	}
	// A misspelling resolves, with a note.
	cc := structured[MapItemsOut](t, callOK(t, cs, "map_items", map[string]any{"collections": "sentinel-2-l2a", "aoi": "Fortalezza"}))
	if cc.Place == nil || cc.Place.Name != "Fortaleza" || len(cc.Place.Notes) == 0 || !strings.Contains(strings.Join(cc.Place.Notes, " "), "closest name") {
		t.Errorf("misspelling: %+v", cc.Place)
	}
}

func TestPlaceResourceAndCompletion(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	ctx := context.Background()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "stac://places/Paris%2C%20Texas"})
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Type       string          `json:"type"`
		Geometry   json.RawMessage `json:"geometry"`
		Properties PlaceOut        `json:"properties"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &f); err != nil {
		t.Fatal(err)
	}
	if f.Type != "Feature" || f.Properties.Name != "Paris" || !strings.Contains(f.Properties.Country, "Texas") || !strings.Contains(string(f.Geometry), "Polygon") {
		t.Errorf("stac://places/Paris, Texas: %+v", f)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "stac://places/Qqqxxxjjjj"}); err == nil || !strings.Contains(err.Error(), "no place") {
		t.Errorf("unknown place resource: %v", err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "find_imagery"},
		Argument: mcp.CompleteParamsArgument{Name: "area", Value: "Lisb"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(comp.Completion.Values, "Lisbon") {
		t.Errorf("completing Lisb: %v", comp.Completion.Values)
	}
	// A prompt given a place passes it on as the tools take it.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "find_imagery", Arguments: map[string]string{"area": "Ceará", "period": "2025-07"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := pr.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, `pass bbox "Ceará" as it is`) {
		t.Errorf("find_imagery with a place: %.500s", text)
	}
}
