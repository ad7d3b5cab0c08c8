package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stacmcp/stac-mcp/reliability/internal/redisconn"
)

// Redis is the shared store: every replica sees the same records, so a
// retry that lands on another replica still finds the first call's claim or
// outcome. A new claim is one SET NX; every later change (finish, abandon,
// release, taking over an unknown record) is a compare-and-set script on
// the exact value read, so two replicas can never both hold a key.
type Redis struct {
	client *redis.Client
	opts   Options
	prefix string
}

// redisKeyPrefix namespaces the records in a shared Redis.
const redisKeyPrefix = "stac-mcp:idempotency:"

// Redis timeouts: a store that does not answer quickly refuses the write
// (nothing is sent) rather than holding the tool call.
const (
	redisDialTimeout = 2 * time.Second
	redisIOTimeout   = 2 * time.Second
)

// OpenRedis connects to the Redis at rawURL (redis:// or rediss://, as
// github.com/redis/go-redis parses it). Nothing is sent until the first
// call; errors never include the URL's password.
func OpenRedis(rawURL string, opts Options) (*Redis, error) {
	o, bad := redisconn.ParseURL(rawURL)
	if bad != nil {
		return nil, fmt.Errorf("idempotency store: the Redis URL %s is not valid: %s", bad.URL, bad.Reason)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = redisDialTimeout, redisIOTimeout, redisIOTimeout
	o.MaxRetries = 1
	return NewRedis(redis.NewClient(o), opts), nil
}

// NewRedis uses an existing client; Close closes it.
func NewRedis(client *redis.Client, opts Options) *Redis {
	return &Redis{client: client, opts: opts.withDefaults(), prefix: redisKeyPrefix}
}

// Close closes the client.
func (s *Redis) Close() error { return s.client.Close() }

// Ping checks that Redis answers.
func (s *Redis) Ping(ctx context.Context) error { return s.client.Ping(ctx).Err() }

// redisKey hashes the key's parts: they are caller-chosen strings of any
// content, and the hash keeps Redis keys short and free of separators.
func (s *Redis) redisKey(k Key) string {
	h := sha256.Sum256([]byte(k.Caller + "\x00" + k.Tool + "\x00" + k.Key))
	return s.prefix + hex.EncodeToString(h[:])
}

// redisRecord is a Record as stored: times in unix milliseconds.
type redisRecord struct {
	State       State  `json:"state"`
	Fingerprint string `json:"fingerprint"`
	Token       string `json:"token,omitempty"`
	LeaseUntil  int64  `json:"lease_until,omitempty"`
	// Outcome is kept as it is when it is JSON (the write tools' is), not
	// base64 as []byte would be; LegacyOutcome reads records written
	// before.
	Outcome       json.RawMessage `json:"o,omitempty"`
	LegacyOutcome []byte          `json:"outcome,omitempty"`
	CreatedAt     int64           `json:"created_at"`
	ExpiresAt     int64           `json:"expires_at"`
}

func encodeRecord(r Record) string {
	rec := redisRecord{State: r.State, Fingerprint: r.Fingerprint, Token: r.Token,
		LeaseUntil: millis(r.LeaseUntil), CreatedAt: millis(r.CreatedAt), ExpiresAt: millis(r.ExpiresAt)}
	if json.Valid(r.Outcome) {
		rec.Outcome = r.Outcome
	} else {
		rec.LegacyOutcome = r.Outcome
	}
	raw, _ := json.Marshal(rec)
	return string(raw) // a struct of strings, numbers and bytes always marshals
}

func decodeRecord(raw string) (Record, error) {
	var r redisRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return Record{}, fmt.Errorf("idempotency store: a Redis record is not ours or is damaged: %w", err)
	}
	lease := time.Time{}
	if r.LeaseUntil != 0 {
		lease = fromMillis(r.LeaseUntil)
	}
	outcome := []byte(r.Outcome)
	if len(outcome) == 0 {
		outcome = r.LegacyOutcome
	}
	return Record{State: r.State, Fingerprint: r.Fingerprint, Token: r.Token, LeaseUntil: lease, Outcome: outcome,
		CreatedAt: fromMillis(r.CreatedAt), ExpiresAt: fromMillis(r.ExpiresAt)}, nil
}

// casScript replaces KEYS[1] only if it still holds exactly ARGV[1]: with
// ARGV[2] for ARGV[3] milliseconds, or deletes it when ARGV[2] is empty.
var casScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
	redis.call('DEL', KEYS[1])
else
	redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1`)

// claimScript sets KEYS[1] to ARGV[1] for ARGV[2] ms unless it exists,
// within the bounds on live records: KEYS[2] (the caller's) and KEYS[3]
// (the store's) are sorted sets of record keys scored by their expiry
// (unix ms); expired members (ARGV[3] is now) are dropped first. Returns
// 1 (claimed), 0 (the key exists), or -1 / -2 with the count (over the
// caller's ARGV[5] / the store's ARGV[6] bound).
var claimScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, 0} end
local mine = redis.call('ZCARD', KEYS[2])
if mine >= tonumber(ARGV[5]) then return {-1, mine} end
local all = redis.call('ZCARD', KEYS[3])
if all >= tonumber(ARGV[6]) then return {-2, all} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return {1, 0}`)

// countKeys are the sorted sets of claimScript: the caller's (by a hash
// of its name) and the store's.
func (s *Redis) countKeys(k Key) (caller, all string) {
	h := sha256.Sum256([]byte(k.Caller))
	return s.prefix + "caller:" + hex.EncodeToString(h[:16]), s.prefix + "all"
}

// claimNew is SET NX within the bounds on live records.
func (s *Redis) claimNew(ctx context.Context, k Key, key, value string, now time.Time) (bool, error) {
	callerSet, allSet := s.countKeys(k)
	ttl := s.opts.TTL.Milliseconds()
	res, err := claimScript.Run(ctx, s.client, []string{key, callerSet, allSet}, value, ttl, now.UnixMilli(),
		now.UnixMilli()+ttl, s.opts.MaxPerCaller, s.opts.MaxTotal, s.member(key)).Int64Slice()
	if err != nil {
		return false, s.wrap("claim", err)
	}
	switch res[0] {
	case 1:
		return true, nil
	case -1:
		return false, &LimitError{Scope: "caller", Count: int(res[1]), Max: s.opts.MaxPerCaller, TTL: s.opts.TTL}
	case -2:
		return false, &LimitError{Scope: "store", Count: int(res[1]), Max: s.opts.MaxTotal, TTL: s.opts.TTL}
	}
	return false, nil
}

// member is a record's member of the counting sets: half its key's hash
// (128 bits, enough to tell records apart, and half the memory).
func (s *Redis) member(key string) string { return key[len(s.prefix) : len(s.prefix)+32] }

// recount moves a record's expiry in the counting sets (0: removes it).
func (s *Redis) recount(ctx context.Context, k Key, key string, expires time.Time) {
	callerSet, allSet := s.countKeys(k)
	m := s.member(key)
	pipe := s.client.Pipeline()
	for _, set := range []string{callerSet, allSet} {
		if expires.IsZero() {
			pipe.ZRem(ctx, set, m)
		} else {
			pipe.ZAddXX(ctx, set, redis.Z{Score: float64(expires.UnixMilli()), Member: m})
		}
	}
	_, _ = pipe.Exec(ctx) // a stale score only counts a record until it expires
}

// casAttempts bounds the optimistic loop of Begin; each round needs another
// writer to have changed the record in between, which is rare.
const casAttempts = 8

// Begin implements Store.
func (s *Redis) Begin(ctx context.Context, k Key, fingerprint string, lease time.Duration) (Claim, error) {
	if err := k.validate(); err != nil {
		return Claim{}, err
	}
	key := s.redisKey(k)
	for range casAttempts {
		now := s.opts.Now()
		token := newToken()
		fresh := claimed(nil, fingerprint, token, lease, now, s.opts.TTL)
		ok, err := s.claimNew(ctx, k, key, encodeRecord(fresh), now)
		if err != nil {
			return Claim{}, err
		}
		if ok {
			return Claim{Status: Claimed, Token: token}, nil
		}
		raw, err := s.client.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			continue // expired or released in between: claim again
		}
		if err != nil {
			return Claim{}, s.wrap("read", err)
		}
		rec, err := decodeRecord(raw)
		if err != nil {
			return Claim{}, err
		}
		status := decide(&rec, fingerprint, now)
		if status != Recovering && status != Claimed {
			return Claim{Status: status, Record: rec}, nil
		}
		// Unknown, or in flight with a lapsed lease: take it over, unless
		// another replica did so since we read it.
		taken := claimed(&rec, fingerprint, token, lease, now, s.opts.TTL)
		swapped, err := s.cas(ctx, key, raw, encodeRecord(taken), s.opts.TTL)
		if err != nil {
			return Claim{}, s.wrap("take over", err)
		}
		if swapped {
			if status == Claimed {
				return Claim{Status: Claimed, Token: token}, nil // the record had expired
			}
			return Claim{Status: Recovering, Token: token, Record: rec}, nil
		}
	}
	return Claim{}, fmt.Errorf("idempotency store: the record for this key kept changing under %d attempts to claim it", casAttempts)
}

// Finish implements Store.
func (s *Redis) Finish(ctx context.Context, k Key, token string, outcome []byte, ttl time.Duration) error {
	ttl = s.opts.outcomeTTL(ttl)
	var expires time.Time
	err := s.change(ctx, k, token, "finish", func(r Record, now time.Time) (string, time.Duration) {
		r.State, r.Token, r.LeaseUntil, r.Outcome, r.ExpiresAt = Done, "", time.Time{}, outcome, now.Add(ttl)
		expires = r.ExpiresAt
		return encodeRecord(r), ttl
	})
	if err == nil {
		s.recount(ctx, k, s.redisKey(k), expires)
	}
	return err
}

// Abandon implements Store.
func (s *Redis) Abandon(ctx context.Context, k Key, token string) error {
	return s.change(ctx, k, token, "abandon", func(r Record, now time.Time) (string, time.Duration) {
		r.State, r.Token, r.LeaseUntil = Unknown, "", time.Time{}
		return encodeRecord(r), max(r.ExpiresAt.Sub(now), time.Millisecond)
	})
}

// Release implements Store.
func (s *Redis) Release(ctx context.Context, k Key, token string) error {
	err := s.change(ctx, k, token, "release", func(Record, time.Time) (string, time.Duration) { return "", 0 })
	if err == nil {
		s.recount(ctx, k, s.redisKey(k), time.Time{})
	}
	return err
}

// change replaces the record held by token with next's value (empty:
// delete), if it is still the value read.
func (s *Redis) change(ctx context.Context, k Key, token, what string, next func(Record, time.Time) (string, time.Duration)) error {
	key := s.redisKey(k)
	raw, err := s.client.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return ErrNotHolder
	}
	if err != nil {
		return s.wrap(what, err)
	}
	rec, err := decodeRecord(raw)
	if err != nil {
		return err
	}
	if rec.State != InFlight || rec.Token != token {
		return ErrNotHolder
	}
	value, ttl := next(rec, s.opts.Now())
	swapped, err := s.cas(ctx, key, raw, value, ttl)
	if err != nil {
		return s.wrap(what, err)
	}
	if !swapped {
		return ErrNotHolder
	}
	return nil
}

func (s *Redis) cas(ctx context.Context, key, expected, value string, ttl time.Duration) (bool, error) {
	n, err := casScript.Run(ctx, s.client, []string{key}, expected, value, max(ttl.Milliseconds(), 1)).Int()
	return n == 1, err
}

func (s *Redis) wrap(what string, err error) error {
	return fmt.Errorf("idempotency store (Redis %s): %s: %w", s.client.Options().Addr, what, err)
}

// CheckRedisURL reports whether rawURL is a Redis URL go-redis accepts,
// without connecting; the error never contains the password.
func CheckRedisURL(rawURL string) error {
	if _, bad := redisconn.ParseURL(rawURL); bad != nil {
		return bad
	}
	return nil
}
