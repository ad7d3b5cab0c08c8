package tools

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// langRecordingCatalog serves the demo store declaring every class but
// the CQL2 encoding without, and records the filter-lang of each search it
// receives.
func langRecordingCatalog(t *testing.T, without string) (string, func() []string) {
	t.Helper()
	var conformance []string
	for _, c := range stacserver.DefaultConformance() {
		if !strings.HasSuffix(c, "/conf/"+without) {
			conformance = append(conformance, c)
		}
	}
	inner := stacserver.New(demoStore(t), stacserver.Options{ConformsTo: conformance})
	var mu sync.Mutex
	var langs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/search") {
			lang := r.URL.Query().Get("filter-lang")
			if r.Method == http.MethodPost {
				raw, _ := io.ReadAll(r.Body)
				var body map[string]any
				if json.Unmarshal(raw, &body) == nil {
					lang, _ = body["filter-lang"].(string)
				}
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
			}
			mu.Lock()
			langs = append(langs, lang)
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(langs)
	}
}

// A filter in the CQL2 encoding the catalog does not declare is converted
// to the one it does, and the notes say so (pystac-client converts; we
// sent the text as it was).
func TestSearchItemsConvertsTheFilterToTheDeclaredEncoding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, without, filter, sentLang, note string
	}{
		{"text to json", "cql2-text", "eo:cloud_cover < 5", "cql2-json", "converted from cql2-text to cql2-json"},
		{"json to text", "cql2-json", `{"op":"<","args":[{"property":"eo:cloud_cover"},5]}`, "cql2-text", "converted from cql2-json to cql2-text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url, langs := langRecordingCatalog(t, c.without)
			honest := newTestSession(t, testSessionOptions{CatalogURL: serveStore(t, demoStore(t), stacserver.Options{})})
			cs := newTestSession(t, testSessionOptions{CatalogURL: url})
			args := map[string]any{"collections": "sentinel-2-l2a", "filter": c.filter, "max_items": 20}
			want := structured[SearchItemsOut](t, callOK(t, honest, "search_items", args))
			got := structured[SearchItemsOut](t, callOK(t, cs, "search_items", args))
			if len(got.Items) == 0 || len(got.Items) != len(want.Items) {
				t.Errorf("%d items, want the %d the filter selects", len(got.Items), len(want.Items))
			}
			if !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, c.note) }) {
				t.Errorf("notes %q do not say %q", got.Notes, c.note)
			}
			if sent := langs(); len(sent) == 0 || slices.ContainsFunc(sent, func(l string) bool { return l != c.sentLang }) {
				t.Errorf("the catalog received filter-lang %v, want only %s", sent, c.sentLang)
			}
			for _, w := range got.Warnings {
				if strings.Contains(w, "filter") {
					t.Errorf("warning about the filter after converting it: %s", w)
				}
			}
		})
	}
}
