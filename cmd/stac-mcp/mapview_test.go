package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// TestMapViewInChromium is the map view's browser test:
// tools/internal/mapview/web/test/browser.mjs drives headless Chromium
// (the Debian package, through puppeteer-core: nothing downloaded), which
// opens a test host page embedding the view with the ext-apps SDK's host
// side; the view's requests reach the built binary over stdio through an
// MCP client declaring the extension. It checks that every footprint of a
// demo map is drawn, numbered and coloured as in the PNG, that a click
// shows the item's properties and preview image, that "Next page" adds the
// next items, that drawing a rectangle runs a search (and, in the
// check_coverage view, a coverage check) for it, that zooming out names
// populated places, that search_items' view and a map_items result without
// structuredContent get their footprints, and that the view made no
// network request. The catalog is three demo collections served on
// loopback, each item's thumbnail pointed at a local JPEG so
// get_item_preview has an image to fetch offline.
//
// STAC_MCP_MAPVIEW_SHOTS=dir keeps the screenshots (docs/images holds
// the README's); the test logs the HTML's bytes and the time from the
// resource reaching the host to the view's first paint.
func TestMapViewInChromium(t *testing.T) {
	t.Parallel()
	node, web := mapViewTestTools(t)
	catalog := demoCatalogWithThumbnails(t, "sentinel-2-l2a", "sentinel-2-c1-l2a", "sentinel-2-l1c")
	shots := os.Getenv("STAC_MCP_MAPVIEW_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if shots, _ = filepath.Abs(shots); shots == "" {
		t.Fatal("STAC_MCP_MAPVIEW_SHOTS: not a path")
	}
	cmd := exec.Command(node, filepath.Join("test", "browser.mjs"), binary(t), "--catalog", catalog, "stdio")
	cmd.Dir = web
	cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=warn", "XDG_STATE_HOME="+t.TempDir(), "MAPVIEW_SHOTS="+shots,
		`MAPVIEW_ARGS={"collections":["sentinel-2-l2a"],"aoi":[-40.5,-5.3,-37.5,-3.5],"max_items":3}`)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	summary := lines[len(lines)-1]
	if err != nil || !strings.HasSuffix(summary, " passed, 0 failed") {
		t.Fatalf("browser test failed (%v): %s\n%s", err, summary, out)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "metrics ") {
			t.Log(l)
		}
	}
	t.Logf("%s; screenshots in %s", summary, shots)
}

// mapViewTestTools returns node and the view's web directory, or skips
// the test when node, the web directory's node_modules or chromium is
// missing (fails it when CI=true, where .ci/run installs them).
func mapViewTestTools(t *testing.T) (node, web string) {
	t.Helper()
	web = filepath.Join(reporoot.ForTest(t), "tools", "internal", "mapview", "web")
	node, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(web, "node_modules", "puppeteer-core", "package.json"))
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	_, chromeErr := os.Stat(chromium)
	if nodeErr != nil || modErr != nil || chromeErr != nil {
		msg := "the map view's browser test needs node, chromium (apt-get install chromium, or CHROMIUM=path) and " +
			"tools/internal/mapview/web/node_modules (cd tools/internal/mapview/web && npm ci)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true, so this is a failure (node: %v, node_modules: %v, chromium: %v)", msg, nodeErr, modErr, chromeErr)
		}
		t.Skipf("%s; skipping (node: %v, node_modules: %v, chromium: %v)", msg, nodeErr, modErr, chromeErr)
	}
	return node, web
}

// demoCatalogWithThumbnails serves the given demo collections on loopback
// until the test ends, every item's thumbnail asset replaced by a local
// JPEG (the demo's thumbnails are on the internet).
func demoCatalogWithThumbnails(t *testing.T, collections ...string) string {
	t.Helper()
	thumb, err := os.ReadFile(filepath.Join(reporoot.ForTest(t), "tools", "internal", "picture", "testdata", "scene.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/thumb.jpg", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(thumb)
	})
	store := stacserver.NewStore()
	for _, c := range collections {
		raw, err := fs.ReadFile(demo.FS, path.Join(c, "collection.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.AddCollection(raw); err != nil {
			t.Fatal(err)
		}
		files, err := fs.Glob(demo.FS, path.Join(c, "items", "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("demo items of %s: %v", c, err)
		}
		for _, f := range files {
			raw, err := fs.ReadFile(demo.FS, f)
			if err != nil {
				t.Fatal(err)
			}
			var item map[string]any
			if err := json.Unmarshal(raw, &item); err != nil {
				t.Fatal(err)
			}
			assets, _ := item["assets"].(map[string]any)
			if assets == nil {
				assets = map[string]any{}
				item["assets"] = assets
			}
			assets["thumbnail"] = map[string]any{"href": srv.URL + "/thumb.jpg", "type": "image/jpeg", "roles": []string{"thumbnail"}}
			item["links"] = []any{}
			raw, err = json.Marshal(item)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.AddItem(raw); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}
	mux.Handle("/", stacserver.New(store, stacserver.Options{}))
	return srv.URL
}
