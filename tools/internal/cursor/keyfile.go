package cursor

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// KeyFile is the key file's name inside the state directory: stdio and
// call keep their key there (cmd chooses which command uses it), so a
// cursor printed by one `stac-mcp call` continues in the next, and a
// Claude Desktop conversation survives a server restart.
const KeyFile = "cursor.key"

// LoadOrCreateKeyFile reads the key at path, creating it (0600, in a 0700
// directory) when it does not exist. Two processes starting at once agree
// on one key: the file appears whole, by a hard link, or not at all.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, KeyFile+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // the temporary name: linked to path by then, or abandoned; a leftover holds no key anyone reads
	_, werr := tmp.WriteString(hex.EncodeToString(NewKey()) + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return readKeyFile(path) // ours, or the one another process linked first
}

// readKeyFile reads a key file, refusing one that others may read or
// write (they could forge cursors) or that is not a regular file.
func readKeyFile(path string) ([]byte, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("%s has mode %v: others could read it; make it 0600 (chmod 600) or delete it", path, info.Mode().Perm())
	case info.Size() > 1024:
		return nil, fmt.Errorf("%s is %d bytes, not a key file", path, info.Size())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("%s does not hold a key (64 hex digits); delete it to make a new one", path)
	}
	return key, nil
}
