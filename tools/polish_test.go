package tools

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// Small things a model reads.
func TestUntitledCollectionsShowNoDash(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	text := resultText(callOK(t, cs, "search_collections", map[string]any{"q": "joplin"}))
	if !strings.Contains(text, "- joplin [2000-02-01") || strings.Contains(text, "joplin: -") {
		t.Errorf("search_collections renders the untitled joplin as titled \"-\":\n%s", text)
	}
	text = resultText(callOK(t, cs, "get_collection", map[string]any{"collection_id": "joplin"}))
	if !strings.HasPrefix(text, "joplin, license") {
		t.Errorf("get_collection renders the untitled joplin with a dash title:\n%s", text[:min(len(text), 200)])
	}
}

func TestQueryablesSaySharedDescriptionsOnce(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	text := resultText(callOK(t, cs, "get_queryables", map[string]any{"collection_id": "sentinel-2-l2a"}))
	const all = "Derived from the values of the 7 items"
	if n := strings.Count(text, all); n != 1 {
		t.Errorf("%q appears %d times, want once:\n%s", all, n, text)
	}
	if !strings.Contains(text, "properties above without a description here are each described as: "+all) {
		t.Errorf("the shared description is not said once for all:\n%s", text)
	}
	if strings.Contains(text, `- constellation (string) "constellation"`) {
		t.Errorf("a title equal to the name is repeated:\n%s", text)
	}
}

// Catalog-wide, the demo's derived queryables were described "Derived from
// the values in N of 125 items" with N varying per field, so the shared
// description could not be said once: 48 near-identical sentences.
func TestCatalogWideQueryablesSayTheDerivationOnce(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	text := resultText(callOK(t, cs, "get_queryables", map[string]any{}))
	if n := strings.Count(text, "Derived from the values"); n != 1 {
		t.Errorf("\"Derived from the values\" appears %d times, want once:\n%s", n, text)
	}
}

// The demo is named "demo" in errors and in the health report, not by the
// loopback address it happens to be served at.
func TestDemoIsNamedDemo(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	msg := callErr(t, cs, "get_collection", map[string]any{"collection_id": "nope"})
	if !strings.Contains(msg, "not found in catalog demo") || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("error: %s", msg)
	}
	msg = callErr(t, cs, "get_queryables", map[string]any{"collection_id": []string{"a", "b"}})
	if strings.Contains(msg, "127.0.0.1") {
		t.Errorf("error: %s", msg)
	}
	text := resultText(callOK(t, cs, "get_service_health", map[string]any{}))
	if !strings.Contains(text, "- demo: ") || strings.Contains(text, "127.0.0.1") {
		t.Errorf("health: %s", text)
	}
}

// An empty map_items answers in text only, not with a map of nothing.
func TestEmptyMapItemsIsTextOnly(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "map_items", map[string]any{"collections": []string{"naip"}, "bbox": []float64{0, 0, 1, 1}})
	if len(res.Content) != 1 {
		t.Fatalf("%d content blocks, want the text alone", len(res.Content))
	}
	if text := resultText(res); !strings.HasPrefix(text, "No map: 0 footprint(s) to draw") || !strings.Contains(text, "does not meet the bbox") {
		t.Errorf("text: %s", text)
	}
}

// At local scale the map names populated places (the
// nearest at the edge when none is inside), and the text says which.
func TestMapItemsNamesPlaces(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "map_items", map[string]any{"collections": []string{"naip"}, "aoi": []float64{-73.3, 43.9, -73.0, 44.1}, "max_items": 6})
	text := resultText(res)
	out := structured[MapItemsOut](t, res)
	if len(out.Places) == 0 || !strings.Contains(text, "; places named: "+strings.Join(out.Places, ", ")+".") {
		t.Errorf("places %q; text does not name them:\n%s", out.Places, text)
	}
	// The names are the gazetteer's towns inside the frame.
	inside, err := places.CitiesIn(out.Extent[0], out.Extent[1], out.Extent[2], out.Extent[3], 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range out.Places {
		if !slices.ContainsFunc(inside, func(l places.Landmark) bool { return strings.HasPrefix(l.Name, name) }) {
			t.Errorf("%q is no gazetteer city inside %v", name, out.Extent)
		}
	}
}

// A local catalog's relative asset hrefs ("./ortho-2.tif")
// are shown resolved, as absolute paths a reader can open.
func TestLocalCatalogAssetHrefsAreResolved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"catalog.json": `{"type":"Catalog","stac_version":"1.0.0","id":"local","description":"d","links":[{"rel":"child","href":"./c/collection.json"}]}`,
		"c/collection.json": `{"type":"Collection","stac_version":"1.0.0","id":"c","description":"d","license":"proprietary",
			"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[{"rel":"item","href":"./items/a.json"}]}`,
		"c/items/a.json": `{"type":"Feature","stac_version":"1.0.0","id":"a","collection":"c","geometry":{"type":"Point","coordinates":[1,2]},
			"bbox":[1,2,1,2],"properties":{"datetime":"2024-06-01T00:00:00Z"},"assets":{"ortho":{"href":"./ortho-2.tif"},"thumbnail":{"href":"./thumb.png","type":"image/png","roles":["thumbnail"]}},"links":[]}`,
		"c/items/thumb.png": string(tinyPNG(t)),
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: filepath.Join(dir, "catalog.json")})
	want := filepath.Join(dir, "c", "items", "ortho-2.tif")
	text := resultText(callOK(t, cs, "get_item", map[string]any{"collection_id": "c", "item_id": "a"}))
	if !strings.Contains(text, want) || strings.Contains(text, "./ortho-2.tif") {
		t.Errorf("get_item does not show the asset at %s:\n%s", want, text)
	}
	text = resultText(callOK(t, cs, "search_items", map[string]any{"collections": []string{"c"}}))
	if !strings.Contains(text, want) {
		t.Errorf("search_items does not show the asset at %s:\n%s", want, text)
	}
	// The preview reads the file through the catalog (it asked the
	// catalog's host for the path: a 404 for a file that is there).
	res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "c", "item_id": "a"})
	if out := structured[GetItemPreviewOut](t, res); !out.Available || out.Href != filepath.Join(dir, "c", "items", "thumb.png") {
		t.Errorf("get_item_preview: available %v, href %q:\n%s", out.Available, out.Href, resultText(res))
	}
}

// tinyPNG is a 2×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{200, 0, 0, 255})
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
