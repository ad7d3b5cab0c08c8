package tools

import (
	"slices"
	"testing"
)

// toolsListModelBudget is the budget for what tools/list puts in a
// model's prompt before any work: the names, descriptions and input
// schemas of the default tool set, as compact JSON. Issue 11 set 12 KB,
// read as 12 000 bytes; issue 26 raised it to 14 000 for the pixels
// toolset (adr/0027) and wave 4 (places, federated search, seasons, data
// out) to 16 000 (adr/0034; adr/0042 notes the export tool's share, at most 700).
const toolsListModelBudget = 16_000

// TestToolsListBudget holds the default tool set to the budget. The default
// is every toolset (--toolsets all): discover, search, size, visual, pixels and ops;
// the write toolset is listed only with --allow-writes, so its cost is
// logged, not budgeted. When the test fails, shorten descriptions (the
// shared argument forms belong in instructions.md, once) rather than raise
// the budget. BenchmarkToolsListBytes (bench/) reports the same figure, and
// tools/internal/gen (go generate) writes both figures into
// docs/configuration.md.
func TestToolsListBudget(t *testing.T) {
	t.Parallel()
	listed := listTools(t, newTestSession(t, testSessionOptions{}))
	var names []string
	for _, tool := range listed {
		names = append(names, tool.Name)
	}
	for _, tool := range Inventory() {
		if !slices.Contains(names, tool.Def.Name) {
			t.Errorf("the default surface lacks %s (toolset %s): the budget must cover every read-only toolset", tool.Def.Name, tool.Toolset)
		}
	}
	total := PromptBytes(listed)
	if total > toolsListModelBudget {
		t.Errorf("tools/list costs %d bytes of names, descriptions and input schemas, over the %d budget", total, toolsListModelBudget)
	}
	t.Logf("tools_list_model_bytes = %d for %d tools (budget %d)", total, len(listed), toolsListModelBudget)
	withWrites := listTools(t, newTestSession(t, testSessionOptions{Writes: sqliteWrites(t, t.TempDir())}))
	t.Logf("with --allow-writes: %d bytes for %d tools (not budgeted)", PromptBytes(withWrites), len(withWrites))
}
