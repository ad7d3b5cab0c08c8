package main

import (
	"strings"
	"testing"
)

// A default catalog URL with user:password@ (what the
// bundle's "Catalog" setting fills) is refused at start, naming where the
// credentials go, and the password appears nowhere in the output; before,
// the server started, logged it and failed every call.
func TestDefaultCatalogWithPasswordIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"flag", nil, []string{"--catalog", "https://user:s3cret@stac.example/v1"}, "--catalog"},
		{"variable", map[string]string{"STAC_MCP_CATALOG_URL": "https://user:s3cret@stac.example/v1?x=1"}, nil, "STAC_MCP_CATALOG_URL"},
		{"password only", map[string]string{"STAC_MCP_CATALOG_URL": "HTTP://:s3cret@stac.example"}, []string{"tools"}, "STAC_MCP_CATALOG_URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runForTest(t, c.env, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (refused at start); stderr %q", code, stderr)
			}
			if strings.Contains(stdout+stderr, "s3cret") {
				t.Errorf("the password is shown: %q", stdout+stderr)
			}
			for _, w := range []string{c.want, "user:password@", "STAC_MCP_HEADERS"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
		})
	}
}

// A key in the default catalog's query is redacted in the startup log line.
func TestStartupLogRedactsTheCatalogKey(t *testing.T) {
	t.Parallel()
	code, _, stderr := runForTest(t, nil, "--catalog", "https://stac.example/v1?api_key=K3Y", "stdio")
	if code != 0 {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
	if strings.Contains(stderr, "K3Y") || !strings.Contains(stderr, "api_key=REDACTED") {
		t.Errorf("startup log: %q", stderr)
	}
}
