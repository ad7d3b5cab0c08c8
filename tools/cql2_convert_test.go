package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/cql2/cql2test"
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

// annexACatalog serves the populated places of the OGC 21-065 Annex A test
// dataset as STAC items (their "date", "start", "end" and "boolean"
// columns as properties).
func annexACatalog(t *testing.T) string {
	t.Helper()
	rows, err := cql2test.Dataset("ne_110m_populated_places_simple")
	if err != nil {
		t.Fatal(err)
	}
	s := stacserver.NewStore()
	coll := map[string]any{"type": "Collection", "stac_version": "1.0.0", "id": "places", "description": "Annex A populated places",
		"license": "other", "links": []any{}, "extent": map[string]any{"spatial": map[string]any{"bbox": []any{[]any{-180, -90, 180, 90}}},
			"temporal": map[string]any{"interval": []any{[]any{"2020-01-01T00:00:00Z", nil}}}}}
	add := func(f func([]byte) error, doc map[string]any) {
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := f(raw); err != nil {
			t.Fatal(err)
		}
	}
	add(s.AddCollection, coll)
	for _, f := range rows {
		props := f["properties"].(map[string]any)
		props["datetime"] = "2020-01-01T00:00:00Z"
		props["geom"] = f["geometry"] // the ATS's name for the geometry
		add(s.AddItem, map[string]any{"type": "Feature", "stac_version": "1.0.0", "id": fmt.Sprint(f["id"]), "collection": "places",
			"geometry": f["geometry"], "properties": props, "links": []any{}, "assets": map[string]any{}})
	}
	return serveStore(t, s, stacserver.Options{})
}

// The Annex A predicates on the populated places, as cql2-text through
// search_items on an in-process catalog: the catalog's matched count is
// the standard's (before: refused, "cql2-text is not supported by this
// test server").
func TestSearchItemsAnnexA(t *testing.T) {
	t.Parallel()
	cases, err := cql2test.AnnexA()
	if err != nil {
		t.Fatal(err)
	}
	cs := newTestSession(t, testSessionOptions{CatalogURL: annexACatalog(t)})
	n := 0
	for _, c := range cases {
		if c.Source != "ne_110m_populated_places_simple" {
			continue
		}
		n++
		out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": "places", "filter": c.Filter, "max_items": 1}))
		if out.Matched == nil || *out.Matched != c.Want {
			t.Errorf("%s: %s: matched %v, the standard expects %d (warnings %v)", c.File, c.Filter, deref(out.Matched), c.Want, out.Warnings)
		}
	}
	if n < 100 {
		t.Errorf("only %d Annex A cases on the populated places", n)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
