package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools"
)

// writeStaticCatalog writes a small static catalog (one collection, one
// item, plus any extra collection links) and returns its catalog.json.
func writeStaticCatalog(t *testing.T, extraLinks string) string {
	t.Helper()
	dir := t.TempDir()
	links := `{"rel":"item","href":"item.json"}` + extraLinks
	for name, data := range map[string]string{
		"catalog.json":      `{"type":"Catalog","id":"ops-local","description":"d","links":[{"rel":"child","href":"c/collection.json"}]}`,
		"c/collection.json": `{"type":"Collection","id":"c","description":"d","links":[` + links + `]}`,
		"c/item.json":       `{"type":"Feature","id":"i1","geometry":null,"properties":{"datetime":"2024-01-01T00:00:00Z"}}`,
	} {
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

// loopbackCatalog is a STAC landing page on 127.0.0.1 that counts requests
// and remembers the headers it saw.
func loopbackCatalog(t *testing.T) (*httptest.Server, *atomic.Int32, func() []http.Header) {
	t.Helper()
	var hits atomic.Int32
	var mu sync.Mutex
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"Catalog","id":"internal","stac_version":"1.0.0","description":"d","links":[],"conformsTo":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return append([]http.Header(nil), seen...)
	}
}

func callHTTP(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (text string, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError
}

// End to end through `stac-mcp http`: a client may
// not name a local path or a private address; what the operator configured
// (the default, STAC_MCP_CATALOGS names, the demo) is still served.
func TestHTTPClientsReachOnlyWhatTheOperatorConfigured(t *testing.T) {
	t.Parallel()
	internal, internalHits, _ := loopbackCatalog(t)
	stray, strayHits, _ := loopbackCatalog(t)
	local := writeStaticCatalog(t, "")
	s := startHTTPForTest(t, map[string]string{
		"STAC_MCP_CATALOGS": "internal=" + internal.URL + ",archive=" + local,
	}, "--catalog", "demo", "--log-level", "error")
	cs := connectHTTP(t, s.url, newTestHTTPClient(t))

	text, isErr := callHTTP(t, cs, "get_root", map[string]any{"catalog_url": local})
	if !isErr || !strings.Contains(text, "does not open local paths named by a tool call") {
		t.Errorf("a local path from an http client: error=%v %q", isErr, text)
	}
	text, isErr = callHTTP(t, cs, "get_root", map[string]any{"catalog_url": "/etc/passwd"})
	if !isErr || strings.Contains(text, "root:x:") || !strings.Contains(text, "does not open local paths") {
		t.Errorf("/etc/passwd from an http client: error=%v %q", isErr, text)
	}
	text, isErr = callHTTP(t, cs, "get_root", map[string]any{"catalog_url": stray.URL + "/stac"})
	if !isErr || !strings.Contains(text, "STAC_MCP_ALLOW_PRIVATE_NETWORKS") || !strings.Contains(text, "loopback") || strayHits.Load() != 0 {
		t.Errorf("a loopback URL from an http client: error=%v hits=%d %q", isErr, strayHits.Load(), text)
	}
	for _, ref := range []string{"internal", "archive", "demo"} {
		if text, isErr := callHTTP(t, cs, "get_root", map[string]any{"catalog_url": ref}); isErr {
			t.Errorf("configured catalog %s: %s", ref, text)
		}
	}
	if internalHits.Load() == 0 {
		t.Error("the configured internal catalog was not reached")
	}
}

func TestHTTPPrivateNetworksWhenTheOperatorAllows(t *testing.T) {
	t.Parallel()
	stray, strayHits, _ := loopbackCatalog(t)
	strayAddr := strings.TrimPrefix(stray.URL, "http://")
	for _, env := range []map[string]string{
		{"STAC_MCP_ALLOW_PRIVATE_NETWORKS": "true"},
		{"STAC_MCP_ALLOWED_CATALOG_HOSTS": strayAddr}, // host:port (a bare host admits 80 and 443 only)
		{"STAC_MCP_ALLOWED_CATALOG_HOSTS": "127.0.0.0/8"},
	} {
		s := startHTTPForTest(t, env, "--catalog", "demo", "--log-level", "error")
		cs := connectHTTP(t, s.url, newTestHTTPClient(t))
		before := strayHits.Load()
		if text, isErr := callHTTP(t, cs, "get_root", map[string]any{"catalog_url": stray.URL}); isErr || strayHits.Load() == before {
			t.Errorf("%v: %q", env, text)
		}
	}
}

// An allow-list entry without a port admits ports 80 and 443
// only, not every service of the host.
func TestHTTPAllowedHostWithoutPortAdmitsDefaultPortsOnly(t *testing.T) {
	t.Parallel()
	stray, strayHits, _ := loopbackCatalog(t)
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_ALLOWED_CATALOG_HOSTS": "127.0.0.1"}, "--catalog", "demo", "--log-level", "error")
	cs := connectHTTP(t, s.url, newTestHTTPClient(t))
	if text, isErr := callHTTP(t, cs, "get_root", map[string]any{"catalog_url": stray.URL}); !isErr || strayHits.Load() != 0 {
		t.Errorf("a bare allowed host opened port %s: %q", stray.URL, text)
	}
}

// Over stdio (and call) the person who started the server is the operator:
// local paths and loopback URLs work.
func TestStdioTrustsTheOperator(t *testing.T) {
	t.Parallel()
	stray, strayHits, _ := loopbackCatalog(t)
	local := writeStaticCatalog(t, "")
	for _, ref := range []string{stray.URL, local} {
		code, stdout, stderr := runForTest(t, nil, "call", "get_root", `{"catalog_url":"`+ref+`"}`)
		if code != 0 {
			t.Errorf("call get_root %s: exit %d\n%s\n%s", ref, code, stdout, stderr)
		}
	}
	if strayHits.Load() == 0 {
		t.Error("the loopback catalog was not reached")
	}
}

// From the environment: STAC_MCP_CATALOG_HEADERS_<NAME>
// goes to that catalog only, STAC_MCP_HEADERS to the default only.
func TestPerCatalogHeadersFromTheEnvironment(t *testing.T) {
	t.Parallel()
	def, _, defSeen := loopbackCatalog(t)
	internal, _, internalSeen := loopbackCatalog(t)
	other, _, otherSeen := loopbackCatalog(t)
	env := map[string]string{
		"STAC_MCP_CATALOGS":                     "internal=" + internal.URL,
		"STAC_MCP_HEADERS":                      "Authorization=Bearer DEFAULT-SECRET",
		"STAC_MCP_CATALOG_HEADERS_INTERNAL":     "X-Api-Key=INTERNAL-SECRET",
		"STAC_MCP_CATALOG_HEADERS_EARTH_SEARCH": "X-Unused=1",
	}
	for _, ref := range []string{"", "internal", other.URL} {
		args := []string{"--catalog", def.URL, "call", "get_root"}
		if ref != "" {
			args = append(args, `{"catalog_url":"`+ref+`"}`)
		}
		if code, _, stderr := runForTest(t, env, args...); code != 0 {
			t.Fatalf("get_root %q: exit %d %s", ref, code, stderr)
		}
	}
	check := func(name string, seen []http.Header, wantAuth, wantKey string) {
		t.Helper()
		if len(seen) == 0 {
			t.Fatalf("%s was not contacted", name)
		}
		for _, h := range seen {
			if h.Get("Authorization") != wantAuth || h.Get("X-Api-Key") != wantKey {
				t.Errorf("%s saw Authorization %q, X-Api-Key %q; want %q, %q", name, h.Get("Authorization"), h.Get("X-Api-Key"), wantAuth, wantKey)
			}
		}
	}
	check("the default catalog", defSeen(), "Bearer DEFAULT-SECRET", "")
	check("the internal catalog", internalSeen(), "", "INTERNAL-SECRET")
	check("a caller's URL", otherSeen(), "", "")
}

func TestBoundarySettingsRefuseBadValues(t *testing.T) {
	t.Parallel()
	local := writeStaticCatalog(t, "")
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"STAC_MCP_ALLOW_PRIVATE_NETWORKS": "maybe"}, "STAC_MCP_ALLOW_PRIVATE_NETWORKS"},
		{map[string]string{"STAC_MCP_ALLOWED_CATALOG_HOSTS": "https://stac.internal"}, "STAC_MCP_ALLOWED_CATALOG_HOSTS"},
		{map[string]string{"STAC_MCP_CATALOGS": "archive=" + local, "STAC_MCP_CATALOG_HEADERS_ARCHIVE": "X-Api-Key=k"}, "local static catalog"},
		{map[string]string{"STAC_MCP_CATALOG_HEADERS_EARTH_SEARCH": "nonsense"}, "STAC_MCP_CATALOG_HEADERS_EARTH_SEARCH"},
		{map[string]string{"STAC_MCP_CATALOGS": "x=https://user:pw@stac.example/v1"}, "STAC_MCP_CATALOG_HEADERS_X"},
	}
	for _, c := range cases {
		code, _, stderr := runForTest(t, c.env, "tools")
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "pw@") {
			t.Errorf("%v: exit %d, stderr %q; want 2 mentioning %q", c.env, code, stderr, c.want)
		}
	}
}

// Load problems of the operator's local catalogs show at startup;
// a default that cannot load at all refuses to start.
func TestStartupLoadsConfiguredLocalCatalogs(t *testing.T) {
	t.Parallel()
	dangling := writeStaticCatalog(t, `,{"rel":"item","href":"gone.json"}`)
	s := startHTTPForTest(t, map[string]string{"STAC_MCP_CATALOGS": "archive=" + dangling}, "--catalog", "demo", "--log-level", "info")
	logs := s.logs.String()
	if !strings.Contains(logs, "catalog_load_skipped") || !strings.Contains(logs, "c/gone.json: no such file") || !strings.Contains(logs, `"catalog":"archive"`) {
		t.Errorf("the startup log does not name the dangling link:\n%s", logs)
	}
	broken := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(broken, []byte(`{"type":"Catalog","links":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig([]string{"stdio", "--catalog", broken}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if a, err := newApp(t.Context(), cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "cannot be served") || !strings.Contains(err.Error(), "not valid JSON") {
		if a != nil {
			a.close()
		}
		t.Errorf("a broken default local catalog: %v; want a refusal to start", err)
	}
}

// Credentials under a misspelt catalog name would silently go nowhere.
func TestMisspeltCatalogHeadersAreReported(t *testing.T) {
	t.Parallel()
	named := []tools.Preset{{Name: "internal", URL: "https://stac.internal.example/v1"}}
	got := unknownCatalogHeaderWarnings([]string{
		"STAC_MCP_CATALOG_HEADERS_INTERNAL=X-Api-Key=k",
		"STAC_MCP_CATALOG_HEADERS_PLANETARY_COMPUTER=X=1",
		"STAC_MCP_CATALOG_HEADERS_INTERNL=X-Api-Key=k",
	}, named)
	if len(got) != 1 || !strings.Contains(got[0], "STAC_MCP_CATALOG_HEADERS_INTERNL") || !strings.Contains(got[0], "did you mean STAC_MCP_CATALOG_HEADERS_INTERNAL") {
		t.Errorf("warnings %q", got)
	}
	if w := unknownEnvWarnings([]string{"STAC_MCP_CATALOG_HEADERS_INTERNAL=x"}); len(w) != 0 {
		t.Errorf("a per-catalog headers variable is reported as unknown: %q", w)
	}
}
