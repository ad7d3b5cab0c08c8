package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func getPromptText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) (string, error) {
	t.Helper()
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if len(res.Messages) == 0 || res.Messages[0].Role != "user" {
		t.Fatalf("%s: messages %+v, want a user message", name, res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content %T, want text", name, res.Messages[0].Content)
	}
	return tc.Text, nil
}

func TestPromptsAreListedWithTheirArguments(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	required := map[string][]string{}
	for p, err := range cs.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		required[p.Name] = []string{}
		for _, a := range p.Arguments {
			if a.Description == "" {
				t.Errorf("prompt %s argument %s has no description", p.Name, a.Name)
			}
			if a.Required {
				required[p.Name] = append(required[p.Name], a.Name)
			}
		}
	}
	want := map[string]string{"find_imagery": "area,period", "explore_catalog": "", "estimate_download": "collection,bbox,datetime",
		"analyze_area": "area,period"}
	for name, req := range want {
		got, ok := required[name]
		if !ok || strings.Join(got, ",") != req {
			t.Errorf("prompt %s: required %v (listed %v), want %q", name, got, ok, req)
		}
	}
}

func TestFindImageryPromptGuidesTheToolOrder(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	text, err := getPromptText(t, cs, "find_imagery", map[string]string{"area": "11.0, 46.0, 11.5, 46.5", "period": "2024-06", "max_cloud": "15"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[11, 46, 11.5, 46.5]", "2024-06-01T00:00:00Z/2024-06-30T23:59:59.999999Z", `"lt": 15`, `{"property": "eo:cloud_cover"}, 15]`,
		"search_collections", "cursor", "max_items is how many items come back in total",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("find_imagery text lacks %q:\n%s", want, text)
		}
	}
	order := []string{"get_root", "get_capabilities", "search_collections", "get_queryables", "search_items", "get_item", "estimate_data_size"}
	last := -1
	for _, tool := range order {
		i := strings.Index(text, tool)
		if i <= last {
			t.Errorf("find_imagery mentions %s at %d, not after the previous step (%d): want the order %v", tool, i, last, order)
		}
		last = i
	}

	named, err := getPromptText(t, cs, "find_imagery", map[string]string{"area": "Lake Garda", "period": "2024", "collection": "sentinel-2-l2a"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(named, `"Lake Garda" (first turn this place into a bbox`) || !strings.Contains(named, `get_collection with collection_id "sentinel-2-l2a"`) ||
		!strings.Contains(named, `"lt": 20`) {
		t.Errorf("find_imagery with a place, a collection and the default cloud limit:\n%s", named)
	}
}

func TestOtherPromptsNameTheirArguments(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	explore, err := getPromptText(t, cs, "explore_catalog", map[string]string{"catalog": "earth-search"})
	if err != nil || !strings.Contains(explore, `catalog_url "earth-search"`) || !strings.Contains(explore, "get_queryables") {
		t.Errorf("explore_catalog (err %v):\n%s", err, explore)
	}
	if def, err := getPromptText(t, cs, "explore_catalog", nil); err != nil || !strings.Contains(def, "the server's default catalog") {
		t.Errorf("explore_catalog without a catalog (err %v):\n%s", err, def)
	}
	est, err := getPromptText(t, cs, "estimate_download", map[string]string{"collection": "naip", "bbox": "[-94.6,37.0,-94.4,37.2]", "datetime": "2021"})
	if err != nil || !strings.Contains(est, `collections ["naip"]`) || !strings.Contains(est, "[-94.6, 37, -94.4, 37.2]") ||
		!strings.Contains(est, "estimate_data_size") || !strings.Contains(est, "2021-01-01T00:00:00Z/2021-12-31T23:59:59.999999Z") {
		t.Errorf("estimate_download (err %v):\n%s", err, est)
	}
}

func TestPromptArgumentsAreValidated(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	cases := []struct {
		prompt string
		args   map[string]string
		want   []string
	}{
		{"find_imagery", map[string]string{"period": "2024"}, []string{`"area"`, "required and missing", "bbox"}},
		{"find_imagery", map[string]string{"area": "1,2,3,4", "period": "2024-13-45"}, []string{`"period"`, "2024-13-45"}},
		{"find_imagery", map[string]string{"area": "1,2,3,4", "period": "2024", "max_cloud": "150"}, []string{`"max_cloud"`, "150", "0 to 100"}},
		{"find_imagery", map[string]string{"area": "1,2,3", "period": "2024"}, []string{`"area"`, "1,2,3"}},
		{"find_imagery", map[string]string{"area": "1,2,3,4", "period": "2024", "max_clouds": "5"}, []string{`"max_clouds"`, "not an argument", "max_cloud"}},
		{"estimate_download", map[string]string{"collection": "naip", "bbox": "1,2,3,--4", "datetime": "2021"}, []string{`"bbox"`, `"--4" is not a number`}},
		{"estimate_download", map[string]string{"collection": "naip", "bbox": "Denver", "datetime": "2021-02-30"}, []string{`"datetime"`, "2021-02-30"}},
		{"estimate_download", map[string]string{"collection": "naip", "bbox": "1,2,3,4"}, []string{`"datetime"`, "required"}},
	}
	for _, tc := range cases {
		_, err := getPromptText(t, cs, tc.prompt, tc.args)
		if err == nil {
			t.Errorf("%s %v: no error", tc.prompt, tc.args)
			continue
		}
		// Invalid params, not code 0.
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s %v: error %#v, want JSON-RPC code %d", tc.prompt, tc.args, err, jsonrpc.CodeInvalidParams)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: error %q lacks %q", tc.prompt, tc.args, err, w)
			}
		}
	}
}

// Prompt arguments are typed by a person in a form;
// words for a period or a place are accepted and the message tells the
// model to turn them into a datetime or bbox (as area already did).
func TestPromptsAcceptFreeTextPeriodsAndPlaces(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	for _, period := range []string{"July 2025", "summer 2025"} {
		text, err := getPromptText(t, cs, "find_imagery", map[string]string{"area": "Groningen", "period": period})
		if err != nil {
			t.Errorf("find_imagery period %q: %v", period, err)
			continue
		}
		for _, want := range []string{`for the period "` + period + `" (first turn this into an RFC 3339 interval`, "datetime (the interval you derived from the period)"} {
			if !strings.Contains(text, want) {
				t.Errorf("find_imagery period %q: text lacks %q:\n%s", period, want, text)
			}
		}
	}
	text, err := getPromptText(t, cs, "estimate_download", map[string]string{"collection": "naip", "bbox": "Denver", "datetime": "summer 2025"})
	if err != nil {
		t.Fatalf("estimate_download bbox Denver: %v", err)
	}
	// Denver is in the server's gazetteer: the place is passed on as the
	// tools take it.
	for _, want := range []string{`over Denver (city, bbox [`, `pass bbox "Denver" as it is`, `for "summer 2025" (first turn this into`,
		`bbox "Denver", datetime (the interval you derived)`} {
		if !strings.Contains(text, want) {
			t.Errorf("estimate_download: text lacks %q:\n%s", want, text)
		}
	}
	// A place it does not know is still handed to the model.
	text, err = getPromptText(t, cs, "estimate_download", map[string]string{"collection": "naip", "bbox": "the Qqqxxx valley", "datetime": "summer 2025"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`over "the Qqqxxx valley" (first turn this place into a bbox`, "bbox (the bbox you derived), datetime (the interval you derived)"} {
		if !strings.Contains(text, want) {
			t.Errorf("estimate_download: text lacks %q:\n%s", want, text)
		}
	}
}

// analyze_area walks the pixel tools in order, and the arguments it names
// work as written: on the demo's series collection, the calls it asks for
// succeed.
func TestAnalyzeAreaPromptGuidesThePixelTools(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{Export: ExportSettings{Dir: t.TempDir()}})
	const collection = "sentinel-2-l2a-synthetic-series"
	text, err := getPromptText(t, cs, "analyze_area", map[string]string{"area": "-105.235,40.0806,-105.2166,40.0868", "period": "2023",
		"collection": collection, "index": "NDWI"})
	if err != nil {
		t.Fatal(err)
	}
	aoi := []float64{-105.235, 40.0806, -105.2166, 40.0868}
	const dt = "2023-01-01T00:00:00Z/2023-12-31T23:59:59.999999Z"
	for _, want := range []string{`collections "` + collection + `"`, "aoi [-105.235, 40.0806, -105.2166, 40.0868]", `datetime "` + dt + `"`,
		`index "ndwi"`, `view "ndwi"`, "cursor", "valid_share", "baseline", `kind "series"`} {
		if !strings.Contains(text, want) {
			t.Errorf("analyze_area text lacks %q:\n%s", want, text)
		}
	}
	order := []string{"get_collection", "check_coverage", "index_time_series", "render_aoi", "aoi_statistics", "export"}
	last := -1
	for _, tool := range order {
		i := strings.Index(text, tool)
		if i <= last {
			t.Errorf("analyze_area mentions %s at %d, not after the previous step (%d): want the order %v", tool, i, last, order)
		}
		last = i
	}
	// The calls as the text words them.
	callOK(t, cs, "check_coverage", map[string]any{"collections": collection, "aoi": aoi, "datetime": dt, "max_cloud_cover": 30})
	series := structured[IndexTimeSeriesOut](t, callOK(t, cs, "index_time_series", map[string]any{"collections": collection, "aoi": aoi, "datetime": dt, "index": "ndwi"}))
	if len(series.Rows) == 0 {
		t.Errorf("index_time_series as the prompt words it read no date: %+v", series)
	}
	callOK(t, cs, "render_aoi", map[string]any{"collections": collection, "aoi": aoi, "datetime": dt, "view": "ndwi"})
	callOK(t, cs, "export", map[string]any{"kind": "series", "collections": collection, "aoi": aoi, "datetime": dt})

	// A place is passed on as it is; an unknown index is refused with the list.
	placed, err := getPromptText(t, cs, "analyze_area", map[string]string{"area": "Ceará", "period": "summer 2025"})
	if err != nil || !strings.Contains(placed, `aoi "Ceará"`) || !strings.Contains(placed, `index "ndvi"`) || !strings.Contains(placed, "search_collections") {
		t.Errorf("analyze_area with a place and the defaults (err %v):\n%s", err, placed)
	}
	if _, err := getPromptText(t, cs, "analyze_area", map[string]string{"area": "Ceará", "period": "2024", "index": "greenness"}); err == nil ||
		!strings.Contains(err.Error(), "ndvi") {
		t.Errorf("an unknown index: %v", err)
	}
}
