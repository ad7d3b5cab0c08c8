// Package idempotency keeps the records that make a write happen once
// whatever the caller retries: one record per (caller, tool, key), holding
// the fingerprint of the arguments, the state of the write and, once it is
// known, its outcome. Two stores implement the one Store interface: SQLite
// on local disk (the embedded default; survives restarts) and Redis (shared
// by replicas). The protocol is in adr/0014-idempotent-writes.md.
//
// A write begins with Begin, which either claims the key (Claimed: send the
// write; Recovering: an earlier attempt's fate is unknown, look before
// sending again) or reports what is already there (Completed with the
// stored outcome, Busy while another call holds it, Conflict when the key
// was used with other arguments). The holder ends its claim with Finish
// (the outcome is stored for the TTL), Abandon (the write may or may not
// have happened: the next Begin recovers) or Release (nothing was sent:
// the record is deleted).
package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Key names one idempotent operation.
type Key struct {
	Caller string // who asked: "stdio", or a hash of the HTTP token identity
	Tool   string // the tool name, e.g. create_item
	Key    string // the client's idempotency key (at most MaxKeyLength bytes)
}

// MaxKeyLength is the longest client key accepted.
const MaxKeyLength = 255

func (k Key) validate() error {
	switch {
	case k.Caller == "" || k.Tool == "":
		return errors.New("idempotency: a key needs a caller and a tool")
	case k.Key == "":
		return errors.New("idempotency: empty key")
	case len(k.Key) > MaxKeyLength:
		return fmt.Errorf("idempotency: key of %d bytes, at most %d", len(k.Key), MaxKeyLength)
	}
	return nil
}

// State is where a write stands.
type State string

const (
	// InFlight: a call holds the key and is sending the write.
	InFlight State = "in_flight"
	// Unknown: the write was sent, its answer was lost, and whether it was
	// applied could not be checked. The next call must check before it
	// sends anything again.
	Unknown State = "unknown"
	// Done: the outcome is known and stored.
	Done State = "done"
)

// Record is what a store keeps per key.
type Record struct {
	State       State
	Fingerprint string    // of the arguments, without the key
	Token       string    // the claim holding an InFlight record
	LeaseUntil  time.Time // an InFlight record's holder is presumed gone after this
	Outcome     []byte    // Done: the stored outcome, opaque to the store
	CreatedAt   time.Time
	ExpiresAt   time.Time // the record is forgotten at this time
}

// Status is the result of Begin.
type Status int

const (
	// Claimed: there was no record; the caller holds a new InFlight one and
	// sends the write.
	Claimed Status = iota + 1
	// Recovering: the record was Unknown, or InFlight with its lease run
	// out (its holder died); the caller holds it now and must find out
	// whether the write was applied before sending it again.
	Recovering
	// Busy: another call holds the record until Record.LeaseUntil.
	Busy
	// Completed: Record.Outcome is the stored outcome; send nothing.
	Completed
	// Conflict: the key was used with other arguments; send nothing.
	Conflict
)

func (s Status) String() string {
	switch s {
	case Claimed:
		return "claimed"
	case Recovering:
		return "recovering"
	case Busy:
		return "busy"
	case Completed:
		return "completed"
	case Conflict:
		return "conflict"
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// Claim is what Begin found or took.
type Claim struct {
	Status Status
	// Token identifies the claim (Claimed, Recovering); pass it to Finish,
	// Abandon or Release.
	Token string
	// Record is the record Begin found (every status but Claimed).
	Record Record
}

// ErrNotHolder is returned by Finish, Abandon and Release when the claim no
// longer holds the record: its lease ran out and another call took it over,
// or it expired.
var ErrNotHolder = errors.New("idempotency: this claim no longer holds the record (its lease ran out and another call took it over)")

// Store keeps idempotency records. Implementations are safe for concurrent
// use, also from several processes (SQLite) or replicas (Redis).
type Store interface {
	// Begin looks the key up and, when there is no record or its fate is
	// unknown, claims it for lease.
	Begin(ctx context.Context, k Key, fingerprint string, lease time.Duration) (Claim, error)
	// Finish stores outcome as the key's outcome for ttl (0, or more than
	// the store's TTL: the store's TTL). A refused write is kept briefly
	// (FailureTTL), so that it cannot hold a key for a day.
	Finish(ctx context.Context, k Key, token string, outcome []byte, ttl time.Duration) error
	// Abandon marks the write as possibly applied: the next Begin recovers.
	Abandon(ctx context.Context, k Key, token string) error
	// Release deletes the record: nothing was sent, the key is free again.
	Release(ctx context.Context, k Key, token string) error
	// Close releases the store's resources.
	Close() error
}

// DefaultTTL is how long a record is kept when Options.TTL is 0.
const DefaultTTL = 24 * time.Hour

// FailureTTL is how long the outcome of a write the catalog refused is
// kept: long enough that a model repeating the call at once gets the
// duplicate, short enough that a refusal never blocks a key for long.
const FailureTTL = 10 * time.Minute

// Bounds on the records kept (Options.MaxPerCaller, MaxTotal). A caller is
// a configured token, the unauthenticated HTTP clients together, or stdio,
// so the callers are as many as the operator made; a new key beyond a
// bound is refused (LimitError) rather than evicting an older record,
// which would let a retry of that older write happen twice.
const (
	DefaultMaxPerCaller = 10_000
	DefaultMaxTotal     = 100_000
)

// LimitError refuses a new key: the caller, or the store, holds as many
// live records as it may. Nothing was sent.
type LimitError struct {
	Scope string // "caller" or "store"
	Count int
	Max   int
	TTL   time.Duration
}

func (e *LimitError) Error() string {
	who := "this caller has"
	if e.Scope == "store" {
		who = "the server's callers together have"
	}
	return fmt.Sprintf("idempotency store: %s %d idempotency records kept (at most %d; each is kept %s after its write, a refused write's %s), so a new idempotency_key cannot be recorded now",
		who, e.Count, e.Max, e.TTL, min(FailureTTL, e.TTL))
}

// Options configure a store.
type Options struct {
	// TTL is how long a record lives: an outcome from Finish, an abandoned
	// or a claimed record from its creation. 0 means DefaultTTL.
	TTL time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// MaxPerCaller and MaxTotal bound the live records of one caller and
	// of the store (0: DefaultMaxPerCaller, DefaultMaxTotal).
	MaxPerCaller, MaxTotal int
}

func (o Options) withDefaults() Options {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxPerCaller <= 0 {
		o.MaxPerCaller = DefaultMaxPerCaller
	}
	if o.MaxTotal <= 0 {
		o.MaxTotal = DefaultMaxTotal
	}
	return o
}

// outcomeTTL is how long Finish keeps an outcome asked to be kept ttl.
func (o Options) outcomeTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 || ttl > o.TTL {
		return o.TTL
	}
	return ttl
}

// decide is what Begin does with the record it found (nil: none).
func decide(rec *Record, fingerprint string, now time.Time) Status {
	switch {
	case rec == nil || !now.Before(rec.ExpiresAt):
		return Claimed
	case rec.Fingerprint != fingerprint:
		return Conflict
	case rec.State == Done:
		return Completed
	case rec.State == InFlight && now.Before(rec.LeaseUntil):
		return Busy
	}
	return Recovering
}

// claimed is the InFlight record a claim writes; it lives for the TTL from
// now, so a takeover cannot expire under its holder. A takeover keeps the
// record's creation time.
func claimed(prev *Record, fingerprint, token string, lease time.Duration, now time.Time, ttl time.Duration) Record {
	r := Record{State: InFlight, Fingerprint: fingerprint, Token: token, LeaseUntil: now.Add(lease), CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if prev != nil && now.Before(prev.ExpiresAt) {
		r.CreatedAt = prev.CreatedAt
	}
	return r
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

var (
	_ Store = (*SQLite)(nil)
	_ Store = (*Redis)(nil)
)
