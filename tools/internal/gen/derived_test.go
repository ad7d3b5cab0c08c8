package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

// These tests read the committed files and never write them: they fail
// when a file differs from what `go generate ./...` (this package's
// program) would write, so CI never blesses a schema or a table nobody
// looked at.

const regenerate = "run go generate ./... and review the diff"

func testRoot(t *testing.T) string {
	t.Helper()
	root, err := reporoot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func testSurface(t *testing.T) surface {
	t.Helper()
	s, err := listSurface(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkFile fails t when the committed file is not f's content.
func checkFile(t *testing.T, root string, f derivedFile) {
	t.Helper()
	have, err := f.committed(root)
	switch {
	case err != nil:
		t.Fatal(err)
	case f.want == nil && have != nil:
		t.Errorf("%s is not generated any more; %s", f.path, regenerate)
	case f.want != nil && have == nil:
		t.Errorf("%s is missing; %s", f.path, regenerate)
	case f.want != nil && !f.upToDate(have):
		t.Errorf("%s is out of date with the code; %s:\n%s", f.path, regenerate, firstDifference(string(have), string(f.want)))
	}
}

// TestToolSnapshots: every tool a server with writes allowed lists (so the
// write tools, listed only with --allow-writes, are pinned too;
// TestWriteToolsAreListedOnlyWithWritesAllowed in package tools checks
// that a read-only server lists none of them) has its snapshot, and there
// is no other.
func TestToolSnapshots(t *testing.T) {
	root := testRoot(t)
	files, err := snapshotFiles(root, testSurface(t).withWrites)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f.path), ".snap"), func(t *testing.T) { checkFile(t, root, f) })
	}
}

// TestReadmeToolsTableMatchesInventoryDocs fails when a generated part of
// a doc drifts from the inventory: the read tools in the README and in
// docs/tools.md, the write tools in docs/writes.md, the toolsets in
// docs/configuration.md, and there what the default tool set and the one
// with --allow-writes cost a model's context (TestToolsListBudget's
// measure).
func TestReadmeToolsTableMatchesInventoryDocs(t *testing.T) {
	root := testRoot(t)
	for _, e := range docEdits(testSurface(t)) {
		files, err := docFiles(root, []docEdit{e})
		if err != nil {
			t.Error(err)
			continue
		}
		have, err := files[0].committed(root)
		if err != nil {
			t.Fatal(err)
		}
		if !files[0].upToDate(have) {
			t.Errorf("%s: %s is out of date with the inventory; %s:\n%s", e.doc, e.what, regenerate, firstDifference(string(have), string(files[0].want)))
		}
	}
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

// TestMarkerBlockAndFigureEdits: the edits replace exactly their part of a
// doc, and refuse a doc that lost its markers or states a figure twice.
func TestMarkerBlockAndFigureEdits(t *testing.T) {
	doc := "intro\n<!-- t:start -->\nold\n<!-- t:end -->\ncosts 1 bytes of names, descriptions and input schemas (2 bytes in all).\n"
	text, err := markerBlock("d.md", "t", "new\n").apply(doc)
	if err != nil || text != "intro\n<!-- t:start -->\nnew\n<!-- t:end -->\ncosts 1 bytes of names, descriptions and input schemas (2 bytes in all).\n" {
		t.Errorf("markerBlock: %q, %v", text, err)
	}
	text, err = statedFigure("d.md", "cost", costOfDefault, 12345).apply(text)
	if err == nil {
		text, err = statedFigure("d.md", "cost", costWithWrites, 1234567).apply(text)
	}
	if err != nil || !strings.Contains(text, "costs 12,345 bytes of names") || !strings.Contains(text, "(1,234,567 bytes in all)") {
		t.Errorf("statedFigure: %q, %v", text, err)
	}
	if _, err := markerBlock("d.md", "other", "x").apply(doc); err == nil {
		t.Error("markerBlock accepted a doc without its markers")
	}
	if _, err := statedFigure("d.md", "cost", costWithWrites, 1).apply(doc + doc); err == nil {
		t.Error("statedFigure accepted a figure stated twice")
	}
}

// firstDifference shows the first differing line with a little context.
func firstDifference(committed, rendered string) string {
	w, g := strings.Split(committed, "\n"), strings.Split(rendered, "\n")
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
			return fmt.Sprintf("line %d:\n%s\n- committed: %s\n+ rendered:  %s", i+1, ctx, wl, gl)
		}
	}
	return "(equal)"
}
