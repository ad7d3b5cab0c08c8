package stacserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

func TestLoadDirJoplin(t *testing.T) {
	store, err := LoadDir("testdata/joplin")
	if err != nil {
		t.Fatal(err)
	}
	if store.collectionCount() != 1 || store.ItemCount() != 30 || len(store.Notes) != 0 {
		t.Fatalf("loaded %d collections, %d items, notes %v; want 1, 30, none",
			store.collectionCount(), store.ItemCount(), store.Notes)
	}
	ts := startServerWith(t, store, Options{})
	ids, pages, _ := ts.followAll(t, http.MethodGet, "/collections/joplin/items", nil, 10)
	if len(ids) != 30 || pages != 3 {
		t.Errorf("paged %d items over %d pages, want 30 over 3", len(ids), pages)
	}
	// Unknown fields of a loaded item are served back unchanged.
	r := ts.get(t, "/collections/joplin/items/f2cca2a3-288b-4518-8a3e-a4492bb60b08")
	wantStatus(t, r, http.StatusOK)
	props := r.body["properties"].(map[string]any)
	if props["gsd"].(interface{ String() string }).String() != "0.5971642834779395" || props["proj:epsg"] == nil {
		t.Errorf("properties changed on the way through: %v", props)
	}
	// The items of the joplin catalog lie around Joplin, Missouri.
	near := ts.get(t, "/search?bbox=-94.7,37.0,-94.6,37.1&limit=100")
	if n := len(featureIDs(t, near)); n == 0 || n > 30 {
		t.Errorf("bbox search around Joplin matched %d items", n)
	}
}

func TestLoadSpecExamplesRecordsWhatItSkips(t *testing.T) {
	store, err := LoadDir("testdata/stac-spec-v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if store.collectionCount() != 2 {
		t.Errorf("collections %d, want 2 (extensions-collection, sentinel-2)", store.collectionCount())
	}
	notes := strings.Join(store.Notes, "\n")
	for _, want := range []string{`"sentinel-2"`, "CS3-20160503_132131_08", `"landsat-8-l1" is not in the catalog`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %s:\n%s", want, notes)
		}
	}
	// A collection can be the root; items without "collection" join it.
	coll, err := LoadFS(os.DirFS("testdata/stac-spec-v1.0.0"), "collection.json")
	if err != nil {
		t.Fatal(err)
	}
	if coll.ItemCount() != 1 || len(coll.Notes) != 2 {
		t.Errorf("collection root: %d items, notes %v; want 1 item and 2 duplicate-id notes", coll.ItemCount(), coll.Notes)
	}
}

func TestLoadFSRootErrors(t *testing.T) {
	cases := []struct {
		name    string
		fsys    fstest.MapFS
		mention string
	}{
		{"missing root", fstest.MapFS{}, "catalog.json: no such file"},
		{"bad JSON", fstest.MapFS{"catalog.json": &fstest.MapFile{Data: []byte(`{"type":`)}}, "catalog.json: not valid JSON"},
		{"wrong type", fstest.MapFS{"catalog.json": &fstest.MapFile{Data: []byte(`{"type":"Thing"}`)}}, "not a STAC document"},
		{"directory", fstest.MapFS{"catalog.json/x": &fstest.MapFile{}}, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadFS(c.fsys, "catalog.json")
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %v should mention %q", err, c.mention)
			}
		})
	}
}

// One dangling link (or any unusable file below the root) is
// skipped with a note naming it; the rest of the catalog loads.
func TestLoadFSSkipsWhatCannotBeRead(t *testing.T) {
	cat := func(links string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`{"type":"Catalog","id":"c","description":"d","links":[` + links + `]}`)}
	}
	good := `{"type":"Feature","id":"ok","geometry":null,"properties":{"datetime":"2024-01-01T00:00:00Z"}}`
	collection := func(itemHref string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`{"type":"Collection","id":"c","links":[{"rel":"item","href":"ok.json"},{"rel":"item","href":"` + itemHref + `"}]}`)}
	}
	cases := []struct {
		name    string
		fsys    fstest.MapFS
		mention string
	}{
		{"missing item", fstest.MapFS{"c/i.json": nil}, "skipped c/gone.json: no such file"},
		{"absolute item", fstest.MapFS{}, "absolute"},
		{"escaping href", fstest.MapFS{}, "leaves the catalog root"},
		{"bad JSON item", fstest.MapFS{"c/bad.json": &fstest.MapFile{Data: []byte(`{"type":`)}}, "skipped c/bad.json: not valid JSON"},
		{"bad item geometry", fstest.MapFS{"c/i.json": &fstest.MapFile{Data: []byte(`{"type":"Feature","id":"i","geometry":{"type":"Polygon","coordinates":"x"},"properties":{}}`)}}, "geometry"},
		{"bad item datetime", fstest.MapFS{"c/i.json": &fstest.MapFile{Data: []byte(`{"type":"Feature","id":"i","geometry":null,"properties":{"datetime":"noon"}}`)}}, "RFC 3339"},
	}
	hrefs := map[string]string{"missing item": "gone.json", "absolute item": "https://example.com/i.json", "escaping href": "../../i.json", "bad JSON item": "bad.json"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			href := hrefs[c.name]
			if href == "" {
				href = "i.json"
			}
			c.fsys["catalog.json"] = cat(`{"rel":"child","href":"c/collection.json"}`)
			c.fsys["c/collection.json"] = collection(href)
			c.fsys["c/ok.json"] = &fstest.MapFile{Data: []byte(good)}
			if c.fsys["c/i.json"] == nil {
				delete(c.fsys, "c/i.json")
			}
			store, err := LoadFS(c.fsys, "catalog.json")
			if err != nil {
				t.Fatalf("load failed: %v", err)
			}
			if store.collectionCount() != 1 || store.ItemCount() != 1 {
				t.Errorf("loaded %d collections and %d items, want the good collection and item", store.collectionCount(), store.ItemCount())
			}
			if notes := strings.Join(store.Notes, "\n"); !strings.Contains(notes, c.mention) {
				t.Errorf("notes %q should mention %q", notes, c.mention)
			}
		})
	}
}

// A path that is not a catalog is not read, and no error
// quotes what it holds.
func TestLoadFSErrorsQuoteNoContent(t *testing.T) {
	for name, data := range map[string]string{
		"text":       "root:x:0:0:SECRET-LINE\n",
		"JSON field": `{"type":"SECRET-TYPE","token":"SECRET-TOKEN"}`,
		"JSON array": `["SECRET-ITEM"]`,
	} {
		_, err := LoadFS(fstest.MapFS{"catalog.json": &fstest.MapFile{Data: []byte(data)}}, "catalog.json")
		if err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "root:x") {
			t.Errorf("%s: error %v (want a refusal that quotes nothing)", name, err)
		}
	}
}

func TestLoadFSLimits(t *testing.T) {
	big := &fstest.MapFile{Data: []byte(`{"type":"Catalog","id":"c","description":"` + strings.Repeat("x", 2000) + `","links":[]}`)}
	if _, err := LoadFSContext(t.Context(), fstest.MapFS{"catalog.json": big}, "catalog.json", LoadOptions{MaxFileBytes: 1000}); err == nil ||
		!strings.Contains(err.Error(), "over the 1000-byte cap") {
		t.Errorf("oversized root: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := LoadFSContext(ctx, demo.FS, demo.RootFile, LoadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v, want context.Canceled", err)
	}
	if _, err := LoadFSContext(t.Context(), demo.FS, demo.RootFile, LoadOptions{MaxFiles: 3}); err == nil || !strings.Contains(err.Error(), "more than 3 files") {
		t.Errorf("file budget: %v", err)
	}
}

func TestStoreRejectsBadDocuments(t *testing.T) {
	s := NewStore()
	if err := s.AddItem([]byte(`{"type":"Feature","id":"i","collection":"nope","geometry":null,"properties":{}}`)); err == nil ||
		!strings.Contains(err.Error(), "add the collection first") {
		t.Errorf("item of an unknown collection: %v", err)
	}
	if err := s.AddCollection([]byte(`{"type":"Catalog","id":"x"}`)); err == nil || !strings.Contains(err.Error(), `want "Collection"`) {
		t.Errorf("catalog added as collection: %v", err)
	}
	if err := s.AddCollection([]byte(`{"type":"Collection","id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCollection([]byte(`{"type":"Collection","id":"x"}`)); err == nil {
		t.Errorf("duplicate collection accepted")
	}
	if err := s.AddItem([]byte(`{"type":"Feature","id":"i","collection":"x","geometry":null}`)); err == nil || !strings.Contains(err.Error(), "properties") {
		t.Errorf("item without properties: %v", err)
	}
}

func TestLoadDemoCatalog(t *testing.T) {
	store, err := LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		t.Fatal(err)
	}
	if store.collectionCount() == 0 || store.ItemCount() == 0 {
		t.Fatalf("demo catalog loaded %d collections and %d items", store.collectionCount(), store.ItemCount())
	}
	// Every item file and every collection file of the demo is served.
	itemFiles, err := fs.Glob(demo.FS, "*/items/*.json")
	if err != nil {
		t.Fatal(err)
	}
	collFiles, err := fs.Glob(demo.FS, "*/collection.json")
	if err != nil {
		t.Fatal(err)
	}
	if store.ItemCount() != len(itemFiles) || store.collectionCount() != len(collFiles) || len(store.Notes) != 0 {
		t.Errorf("loaded %d items of %d files and %d collections of %d files; notes %v",
			store.ItemCount(), len(itemFiles), store.collectionCount(), len(collFiles), store.Notes)
	}
	ts := startServerWith(t, store, Options{})
	r := ts.get(t, "/collections?limit=100")
	wantStatus(t, r, http.StatusOK)
	if n := numberField(t, r.body, "numberMatched"); n != store.collectionCount() {
		t.Errorf("/collections matched %d, store has %d", n, store.collectionCount())
	}
	ids, _, _ := ts.followAll(t, http.MethodPost, "/search", map[string]any{"limit": 50}, 100)
	if len(ids) != store.ItemCount() {
		t.Errorf("searching everything found %d items, store has %d", len(ids), store.ItemCount())
	}
}

func TestServedStoreIsReadOnlyAndShareable(t *testing.T) {
	store := newTestStore(t)
	a := startServerWith(t, store, Options{})
	b := startServerWith(t, store, Options{NextLinkStyle: NextGETCursor})
	if err := store.AddCollection([]byte(`{"type":"Collection","id":"late"}`)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("adding to a served store: %v", err)
	}
	if err := store.AddItem([]byte(`{"type":"Feature","id":"late","collection":"dem","geometry":null,"properties":{}}`)); err == nil {
		t.Errorf("adding an item to a served store succeeded")
	}
	// Serve from both at once (the race detector checks the sharing); the
	// goroutine only makes plain requests, leaving assertions to the test.
	done := make(chan error)
	go func() {
		for i := 0; i < 10; i++ {
			resp, err := b.Client().Get(b.URL + "/search?limit=5&sortby=-id")
			if err != nil {
				done <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				done <- fmt.Errorf("status %d", resp.StatusCode)
				return
			}
		}
		done <- nil
	}()
	ids, _, _ := a.followAll(t, http.MethodGet, "/search?limit=5", nil, 20)
	if err := <-done; err != nil {
		t.Errorf("second server: %v", err)
	}
	if len(ids) != totalItems {
		t.Errorf("saw %d items, want %d", len(ids), totalItems)
	}
}
