package main

import (
	"strings"
	"testing"
)

// The README and the HTTP guide say how Claude Desktop,
// which starts stdio servers only, reaches `stac-mcp http`.
func TestDocsSayHowClaudeDesktopReachesHTTP(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/http.md"} {
		text := readDoc(t, doc)
		if !strings.Contains(text, "mcp-remote http://127.0.0.1:8080/mcp") && !strings.Contains(text, `"mcp-remote", "http://127.0.0.1:8080/mcp", "--allow-http"`) {
			t.Errorf("%s does not show mcp-remote reaching http://127.0.0.1:8080/mcp", doc)
		}
		if !strings.Contains(text, "--allow-http") {
			t.Errorf("%s does not say --allow-http", doc)
		}
	}
}
