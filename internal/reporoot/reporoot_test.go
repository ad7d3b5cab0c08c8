package reporoot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirFindsTheModuleRoot(t *testing.T) {
	dir := ForTest(t)
	if want, _ := filepath.Abs(filepath.Join("..", "..")); dir != want {
		t.Fatalf("Dir = %s, want %s (two levels up from internal/reporoot)", dir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "stac-mcp")); err != nil {
		t.Fatalf("the root %s has no cmd/stac-mcp: %v", dir, err)
	}
}

func TestDirPassesOverAnotherModule(t *testing.T) {
	other := filepath.Join(ForTest(t), "scripts", "lint")
	if !declaresModule(filepath.Join(ForTest(t), "go.mod")) {
		t.Fatal("the root go.mod does not declare " + Module)
	}
	if declaresModule(filepath.Join(other, "go.mod")) {
		t.Fatalf("%s/go.mod taken for %s", other, Module)
	}
	t.Chdir(other)
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Join(dir, "scripts", "lint") != other {
		t.Fatalf("Dir from %s = %s, want the repository root", other, dir)
	}
}
