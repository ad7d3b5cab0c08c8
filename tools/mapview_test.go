package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools/internal/mapview"
)

// TestMapViewIsLinkedDeclaredAndServed checks the MCP Apps wiring (issue
// 27): the extension in the server's capabilities, _meta.ui.resourceUri on
// exactly the tools whose results the view shows, and the ui:// resource
// serving the embedded HTML with the MCP Apps MIME type.
func TestMapViewIsLinkedDeclaredAndServed(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	if _, ok := cs.InitializeResult().Capabilities.Extensions[mapview.Extension]; !ok {
		t.Errorf("capabilities.extensions lacks %s: %+v", mapview.Extension, cs.InitializeResult().Capabilities)
	}
	linked := map[string]bool{"map_items": true, "search_items": true, "check_coverage": true}
	for _, tool := range listTools(t, cs) {
		ui, _ := tool.Meta["ui"].(map[string]any)
		uri, _ := ui["resourceUri"].(string)
		flat, _ := tool.Meta["ui/resourceUri"].(string)
		switch {
		case linked[tool.Name] && (uri != MapViewURI || flat != MapViewURI):
			t.Errorf("%s: _meta %v, want ui.resourceUri and ui/resourceUri %s", tool.Name, tool.Meta, MapViewURI)
		case !linked[tool.Name] && tool.Meta != nil:
			t.Errorf("%s: unexpected _meta %v", tool.Name, tool.Meta)
		}
		delete(linked, tool.Name)
	}
	if len(linked) > 0 {
		t.Errorf("not listed: %v", linked)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: MapViewURI})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%d contents, want 1", len(res.Contents))
	}
	c := res.Contents[0]
	if c.URI != MapViewURI || c.MIMEType != "text/html;profile=mcp-app" || c.Text != mapview.HTML || !strings.HasPrefix(c.Text, "<!doctype html>") {
		t.Errorf("read %s: URI %q, MIME %q, %d bytes (embedded: %d)", MapViewURI, c.URI, c.MIMEType, len(c.Text), len(mapview.HTML))
	}
	// No CSP domains: hosts then allow no network at all.
	if ui, _ := c.Meta["ui"].(map[string]any); ui == nil || ui["csp"] != nil {
		t.Errorf("content _meta %v: want ui without csp", c.Meta)
	}
}

// TestMapViewLinkCostsTheToolListNothing: the link lives in _meta, which
// PromptBytes (the budget's measure: names, descriptions, input schemas)
// does not count; the test fails if the budget ever starts counting it
// or the link moves into a description.
func TestMapViewLinkCostsTheToolListNothing(t *testing.T) {
	t.Parallel()
	listed := listTools(t, newTestSession(t, testSessionOptions{}))
	with := PromptBytes(listed)
	stripped := make([]*mcp.Tool, len(listed))
	for i, tool := range listed {
		c := *tool
		c.Meta = nil
		stripped[i] = &c
		if strings.Contains(tool.Description, "ui://") {
			t.Errorf("%s: the view's URI is in the description", tool.Name)
		}
	}
	if without := PromptBytes(stripped); with != without {
		t.Errorf("tool list costs %d bytes with the view's _meta, %d without", with, without)
	}
}

// TestMapItemsAnswersTheSameWithOrWithoutMCPApps: a host declaring the MCP
// Apps extension and one that does not get the same map_items result, PNG
// and legend text included (the view fetches its footprints itself); the
// golden maps pin what that result is.
func TestMapItemsAnswersTheSameWithOrWithoutMCPApps(t *testing.T) {
	t.Parallel()
	d := newTestDeps(t, testSessionOptions{})
	server := newServer(d, "test", Tools(d))
	apps := &mcp.ClientCapabilities{}
	apps.AddExtension(mapview.Extension, map[string]any{"mimeTypes": []string{mapview.MIMEType}})
	args := map[string]any{"collections": []string{"sentinel-2-l2a"}, "aoi": []float64{-40.5, -5.3, -37.5, -3.5}}
	var results []*mcp.CallToolResult
	for _, opts := range []*mcp.ClientOptions{nil, {Capabilities: apps}} {
		cs := connectWithOptions(t, server, opts)
		results = append(results, callOK(t, cs, "map_items", args))
	}
	plain, withApps := results[0], results[1]
	if len(plain.Content) != 2 || len(withApps.Content) != len(plain.Content) {
		t.Fatalf("content blocks: %d without MCP Apps, %d with; want 2 (text and PNG)", len(plain.Content), len(withApps.Content))
	}
	for i := range plain.Content {
		a, _ := plain.Content[i].MarshalJSON()
		b, _ := withApps.Content[i].MarshalJSON()
		if string(a) != string(b) {
			t.Errorf("content block %d differs with MCP Apps declared", i)
		}
	}
	a, _ := json.Marshal(plain.StructuredContent)
	b, _ := json.Marshal(withApps.StructuredContent)
	if string(a) != string(b) {
		t.Errorf("structuredContent differs with MCP Apps declared:\n%s\n%s", a, b)
	}
}
