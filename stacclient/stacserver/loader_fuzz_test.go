package stacserver

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"testing/fstest"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// rootFailure is every way the root of a static catalog may fail: named by
// what is wrong, never by what the file holds. A root that
// is a Collection may also fail the store's checks, which name its id.
var rootFailure = regexp.MustCompile(`^static catalog root catalog\.json: (no such file|not a regular file|not valid JSON.*|not a JSON object|` +
	`not a STAC document: "type" is not Catalog, Collection, Feature or FeatureCollection|.*byte cap of one file|collection.*)$`)

// FuzzLoadFS loads a three-file static catalog (a root, a collection it
// links to, an item the collection links to) made from the fuzz input.
// Whatever the files hold, loading must not panic, only a bad root may
// fail it (and then without quoting the root), and a catalog that loads
// must be servable.
func FuzzLoadFS(f *testing.F) {
	seedRoot := `{"type":"Catalog","id":"c","description":"d","links":[{"rel":"child","href":"c/collection.json"}]}`
	seedColl := `{"type":"Collection","id":"c","description":"d","links":[{"rel":"item","href":"i.json"},{"rel":"items","href":"../c/i.json"}]}`
	seedItem := `{"type":"Feature","id":"i","geometry":{"type":"Point","coordinates":[1,2]},"bbox":[1,2,1,2],"properties":{"datetime":"2024-01-01T00:00:00Z"}}`
	f.Add([]byte(seedRoot), []byte(seedColl), []byte(seedItem))
	f.Add([]byte(seedRoot), []byte(seedColl), []byte(`{"type":"FeatureCollection","features":[`+seedItem+`,1,null]}`))
	f.Add([]byte(`{"type":"Collection","id":"c","links":[{"rel":"child","href":"/c/collection.json"}]}`), []byte(seedColl), []byte(`{"type":`))
	f.Add([]byte(`null`), []byte(``), []byte(``))
	f.Add([]byte("\xef\xbb\xbf{}"), []byte(`[]`), []byte(`{"type":"Feature"}`))
	// Real files of the demo catalog.
	root, _ := fs.ReadFile(demo.FS, demo.RootFile)
	if colls, _ := fs.Glob(demo.FS, "*/collection.json"); len(colls) > 0 {
		coll, _ := fs.ReadFile(demo.FS, colls[0])
		items, _ := fs.Glob(demo.FS, "*/items/*.json")
		item := []byte(seedItem)
		if len(items) > 0 {
			item, _ = fs.ReadFile(demo.FS, items[0])
		}
		f.Add(root, coll, item)
	}
	f.Fuzz(func(t *testing.T, root, coll, item []byte) {
		fsys := fstest.MapFS{
			"catalog.json":      {Data: root},
			"c/collection.json": {Data: coll},
			"c/i.json":          {Data: item},
		}
		store, err := LoadFS(fsys, "catalog.json")
		if err != nil {
			if !rootFailure.MatchString(err.Error()) {
				t.Fatalf("unexpected failure %q: only the root may fail a load, and only in known words", err)
			}
			return
		}
		if store.ItemCount() > 3 || store.collectionCount() > 2 {
			t.Fatalf("three files gave %d collections and %d items", store.collectionCount(), store.ItemCount())
		}
		srv := New(store, Options{})
		for _, target := range []string{"/", "/collections", "/search?limit=5", "/collections/c/items"} {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			if rec.Code >= 500 {
				t.Fatalf("GET %s: status %d %s", target, rec.Code, rec.Body)
			}
		}
	})
}
