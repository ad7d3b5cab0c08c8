package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
)

func TestHeadersAcceptPairsAndJSON(t *testing.T) {
	t.Parallel()
	cases := map[string]http.Header{
		"Authorization=Bearer abc;X-Api-Key=k":        {"Authorization": {"Bearer abc"}, "X-Api-Key": {"k"}},
		" Authorization = Bearer abc \n X-Api-Key=k ": {"Authorization": {"Bearer abc"}, "X-Api-Key": {"k"}},
		"X-Token=a=b==": {"X-Token": {"a=b=="}},
		`{"Authorization":"Bearer abc","x-api-key":"k"}`: {"Authorization": {"Bearer abc"}, "X-Api-Key": {"k"}},
	}
	for in, want := range cases {
		got, err := parseHeaders(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		for name, vals := range want {
			if strings.Join(got.Values(name), ",") != strings.Join(vals, ",") {
				t.Errorf("%q: %s = %q, want %q", in, name, got.Values(name), vals)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%q: parsed %v, want %v", in, got, want)
		}
	}
	for in, wantMsg := range map[string]string{
		"Authorization Bearer sekrit-value": "has no '='",
		"Bad Name=x":                        `header "Bad Name"`,
		"=x":                                `header ""`,
		";;":                                "no header given",
		`{"Authorization": 5}`:              "JSON object",
	} {
		_, err := parseHeaders(in)
		if err == nil || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%q: error %v, want it to say %q", in, err, wantMsg)
			continue
		}
		if strings.Contains(err.Error(), "sekrit-value") {
			t.Errorf("%q: the error echoes the value: %v", in, err)
		}
	}
	code, _, stderr := runForTest(t, map[string]string{"STAC_MCP_HEADERS": "Authorization"}, "tools")
	if code != 2 || !strings.Contains(stderr, "STAC_MCP_HEADERS") {
		t.Errorf("bad STAC_MCP_HEADERS: exit %d, stderr %q; want 2 naming the variable", code, stderr)
	}
}

// TestHeadersReachTheCatalogButNeverTheLog calls a tool at debug level with
// secrets in STAC_MCP_HEADERS and STAC_MCP_HTTP_TOKEN: the catalog gets the
// headers, and no log line holds any of the values.
func TestHeadersReachTheCatalogButNeverTheLog(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []http.Header
	catalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"Catalog","id":"private","stac_version":"1.0.0","description":"d","links":[],"conformsTo":[]}`)
	}))
	defer catalog.Close()
	const bearer, apiKey, token = "sekrit-bearer-71f2", "sekrit-key-99a0", "sekrit-token-5c3e"
	env := map[string]string{
		"STAC_MCP_HEADERS":    "Authorization=Bearer " + bearer + ";X-Api-Key=" + apiKey,
		settings.EnvHTTPToken: token,
		"STAC_MCP_LOG_LEVEL":  "trace",
		"STAC_MCP_LOG_FORMAT": "json",
	}
	code, stdout, stderr := runForTest(t, env, "--catalog", catalog.URL, "call", "get_root")
	if code != 0 || !strings.Contains(stdout, "private") {
		t.Fatalf("get_root on the private catalog: exit %d\n%s\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0].Get("Authorization") != "Bearer "+bearer || seen[0].Get("X-Api-Key") != apiKey {
		t.Errorf("the catalog did not get the configured headers: %v", seen)
	}
	if !strings.Contains(stderr, `"level":"debug"`) && !strings.Contains(stderr, `"level":"trace"`) {
		t.Errorf("expected debug logs to search, got:\n%s", stderr)
	}
	for _, secret := range []string{bearer, apiKey, token} {
		if strings.Contains(stderr, secret) {
			t.Errorf("the log contains a secret (%s…):\n%s", secret[:8], stderr)
		}
	}
}

func TestNamedCatalogsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runForTest(t, map[string]string{"STAC_MCP_CATALOGS": "mine=https://stac.mine.example/v1"}, "call", "list_catalogs")
	if code != 0 || !strings.Contains(stdout, `"name": "mine"`) || !strings.Contains(stdout, `"kind": "named"`) {
		t.Errorf("list_catalogs with STAC_MCP_CATALOGS: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = runForTest(t, map[string]string{"STAC_MCP_CATALOGS": "earth-search=https://x.example"}, "tools")
	if code != 2 || !strings.Contains(stderr, "STAC_MCP_CATALOGS") || !strings.Contains(stderr, "already a built-in catalog") {
		t.Errorf("a name clashing with a preset: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runForTest(t, nil, "--catalogs", "x=nope", "tools")
	if code != 2 || !strings.Contains(stderr, "--catalogs") {
		t.Errorf("a bad --catalogs: exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}
	// A configured name works as --catalog.
	code, _, stderr = runForTest(t, map[string]string{"STAC_MCP_CATALOGS": "mine=https://stac.mine.example/v1", "STAC_MCP_CATALOG_URL": "mine"}, "tools")
	if code != 0 {
		t.Errorf("STAC_MCP_CATALOG_URL naming a configured catalog: exit %d, %s", code, stderr)
	}
}

// TestHTTPAndAccessVariablesAreSettings pins the variables of the HTTP
// transport and catalog access as settings shown by --help (README
// coverage of every setting is TestReadmeListsEverySetting's job).
func TestHTTPAndAccessVariablesAreSettings(t *testing.T) {
	t.Parallel()
	_, help, _ := runForTest(t, nil, "--help")
	names := map[string]bool{}
	for _, s := range append(append([]settings.Setting(nil), settings.Server...), settings.Secrets...) {
		names[s.Env] = true
	}
	for _, want := range []string{"STAC_MCP_HTTP_ADDR", settings.EnvHTTPToken, "STAC_MCP_CATALOGS", "STAC_MCP_HEADERS"} {
		if !names[want] {
			t.Errorf("%s is not a setting", want)
		}
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %s", want)
		}
	}
	if !strings.Contains(help, "stac-mcp [flags] http") || !strings.Contains(help, "--addr") {
		t.Errorf("--help does not show the http command and --addr:\n%s", help)
	}
}
