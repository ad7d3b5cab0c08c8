// Package sharedstate keeps the reliability state that the replicas of one
// stac-mcp deployment share in Redis (STAC_MCP_REDIS_URL): the response
// cache and its write generations, the claims that coalesce identical
// reads across replicas, each catalog host's retry budget and circuit
// breaker, the cursor key when none is configured, and the export tool's
// files over http (exports.go). Store implements
// reliability.SharedStore; the layer falls back to its own in-process
// state whenever Redis does not answer in time (adr/0016).
//
// Every read-modify-write is one Lua script, so replicas never interleave
// inside one. Every key has an expiry except the cursor key and the cache's
// accounting (index, sizes, byte count), which the cache scripts keep
// consistent with the entries. Keys live under "stac-mcp:" in the URL's
// database; deployments that must not share use different databases (or
// Redis servers). Redis Cluster is not supported (the scripts touch keys
// of more than one slot).
package sharedstate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/internal/redisconn"
)

// Store is the shared state in one Redis.
type Store struct {
	client *redis.Client
	prefix string
}

var _ reliability.SharedStore = (*Store)(nil)

// Default timeouts: Redis on the deployment's network answers in well
// under a millisecond, and a replica that waits longer is better off with
// its own state (the layer bounds each operation at 250 ms as well). A URL
// may set its own (?dial_timeout=1s&read_timeout=500ms&write_timeout=500ms).
const (
	defaultDialTimeout = 250 * time.Millisecond
	defaultIOTimeout   = 250 * time.Millisecond
)

// keyPrefix namespaces every key of the shared state.
const keyPrefix = "stac-mcp:"

// Open connects to the Redis at rawURL (redis:// or rediss://, as
// github.com/redis/go-redis parses it, query options included). Nothing is
// sent until the first operation; errors never include the password.
func Open(rawURL string) (*Store, error) {
	o, bad := redisconn.ParseURL(rawURL)
	if bad != nil {
		return nil, fmt.Errorf("shared state: %w", bad)
	}
	q := url.Values{}
	if u, err := url.Parse(rawURL); err == nil {
		q = u.Query()
	}
	if !q.Has("dial_timeout") {
		o.DialTimeout = defaultDialTimeout
	}
	if !q.Has("read_timeout") {
		o.ReadTimeout = defaultIOTimeout
	}
	if !q.Has("write_timeout") {
		o.WriteTimeout = defaultIOTimeout
	}
	if !q.Has("pool_timeout") {
		o.PoolTimeout = o.ReadTimeout
	}
	if !q.Has("max_retries") {
		o.MaxRetries = -1 // no retries: the layer falls back instead
	}
	o.DialerRetries = 1 // one dial per operation; the layer's rest period spaces the next
	o.ContextTimeoutEnabled = true
	o.DisableIdentity = true // no CLIENT SETINFO round trip per connection
	return New(redis.NewClient(o)), nil
}

// New uses an existing client; Close closes it.
func New(client *redis.Client) *Store {
	return &Store{client: client, prefix: keyPrefix}
}

// SetRedisLogger sends the messages of go-redis itself (a dial that failed,
// say) to log as debug events instead of plain lines on stderr. go-redis has
// one logger per process, for this store's client and the idempotency
// store's alike: the first call sets it.
func SetRedisLogger(log zerolog.Logger) { redisconn.SetLogger(log) }

// Close closes the client.
func (s *Store) Close() error { return s.client.Close() }

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.wrap("ping", s.client.Ping(ctx).Err()) }

// Addr is the Redis address, for logs.
func (s *Store) Addr() string { return s.client.Options().Addr }

func (s *Store) key(parts ...string) string {
	k := s.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// wrap names the operation and the server in an error; redis.Nil is not
// one (callers handle it before).
func (s *Store) wrap(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("shared state (Redis %s): %s: %w", s.client.Options().Addr, op, err)
}

// millis is a duration or time for a script argument.
func millis(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

// luaHelpers are prepended to every script: numbers are passed to Redis
// commands as integers written out in full (Lua would write 1.7e+12).
const luaHelpers = `
local function int(n) return string.format('%d', math.floor(n)) end
`

func script(src string) *redis.Script { return redis.NewScript(luaHelpers + src) }

// ints reads a script's array of integers.
func ints(v any, n int) ([]int64, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) < n {
		return nil, fmt.Errorf("unexpected script answer %v", v)
	}
	out := make([]int64, len(arr))
	for i, x := range arr {
		switch x := x.(type) {
		case int64:
			out[i] = x
		case nil:
		default:
			return nil, fmt.Errorf("unexpected script answer %v", v)
		}
	}
	return out, nil
}
