// Package reporoot finds the root of the stac-mcp repository from the
// working directory, for the programs and tests that read or write the
// repository's files: go generate runs a generator in its package's
// directory, go test a test in its package's, and go run a script wherever
// the caller stands.
package reporoot

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Module is the module path whose go.mod marks the root.
const Module = "github.com/stacmcp/stac-mcp"

// Dir is the nearest directory up from the working directory whose go.mod
// declares Module (a go.mod of another module on the way, such as
// scripts/lint's, is passed over).
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declaresModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run inside the stac-mcp repository (no go.mod of " + Module + " above the working directory)")
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod at path declares Module.
func declaresModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == Module
		}
	}
	return false
}

// ForTest is Dir for a test, failing it when there is no root.
func ForTest(tb testing.TB) string {
	tb.Helper()
	dir, err := Dir()
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}
