package stacserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Two Servers over one catalog directory, each with its own os.Root and
// its own copy of the catalog, behave as two processes would: flock locks
// belong to the open file, so they exclude each other within one process
// too. TestWritersInSeveralProcesses runs real processes.

// serveDir loads dir as another process would and serves it with writes.
func serveDir(t *testing.T, dir string) *testServer {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	store, err := LoadFS(root.FS(), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	api := New(store, Options{Writes: &WriteOptions{Dir: root}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, api: api}
}

// joplinItems are ids of items of the joplin test catalog.
func joplinItems(t *testing.T, dir string, n int) []string {
	t.Helper()
	var ids []string
	for _, it := range reload(t, dir).collections["joplin"].items[:n] {
		ids = append(ids, it.id)
	}
	return ids
}

func patchProps(props map[string]any) map[string]any { return map[string]any{"properties": props} }

func TestTwoServersPatchesBothKept(t *testing.T) {
	dir, a, _ := copyCatalog(t, "testdata/joplin")
	b := serveDir(t, dir)
	ids := joplinItems(t, dir, 2)
	id := ids[0]
	// B has written before (a server re-reads the catalog before its first
	// write anyway), and both have read the item.
	if st, _ := send(t, b.URL, http.MethodPatch, "/collections/joplin/items/"+ids[1], patchProps(map[string]any{"warm": "up"})); st != 200 {
		t.Fatal("first patch by B")
	}
	a.get(t, "/collections/joplin/items/"+id)
	b.get(t, "/collections/joplin/items/"+id)
	if st, body := send(t, a.URL, http.MethodPatch, "/collections/joplin/items/"+id, patchProps(map[string]any{"from_a": "1"})); st != 200 {
		t.Fatalf("patch A: %d %v", st, body)
	}
	if st, body := send(t, b.URL, http.MethodPatch, "/collections/joplin/items/"+id, patchProps(map[string]any{"from_b": "2"})); st != 200 {
		t.Fatalf("patch B: %d %v", st, body)
	}
	props := reload(t, dir).collections["joplin"].byID[id].doc["properties"].(map[string]any)
	if props["from_a"] != "1" || props["from_b"] != "2" {
		t.Errorf("after two servers patched one item: from_a=%v from_b=%v; want both", props["from_a"], props["from_b"])
	}
	// B's answer and its reads are the document as on disk.
	if got := b.get(t, "/collections/joplin/items/"+id).body["properties"].(map[string]any); got["from_a"] != "1" {
		t.Errorf("B serves a copy without A's change: %v", got)
	}
}

func TestDeletedItemDoesNotComeBack(t *testing.T) {
	dir, a, _ := copyCatalog(t, "testdata/joplin")
	b := serveDir(t, dir)
	// A file item (created and linked) and an ItemCollection member.
	ids := joplinItems(t, dir, 2)
	member := ids[0]
	if st, _ := send(t, b.URL, http.MethodPatch, "/collections/joplin/items/"+ids[1], patchProps(map[string]any{"warm": "up"})); st != 200 {
		t.Fatal("first patch by B")
	}
	if st, _ := send(t, a.URL, http.MethodPost, "/collections/joplin/items", txItem("own-file", "joplin", -94.5)); st != 201 {
		t.Fatal("create")
	}
	for _, id := range []string{"own-file", member} {
		if st, _ := send(t, a.URL, http.MethodDelete, "/collections/joplin/items/"+id, nil); st != 204 {
			t.Fatalf("delete %s by A: %d", id, st)
		}
		st, body := send(t, b.URL, http.MethodPatch, "/collections/joplin/items/"+id, patchProps(map[string]any{"x": "y"}))
		if st != 404 {
			t.Errorf("patch by B of %s, deleted by A: %d %v; want 404", id, st, body)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "own-file", "own-file.json")); err == nil {
		t.Error("the deleted item's file came back")
	}
	s := reload(t, dir)
	if s.collections["joplin"].byID[member] != nil || s.collections["joplin"].byID["own-file"] != nil {
		t.Error("a deleted item is back in the catalog")
	}
}

// TestConcurrentWritesOfServersKeepEveryChange: 8 servers (one directory)
// each patch one item and create one item at the same time.
func TestConcurrentWritesOfServersKeepEveryChange(t *testing.T) {
	dir, _, _ := copyCatalog(t, "testdata/joplin")
	id := joplinItems(t, dir, 1)[0]
	const n = 8
	servers := make([]*testServer, n)
	for i := range servers {
		servers[i] = serveDir(t, dir)
	}
	var wg sync.WaitGroup
	statuses := make(chan string, 2*n)
	for i, s := range servers {
		wg.Go(func() {
			st, body := send(t, s.URL, http.MethodPatch, "/collections/joplin/items/"+id, patchProps(map[string]any{fmt.Sprintf("k%d", i): "v"}))
			statuses <- fmt.Sprintf("patch %d: %d %v", i, st, body["description"])
		})
		wg.Go(func() {
			newID := fmt.Sprintf("new-%d", i)
			st, body := send(t, s.URL, http.MethodPost, "/collections/joplin/items", txItem(newID, "joplin", -94.5))
			statuses <- fmt.Sprintf("create %d: %d %v", i, st, body["description"])
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if !strings.Contains(s, ": 200 ") && !strings.Contains(s, ": 201 ") {
			t.Errorf("%s", s)
		}
	}
	st := reload(t, dir)
	props := st.collections["joplin"].byID[id].doc["properties"].(map[string]any)
	for i := range n {
		if props[fmt.Sprintf("k%d", i)] != "v" {
			t.Errorf("patch k%d lost", i)
		}
		if st.collections["joplin"].byID[fmt.Sprintf("new-%d", i)] == nil {
			t.Errorf("created item new-%d has no link from its collection", i)
		}
	}
	noTempFiles(t, dir)
}

// TestWritersInSeveralProcesses: 4 processes (this test binary again)
// each patch one item 5 times while the others do; every change stays.
func TestWritersInSeveralProcesses(t *testing.T) {
	if dir := os.Getenv("STACSERVER_WRITER_DIR"); dir != "" {
		writerProcess(t, dir)
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, _, _ := copyCatalog(t, "testdata/joplin")
	id := joplinItems(t, dir, 1)[0]
	const procs, each = 4, 5
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestWritersInSeveralProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), "STACSERVER_WRITER_DIR="+dir, "STACSERVER_WRITER_ITEM="+id,
				fmt.Sprintf("STACSERVER_WRITER_PREFIX=p%d-", p), fmt.Sprintf("STACSERVER_WRITER_COUNT=%d", each))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("writer process %d: %v\n%s", p, err, out)
			}
		})
	}
	wg.Wait()
	props := reload(t, dir).collections["joplin"].byID[id].doc["properties"].(map[string]any)
	for p := range procs {
		for i := range each {
			if k := fmt.Sprintf("p%d-%d", p, i); props[k] != "v" {
				t.Errorf("change %s lost", k)
			}
		}
	}
}

// writerProcess is the child of TestWritersInSeveralProcesses.
func writerProcess(t *testing.T, dir string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	store, err := LoadFS(root.FS(), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	api := New(store, Options{Writes: &WriteOptions{Dir: root}})
	count, err := strconv.Atoi(os.Getenv("STACSERVER_WRITER_COUNT"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range count {
		raw, _ := json.Marshal(patchProps(map[string]any{fmt.Sprintf("%s%d", os.Getenv("STACSERVER_WRITER_PREFIX"), i): "v"}))
		req := httptest.NewRequest(http.MethodPatch, "/collections/joplin/items/"+os.Getenv("STACSERVER_WRITER_ITEM"), bytes.NewReader(raw))
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("patch %d: %d %s", i, rec.Code, rec.Body)
		}
	}
}

// TestNewIDsAreRefusedClearly: an id that would make a hidden, invisible-
// character, over-long or path-like file name is a 400 naming the problem,
// and nothing is written.
func TestNewIDsAreRefusedClearly(t *testing.T) {
	dir, ts, _ := copyCatalog(t, "testdata/joplin")
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, want string }{
		{".git", "starts with '.'"},
		{"flight\u202egpj.exe", "U+202E"},
		{"zero\u200bwidth", "U+200B"},
		{strings.Repeat("a", 256), "256 bytes"},
		{"a:b", `':'`},
		{"a b", "white space"},
	} {
		st, body := send(t, ts.URL, http.MethodPost, "/collections", txCollection(tc.id))
		if st != 400 || !strings.Contains(fmt.Sprint(body["description"]), tc.want) {
			t.Errorf("collection id %q: %d %v; want 400 saying %s", tc.id, st, body["description"], tc.want)
		}
		st, body = send(t, ts.URL, http.MethodPost, "/collections/joplin/items", txItem(tc.id, "joplin", -94.5))
		if st != 400 || !strings.Contains(fmt.Sprint(body["description"]), tc.want) {
			t.Errorf("item id %q: %d %v; want 400 saying %s", tc.id, st, body["description"], tc.want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git")); len(entries) != 0 {
		t.Errorf(".git was written into: %v", entries)
	}
	if s := reload(t, dir); s.ItemCount() != 30 || len(s.collections) != 1 {
		t.Errorf("refused writes changed the catalog: %d items, %d collections", s.ItemCount(), len(s.collections))
	}
}

// TestCreateDoesNotOverwriteAFileTheCatalogDoesNotHold: an operator's
// notes.json beside the item files is not replaced by an item "notes".
func TestCreateDoesNotOverwriteAFileTheCatalogDoesNotHold(t *testing.T) {
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
		"links": []any{map[string]any{"rel": "child", "href": "./naip/collection.json"}}})
	coll := txCollection("naip")
	coll["links"] = []any{map[string]any{"rel": "item", "href": "./items/a.json"}}
	write("naip/collection.json", coll)
	write("naip/items/a.json", txItem("a", "naip", 1))
	write("naip/items/notes.json", map[string]any{"operator": "my notes"})
	write("other/collection.json", map[string]any{"mine": true})
	dir, ts, _ := copyCatalog(t, src)
	st, body := send(t, ts.URL, http.MethodPost, "/collections/naip/items", txItem("notes", "naip", 2))
	if st != 409 || !strings.Contains(fmt.Sprint(body["description"]), "notes.json") {
		t.Errorf("item notes over naip/items/notes.json: %d %v; want 409 naming the file", st, body)
	}
	st, body = send(t, ts.URL, http.MethodPost, "/collections", txCollection("other"))
	if st != 409 || !strings.Contains(fmt.Sprint(body["description"]), "other/collection.json") {
		t.Errorf("collection other over other/collection.json: %d %v; want 409 naming the file", st, body)
	}
	for name, want := range map[string]string{"naip/items/notes.json": "my notes", "other/collection.json": "mine"} {
		if raw, _ := os.ReadFile(filepath.Join(dir, name)); !strings.Contains(string(raw), want) {
			t.Errorf("%s was overwritten: %s", name, raw)
		}
	}
}

// TestCollectionFolderLinkedOutOfTheCatalog: a folder that is a symbolic
// link leading out of the catalog directory is a clear refusal (not a 500,
// which the write protocol must treat as an answer lost), and nothing is
// written outside.
func TestCollectionFolderLinkedOutOfTheCatalog(t *testing.T) {
	dir, ts, _ := copyCatalog(t, "testdata/joplin")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "evil")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	st, body := send(t, ts.URL, http.MethodPost, "/collections", txCollection("evil"))
	if st != 409 || !strings.Contains(fmt.Sprint(body["description"]), "symbolic link") {
		t.Errorf("create collection through a link out of the catalog: %d %v; want 409 saying why", st, body)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the catalog: %v", entries)
	}
}

// TestStaleTempFilesRemovedAtLoad: the temporary files of a process killed
// while writing are removed when a writable server starts; other hidden
// files stay.
func TestStaleTempFilesRemovedAtLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/joplin")); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, ".index.geojson.tmp-0123456789ab")
	keep := filepath.Join(dir, ".keep.tmp-x")
	for _, f := range []string{stale, keep} {
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	serveDir(t, dir)
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale temporary file is still there")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file that is not one of ours was removed: %v", err)
	}
}

// TestDrainWaitsForTheWriteInProgress: Drain (called on SIGTERM) returns
// only once the write being made is complete on disk, and a write after
// it is refused without touching the files.
func TestDrainWaitsForTheWriteInProgress(t *testing.T) {
	dir, ts, api := copyCatalog(t, "testdata/joplin")
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	api.beforeRename = func(string) error {
		once.Do(func() { close(entered); <-release })
		return nil
	}
	created := make(chan int)
	go func() {
		st, _ := send(t, ts.URL, http.MethodPost, "/collections/joplin/items", txItem("late", "joplin", -94.5))
		created <- st
	}()
	<-entered
	drained := make(chan bool)
	go func() { drained <- api.Drain(time.Minute) }()
	close(release)
	if !<-drained {
		t.Fatal("Drain timed out")
	}
	// Drain returned: the write is complete on disk, link included.
	if s := reload(t, dir); s.collections["joplin"].byID["late"] == nil {
		t.Error("Drain returned before the write in progress was complete")
	}
	noTempFiles(t, dir)
	if st := <-created; st != 201 {
		t.Errorf("the write in progress: %d", st)
	}
	st, body := send(t, ts.URL, http.MethodPost, "/collections/joplin/items", txItem("after", "joplin", -94.5))
	if st != 503 || !strings.Contains(fmt.Sprint(body["description"]), "shutting down") {
		t.Errorf("a write after Drain: %d %v", st, body)
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
		t.Error("a write after Drain reached the files")
	}
}

// TestWriteWhoseRequestEndsWhileRereadingIs503: a write whose request ends
// (the client timed out) while the server re-reads the catalog before
// writing is a 503 saying nothing was written, and nothing is. It was a
// 409 "the catalog's files … no longer load", which a client stores as the
// write's definitive failure.
func TestWriteWhoseRequestEndsWhileRereadingIs503(t *testing.T) {
	dir, _, api := copyCatalog(t, "testdata/joplin")
	id := joplinItems(t, dir, 1)[0]
	before, err := os.ReadFile(filepath.Join(dir, "index.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the lock is free, so it is taken; the re-read (a server's first write always re-reads) stops at once
	raw, _ := json.Marshal(patchProps(map[string]any{"late": "v"}))
	req := httptest.NewRequest(http.MethodPatch, "/collections/joplin/items/"+id, bytes.NewReader(raw)).WithContext(ctx)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "nothing was written") {
		t.Errorf("a write whose request ended while the catalog was re-read: %d %s; want 503, nothing was written", rec.Code, rec.Body)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "index.geojson")); !bytes.Equal(after, before) {
		t.Error("the write reached the files")
	}
	// The server still writes once a request lasts.
	rec = httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodPatch, "/collections/joplin/items/"+id, bytes.NewReader(raw)))
	if rec.Code != 200 {
		t.Errorf("the next write: %d %s", rec.Code, rec.Body)
	}
}
