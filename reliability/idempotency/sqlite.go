package idempotency

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// DBFile is the file name of the SQLite store inside its directory.
const DBFile = "idempotency.db"

// SQLite is the embedded store: one database file in a directory of the
// user's (STAC_MCP_STATE_DIR). Records survive restarts, which is what lets
// a call after a crash or a reconnect find the outcome of the call before
// it. Several processes may share the file: every Begin runs in an
// IMMEDIATE transaction (one writer at a time, the others wait up to the
// busy timeout).
type SQLite struct {
	db   *sql.DB
	opts Options
	path string

	purgeMu   sync.Mutex
	lastPurge time.Time
}

// purgeEvery is how often Begin deletes expired records.
const purgeEvery = 10 * time.Minute

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS idempotency (
	caller      TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	key         TEXT    NOT NULL,
	state       TEXT    NOT NULL,
	fingerprint TEXT    NOT NULL,
	token       TEXT    NOT NULL,
	lease_until INTEGER NOT NULL, -- unix milliseconds
	outcome     BLOB,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	PRIMARY KEY (caller, tool, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_expires_at ON idempotency (expires_at);`

// OpenSQLite opens (creating if needed) the store in dir, which is created
// with mode 0700: the records hold the outcomes of the user's writes. ctx
// bounds creating the schema and purging expired records, which take at
// most 15 s besides.
func OpenSQLite(ctx context.Context, dir string, opts Options) (*SQLite, error) {
	if strings.ContainsRune(dir, '?') {
		return nil, fmt.Errorf("idempotency store: the directory %q contains '?', which the SQLite driver reads as the start of its options; choose another STAC_MCP_STATE_DIR", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("idempotency store: creating the state directory: %w", err)
	}
	path := filepath.Join(dir, DBFile)
	// WAL lets readers and the one writer proceed together; synchronous=FULL
	// makes a stored outcome durable once Finish returns; the busy timeout
	// lets another process's transaction finish instead of failing at once.
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("idempotency store %s: %w", path, err)
	}
	s := &SQLite{db: db, opts: opts.withDefaults(), path: path}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("idempotency store %s: creating the schema: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
		db.Close()
		return nil, fmt.Errorf("idempotency store %s: %w", path, err)
	}
	if err := s.purge(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// Begin implements Store.
func (s *SQLite) Begin(ctx context.Context, k Key, fingerprint string, lease time.Duration) (Claim, error) {
	if err := k.validate(); err != nil {
		return Claim{}, err
	}
	s.maybePurge(ctx)
	now := s.opts.Now()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock): the read and the claim are one step
	if err != nil {
		return Claim{}, s.wrap("begin", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op

	var rec *Record
	var r Record
	var state string
	var lease64, created, expires int64
	err = tx.QueryRowContext(ctx, `SELECT state, fingerprint, token, lease_until, outcome, created_at, expires_at
		FROM idempotency WHERE caller = ? AND tool = ? AND key = ?`, k.Caller, k.Tool, k.Key).
		Scan(&state, &r.Fingerprint, &r.Token, &lease64, &r.Outcome, &created, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return Claim{}, s.wrap("read", err)
	default:
		r.State, r.LeaseUntil, r.CreatedAt, r.ExpiresAt = State(state), fromMillis(lease64), fromMillis(created), fromMillis(expires)
		rec = &r
	}
	status := decide(rec, fingerprint, now)
	claim := Claim{Status: status}
	if rec != nil && status != Claimed {
		claim.Record = *rec
	}
	if status != Claimed && status != Recovering {
		return claim, nil // nothing written; the deferred rollback ends the transaction
	}
	if status == Claimed {
		if err := s.checkBounds(ctx, tx, k.Caller, now); err != nil {
			return Claim{}, err
		}
	}
	claim.Token = newToken()
	n := claimed(rec, fingerprint, claim.Token, lease, now, s.opts.TTL)
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO idempotency
		(caller, tool, key, state, fingerprint, token, lease_until, outcome, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
		k.Caller, k.Tool, k.Key, string(n.State), n.Fingerprint, n.Token, millis(n.LeaseUntil), millis(n.CreatedAt), millis(n.ExpiresAt)); err != nil {
		return Claim{}, s.wrap("claim", err)
	}
	if err := tx.Commit(); err != nil {
		return Claim{}, s.wrap("commit", err)
	}
	return claim, nil
}

// checkBounds refuses a new record beyond Options.MaxPerCaller or MaxTotal
// live records (the primary key and the expires_at index serve the counts).
func (s *SQLite) checkBounds(ctx context.Context, tx *sql.Tx, caller string, now time.Time) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM idempotency WHERE caller = ? AND expires_at > ?`, caller, millis(now)).Scan(&n); err != nil {
		return s.wrap("count", err)
	}
	if n >= s.opts.MaxPerCaller {
		return &LimitError{Scope: "caller", Count: n, Max: s.opts.MaxPerCaller, TTL: s.opts.TTL}
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM idempotency WHERE expires_at > ?`, millis(now)).Scan(&n); err != nil {
		return s.wrap("count", err)
	}
	if n >= s.opts.MaxTotal {
		return &LimitError{Scope: "store", Count: n, Max: s.opts.MaxTotal, TTL: s.opts.TTL}
	}
	return nil
}

// Finish implements Store.
func (s *SQLite) Finish(ctx context.Context, k Key, token string, outcome []byte, ttl time.Duration) error {
	now := s.opts.Now()
	return s.update(ctx, "finish", `UPDATE idempotency SET state = 'done', token = '', lease_until = 0, outcome = ?, expires_at = ?
		WHERE caller = ? AND tool = ? AND key = ? AND token = ? AND state = 'in_flight'`,
		outcome, millis(now.Add(s.opts.outcomeTTL(ttl))), k.Caller, k.Tool, k.Key, token)
}

// Abandon implements Store.
func (s *SQLite) Abandon(ctx context.Context, k Key, token string) error {
	return s.update(ctx, "abandon", `UPDATE idempotency SET state = 'unknown', token = '', lease_until = 0
		WHERE caller = ? AND tool = ? AND key = ? AND token = ? AND state = 'in_flight'`,
		k.Caller, k.Tool, k.Key, token)
}

// Release implements Store.
func (s *SQLite) Release(ctx context.Context, k Key, token string) error {
	return s.update(ctx, "release", `DELETE FROM idempotency
		WHERE caller = ? AND tool = ? AND key = ? AND token = ? AND state = 'in_flight'`,
		k.Caller, k.Tool, k.Key, token)
}

// update runs one statement that must change exactly the held record.
func (s *SQLite) update(ctx context.Context, what, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return s.wrap(what, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.wrap(what, err)
	} else if n != 1 {
		return ErrNotHolder
	}
	return nil
}

// maybePurge deletes expired records every purgeEvery; a failure is left
// for the next time (expired records are ignored by Begin anyway).
func (s *SQLite) maybePurge(ctx context.Context) {
	s.purgeMu.Lock()
	due := s.opts.Now().Sub(s.lastPurge) >= purgeEvery
	s.purgeMu.Unlock()
	if due {
		_ = s.purge(ctx)
	}
}

func (s *SQLite) purge(ctx context.Context) error {
	now := s.opts.Now()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM idempotency WHERE expires_at <= ?`, millis(now)); err != nil {
		return s.wrap("purge", err)
	}
	s.purgeMu.Lock()
	s.lastPurge = now
	s.purgeMu.Unlock()
	return nil
}

func (s *SQLite) wrap(what string, err error) error {
	return fmt.Errorf("idempotency store %s: %s: %w", s.path, what, err)
}
