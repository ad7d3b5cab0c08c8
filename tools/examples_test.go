package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// descriptionExamples returns the JSON objects that follow "Example:" in a
// tool's description, in order.
func descriptionExamples(t *testing.T, tool, desc string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for rest := desc; ; {
		i := strings.Index(rest, "Example:")
		if i < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[i+len("Example:"):], " ")
		dec := json.NewDecoder(strings.NewReader(rest))
		var args map[string]any
		if err := dec.Decode(&args); err != nil {
			t.Errorf("%s: the example after %q is not a JSON object: %v", tool, "Example:", err)
			return out
		}
		out = append(out, args)
		rest = rest[dec.InputOffset():]
	}
}

// A newcomer tries a tool's own example first, often on the offline demo:
// every example in a read tool's description must succeed there as
// written. (The write tools' examples change a catalog; their arguments
// are checked by the write tests.)
func TestEveryToolExampleRunsOnTheDemo(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{Export: ExportSettings{Dir: t.TempDir()}})
	tried := 0
	for _, tool := range Inventory() {
		if tool.Def.Annotations != nil && !tool.Def.Annotations.ReadOnlyHint && tool.Def.Name != "export" {
			continue
		}
		examples := descriptionExamples(t, tool.Def.Name, tool.Def.Description)
		if len(examples) == 0 {
			t.Errorf("%s: its description has no example", tool.Def.Name)
		}
		for _, args := range examples {
			tried++
			res := callTool(t, cs, tool.Def.Name, args)
			if res.IsError {
				t.Errorf("%s%v on the demo: %s", tool.Def.Name, args, resultText(res))
			}
		}
	}
	if tried < 15 {
		t.Errorf("only %d examples tried", tried)
	}
}
