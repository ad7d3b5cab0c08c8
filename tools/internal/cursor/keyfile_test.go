package cursor

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The key file is made once, private, and kept: every later read, and
// every process racing to make it, gets the same key.
func TestKeyFileIsMadeOncePrivateAndShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", KeyFile)
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			var err error
			if keys[i], err = LoadOrCreateKeyFile(path); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("keys %x; want one 32-byte key for every caller", keys)
		}
	}
	if again, err := LoadOrCreateKeyFile(path); err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("read again: %x, %v; want the same key", again, err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", dir.Mode().Perm())
	}
}

// A key file others could read, or one that holds no key, is refused with
// what to do, and left as it is.
func TestKeyFileRefusesWhatCouldBeForgedOrIsNoKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := map[string]struct{ path, want string }{
		"not hex":   {write("a", "not a key\n", 0o600), "does not hold a key"},
		"too short": {write("b", strings.Repeat("ab", 16)+"\n", 0o600), "does not hold a key"},
		"too large": {write("c", strings.Repeat("a", 2000), 0o600), "not a key file"},
		"directory": {dir, "not a regular file"},
	}
	if runtime.GOOS != "windows" {
		cases["readable by others"] = struct{ path, want string }{write("d", strings.Repeat("ab", 32)+"\n", 0o644), "chmod 600"}
	}
	for name, c := range cases {
		before, _ := os.ReadFile(c.path)
		key, err := LoadOrCreateKeyFile(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: key %x, err %v; want a refusal saying %q", name, key, err, c.want)
		}
		if after, _ := os.ReadFile(c.path); !bytes.Equal(before, after) {
			t.Errorf("%s: the file was changed", name)
		}
	}
}
