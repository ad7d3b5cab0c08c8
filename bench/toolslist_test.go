package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

// BenchmarkToolsListBytes reports what tools/list costs a model's context
// before any work, for the default tool set: tools_list_model_bytes is the
// names, descriptions and input schemas (what a host puts in the model's
// prompt), as compact JSON; tools_list_bytes is the whole tools/list
// result (titles, annotations and output schemas too). Issue 11's budget
// for tools_list_model_bytes is 12 KB (read as 12,000 bytes); TestToolsListBudget in
// tools/ holds it.
//
//	go test -run '^$' -bench ToolsListBytes -benchtime 3x ./bench/
func BenchmarkToolsListBytes(b *testing.B) {
	deps := newBenchDeps(b, tools.DemoCatalog, reliability.DefaultPolicy(), nil, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100})
	cs := connectInMemory(b, tools.NewServer(deps, "bench"), "bench")
	var model, full, count int
	for b.Loop() {
		res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		full, count, model = len(raw), len(res.Tools), tools.PromptBytes(res.Tools)
	}
	instructions := len(cs.InitializeResult().Instructions)
	b.ReportMetric(float64(count), "tools")
	b.ReportMetric(float64(model), "tools_list_model_bytes")
	b.ReportMetric(float64(full), "tools_list_bytes")
	b.ReportMetric(float64(instructions), "instructions_bytes")
}
