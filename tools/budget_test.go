package tools

import (
	"encoding/json"
	"testing"
)

// toolsListModelBudget is issue 11's budget for what tools/list puts in a
// model's prompt before any work: the names, descriptions and input
// schemas of the default tool set, as compact JSON.
const toolsListModelBudget = 12 << 10

// TestToolsListBudget holds the default tool set to the budget. When it
// fails, shorten descriptions (the shared argument forms belong in
// instructions.md, once) rather than raise the budget.
// BenchmarkToolsListBytes (bench/) reports the same figure.
func TestToolsListBudget(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{})
	total := 0
	for _, tool := range listTools(t, cs) {
		raw, err := json.Marshal(struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			InputSchema any    `json:"inputSchema"`
		}{tool.Name, tool.Description, tool.InputSchema})
		if err != nil {
			t.Fatal(err)
		}
		total += len(raw)
	}
	if total > toolsListModelBudget {
		t.Errorf("tools/list costs %d bytes of names, descriptions and input schemas, over the %d budget", total, toolsListModelBudget)
	}
	t.Logf("tools_list_model_bytes = %d (budget %d)", total, toolsListModelBudget)
}
