package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/tools/internal/catalog/catalogtest"
)

// The catalog registry's own tests are in tools/internal/catalog; these
// check what the tools show of it.

func TestNamedCatalogsResolveAndAreListed(t *testing.T) {
	named, err := ParseNamedCatalogs("STAC_MCP_CATALOGS", "internal=https://stac.internal.example/v1")
	if err != nil {
		t.Fatal(err)
	}
	d := newTestDeps(t, testSessionOptions{})
	cats := NewCatalogs(CatalogsOptions{Default: "internal", HTTPClient: d.Layer.HTTPClient(), Named: named})
	t.Cleanup(func() { _ = cats.Close() })
	d.Catalogs = cats

	cat, err := cats.Resolve(context.Background(), "INTERNAL")
	if err != nil {
		t.Fatal(err)
	}
	if cat.Name != "internal" || cat.URL != "https://stac.internal.example/v1" || cat.Host != "stac.internal.example" {
		t.Errorf("Resolve(INTERNAL) = %+v", cat)
	}
	if _, err := cats.Resolve(context.Background(), "internl"); err == nil || !strings.Contains(err.Error(), "configured names (STAC_MCP_CATALOGS): internal") {
		t.Errorf("a misspelt name: %v; want the configured names listed", err)
	}

	cs := connect(t, newServer(d, "test", Inventory()))
	res := callOK(t, cs, "list_catalogs", map[string]any{})
	out := structured[ListCatalogsOut](t, res)
	var entry *CatalogEntry
	for i, e := range out.Catalogs {
		if e.Name == "internal" {
			entry = &out.Catalogs[i]
		}
	}
	if entry == nil || entry.Kind != "named" || entry.URL != "https://stac.internal.example/v1" || !entry.Default {
		t.Fatalf("list_catalogs entry for internal = %+v; catalogs %+v", entry, out.Catalogs)
	}
	if !strings.Contains(resultText(res), "internal (default) [named]") {
		t.Errorf("text does not show the named default:\n%s", resultText(res))
	}
}

// A key in a configured catalog URL is not shown by
// list_catalogs, get_root or an error.
func TestConfiguredCatalogURLKeysAreRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("api_key") != "SECRET" {
			http.Error(w, `{"message":"no key"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/stac/collections/gone" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"description":"not found"}`))
			return
		}
		w.Write([]byte(`{"type":"Catalog","id":"keyed","description":"d","stac_version":"1.0.0","conformsTo":[],"links":[]}`))
	}))
	defer srv.Close()
	named, err := ParseNamedCatalogs("STAC_MCP_CATALOGS", "keyed="+srv.URL+"/stac?api_key=SECRET")
	if err != nil {
		t.Fatal(err)
	}
	d := newTestDeps(t, testSessionOptions{})
	cats := NewCatalogs(CatalogsOptions{Default: "keyed", HTTPClient: d.Layer.HTTPClient(), Named: named})
	t.Cleanup(func() { _ = cats.Close() })
	d.Catalogs = cats
	cs := connect(t, newServer(d, "test", Inventory()))
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"list_catalogs", nil}, {"get_root", nil}, {"get_collection", map[string]any{"collection_id": "gone"}}} {
		res := callTool(t, cs, call.tool, call.args)
		raw := resultText(res)
		if res.StructuredContent != nil {
			raw += fmtAny(res.StructuredContent)
		}
		if strings.Contains(raw, "SECRET") {
			t.Errorf("%s shows the key:\n%s", call.tool, raw)
		}
		if call.tool == "get_root" && (res.IsError || !strings.Contains(raw, "api_key=REDACTED")) {
			t.Errorf("get_root: %s", raw)
		}
	}
}

// A static catalog with a dangling item link loads; the model
// sees what was skipped in get_root's notes.
func TestDanglingLinkIsSkippedAndShown(t *testing.T) {
	path := catalogtest.WriteLocal(t, t.TempDir(), `{"rel":"item","href":"missing-item.json"}`)
	cs := newTestSession(t, testSessionOptions{CatalogURL: path})
	res := callOK(t, cs, "get_root", map[string]any{})
	out := structured[GetRootOut](t, res)
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "coll/missing-item.json: no such file") ||
		!strings.Contains(resultText(res), "missing-item.json") {
		t.Errorf("notes %q, text %q: want the dangling link named", out.Notes, resultText(res))
	}
	items := callOK(t, cs, "search_items", map[string]any{"collections": []string{"coll"}})
	if !strings.Contains(resultText(items), "i1") {
		t.Errorf("the readable item was not served:\n%s", resultText(items))
	}
}

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
