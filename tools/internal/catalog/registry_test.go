package catalog

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
	"github.com/stacmcp/stac-mcp/tools/internal/catalog/catalogtest"
)

func TestCatalogsResolvePresetsAndURLs(t *testing.T) {
	cats := New(Options{HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	ctx := context.Background()

	def, err := cats.Resolve(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != DefaultPreset || def.URL != "https://earth-search.aws.element84.com/v1" || def.Host != "earth-search.aws.element84.com" {
		t.Errorf(`Resolve("") = %+v, want the earth-search preset`, def)
	}
	for _, p := range Presets() {
		cat, err := cats.Resolve(ctx, " "+strings.ToUpper(p.Name)+" ")
		if err != nil {
			t.Fatalf("preset %s: %v", p.Name, err)
		}
		if cat.Name != p.Name || cat.URL != p.URL || cat.Client == nil {
			t.Errorf("preset %s resolved to %+v", p.Name, cat)
		}
	}
	// One client per URL, whatever the spelling.
	a, err := cats.Resolve(ctx, "earth-search")
	if err != nil {
		t.Fatal(err)
	}
	b, err := cats.Resolve(ctx, "https://earth-search.aws.element84.com/v1/")
	if err != nil {
		t.Fatal(err)
	}
	if a.Client != b.Client {
		t.Error("the preset and its URL got different clients")
	}
	if b.Ref != "https://earth-search.aws.element84.com/v1/" {
		t.Errorf("Ref = %q, want the reference as given", b.Ref)
	}
}

func TestCatalogsRejectUnusableReferences(t *testing.T) {
	dir := t.TempDir()
	cats := New(Options{})
	defer func() { _ = cats.Close() }()
	cases := map[string]string{
		"earth-serch":                         "not a preset name",
		"https://":                            "valid URL with a host",
		dir:                                   "directory without a catalog.json",
		filepath.Join(dir, "missing.json"):    "no such file",
		"ftp://example.com/catalog.json":      "not a preset name",
		"file://" + filepath.Join(dir, "x/y"): "no such file",
	}
	for ref, why := range cases {
		err := cats.Check(ref)
		if err == nil {
			t.Errorf("Check(%q) accepted it", ref)
			continue
		}
		msg := err.Error()
		for _, want := range []string{ref, why, "earth-search", "planetary-computer", "usgs-landsat", `"demo"`, "catalog.json"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Check(%q) = %q, missing %q", ref, msg, want)
			}
		}
		if _, err := cats.Resolve(context.Background(), ref); err == nil {
			t.Errorf("Resolve(%q) accepted what Check refused", ref)
		}
	}
}

func TestCatalogsDemoIsLazySharedAndClosed(t *testing.T) {
	cats := New(Options{Default: Demo, HTTPClient: &http.Client{}})
	if err := cats.Check(""); err != nil {
		t.Fatal(err)
	}
	if n := len(cats.servers); n != 0 {
		t.Fatalf("Check started %d in-process servers; the demo must start on first use", n)
	}
	ctx := context.Background()
	first, err := cats.Resolve(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := cats.Resolve(ctx, "DEMO")
	if err != nil {
		t.Fatal(err)
	}
	if first.URL != second.URL || first.Client != second.Client || len(cats.servers) != 1 {
		t.Errorf("demo started %d times (%s, %s); want one shared server", len(cats.servers), first.URL, second.URL)
	}
	if first.URL != "http://"+DemoHost {
		t.Errorf("demo URL = %s, want http://%s (served in memory, adr/0025)", first.URL, DemoHost)
	}
	client := cats.opts.HTTPClient // the registry's: it serves the in-process catalogs
	resp, err := client.Get(first.URL + "/collections")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("demo /collections: %s", resp.Status)
	}

	if err := cats.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(first.URL + "/collections"); !errors.Is(err, inmemory.ErrNotServed) {
		t.Errorf("after Close the demo answered (err %v), want inmemory.ErrNotServed", err)
	}
	if _, err := cats.Resolve(ctx, ""); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Resolve after Close = %v, want a closed error", err)
	}
}

func TestCatalogsLocalLoadErrorIsReportedAndRetried(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalog.json")
	if err := os.WriteFile(path, []byte(`{"type":"Catalog","id":"broken","links":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	cats := New(Options{})
	defer func() { _ = cats.Close() }()
	_, err := cats.Resolve(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "loading the static catalog failed") || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("Resolve(broken catalog) = %v, want a load error saying the root is not valid JSON", err)
	}
	if len(cats.servers) != 0 {
		t.Errorf("a catalog that failed to load started %d servers", len(cats.servers))
	}
	// Fixed on disk: the next call loads it, no restart needed.
	if err := os.WriteFile(path, []byte(`{"type":"Catalog","id":"fixed","description":"d","links":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := cats.Resolve(context.Background(), path)
	if err != nil || cat.Name != "local" {
		t.Fatalf("Resolve(fixed catalog) = %+v, %v", cat, err)
	}
}

// Over stdio --allow-writes made every catalog.json the model
// can name writable. Only the operator's local catalogs (the default, the
// STAC_MCP_CATALOGS names) are; one named only by a tool call is served
// read-only and says why.
func TestOnlyConfiguredLocalCatalogsAreWritable(t *testing.T) {
	configured := catalogtest.WriteLocal(t, t.TempDir())
	named := catalogtest.WriteLocal(t, t.TempDir())
	other := catalogtest.WriteLocal(t, t.TempDir())
	cats := New(Options{Default: configured, Named: []Preset{{Name: "archive", Path: named}}, WritableLocal: true, HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	ctx := context.Background()
	post := func(cat *Catalog) int {
		t.Helper()
		resp, err := cats.opts.HTTPClient.Post(cat.URL+"/collections", "application/json",
			strings.NewReader(`{"type":"Collection","stac_version":"1.0.0","id":"new","description":"d","license":"proprietary","extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, ref := range []string{"", configured, "archive"} {
		cat, err := cats.Resolve(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if cat.WriteRefusal != "" {
			t.Errorf("%q: the operator's catalog refuses writes: %s", ref, cat.WriteRefusal)
		}
	}
	def, _ := cats.Resolve(ctx, "")
	if code := post(def); code != http.StatusCreated {
		t.Errorf("write to the configured catalog: %d", code)
	}
	cat, err := cats.Resolve(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if cat.WriteRefusal != ReadOnlyLocal || cat.Key != other {
		t.Errorf("a catalog named by a tool call: refusal %q, key %q", cat.WriteRefusal, cat.Key)
	}
	if code := post(cat); code == http.StatusCreated {
		t.Error("a catalog named only by a tool call took a write")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(other), "new")); err == nil {
		t.Error("the write reached the files of a catalog no operator configured")
	}
}
