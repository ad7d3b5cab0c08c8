package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
)

// previewAssets serves the picture package's test images (our own, generated:
// tools/internal/picture/testdata/make_images.go) as STAC assets, with a few
// failure modes, and records what it was asked.
type previewAssets struct {
	mu       sync.Mutex
	requests []string // path?query of each request
	flaky    int      // /flaky.jpg answers 503 this many times first
}

func (h *previewAssets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r.URL.RequestURI())
	flaky := h.flaky > 0 && r.URL.Path == "/flaky.jpg"
	if flaky {
		h.flaky--
	}
	h.mu.Unlock()
	if flaky {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "flaky.jpg" || name == "blob/scene.jpg" {
		name = "scene.jpg"
	}
	data, err := os.ReadFile(filepath.Join("internal", "picture", "testdata", filepath.Base(name)))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch filepath.Ext(name) {
	case ".txt":
		w.Header().Set("Content-Type", "text/html")
	default:
		w.Header().Set("Content-Type", "application/octet-stream") // servers get this wrong: decoding goes by content
	}
	_, _ = w.Write(data)
}

func (h *previewAssets) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

// previewItem is an item with the given assets (key → href, type, role).
func previewItem(id string, assets map[string][3]string) string {
	var parts []string
	for key, a := range assets {
		parts = append(parts, fmt.Sprintf(`%q:{"href":%q,"type":%q,"roles":[%q]}`, key, a[0], a[1], a[2]))
	}
	return fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"collection":"previews",
		"geometry":{"type":"Polygon","coordinates":[[[10,45],[11,45],[11,46],[10,46],[10,45]]]},"bbox":[10,45,11,46],
		"properties":{"datetime":"2024-06-01T10:00:00Z"},"links":[],"assets":{%s}}`, id, strings.Join(parts, ","))
}

// newPreviewCatalog serves a STAC API of preview cases and the asset host.
func newPreviewCatalog(t *testing.T) (catalogURL string, assets *previewAssets, assetURL string) {
	t.Helper()
	assets = &previewAssets{}
	asrv := httptest.NewServer(assets)
	t.Cleanup(asrv.Close)
	a := asrv.URL
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"previews","description":"preview cases","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[10,45,11,46]]},"temporal":{"interval":[["2024-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	cog := [3]string{a + "/data.tif", "image/tiff; application=geotiff; profile=cloud-optimized", "data"}
	items := []string{
		previewItem("thumb-jpeg", map[string][3]string{"thumbnail": {a + "/scene.jpg", "image/jpeg", "thumbnail"}, "data": cog}),
		previewItem("overview-webp", map[string][3]string{"overview": {a + "/scene.webp", "image/webp", "overview"}, "data": cog}),
		previewItem("nodata-png", map[string][3]string{"thumbnail": {a + "/tile-nodata.png", "image/png", "thumbnail"}}),
		previewItem("bomb-then-jpeg", map[string][3]string{"thumbnail": {a + "/bomb.png", "image/png", "thumbnail"},
			"overview": {a + "/scene.jpg", "image/jpeg", "overview"}}),
		previewItem("html", map[string][3]string{"thumbnail": {a + "/not-an-image.txt", "image/png", "thumbnail"}}),
		previewItem("missing", map[string][3]string{"thumbnail": {a + "/gone.png", "image/png", "thumbnail"}}),
		previewItem("no-preview", map[string][3]string{"data": cog}),
		previewItem("s3-and-jp2", map[string][3]string{"thumbnail": {"s3://bucket/thumb.jpg", "image/jpeg", "thumbnail"},
			"preview": {a + "/preview.jp2", "image/jp2", "overview"}}),
		previewItem("flaky", map[string][3]string{"thumbnail": {a + "/flaky.jpg", "image/jpeg", "thumbnail"}}),
		previewItem("gray16", map[string][3]string{"thumbnail": {a + "/gray16.tif", "image/tiff", "thumbnail"}}),
	}
	for _, it := range items {
		if err := store.AddItem([]byte(it)); err != nil {
			t.Fatal(err)
		}
	}
	return serveStore(t, store, stacserver.Options{}), assets, a
}

// imageOf returns the result's image content, failing unless there is
// exactly one.
func imageOf(t *testing.T, res *mcp.CallToolResult) *mcp.ImageContent {
	t.Helper()
	var images []*mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			images = append(images, ic)
		}
	}
	if len(images) != 1 {
		t.Fatalf("result has %d image content blocks, want 1", len(images))
	}
	return images[0]
}

func TestGetItemPreviewShowsThePreviewAsImageContent(t *testing.T) {
	t.Parallel()
	catalog, assets, _ := newPreviewCatalog(t)
	// Hedging off: the count of requests for the flaky asset below is exact
	// only when no copy goes out beside a slow read (under -race on a busy
	// machine a copy of the retry made it 3).
	policy := testPolicy()
	policy.Hedge = false
	cs := newTestSession(t, testSessionOptions{CatalogURL: catalog, Policy: &policy})
	cases := []struct {
		item, asset, mime, format string
		w, h                      int
	}{
		{"thumb-jpeg", "thumbnail", "image/jpeg", "jpeg", 512, 384},
		{"overview-webp", "overview", "image/jpeg", "webp", 320, 240},
		{"nodata-png", "thumbnail", "image/png", "png", 300, 300}, // transparency kept
		{"bomb-then-jpeg", "overview", "image/jpeg", "jpeg", 512, 384},
		{"flaky", "thumbnail", "image/jpeg", "jpeg", 512, 384},
		{"gray16", "thumbnail", "image/jpeg", "tiff", 120, 90},
	}
	assets.flaky = 1
	for _, c := range cases {
		t.Run(c.item, func(t *testing.T) {
			res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": c.item})
			out := structured[GetItemPreviewOut](t, res)
			img := imageOf(t, res)
			if !out.Available || out.AssetKey != c.asset || out.SourceFormat != c.format || out.Image == nil {
				t.Fatalf("out = %+v", out)
			}
			if img.MIMEType != c.mime || out.Image.MIMEType != c.mime || len(img.Data) != out.Image.Bytes || len(img.Data) > 150_000 {
				t.Errorf("image %s, %d bytes; structured %+v", img.MIMEType, len(img.Data), out.Image)
			}
			decoded, format, err := image.Decode(bytes.NewReader(img.Data))
			if err != nil || "image/"+format != c.mime || decoded.Bounds().Dx() != c.w || decoded.Bounds().Dy() != c.h {
				t.Errorf("image content decodes to %s %v (%v), want %s %dx%d", format, decoded.Bounds(), err, c.mime, c.w, c.h)
			}
			// The image travels only as image content, never as base64 in
			// the structured output.
			raw, _ := json.Marshal(res.StructuredContent)
			if len(raw) > 4000 {
				t.Errorf("structuredContent is %d bytes: image data leaked into it?", len(raw))
			}
			text := resultText(res)
			if !strings.HasPrefix(text, "Preview of "+c.item) || !strings.Contains(text, fmt.Sprintf("%d×%d", c.w, c.h)) {
				t.Errorf("text = %q", text)
			}
		})
	}
	// The flaky asset was fetched through the reliability layer: retried.
	n := 0
	for _, r := range assets.seen() {
		if r == "/flaky.jpg" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the flaky asset was requested %d times, want 2 (a 503, then a retry)", n)
	}
}

func TestGetItemPreviewSaysWhyThereIsNoPreview(t *testing.T) {
	t.Parallel()
	catalog, _, _ := newPreviewCatalog(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: catalog})
	cases := map[string][]string{
		"html":       {"not an image", "text/html"},
		"missing":    {"could not be fetched", "404"},
		"no-preview": {"has no thumbnail or overview asset", "data"},
		"s3-and-jp2": {"s3:// hrefs cannot be fetched", "image/jp2 is not a format"},
	}
	for item, want := range cases {
		t.Run(item, func(t *testing.T) {
			res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": item})
			out := structured[GetItemPreviewOut](t, res)
			for _, c := range res.Content {
				if _, ok := c.(*mcp.ImageContent); ok {
					t.Fatal("an image was attached to a result without a preview")
				}
			}
			text := resultText(res)
			if out.Available || out.Reason == "" {
				t.Fatalf("out = %+v", out)
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("text %q lacks %q", text, w)
				}
			}
			if !strings.Contains(text, `call map_items with {"collections": ["previews"], "ids": [`+fmt.Sprintf("%q", item)+`]}`) {
				t.Errorf("text does not offer map_items for the item: %q", text)
			}
		})
	}
	msg := callErr(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "thumb-jpeg", "asset_key": "nope"})
	if !strings.Contains(msg, "asset_key") || !strings.Contains(msg, "thumbnail") {
		t.Errorf("unknown asset_key: %q", msg)
	}
	msg = callErr(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "no-such-item"})
	if !strings.Contains(msg, "get_item_preview: item 'no-such-item' not found") {
		t.Errorf("missing item: %q", msg)
	}
	// asset_key picks another asset, even one that is not a preview.
	res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "bomb-then-jpeg", "asset_key": "thumbnail"})
	if out := structured[GetItemPreviewOut](t, res); out.Available || !strings.Contains(out.Reason, "refused before decoding") {
		t.Errorf("bomb by asset_key: %+v", out)
	}
}

// An item's asset href may name any URL the server can reach;
// over http a preview failure does not describe what another host than the
// catalog's answered (its content type, size or decoder error).
func TestGetItemPreviewDoesNotDescribeOtherHostsToHTTPClients(t *testing.T) {
	t.Parallel()
	catalog, _, _ := newPreviewCatalog(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: catalog, UntrustedCallers: true})
	for _, item := range []string{"html", "bomb-then-jpeg"} {
		res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": item, "asset_key": "thumbnail"})
		out := structured[GetItemPreviewOut](t, res)
		text := resultText(res)
		for _, leak := range []string{"text/html", "text/plain", "Content-Type", " bytes", "px", "×"} {
			if strings.Contains(out.Reason, leak) || strings.Contains(text, "): "+leak) {
				t.Errorf("%s: the failure describes another host's answer (%q): %s", item, leak, out.Reason)
			}
		}
		if !strings.Contains(out.Reason, "not described to http clients") {
			t.Errorf("%s: reason %q does not say why it is brief", item, out.Reason)
		}
	}
}

func TestGetItemPreviewOnTheDemoCatalogIsAQuickOfflineAnswer(t *testing.T) {
	t.Parallel()
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec})
	res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "sentinel-2-l2a", "item_id": "S2B_24MUA_20250731_0_L2A"})
	out := structured[GetItemPreviewOut](t, res)
	if out.Available || !strings.Contains(out.Reason, "offline by design") || !strings.Contains(resultText(res), "map_items") {
		t.Errorf("demo preview: %+v", out)
	}
	for _, c := range rec.snapshot() {
		if strings.Contains(c.path, ".jpg") || strings.Contains(c.path, ".png") {
			t.Errorf("the demo tried to fetch an asset: %s", c.path)
		}
	}
}

// blobRedirect sends requests for Azure Blob Storage hosts to the test's
// asset server: the "Planetary Computer" thumbnails live there.
type blobRedirect struct {
	assetHost string // host:port of the asset server
	next      http.RoundTripper
}

func (b blobRedirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Hostname(), ".blob.core.windows.net") {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = "http", b.assetHost
		req.URL.Path = "/blob" + req.URL.Path
	}
	return b.next.RoundTrip(req)
}

func TestGetItemPreviewSignsPlanetaryComputerHrefsAndNeverShowsTheToken(t *testing.T) {
	t.Parallel()
	_, assets, assetURL := newPreviewCatalog(t)
	store := stacserver.NewStore()
	_ = store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"previews","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[10,45,11,46]]},"temporal":{"interval":[["2024-01-01T00:00:00Z",null]]}},"links":[]}`))
	blobHref := "https://pcstore.blob.core.windows.net/previews/scene.jpg"
	if err := store.AddItem([]byte(previewItem("pc-item", map[string][3]string{"thumbnail": {blobHref, "image/jpeg", "thumbnail"}}))); err != nil {
		t.Fatal(err)
	}
	catalog := serveStore(t, store, stacserver.Options{})
	tokens := &fakeTokenEndpoint{}
	tokenSrv := httptest.NewServer(tokens)
	t.Cleanup(tokenSrv.Close)
	d := newTestDeps(t, testSessionOptions{CatalogURL: catalog, Transport: blobRedirect{assetHost: strings.TrimPrefix(assetURL, "http://"), next: loopbackTransport}})
	configureSigning(d, signingOptions{TokenURL: tokenSrv.URL + "/token", IsPlanetaryComputer: func(u string) bool { return u == catalog }})
	cs := newClientSession(t, d, nil)

	res := callOK(t, cs, "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "pc-item"})
	out := structured[GetItemPreviewOut](t, res)
	if !out.Available || out.Href != blobHref || tokens.count() != 1 {
		t.Fatalf("out %+v, %d token requests", out, tokens.count())
	}
	var fetched string
	for _, r := range assets.seen() {
		if strings.HasPrefix(r, "/blob/") {
			fetched = r
		}
	}
	if !strings.Contains(fetched, fakeTokenSig) {
		t.Errorf("the blob was fetched as %q, without the SAS token", fetched)
	}
	raw, _ := json.Marshal(res)
	if strings.Contains(string(raw), fakeTokenSig) {
		t.Error("the SAS token appears in the result")
	}

	// A token service that refuses: the preview is still tried (unsigned),
	// and the result says signing failed.
	refusing := &fakeTokenEndpoint{fail: true}
	refusingSrv := httptest.NewServer(refusing)
	t.Cleanup(refusingSrv.Close)
	d2 := newTestDeps(t, testSessionOptions{CatalogURL: catalog, Transport: blobRedirect{assetHost: strings.TrimPrefix(assetURL, "http://"), next: loopbackTransport}})
	configureSigning(d2, signingOptions{TokenURL: refusingSrv.URL + "/token", IsPlanetaryComputer: func(u string) bool { return u == catalog }})
	res = callOK(t, newClientSession(t, d2, nil), "get_item_preview", map[string]any{"collection_id": "previews", "item_id": "pc-item"})
	if text := resultText(res); !strings.Contains(text, "Note: Planetary Computer signing failed") || refusing.count() == 0 {
		t.Errorf("refused token: %q", text)
	}
}

// decodePNG decodes a map's image content.
func decodePNG(t *testing.T, ic *mcp.ImageContent) image.Image {
	t.Helper()
	if ic.MIMEType != "image/png" {
		t.Fatalf("map MIME type %q, want image/png", ic.MIMEType)
	}
	img, err := png.Decode(bytes.NewReader(ic.Data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// countColor counts pixels within tol of c (per channel).
func countColor(img image.Image, r, g, b uint8, tol int) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if abs(int(cr>>8)-int(r)) <= tol && abs(int(cg>>8)-int(g)) <= tol && abs(int(cb>>8)-int(b)) <= tol {
				n++
			}
		}
	}
	return n
}

func abs(x int) int { return max(x, -x) }

func TestMapItemsDrawsTheDemoSearchOffline(t *testing.T) {
	t.Parallel()
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec})
	args := map[string]any{"collections": "sentinel-2-l2a", "bbox": []float64{-40.5, -5.3, -37.5, -3.5}}
	res := callOK(t, cs, "map_items", args)
	out := structured[MapItemsOut](t, res)
	img := decodePNG(t, imageOf(t, res))
	if out.Drawn != 5 || len(out.Items) != 5 || out.ColorBy != "cloud_cover" || img.Bounds().Dx() != out.Image.Width || img.Bounds().Dy() != out.Image.Height {
		t.Fatalf("out = %+v, image %v", out, img.Bounds())
	}
	if out.Image.Bytes != len(imageOf(t, res).Data) || out.Image.Bytes > 300_000 {
		t.Errorf("image bytes %d", out.Image.Bytes)
	}
	// The AOI is outlined in red, and footprints are drawn in their legend colours.
	if n := countColor(img, 0xd7, 0x30, 0x1f, 8); n < 500 {
		t.Errorf("%d AOI-red pixels, want an outline", n)
	}
	if fmt.Sprint(out.AOI) != "[-40.5 -5.3 -37.5 -3.5]" || out.Extent[0] > -40.5 || out.Extent[2] < -37.5 {
		t.Errorf("aoi %v, extent %v", out.AOI, out.Extent)
	}
	text := resultText(res)
	for _, e := range out.Items {
		if !strings.Contains(text, e.Label+". "+e.ID) || !strings.Contains(text, e.Color) {
			t.Errorf("legend text lacks item %s %s (%s):\n%s", e.Label, e.ID, e.Color, text)
		}
	}
	if !strings.Contains(text, "shaded by cloud cover") || !strings.Contains(text, "scale bar") {
		t.Errorf("text = %q", text)
	}
	for _, c := range rec.snapshot() {
		if c.tool != "map_items" || !c.insideRun {
			t.Errorf("request %s outside the map_items call (tool %q)", c.path, c.tool)
		}
	}

	// By date, and the search's own arguments in their loose forms.
	res = callOK(t, cs, "map_items", map[string]any{"collections": "naip", "bbox": "-73.3,43.9,-73.0,44.1", "color_by": "date", "max_items": "40"})
	out = structured[MapItemsOut](t, res)
	if out.Drawn != 30 || out.ColorBy != "date" || out.HasMore {
		t.Errorf("naip by date: drawn %d, %s, has_more %v", out.Drawn, out.ColorBy, out.HasMore)
	}
	if out.Items[0].Color == out.Items[len(out.Items)-1].Color {
		t.Error("the oldest and newest items have the same colour")
	}
}

func TestMapItemsArguments(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	if msg := callErr(t, cs, "map_items", map[string]any{"collections": "naip", "color_by": "rainbow"}); !strings.Contains(msg, "color_by") {
		t.Errorf("bad color_by: %q", msg)
	}
	if msg := callErr(t, cs, "map_items", map[string]any{"collections": "joplin", "datetime": "1990"}); !strings.Contains(msg, "nothing to draw") {
		t.Errorf("empty search without an area: %q", msg)
	}
	// An empty search with an area answers in text, naming the area, with
	// no map of nothing.
	res := callOK(t, cs, "map_items", map[string]any{"collections": "joplin", "datetime": "1990", "bbox": "-94.7,37.0,-94.4,37.2"})
	if out := structured[MapItemsOut](t, res); out.Drawn != 0 || len(out.AOI) != 4 || !strings.Contains(strings.Join(out.Notes, " "), "no items matched") || len(res.Content) != 1 {
		t.Errorf("empty search with an area: %+v", out)
	}
	// max_items caps the map and says so.
	res = callOK(t, cs, "map_items", map[string]any{"collections": "naip", "max_items": 3})
	out := structured[MapItemsOut](t, res)
	notes := strings.Join(out.Notes, " ")
	if out.Drawn != 3 || !out.HasMore || !strings.Contains(notes, "only the first 3") {
		t.Errorf("capped map: drawn %d has_more %v notes %q", out.Drawn, out.HasMore, notes)
	}
	if msg := callErr(t, cs, "map_items", map[string]any{"max_items": 100000}); !strings.Contains(msg, "max_items") {
		t.Errorf("max_items over the ceiling: %q", msg)
	}
	// map_items returns no cursor, so its advice past the ceiling is to
	// narrow the search, not to continue with one.
	if msg := callErr(t, cs, "map_items", map[string]any{"max_items": "100000"}); !strings.Contains(msg, "narrow it") || strings.Contains(msg, "cursor") {
		t.Errorf("max_items over the ceiling: %q, want the advice to narrow the search and no cursor", msg)
	}
	// fields and limit could only break a map (it needs each geometry, and
	// draws max_items): they are not arguments of map_items.
	for _, arg := range []string{"fields", "limit"} {
		if msg := callErr(t, cs, "map_items", map[string]any{"collections": "naip", arg: "10"}); !strings.Contains(msg, arg) || !strings.Contains(msg, "Accepted arguments: aoi") {
			t.Errorf("map_items with %s: %q, want it refused with the accepted arguments", arg, msg)
		}
	}
}

func TestCheckCoverageOnDemoFootprints(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	bbox := []float64{-73.3, 43.9, -73.0, 44.1}
	res := callOK(t, cs, "check_coverage", map[string]any{"collections": "naip", "bbox": bbox, "window_days": 365})
	// (NAIP was flown in 2011, 2012, 2014, 2016 and 2018, in summer: 365-day
	// windows from 2011-08-18 group the surveys in four or five windows.)
	out := structured[CheckCoverageOut](t, res)

	// The tool reports what footprint.Measure computes on the same items
	// (whose own tests check it against a rasterised area).
	var items []footprint.Item
	for _, it := range demoItemsOf(t, "naip") {
		s, err := footprint.Parse(it.Geometry, it.BBox)
		if err != nil {
			t.Fatal(err)
		}
		tm, _ := it.Datetime()
		items = append(items, footprint.Item{ID: it.ID, Shape: s, Time: tm})
	}
	area, _ := footprint.FromBBox(bbox)
	want, err := footprint.Measure(t.Context(), area, items, footprint.Options{WindowDays: 365})
	if err != nil {
		t.Fatal(err)
	}
	if out.Items != 30 || math.Abs(out.CoveredPercent-want.CoveredPercent) > 0.001 || math.Abs(out.AOIAreaKm2-want.AreaKm2) > 0.01 {
		t.Errorf("covered %.3f%% of %.1f km² by %d items; Measure says %.3f%% of %.1f km²", out.CoveredPercent, out.AOIAreaKm2, out.Items,
			want.CoveredPercent, want.AreaKm2)
	}
	if out.CoveredPercent < 40 || out.CoveredPercent > 46 || len(out.UncoveredBBox) != 4 || out.WindowDays != 365 {
		t.Errorf("out = %+v", out)
	}
	// The windows partition the dated items, and none covers more than all of them.
	n := 0
	for _, w := range out.ByWindow {
		n += w.Items
		if w.CoveredPercent > out.CoveredPercent+1e-9 || w.CoveredPercent <= 0 {
			t.Errorf("window %+v covers more than all items (%.3f%%) or nothing", w, out.CoveredPercent)
		}
	}
	if n != 30 || len(out.ByWindow) != len(want.Windows) || len(out.ByWindow) < 4 {
		t.Errorf("%d windows holding %d items; Measure has %d windows", len(out.ByWindow), n, len(want.Windows))
	}
	if n := len(out.SmallestSet.Items); n != 6 || math.Abs(out.SmallestSet.ReachedPercent-out.CoveredPercent) > 0.01 {
		t.Errorf("smallest set: %d items reaching %.3f%%, want the 6 quarter quads reaching %.3f%%", n, out.SmallestSet.ReachedPercent, out.CoveredPercent)
	}
	if out.CloudWeightedPercent != nil || out.CloudItems != 0 {
		t.Errorf("NAIP has no eo:cloud_cover, yet cloud-weighted = %v", *out.CloudWeightedPercent)
	}
	text := resultText(res)
	for _, w := range []string{"% covered by 30 item(s)", "Uncovered:", "By 365-day window:", "Smallest set"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}

	// Sentinel-2 with cloud cover, the area as aoi_geojson (a Feature).
	poly := `{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-40.5,-5.3],[-37.5,-5.3],[-37.5,-3.5],[-40.5,-3.5],[-40.5,-5.3]]]}}`
	res = callOK(t, cs, "check_coverage", map[string]any{"collections": "sentinel-2-l2a", "aoi_geojson": poly, "target_percent": 20})
	out = structured[CheckCoverageOut](t, res)
	if out.CloudWeightedPercent == nil || out.CloudItems != 5 || *out.CloudWeightedPercent >= out.CoveredPercent || *out.CloudWeightedPercent <= 0 {
		t.Errorf("cloud-weighted %v over %d items, covered %.2f", out.CloudWeightedPercent, out.CloudItems, out.CoveredPercent)
	}
	if s := out.SmallestSet; s.TargetPercent != 20 || s.ReachedPercent < 20 || len(s.Items) >= 5 {
		t.Errorf("smallest set for 20%%: %+v", s)
	}
}

// demoItemsOf reads every item of a demo collection through the demo catalog.
func demoItemsOf(t *testing.T, collection string) []stacclient.Item {
	t.Helper()
	c, err := stacclient.New(demoServer(t, stacserver.Options{}), stacclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var items []stacclient.Item
	for it, err := range c.Search(stacclient.SearchParams{Collections: []string{collection}}, stacclient.SearchLimits{MaxItems: 1000}).Items(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, *it)
	}
	return items
}

func TestCheckCoverageArguments(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"collections": "naip"}, `invalid argument "aoi": check_coverage measures an area of interest`},
		{map[string]any{"bbox": "0,0,1,1", "aoi_geojson": `{"type":"Point","coordinates":[0,0]}`}, "aoi_geojson"},
		{map[string]any{"intersects": `{"type":"Point","coordinates":[0,0]}`}, `invalid argument "aoi"`},
		{map[string]any{"intersects": `{"type":"Polygon","coordinates":[[[-180,80],[-90,80],[0,80],[90,80],[180,80],[-180,80]]]}`}, "encircles a pole"},
		{map[string]any{"intersects": `{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}`}, "not a valid polygon"},
		{map[string]any{"bbox": "0,0,1,1", "window_days": 0}, "window_days"},
		{map[string]any{"bbox": "0,0,1,1", "target_percent": 101}, "target_percent"},
	}
	for _, c := range cases {
		if msg := callErr(t, cs, "check_coverage", c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want it to mention %q", c.args, msg, c.want)
		}
	}
	// Fewer items than match: a lower bound, said so.
	res := callOK(t, cs, "check_coverage", map[string]any{"collections": "naip", "bbox": "-73.3,43.9,-73.0,44.1", "max_items": 2})
	out := structured[CheckCoverageOut](t, res)
	if !out.HasMore || out.Items != 2 || !strings.Contains(strings.Join(out.Notes, " "), "lower bound") {
		t.Errorf("capped: %+v", out)
	}
}

func TestCheckCoverageAcrossTheAntimeridian(t *testing.T) {
	t.Parallel()
	store := stacserver.NewStore()
	_ = store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"fiji","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[179,-18,-179,-16]]},"temporal":{"interval":[["2024-01-01T00:00:00Z",null]]}},"links":[]}`))
	// One footprint split at the antimeridian (RFC 7946), one continuous past 180.
	for id, geom := range map[string]string{
		"split":      `{"type":"MultiPolygon","coordinates":[[[[179,-18],[180,-18],[180,-17],[179,-17],[179,-18]]],[[[-180,-18],[-179.5,-18],[-179.5,-17],[-180,-17],[-180,-18]]]]}`,
		"continuous": `{"type":"Polygon","coordinates":[[[179.5,-17],[181,-17],[181,-16],[179.5,-16],[179.5,-17]]]}`,
	} {
		item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"collection":"fiji","geometry":%s,"properties":{"datetime":"2024-06-01T00:00:00Z"},"links":[],"assets":{}}`, id, geom)
		if err := store.AddItem([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: serveStore(t, store, stacserver.Options{})})
	res := callOK(t, cs, "check_coverage", map[string]any{"bbox": "179,-18,-179,-16", "target_percent": 100})
	out := structured[CheckCoverageOut](t, res)
	// Of the 2°×2° area: split covers 1.5°×1°, continuous 1.5°×1° (rows of
	// nearly equal area at 17°S), together 75 %.
	if out.Items != 2 || math.Abs(out.CoveredPercent-75) > 0.1 || len(out.SmallestSet.Items) != 2 {
		t.Errorf("covered %.3f%% by %d items, smallest set %+v", out.CoveredPercent, out.Items, out.SmallestSet)
	}
	if b := out.UncoveredBBox; len(b) != 4 || b[0] <= b[2] {
		t.Errorf("uncovered bbox %v should cross the antimeridian (west > east)", b)
	}
	res = callOK(t, cs, "map_items", map[string]any{"bbox": "179,-18,-179,-16"})
	if out := structured[MapItemsOut](t, res); out.Drawn != 2 || out.Extent[0] <= out.Extent[2] {
		t.Errorf("map across the antimeridian: drawn %d, extent %v", out.Drawn, out.Extent)
	}
}

func TestMapCacheReturnsTheSameMapAndStaysBounded(t *testing.T) {
	t.Parallel()
	var c mapCache
	spec := func(i int) mapimage.Spec {
		return mapimage.Spec{Title: fmt.Sprint("map ", i), AOI: orb.MultiPolygon{orb.Bound{Min: orb.Point{10, 45}, Max: orb.Point{11, 46}}.ToPolygon()}}
	}
	a, err := c.render(spec(0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.render(spec(0))
	if err != nil || a != b {
		t.Fatalf("the same spec was drawn again (%p, %p, %v)", a, b, err)
	}
	other, err := c.render(spec(1))
	if err != nil || other == a || bytes.Equal(other.png, a.png) {
		t.Fatalf("a different title gave the cached map")
	}
	for i := 2; i < 2*mapCacheEntries; i++ {
		if _, err := c.render(spec(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.maps) != mapCacheEntries || len(c.order) != mapCacheEntries {
		t.Errorf("cache holds %d maps (%d in order), want %d", len(c.maps), len(c.order), mapCacheEntries)
	}
	// A fresh render of an evicted spec is byte for byte the cached one:
	// drawing is deterministic, which is what makes the cache correct.
	again, err := c.render(spec(0))
	if err != nil || again == a || !bytes.Equal(again.png, a.png) {
		t.Errorf("redrawing an evicted map gave different bytes (or the stale entry)")
	}
}

// The call's deadline bounds the drawing too: a map_items call whose pages
// arrived just before it returns when it ends, not when the (uninterruptible)
// drawing does. The drawing finishes in the background and lands in the
// cache, where the same call asked again finds it.
func TestMapDrawingDoesNotOutliveTheCallDeadline(t *testing.T) {
	t.Parallel()
	var c mapCache
	spec := mapimage.Spec{Title: "late", AOI: orb.MultiPolygon{orb.Bound{Min: orb.Point{10, 45}, Max: orb.Point{11, 46}}.ToPolygon()}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the deadline passed while the pages were read
	if m, err := c.renderWithin(ctx, spec, nil); !errors.Is(err, context.Canceled) || m != nil {
		t.Fatalf("renderWithin after the deadline = %v, %v; want no map and the context's error", m, err)
	}
	var cached *renderedMap
	for cached == nil {
		c.mu.Lock()
		for _, m := range c.maps {
			cached = m
		}
		c.mu.Unlock()
		if cached == nil {
			runtime.Gosched()
		}
	}
	again, err := c.renderWithin(t.Context(), spec, nil)
	if err != nil || again != cached {
		t.Errorf("asked again: %p, %v; want the map drawn in the background (%p)", again, err, cached)
	}
}
