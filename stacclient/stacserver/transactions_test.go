package stacserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// txItem is a valid item of collection c at lon/lat (x, y).
func txItem(id, c string, x float64) map[string]any {
	doc := itemJSON(id, c, map[string]any{"type": "Point", "coordinates": []float64{x, 40.5}}, map[string]any{"datetime": "2024-06-01T10:00:00Z"})
	doc["bbox"] = []float64{x, 40.5, x, 40.5}
	return doc
}

func txCollection(id string) map[string]any {
	return collectionJSON(id, "Written "+id, []string{}, []float64{-180, -90, 180, 90}, "2024-01-01T00:00:00Z", nil)
}

// send makes a request with a JSON body (nil: none) and returns the status
// and the decoded body (nil for an empty one).
func send(t testing.TB, url, method, target string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, url+target, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, target, err, raw)
		}
	}
	return resp.StatusCode, m
}

func TestTransactionsOffByDefault(t *testing.T) {
	ts := startServer(t, Options{})
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/sentinel/items", txItem("new", "sentinel", 1)); status != 404 && status != 405 {
		t.Errorf("POST items on a read-only server: %d", status)
	}
	for _, c := range conformsTo(t, ts.get(t, "/conformance").body["conformsTo"]) {
		if strings.Contains(c, "transaction") {
			t.Errorf("read-only server advertises %s", c)
		}
	}
	w := startServer(t, Options{Writes: &WriteOptions{}})
	classes := conformsTo(t, w.get(t, "/conformance").body["conformsTo"])
	if !slices.Contains(classes, classItemTransaction) || !slices.Contains(classes, classCollectionTransaction) {
		t.Errorf("writable server conformance lacks the Transaction classes: %v", classes)
	}
}

func TestItemTransactionsInMemory(t *testing.T) {
	var applied atomic.Int32
	ts := startServer(t, Options{Writes: &WriteOptions{OnApplied: func(*http.Request) { applied.Add(1) }}})
	status, body := send(t, ts.URL, http.MethodPost, "/collections/sentinel/items", txItem("new", "sentinel", 1))
	if status != 201 || body["id"] != "new" {
		t.Fatalf("create: %d %v", status, body)
	}
	if got := ts.get(t, "/collections/sentinel/items/new"); got.status != 200 {
		t.Fatalf("GET the created item: %d", got.status)
	}
	if ids := featureIDs(t, ts.post(t, "/search", map[string]any{"ids": []string{"new"}})); !slices.Equal(ids, []string{"new"}) {
		t.Errorf("search finds %v", ids)
	}
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/sentinel/items", txItem("new", "sentinel", 1)); status != 409 {
		t.Errorf("second create: %d, want 409", status)
	}
	replaced := txItem("new", "sentinel", 2)
	replaced["properties"].(map[string]any)["gsd"] = 30
	if status, body := send(t, ts.URL, http.MethodPut, "/collections/sentinel/items/new", replaced); status != 200 || body["bbox"].([]any)[0] != 2.0 {
		t.Fatalf("replace: %d %v", status, body)
	}
	if status, body := send(t, ts.URL, http.MethodPatch, "/collections/sentinel/items/new",
		map[string]any{"properties": map[string]any{"gsd": nil, "eo:cloud_cover": 7}}); status != 200 {
		t.Fatalf("patch: %d %v", status, body)
	}
	props := ts.get(t, "/collections/sentinel/items/new").body["properties"].(map[string]any)
	if _, kept := props["gsd"]; kept || props["eo:cloud_cover"] != json.Number("7") || props["datetime"] == nil {
		t.Errorf("after the merge patch: %v", props)
	}
	if status, _ := send(t, ts.URL, http.MethodDelete, "/collections/sentinel/items/new", nil); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if got := ts.get(t, "/collections/sentinel/items/new"); got.status != 404 {
		t.Errorf("GET after delete: %d", got.status)
	}
	for _, c := range []struct {
		method, target string
		want           int
	}{
		{http.MethodDelete, "/collections/sentinel/items/new", 404},
		{http.MethodPut, "/collections/sentinel/items/new", 404},
		{http.MethodDelete, "/collections/nope/items/x", 404},
	} {
		if status, _ := send(t, ts.URL, c.method, c.target, txItem("new", "sentinel", 1)); status != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.target, status, c.want)
		}
	}
	if n := applied.Load(); n != 4 {
		t.Errorf("OnApplied ran %d times, want 4 (create, replace, patch, delete)", n)
	}
}

func TestBadWritesChangeNothing(t *testing.T) {
	ts := startServer(t, Options{Writes: &WriteOptions{}})
	before := ts.get(t, "/collections/sentinel/items/s-01").raw
	noBBox := txItem("x", "sentinel", 1)
	delete(noBBox, "bbox")
	for name, c := range map[string]struct {
		method, target string
		body           any
	}{
		"invalid item":              {http.MethodPost, "/collections/sentinel/items", noBBox},
		"other collection":          {http.MethodPost, "/collections/sentinel/items", txItem("x", "landsat", 1)},
		"id differs from the path":  {http.MethodPut, "/collections/sentinel/items/s-01", txItem("x", "sentinel", 1)},
		"patch breaks the datetime": {http.MethodPatch, "/collections/sentinel/items/s-01", map[string]any{"properties": map[string]any{"datetime": "yesterday"}}},
		"slash in the id":           {http.MethodPost, "/collections/sentinel/items", txItem("../../etc", "sentinel", 1)},
		"invalid collection":        {http.MethodPost, "/collections", map[string]any{"type": "Collection", "id": "c"}},
		"collection id differs":     {http.MethodPut, "/collections/sentinel", txCollection("other")},
		"not JSON":                  {http.MethodPost, "/collections/sentinel/items", []byte("{")},
	} {
		var status int
		var body map[string]any
		if raw, ok := c.body.([]byte); ok {
			req, _ := http.NewRequest(c.method, ts.URL+c.target, bytes.NewReader(raw))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			status = resp.StatusCode
		} else {
			status, body = send(t, ts.URL, c.method, c.target, c.body)
		}
		if status != 400 {
			t.Errorf("%s: %d %v, want 400", name, status, body)
		}
	}
	if after := ts.get(t, "/collections/sentinel/items/s-01").raw; !bytes.Equal(before, after) {
		t.Error("a refused write changed s-01")
	}
	if n := numberField(t, ts.get(t, "/search?limit=1").body, "numberMatched"); n != totalItems {
		t.Errorf("%d items after refused writes, want %d", n, totalItems)
	}
}

func TestCollectionTransactionsInMemory(t *testing.T) {
	ts := startServer(t, Options{Writes: &WriteOptions{}})
	if status, body := send(t, ts.URL, http.MethodPost, "/collections", txCollection("fresh")); status != 201 || body["id"] != "fresh" {
		t.Fatalf("create collection: %d %v", status, body)
	}
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections", txCollection("fresh")); status != 409 {
		t.Errorf("second create: %d, want 409", status)
	}
	if l := linkByRel(ts.get(t, "/").body, "child"); l == nil {
		t.Error("landing page lost its child links")
	}
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/fresh/items", txItem("a", "fresh", 1)); status != 201 {
		t.Fatalf("item in the new collection: %d", status)
	}
	changed := txCollection("fresh")
	changed["title"] = "Renamed"
	if status, body := send(t, ts.URL, http.MethodPut, "/collections/fresh", changed); status != 200 || body["title"] != "Renamed" {
		t.Fatalf("replace collection: %d %v", status, body)
	}
	if status, body := send(t, ts.URL, http.MethodPatch, "/collections/fresh", map[string]any{"keywords": []string{"k"}}); status != 200 || body["title"] != "Renamed" {
		t.Fatalf("patch collection: %d %v", status, body)
	}
	if got := ts.get(t, "/collections/fresh/items/a"); got.status != 200 {
		t.Errorf("the collection's item after replacing its metadata: %d", got.status)
	}
}

func TestConcurrentCreatesOfOneItemMakeOne(t *testing.T) {
	var applied atomic.Int32
	ts := startServer(t, Options{Writes: &WriteOptions{OnApplied: func(*http.Request) { applied.Add(1) }}})
	var created atomic.Int32
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			if status, _ := send(t, ts.URL, http.MethodPost, "/collections/sentinel/items", txItem("race", "sentinel", 1)); status == 201 {
				created.Add(1)
			}
		})
		wg.Go(func() { ts.get(t, "/search?collections=sentinel") })
	}
	wg.Wait()
	if created.Load() != 1 || applied.Load() != 1 {
		t.Fatalf("%d creates succeeded, %d applied; want 1", created.Load(), applied.Load())
	}
}

// copyCatalog copies a test catalog into a temporary directory and serves
// it with writes going to its files.
func copyCatalog(t *testing.T, src string) (dir string, ts *testServer, api *Server) {
	t.Helper()
	dir = t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
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
	api = New(store, Options{Writes: &WriteOptions{Dir: root}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return dir, &testServer{Server: srv, api: api}, api
}

// reload loads the catalog directory afresh, as a restarted server would.
func reload(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := LoadDir(dir)
	if err != nil {
		t.Fatalf("the written catalog does not load: %v", err)
	}
	return s
}

func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestTransactionsPersistToTheCatalogFiles(t *testing.T) {
	dir, ts, _ := copyCatalog(t, "testdata/joplin")
	const coll = "joplin"
	item := txItem("written-1", coll, -94.5)
	item["links"] = []any{map[string]any{"rel": "self", "href": "http://127.0.0.1:1/old"}, map[string]any{"rel": "license", "href": "https://example.com/l"}}
	if status, body := send(t, ts.URL, http.MethodPost, "/collections/joplin/items", item); status != 201 {
		t.Fatalf("create: %d %v", status, body)
	}
	file := filepath.Join(dir, "written-1", "written-1.json")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the item file: %v", err)
	}
	if !strings.Contains(string(raw), `"href": "../catalog.json"`) || strings.Contains(string(raw), "127.0.0.1") || !strings.Contains(string(raw), "example.com/l") {
		t.Errorf("item file links are not the catalog's relative ones:\n%s", raw)
	}
	collFile, _ := os.ReadFile(filepath.Join(dir, "collection.json"))
	if !strings.Contains(string(collFile), `"href": "./written-1/written-1.json"`) {
		t.Errorf("collection.json has no item link to the new item:\n%s", collFile)
	}
	s := reload(t, dir)
	if _, ok := s.collections[coll].byID["written-1"]; !ok || s.ItemCount() != 31 {
		t.Fatalf("after reload: %d items, written-1 present %v", s.ItemCount(), ok)
	}

	// Items of the ItemCollection file are replaced and deleted in place.
	var victim string
	for _, it := range s.collections[coll].items {
		if strings.HasPrefix(it.file, "index.geojson#") {
			victim = it.id
			break
		}
	}
	old := ts.get(t, "/collections/joplin/items/"+victim).body
	old["properties"].(map[string]any)["title"] = "replaced"
	if status, body := send(t, ts.URL, http.MethodPut, "/collections/joplin/items/"+victim, old); status != 200 {
		t.Fatalf("replace: %d %v", status, body)
	}
	if got := reload(t, dir).collections[coll].byID[victim].doc["properties"].(map[string]any)["title"]; got != "replaced" {
		t.Errorf("replaced item after reload: title %v", got)
	}
	if status, _ := send(t, ts.URL, http.MethodDelete, "/collections/joplin/items/"+victim, nil); status != 204 {
		t.Fatal("delete from the ItemCollection")
	}
	if status, body := send(t, ts.URL, http.MethodDelete, "/collections/joplin/items/written-1", nil); status != 204 {
		t.Fatalf("delete of a file item: %d %v", status, body)
	}
	s = reload(t, dir)
	if s.ItemCount() != 29 {
		t.Errorf("after two deletes: %d items, want 29", s.ItemCount())
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted item's file is still there: %v", err)
	}
	if collFile, _ := os.ReadFile(filepath.Join(dir, "collection.json")); strings.Contains(string(collFile), "written-1") {
		t.Errorf("collection.json still links the deleted item")
	}

	// A new collection gets its own directory and a child link; replacing
	// a collection keeps its items.
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections", txCollection("new-coll")); status != 201 {
		t.Fatal("create collection")
	}
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/new-coll/items", txItem("n-1", "new-coll", 3)); status != 201 {
		t.Fatal("item in the new collection")
	}
	renamed := txCollection(coll)
	renamed["title"] = "Joplin, renamed"
	if status, body := send(t, ts.URL, http.MethodPut, "/collections/joplin", renamed); status != 200 {
		t.Fatalf("replace collection: %d %v", status, body)
	}
	s = reload(t, dir)
	if s.collections["new-coll"] == nil || s.collections["new-coll"].byID["n-1"] == nil {
		t.Fatal("the new collection or its item did not survive a reload")
	}
	if s.collections[coll].doc["title"] != "Joplin, renamed" || len(s.collections[coll].items) != 29 {
		t.Errorf("replaced collection after reload: title %v, %d items", s.collections[coll].doc["title"], len(s.collections[coll].items))
	}
	if _, err := os.Stat(filepath.Join(dir, "new-coll", "n-1", "n-1.json")); err != nil {
		t.Errorf("the new collection's item file: %v", err)
	}
	noTempFiles(t, dir)
}

// TestNewItemsFollowTheCollectionsLayout: in a catalog whose items live in
// items/<id>.json, a new item goes there too.
func TestNewItemsFollowTheCollectionsLayout(t *testing.T) {
	src := t.TempDir()
	write := func(name string, doc map[string]any) {
		raw, _ := json.Marshal(doc)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("catalog.json", map[string]any{"type": "Catalog", "id": "root", "stac_version": "1.0.0", "description": "d",
		"links": []any{map[string]any{"rel": "child", "href": "./c/collection.json"}}})
	coll := txCollection("c")
	coll["links"] = []any{map[string]any{"rel": "item", "href": "./items/a.json"}}
	write("c/collection.json", coll)
	write("c/items/a.json", txItem("a", "c", 1))
	dir, ts, _ := copyCatalog(t, src)
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/c/items", txItem("b", "c", 2)); status != 201 {
		t.Fatal("create")
	}
	if _, err := os.Stat(filepath.Join(dir, "c", "items", "b.json")); err != nil {
		t.Errorf("new item not beside its siblings: %v", err)
	}
	if reload(t, dir).ItemCount() != 2 {
		t.Error("reload")
	}
}

// TestCrashBetweenFilesLeavesAConsistentCatalog: when the second file of a
// change cannot be written (as if the process died there), nothing is
// served, the catalog on disk still loads without the change, and a retry
// succeeds.
func TestCrashBetweenFilesLeavesAConsistentCatalog(t *testing.T) {
	dir, ts, api := copyCatalog(t, "testdata/joplin")
	var writes atomic.Int32
	api.beforeRename = func(name string) error {
		if writes.Add(1) == 2 {
			return errors.New("simulated crash")
		}
		return nil
	}
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/joplin/items", txItem("crash", "joplin", -94.5)); status != 500 {
		t.Fatalf("create with a failing second write: %d, want 500", status)
	}
	if got := ts.get(t, "/collections/joplin/items/crash"); got.status != 404 {
		t.Errorf("a change that was not written is served: %d", got.status)
	}
	if s := reload(t, dir); s.ItemCount() != 30 {
		t.Errorf("after the crash the catalog has %d items, want the original 30", s.ItemCount())
	}
	noTempFiles(t, dir)
	api.beforeRename = nil
	if status, _ := send(t, ts.URL, http.MethodPost, "/collections/joplin/items", txItem("crash", "joplin", -94.5)); status != 201 {
		t.Fatalf("retry after the crash: %d", status)
	}
	if s := reload(t, dir); s.ItemCount() != 31 {
		t.Errorf("after the retry: %d items", s.ItemCount())
	}
}
