package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

// TestEveryPackageHasAComment checks that every package of the module
// (commands included, as "Command x …") has a package comment, so that a
// newcomer reading `go doc` or a directory learns what the package is for
// (docs/development.md's "Where to change X" table names packages by path
// and leaves the rest to their comments).
func TestEveryPackageHasAComment(t *testing.T) {
	root := reporoot.ForTest(t)
	type pkg struct{ files, documented int }
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{}
			pkgs[rel] = p
		}
		p.files++
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			p.documented++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 40 {
		t.Fatalf("found %d packages under %s; expected the whole module", len(pkgs), root)
	}
	for dir, p := range pkgs {
		if p.documented == 0 {
			t.Errorf("%s: no package comment in any of its %d files; add a doc.go saying what the package is for", dir, p.files)
		}
	}
}
