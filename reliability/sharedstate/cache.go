package sharedstate

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The shared response cache.
//
// Keys: cache:entry:<request hash> holds one answer (the layer's encoding,
// which starts with the generation it was stored in) with a PX expiry of
// its TTL. cache:gen:<host> counts the writes to host and cache:epoch the
// times every host was invalidated at once; a host's generation token is
// "<epoch>.<gen>", and the layer serves an entry only under the token it
// was stored with.
//
// Size bound (independent of Redis's maxmemory): the cache scripts keep
// cache:index, a sorted set of entry keys scored by expiry time (Redis's
// clock, TIME), cache:sizes, each entry's size, and cache:bytes, their
// total. Every write first forgets the entries that have expired (Redis
// deleted them already), then stores the new one, then deletes the
// entries that expire first until the total is at most maxBytes. With
// one TTL for all, that is oldest first. An entry Redis evicts under its
// own maxmemory policy stays counted until its expiry time passes, so the
// total errs high, never low.
//
// Generation keys outlive every entry stored under an older generation:
// an invalidation gives them generationLife (the longest cache TTL the
// policy accepts, one day, plus a margin), and every cache write extends
// them to its entry's TTL plus the margin. So a generation key never
// expires back to "0" while an entry from before a write could match it.

const generationMargin = time.Minute

// generationLife is how long a generation key lives after an invalidation:
// the longest STAC_MCP_CACHE_TTL_SECS (86400) plus the margin.
const generationLife = 24*time.Hour + generationMargin

func (s *Store) entryKey(key string) string { return s.key("cache", "entry", key) }
func (s *Store) genKey(host string) string  { return s.key("cache", "gen", host) }
func (s *Store) epochKey() string           { return s.key("cache", "epoch") }

// CacheRead implements reliability.SharedStore in one round trip (MGET).
func (s *Store) CacheRead(ctx context.Context, host, key string) (string, []byte, error) {
	keys := []string{s.epochKey(), s.genKey(host)}
	if key != "" {
		keys = append(keys, s.entryKey(key))
	}
	vals, err := s.client.MGet(ctx, keys...).Result()
	if err != nil {
		return "", nil, s.wrap("cache read", err)
	}
	str := func(v any) string {
		if v, ok := v.(string); ok {
			return v
		}
		return "0"
	}
	gen := str(vals[0]) + "." + str(vals[1])
	if key == "" || vals[2] == nil {
		return gen, nil, nil
	}
	entry, _ := vals[2].(string)
	return gen, []byte(entry), nil
}

// cacheWriteScript stores ARGV[2] under KEYS[3] for ARGV[3] ms if the
// generation (KEYS[1], KEYS[2]) is still ARGV[1], keeping the total size
// of entries at most ARGV[4] (see the package's cache notes). KEYS[4..6]:
// index, sizes, bytes. ARGV[5]: the generation margin in ms.
var cacheWriteScript = script(`
local gen = (redis.call('GET', KEYS[1]) or '0') .. '.' .. (redis.call('GET', KEYS[2]) or '0')
if gen ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local size = string.len(ARGV[2])
local used = tonumber(redis.call('GET', KEYS[6]) or '0')
local function forget(k)
	local n = redis.call('HGET', KEYS[5], k)
	if n then
		used = used - tonumber(n)
		redis.call('HDEL', KEYS[5], k)
	end
	redis.call('ZREM', KEYS[4], k)
end
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', int(now), 'LIMIT', 0, 512)) do
	forget(k)
end
forget(KEYS[3])
redis.call('SET', KEYS[3], ARGV[2], 'PX', int(ttl))
redis.call('ZADD', KEYS[4], int(now + ttl), KEYS[3])
redis.call('HSET', KEYS[5], KEYS[3], int(size))
used = used + size
local limit = tonumber(ARGV[4])
while used > limit do
	local first = redis.call('ZRANGE', KEYS[4], 0, 0)
	if #first == 0 then
		used = 0
		break
	end
	redis.call('DEL', first[1])
	forget(first[1])
end
redis.call('SET', KEYS[6], int(math.max(used, 0)))
local keep = ttl + tonumber(ARGV[5])
for _, g in ipairs({KEYS[1], KEYS[2]}) do
	local left = redis.call('PTTL', g)
	if left >= 0 and left < keep then
		redis.call('PEXPIRE', g, int(keep))
	end
end
return 1`)

// CacheWrite implements reliability.SharedStore.
func (s *Store) CacheWrite(ctx context.Context, host, key, gen string, entry []byte, ttl time.Duration, maxBytes int64) (bool, error) {
	keys := []string{s.epochKey(), s.genKey(host), s.entryKey(key),
		s.key("cache", "index"), s.key("cache", "sizes"), s.key("cache", "bytes")}
	n, err := cacheWriteScript.Run(ctx, s.client, keys, gen, entry, millis(ttl), maxBytes, millis(generationMargin)).Int()
	if err != nil {
		return false, s.wrap("cache write", err)
	}
	return n == 1, nil
}

// Invalidate implements reliability.SharedStore in one transaction.
func (s *Store) Invalidate(ctx context.Context, hosts []string, all bool) error {
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if all {
			p.Incr(ctx, s.epochKey())
			p.PExpire(ctx, s.epochKey(), generationLife)
		}
		for _, h := range hosts {
			p.Incr(ctx, s.genKey(h))
			p.PExpire(ctx, s.genKey(h), generationLife)
		}
		return nil
	})
	return s.wrap("invalidate", err)
}

// cacheBytes is the size of the cached entries as the cache accounts it.
func (s *Store) cacheBytes(ctx context.Context) (int64, error) {
	n, err := s.client.Get(ctx, s.key("cache", "bytes")).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, s.wrap("cache bytes", err)
}

func (s *Store) claimKey(claim string) string { return s.key("cache", "lead", claim) }

// Lead implements reliability.SharedStore (SET NX PX).
func (s *Store) Lead(ctx context.Context, claim, token string, ttl time.Duration) (bool, error) {
	ok, err := s.client.SetNX(ctx, s.claimKey(claim), token, ttl).Result()
	return ok, s.wrap("lead", err)
}

// unleadScript deletes KEYS[1] if it still holds ARGV[1].
var unleadScript = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Unlead implements reliability.SharedStore.
func (s *Store) Unlead(ctx context.Context, claim, token string) error {
	return s.wrap("unlead", unleadScript.Run(ctx, s.client, []string{s.claimKey(claim)}, token).Err())
}
