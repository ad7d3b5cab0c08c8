package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// These tests read the committed files and never write them: they fail
// when manifest.json or server.json differs from what `go generate ./...`
// (this package's program) would write. The docs' images are compared by
// cmd/stac-mcp's TestDocCommands, which runs their commands in-process.

// TestManifestMatchesInventoryAndSettings: manifest.json is the one the
// tools, prompts and settings make; and so is server.json, the registry
// entry, whose variables are the bundle form's.
func TestManifestMatchesInventoryAndSettings(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := bundleFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		ok, have, err := f.upToDate(root)
		switch {
		case err != nil:
			t.Fatal(err)
		case have == nil:
			t.Errorf("%s is missing; run go generate ./...", f.path)
		case !ok:
			t.Errorf("%s is out of date with the tools, prompts or settings; run go generate ./... and review the diff:\n%s",
				f.path, firstDifference(string(have), string(f.want)))
		}
	}
}

// firstDifference shows the first differing line with a little context.
func firstDifference(committed, rendered string) string {
	c, r := strings.Split(committed, "\n"), strings.Split(rendered, "\n")
	for i := 0; i < max(len(c), len(r)); i++ {
		var cl, rl string
		if i < len(c) {
			cl = c[i]
		}
		if i < len(r) {
			rl = r[i]
		}
		if cl != rl {
			ctx := strings.Join(r[max(0, i-3):min(i, len(r))], "\n")
			return fmt.Sprintf("line %d:\n%s\n- committed: %s\n+ rendered:  %s", i+1, ctx, cl, rl)
		}
	}
	return "(equal)"
}
