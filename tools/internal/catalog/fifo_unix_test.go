//go:build unix

package catalog

import (
	"path/filepath"
	"syscall"
	"testing"
)

func makeFIFO(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "catalog.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Logf("mkfifo: %v", err)
		return ""
	}
	return path
}
