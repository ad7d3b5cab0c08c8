package stacserver

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// localAssetCatalog writes a small catalog with relative asset hrefs (the
// item in items/a.json, its files beside and above it) and serves it as a
// local catalog on disk is served: AssetDir set, with writes.
func localAssetCatalog(t *testing.T) (dir string, ts *testServer) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"catalog.json": `{"type":"Catalog","stac_version":"1.0.0","id":"local","description":"d","links":[{"rel":"child","href":"./c/collection.json"}]}`,
		"c/collection.json": `{"type":"Collection","stac_version":"1.0.0","id":"c","description":"d","license":"proprietary",
			"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},
			"links":[{"rel":"item","href":"./items/a.json"}]}`,
		"c/items/a.json": `{"type":"Feature","stac_version":"1.0.0","id":"a","collection":"c",
			"geometry":{"type":"Point","coordinates":[1,2]},"bbox":[1,2,1,2],"properties":{"datetime":"2024-06-01T00:00:00Z"},
			"assets":{"ortho":{"href":"./ortho-2.tif","type":"image/tiff"},"dem":{"href":"../common/dem.tif"},
			"remote":{"href":"https://example.com/x.tif"},"rooted":{"href":"/srv/other.tif"}},"links":[]}`,
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	store, err := LoadFS(root.FS(), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	return dir, startServerWith(t, store, Options{AssetDir: dir, Writes: &WriteOptions{Dir: root}})
}

func assetHref(t *testing.T, doc map[string]any, key string) string {
	t.Helper()
	a, _ := doc["assets"].(map[string]any)[key].(map[string]any)
	h, _ := a["href"].(string)
	return h
}

// A local catalog's relative asset hrefs were served as
// written ("./ortho-2.tif"), which names nothing outside the catalog's
// folder. They are served as absolute paths; absolute hrefs are unchanged.
func TestLocalAssetHrefsAreServedResolved(t *testing.T) {
	dir, ts := localAssetCatalog(t)
	want := map[string]string{
		"ortho":  filepath.Join(dir, "c", "items", "ortho-2.tif"),
		"dem":    filepath.Join(dir, "c", "common", "dem.tif"),
		"remote": "https://example.com/x.tif",
		"rooted": "/srv/other.tif",
	}
	item := ts.get(t, "/collections/c/items/a")
	wantStatus(t, item, http.StatusOK)
	search := ts.get(t, "/search?ids=a")
	wantStatus(t, search, http.StatusOK)
	found, _ := search.body["features"].([]any)
	if len(found) != 1 {
		t.Fatalf("search found %d items", len(found))
	}
	for name, doc := range map[string]map[string]any{"item": item.body, "search": found[0].(map[string]any)} {
		for key, w := range want {
			if got := assetHref(t, doc, key); got != w {
				t.Errorf("%s: asset %s href %q, want %q", name, key, got, w)
			}
		}
	}
}

// What is served resolved is written back as it was: a client that reads
// the item and writes it back whole (PUT), or patches an asset with the
// served href, leaves relative hrefs in the files.
func TestLocalAssetHrefsAreNeverWrittenAbsolute(t *testing.T) {
	dir, ts := localAssetCatalog(t)
	item := ts.get(t, "/collections/c/items/a").body
	item["properties"].(map[string]any)["note"] = "edited"
	if st, body := send(t, ts.URL, http.MethodPut, "/collections/c/items/a", item); st != http.StatusOK {
		t.Fatalf("PUT: %d %v", st, body)
	} else if got := assetHref(t, body, "ortho"); got != filepath.Join(dir, "c", "items", "ortho-2.tif") {
		t.Errorf("the PUT's answer serves ortho as %q", got)
	}
	onDisk := func() string {
		raw, err := os.ReadFile(filepath.Join(dir, "c", "items", "a.json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	file := onDisk()
	if strings.Contains(file, dir) || !strings.Contains(file, `"./ortho-2.tif"`) || !strings.Contains(file, `"../common/dem.tif"`) || !strings.Contains(file, "edited") {
		t.Errorf("after PUT of the served item, the file holds:\n%s", file)
	}
	// A patch naming a file of the catalog by its absolute path, and a new
	// item with one: relative on disk too.
	patch := map[string]any{"assets": map[string]any{"extra": map[string]any{"href": filepath.Join(dir, "c", "items", "more", "x.tif")}}}
	if st, body := send(t, ts.URL, http.MethodPatch, "/collections/c/items/a", patch); st != http.StatusOK {
		t.Fatalf("PATCH: %d %v", st, body)
	}
	if file := onDisk(); strings.Contains(file, dir) || !strings.Contains(file, `"./more/x.tif"`) {
		t.Errorf("after PATCH, the file holds:\n%s", file)
	}
	created := txItem("b", "c", 1)
	created["assets"] = map[string]any{"ortho": map[string]any{"href": filepath.Join(dir, "c", "items", "ortho-2.tif")}}
	if st, body := send(t, ts.URL, http.MethodPost, "/collections/c/items", created); st != http.StatusCreated {
		t.Fatalf("POST: %d %v", st, body)
	}
	b := ts.get(t, "/collections/c/items/b").body
	if got := assetHref(t, b, "ortho"); got != filepath.Join(dir, "c", "items", "ortho-2.tif") {
		t.Errorf("new item serves ortho as %q", got)
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		raw, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(raw), dir) {
			t.Errorf("%s holds an absolute path of the catalog:\n%s", p, raw)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
