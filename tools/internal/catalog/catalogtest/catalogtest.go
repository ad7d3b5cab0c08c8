// Package catalogtest writes small static catalogs for the tests of the
// catalog registry and of the tools that show it.
package catalogtest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteLocal writes a one-collection, one-item static catalog into dir and
// returns its catalog.json; extraLinks (JSON link objects) are added to the
// collection's links, e.g. a dangling one. The collection's directory also
// holds a file no link names.
func WriteLocal(t testing.TB, dir string, extraLinks ...string) string {
	t.Helper()
	links := `{"rel":"item","href":"item.json"}`
	for _, l := range extraLinks {
		links += "," + l
	}
	files := map[string]string{
		"catalog.json":            `{"type":"Catalog","id":"local-test","description":"d","links":[{"rel":"child","href":"./coll/collection.json"}]}`,
		"coll/collection.json":    `{"type":"Collection","id":"coll","description":"d","links":[` + links + `]}`,
		"coll/item.json":          `{"type":"Feature","id":"i1","geometry":null,"properties":{"datetime":"2024-01-01T00:00:00Z"}}`,
		"coll/unlinked-file.json": `{}`,
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "catalog.json")
}
