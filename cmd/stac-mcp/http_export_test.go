package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability/redistest"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func clientWithToken(t *testing.T, token string) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: bearer{token: token, next: tr}}
}

// TestHTTPExportsLiveInRedisForTheirMakerOnly (adr/0042): over http an
// export is written nowhere a client names; it is a resource. With two
// replicas sharing Redis, the one that did not make it serves it to its
// maker (the same token), and to no other caller.
func TestHTTPExportsLiveInRedisForTheirMakerOnly(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	tokenA, tokenB := "export-token-aaaaaaaaaaaaaaaa", "export-token-bbbbbbbbbbbbbbbb"
	env := map[string]string{"STAC_MCP_REDIS_URL": redis.URL, "STAC_MCP_HTTP_TOKEN": tokenA + "," + tokenB}
	one := startHTTPForTest(t, env, "--catalog", "demo", "--log-level", "error")
	two := startHTTPForTest(t, env, "--catalog", "demo", "--log-level", "error")

	maker := connectHTTPAt(t, one.url, clientWithToken(t, tokenA), statelessRevision)
	res := callHTTPTool(t, maker, &mcp.CallToolParams{Name: "export", Arguments: map[string]any{"kind": "items", "collections": "sentinel-2-l2a"}})
	out, _ := res.StructuredContent.(map[string]any)
	uri, _ := out["uri"].(string)
	if !strings.HasPrefix(uri, "stac-mcp://exports/") || out["path"] != nil || out["expires"] == nil {
		t.Fatalf("export over http: %v", out)
	}
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil || link.URI != uri {
		t.Fatalf("no resource_link to %s in %v", uri, res.Content)
	}

	again := connectHTTPAt(t, two.url, clientWithToken(t, tokenA), statelessRevision)
	rr, err := again.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("the maker, on the other replica: %v", err)
	}
	sum := sha256.Sum256([]byte(rr.Contents[0].Text))
	if hex.EncodeToString(sum[:]) != out["sha256"] || rr.Contents[0].MIMEType != "application/geo+json" {
		t.Errorf("the other replica served %d bytes of %s, not the export", len(rr.Contents[0].Text), rr.Contents[0].MIMEType)
	}
	stranger := connectHTTPAt(t, two.url, clientWithToken(t, tokenB), statelessRevision)
	if _, err := stranger.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another caller read the export: %v", err)
	}
}
