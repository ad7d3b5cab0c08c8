package tools

import (
	"io/fs"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// Fixtures for the tool tests: the embedded demo catalog served by a
// stacserver with chosen Options on a loopback httptest server, for the
// behaviours the default demo catalog does not show (no aggregation,
// restricted conformance, other next-link styles).

// demoServer serves the demo catalog with opts and returns its URL.
func demoServer(t testing.TB, opts stacserver.Options) string {
	t.Helper()
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		t.Fatalf("loading the demo catalog: %v", err)
	}
	return serveStore(t, store, opts)
}

// serveStore serves a store on loopback until the test ends.
func serveStore(t testing.TB, store *stacserver.Store, opts stacserver.Options) string {
	t.Helper()
	srv := httptest.NewServer(stacserver.New(store, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// conformanceWithout is the default conformance minus every class whose URI
// contains one of the fragments.
func conformanceWithout(fragments ...string) []string {
	var out []string
	for _, uri := range stacserver.DefaultConformance() {
		if !slices.ContainsFunc(fragments, func(f string) bool { return strings.Contains(uri, f) }) {
			out = append(out, uri)
		}
	}
	return out
}

// demoItemIDs lists the item ids of one demo collection, from the embedded
// files themselves (one item per file, named by its id).
func demoItemIDs(t testing.TB, collection string) []string {
	t.Helper()
	entries, err := fs.ReadDir(demo.FS, collection+"/items")
	if err != nil {
		t.Fatalf("reading demo items of %s: %v", collection, err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(ids)
	return ids
}
