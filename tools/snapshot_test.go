package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Schema snapshots: every tool's definition as clients see it in tools/list
// (name, title, description, annotations, input and output schema), as
// sorted, indented JSON in __toolsnaps__/<tool>.snap. Any change to what a
// model sees then shows up in review.
//
//	UPDATE_TOOLSNAPS=true go test ./tools/ -run TestToolSnapshots   # rewrite
//
// A missing snapshot is written (and the test passes) locally, but fails
// when CI=true, so CI never blesses a schema nobody looked at.
//
// The session allows writes, so the write tools (listed only with
// --allow-writes) are pinned too; TestWriteToolsAreListedOnlyWithWritesAllowed
// checks that a read-only server lists none of them.
func TestToolSnapshots(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{Writes: sqliteWrites(t, t.TempDir())})
	update := os.Getenv("UPDATE_TOOLSNAPS") == "true"
	inCI := os.Getenv("CI") == "true"
	for _, tool := range listTools(t, cs) {
		t.Run(tool.Name, func(t *testing.T) {
			got, err := sortedJSON(tool)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("__toolsnaps__", tool.Name+".snap")
			want, err := os.ReadFile(path)
			switch {
			case update:
				writeSnapshot(t, path, got)
				return
			case os.IsNotExist(err) && inCI:
				t.Fatalf("snapshot %s is missing; run UPDATE_TOOLSNAPS=true go test ./tools/ and review it", path)
			case os.IsNotExist(err):
				writeSnapshot(t, path, got)
				t.Logf("wrote new snapshot %s; review and commit it", path)
				return
			case err != nil:
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("tool %s differs from %s (UPDATE_TOOLSNAPS=true go test ./tools/ to accept):\n%s",
					tool.Name, path, firstDifference(string(want), string(got)))
			}
		})
	}
}

// sortedJSON renders v with map keys sorted (encoding/json sorts map keys),
// so snapshots do not depend on struct field order.
func sortedJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(generic, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func writeSnapshot(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstDifference shows the first differing line with a little context.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			start := max(0, i-3)
			ctx := strings.Join(g[start:min(i, len(g))], "\n")
			return fmt.Sprintf("line %d:\n%s\n- snapshot: %s\n+ current:  %s", i+1, ctx, wl, gl)
		}
	}
	return "(equal)"
}

func TestSortedJSONIsStableAndSorted(t *testing.T) {
	a, err := sortedJSON(map[string]any{"b": 1, "a": []any{map[string]any{"z": 1, "y": 2}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": [\n    {\n      \"y\": 2,\n      \"z\": 1\n    }\n  ],\n  \"b\": 1\n}\n"
	if string(a) != want {
		t.Errorf("sortedJSON = %q, want %q", a, want)
	}
}
