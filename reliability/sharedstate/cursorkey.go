package sharedstate

import (
	"context"
	"encoding/hex"
	"fmt"
)

// minCursorKeyBytes is the shortest shared cursor key accepted.
const minCursorKeyBytes = 32

// CursorKey returns the key the replicas sign cursors with when none is
// configured (adr/0016): the one stored in Redis, or candidate, stored
// first if there is none (SET NX, no expiry). Every replica that calls it
// against the same Redis gets the same key. Calling it again with the key
// in use puts it back if Redis lost it (a restart without persistence),
// and reports a different key if another replica stored one meanwhile.
func (s *Store) CursorKey(ctx context.Context, candidate []byte) ([]byte, error) {
	if len(candidate) < minCursorKeyBytes {
		return nil, fmt.Errorf("shared state: a cursor key needs %d bytes, got %d", minCursorKeyBytes, len(candidate))
	}
	k := s.key("cursor-key")
	if err := s.client.SetNX(ctx, k, hex.EncodeToString(candidate), 0).Err(); err != nil {
		return nil, s.wrap("cursor key", err)
	}
	raw, err := s.client.Get(ctx, k).Result()
	if err != nil {
		return nil, s.wrap("cursor key", err)
	}
	key, err := hex.DecodeString(raw)
	if err != nil || len(key) < minCursorKeyBytes {
		return nil, fmt.Errorf("shared state (Redis %s): %s does not hold a cursor key (%d hex digits); delete it and restart a replica to make a new one",
			s.Addr(), k, 2*minCursorKeyBytes)
	}
	return key, nil
}
