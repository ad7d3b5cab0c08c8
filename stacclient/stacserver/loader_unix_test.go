//go:build unix

package stacserver

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Device files and FIFOs never end (or never open); through an os.Root a
// symlink out of the catalog directory is refused too. Unix only.
func TestLoadFSRefusesSpecialFilesAndEscapes(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.json"), []byte(`{"type":"Catalog","id":"outside","description":"d","links":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.json")))
	must(os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "escape.json")))
	must(os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(`{"type":"Catalog","id":"c","description":"d","links":[
		{"rel":"child","href":"fifo.json"},{"rel":"child","href":"zero.json"},{"rel":"child","href":"escape.json"}]}`), 0o600))
	root, err := os.OpenRoot(dir)
	must(err)
	defer root.Close()
	done := make(chan struct{})
	var store *Store
	go func() {
		defer close(done)
		store, err = LoadFSContext(t.Context(), root.FS(), "catalog.json", LoadOptions{})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // only ends a load that blocks on the FIFO
		t.Fatal("loading a catalog that links to a FIFO did not return")
	}
	must(err)
	notes := strings.Join(store.Notes, "\n")
	for _, want := range []string{"skipped fifo.json: not a regular file", "skipped zero.json", "skipped escape.json"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	for _, root := range []string{"fifo.json", "zero.json", "escape.json"} {
		if _, err := LoadFSContext(t.Context(), mustRootFS(t, dir), root, LoadOptions{}); err == nil {
			t.Errorf("root %s loaded", root)
		}
	}
}

func mustRootFS(t *testing.T, dir string) fs.FS {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.FS()
}
