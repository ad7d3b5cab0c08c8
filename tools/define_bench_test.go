package tools

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkDefinePlumbing is the cost of the MCP path alone: a tool whose
// handler does no I/O, called through the SDK's in-memory transport, the
// middlewares, define()'s catalog resolution, the reliability layer's Run
// and output-schema validation. bench/ measures real tools against a STAC
// server; this isolates what the plumbing adds to them.
//
//	go test -run '^$' -bench DefinePlumbing ./tools/
func BenchmarkDefinePlumbing(b *testing.B) {
	tool := define(&mcp.Tool{Name: "noop", Description: "Example: {}"}, false,
		func(ctx context.Context, c *Call, in probeIn) (probeOut, string, error) {
			return probeOut{Name: c.Catalog.Name, URL: c.Catalog.URL, Tags: []string{"a", "b"}}, "noop", nil
		})
	// A remote URL is resolved without contacting it; the handler never does.
	cs := newTestSession(b, testSessionOptions{CatalogURL: "https://stac.example.invalid/v1", Tools: []Tool{tool}})
	args := map[string]any{}
	for b.Loop() {
		if res := callTool(b, cs, "noop", args); res.IsError {
			b.Fatal(resultText(res))
		}
	}
}
