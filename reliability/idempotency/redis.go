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
	Outcome     []byte `json:"outcome,omitempty"`
	CreatedAt   int64  `json:"created_at"`
	ExpiresAt   int64  `json:"expires_at"`
}

func encodeRecord(r Record) string {
	raw, _ := json.Marshal(redisRecord{State: r.State, Fingerprint: r.Fingerprint, Token: r.Token,
		LeaseUntil: millis(r.LeaseUntil), Outcome: r.Outcome, CreatedAt: millis(r.CreatedAt), ExpiresAt: millis(r.ExpiresAt)})
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
	return Record{State: r.State, Fingerprint: r.Fingerprint, Token: r.Token, LeaseUntil: lease, Outcome: r.Outcome,
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
		ok, err := s.client.SetNX(ctx, key, encodeRecord(fresh), s.opts.TTL).Result()
		if err != nil {
			return Claim{}, s.wrap("claim", err)
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
func (s *Redis) Finish(ctx context.Context, k Key, token string, outcome []byte) error {
	return s.change(ctx, k, token, "finish", func(r Record, now time.Time) (string, time.Duration) {
		r.State, r.Token, r.LeaseUntil, r.Outcome, r.ExpiresAt = Done, "", time.Time{}, outcome, now.Add(s.opts.TTL)
		return encodeRecord(r), s.opts.TTL
	})
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
	return s.change(ctx, k, token, "release", func(Record, time.Time) (string, time.Duration) { return "", 0 })
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
