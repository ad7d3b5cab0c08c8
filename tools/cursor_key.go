package tools

import (
	"slices"
	"sync"

	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

// The key cursors are signed with. cmd chooses its source for each command
// (STAC_MCP_CURSOR_KEY, the key file in the state directory, the key the
// http replicas share in Redis, or one for this process: see
// cmd/stac-mcp/cursorkey.go); the token and the key file are
// tools/internal/cursor's.

// cursorKeyState holds the process's cursor key, made on first use.
type cursorKeyState struct {
	once sync.Once
	key  []byte
}

// cursorKey is Deps.CursorKey, or a random key for this process when none
// was configured (cursors then die with the process: adr/0009).
func (d *Deps) cursorKey() []byte {
	d.cursorKeys.once.Do(func() {
		if len(d.CursorKey) > 0 {
			d.cursorKeys.key = slices.Clone(d.CursorKey)
		} else {
			d.cursorKeys.key = cursor.NewKey()
		}
	})
	return d.cursorKeys.key
}

// NewCursorKey returns a random 32-byte key for Deps.CursorKey.
func NewCursorKey() []byte { return cursor.NewKey() }

// CursorKeyFile is the name of the key file in the state directory.
const CursorKeyFile = cursor.KeyFile

// LoadCursorKeyFile reads the cursor key kept at path, creating it (0600,
// in a 0700 directory) when it does not exist; it refuses a file others
// may read or write, since they could forge cursors.
func LoadCursorKeyFile(path string) ([]byte, error) { return cursor.LoadOrCreateKeyFile(path) }
