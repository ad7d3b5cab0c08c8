package main

import (
	"context"
	"crypto/hmac"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/reliability/sharedstate"
	"github.com/stacmcp/stac-mcp/tools"
)

// Cursors are signed (adr/0009). Which key signs them:
//   - STAC_MCP_CURSOR_KEY when set: replicas of an http deployment share it;
//   - http without it, with STAC_MCP_REDIS_URL: one key the replicas share
//     through Redis (sharedCursorKey; adr/0016);
//   - http without either: a random key per process (cursors end with it);
//   - stdio and call without it: a key kept in the user's state directory
//     (cursor.key, 0600), so a cursor printed by one `stac-mcp call`
//     continues in the next, and a Claude Desktop conversation survives a
//     server restart. If that file cannot be used, a random key, with a
//     warning.
//
// This file is that policy; the key file itself (its checks, its atomic
// creation) and the token are tools/internal/cursor's, reached through
// tools.LoadCursorKeyFile.

// stateDir is where stac-mcp keeps state for the user: $XDG_STATE_HOME
// (XDG base directories), else the platform's per-user application
// directory. Empty when the environment names none.
func stateDir(env func(string) (string, bool)) string {
	get := func(name string) string {
		v, _ := env(name)
		return strings.TrimSpace(v)
	}
	if d := get("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "stac-mcp")
	}
	switch runtime.GOOS {
	case "windows":
		if d := get("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "stac-mcp")
		}
		return ""
	case "darwin":
		if h := get("HOME"); filepath.IsAbs(h) {
			return filepath.Join(h, "Library", "Application Support", "stac-mcp")
		}
		return ""
	}
	if h := get("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "stac-mcp")
	}
	return ""
}

// cursorKeyFor returns the key for cfg's command, logging where it comes
// from (never the key itself). nil means a random key for this process.
func cursorKeyFor(cfg *config, log zerolog.Logger) []byte {
	if cfg.CursorKey != "" {
		return []byte(cfg.CursorKey)
	}
	switch cfg.Command {
	case "", "stdio", "call":
	default:
		return nil
	}
	if cfg.StateDir == "" {
		log.Warn().Msg("no state directory (HOME or XDG_STATE_HOME unset): cursors are signed with a key of this process only and end with it; set " + settings.EnvCursorKey + " to keep them")
		return nil
	}
	path := filepath.Join(cfg.StateDir, tools.CursorKeyFile)
	key, err := tools.LoadCursorKeyFile(path)
	if err != nil {
		log.Warn().Err(err).Str("path", path).Msg("cannot use the cursor key file: cursors are signed with a key of this process only; set " + settings.EnvCursorKey + " to keep them")
		return nil
	}
	return key
}

// cursorKeySource names, for the http startup log, what signs cursors:
// the configured key, the key the replicas share in Redis, or one made for
// this process, which other replicas do not have (they refuse its cursors)
// and which ends with the process.
func cursorKeySource(cfg *config, sharedKey bool) string {
	switch {
	case cfg.CursorKey != "":
		return settings.EnvCursorKey
	case sharedKey:
		return "redis"
	}
	return "per-process"
}

// sharedCursorKeyEvery is how often an http replica puts the shared
// cursor key back into Redis if Redis lost it.
const sharedCursorKeyEvery = 30 * time.Second

// sharedCursorKey is the cursor key the http replicas of a deployment
// share through Redis when STAC_MCP_CURSOR_KEY is not set: the first
// replica stores a random key (SET NX, no expiry), the others read it.
// Redis must then be as private as the key (anyone who reads it can sign
// cursors, which bounds what a cursor can do: adr/0009). If Redis does
// not answer at startup the process signs with a key of its own, which
// the other replicas refuse, and says so.
//
// The returned keep func runs while http serves: it puts the key back
// when Redis lost it (restart without persistence), and warns when
// another replica stored a different key meanwhile (a replica that started
// while the key was gone): cursors then continue only on replicas with the
// same key until the odd ones restart. STAC_MCP_CURSOR_KEY avoids both.
func sharedCursorKey(ctx context.Context, store *sharedstate.Store, log zerolog.Logger) ([]byte, func(context.Context)) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	key, err := store.CursorKey(ctx, tools.NewCursorKey())
	if err != nil {
		log.Error().Str("event", "cursor_key_per_process").Err(err).
			Msg("the cursor key shared through Redis cannot be read: this replica signs cursors with a key of its own, which the other replicas refuse, until it restarts with Redis answering; set " + settings.EnvCursorKey + " on every replica to avoid this")
		return nil, nil
	}
	log.Info().Str("event", "cursor_key_shared").Msg("cursors are signed with the key the replicas share in Redis")
	keep := func(ctx context.Context) {
		t := time.NewTicker(sharedCursorKeyEvery)
		defer t.Stop()
		warned := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			c, cancel := context.WithTimeout(ctx, 3*time.Second)
			now, err := store.CursorKey(c, key)
			cancel()
			switch {
			case err != nil:
				log.Debug().Err(err).Msg("cannot check the shared cursor key")
			case !hmac.Equal(now, key) && !warned:
				warned = true
				log.Error().Str("event", "cursor_key_diverged").
					Msg("Redis holds another cursor key than this replica's (it lost its data and another replica started meanwhile): cursors continue only on replicas with the same key; restart this replica, or set " + settings.EnvCursorKey + " on every replica")
			}
		}
	}
	return key, keep
}
