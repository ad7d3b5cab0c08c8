package sharedstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The export tool's files over http (adr/0042): any replica must answer
// resources/read for an export another made, so they live here.
//
// Keys: export:data:<id>:<n> hold the bytes, a MiB each, and export:meta:<id> what the
// tools say about them (maker, name, type, digest), both with a PX expiry
// of the export's life. export:index is a sorted set of ids scored by
// expiry (Redis's clock), export:sizes each id's size, export:owners each
// id's maker. One script checks the quotas over the live exports and
// stores, so two replicas cannot both pass a quota that only one fits.

// Export quota errors.
var (
	ErrExportCallerQuota = errors.New("the caller's exports already hold their byte quota")
	ErrExportTotalQuota  = errors.New("the exports already hold their byte quota")
)

// exportChunk bounds one Redis command's value: a large export is stored
// in several keys of at most 1 MiB.
const exportChunk = 1 << 20

// exportIOTimeout is one export command's I/O bound. The store's 250 ms
// suits small state (a replica that waits longer is better off with its
// own); a MiB of export on a busy Redis may take longer, and an export has
// no state of its own to fall back to. The call's deadline bounds it too.
const exportIOTimeout = 5 * time.Second

// exports is the client for export commands: the store's connections,
// with exportIOTimeout.
func (s *Store) exports() *redis.Client { return s.client.WithTimeout(exportIOTimeout) }

func (s *Store) exportKey(kind, id string) string { return s.key("export", kind, id) }

// exportPutScript forgets expired exports, checks the quotas and, when
// they allow, records the export. KEYS: index, sizes, owners, meta.
// ARGV: id, caller, size, ttl ms, caller quota, total quota, meta, chunks.
// Returns 1 stored, -1 over the caller's quota, -2 over the total; with
// the bytes held ({code, held}).
var exportPutScript = script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
local size = tonumber(ARGV[3])
local total, mine = 0, 0
local sizes = redis.call('HGETALL', KEYS[2])
for i = 1, #sizes, 2 do
  local n = tonumber(sizes[i + 1])
  total = total + n
  if redis.call('HGET', KEYS[3], sizes[i]) == ARGV[2] then mine = mine + n end
end
if mine + size > tonumber(ARGV[5]) then return {-1, math.floor(mine)} end
if total + size > tonumber(ARGV[6]) then return {-2, math.floor(total)} end
local ttl = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('SET', KEYS[4], ARGV[7], 'PX', int(ttl))
return {1, math.floor(total + size)}
`)

// PutExport stores an export for ttl unless the caller's live exports
// with it would exceed callerQuota or everyone's totalQuota
// (ErrExportCallerQuota, ErrExportTotalQuota). The bytes go first, in
// chunks; the script then admits the export (or not, and the chunks are
// deleted): a reader sees the export only once its meta is there.
func (s *Store) PutExport(ctx context.Context, id, caller string, meta, data []byte, ttl time.Duration, callerQuota, totalQuota int64) error {
	client := s.exports()
	chunks := max(1, (len(data)+exportChunk-1)/exportChunk)
	keys := make([]string, chunks)
	for i := range chunks {
		keys[i] = s.exportKey("data", fmt.Sprintf("%s:%d", id, i))
		part := data[min(i*exportChunk, len(data)):min((i+1)*exportChunk, len(data))]
		if err := client.Set(ctx, keys[i], part, ttl).Err(); err != nil {
			client.Del(context.WithoutCancel(ctx), keys[:i+1]...)
			return s.wrap("export write", err)
		}
	}
	res, err := exportPutScript.Run(ctx, client,
		[]string{s.exportKey("index", "all"), s.exportKey("sizes", "all"), s.exportKey("owners", "all"), s.exportKey("meta", id)},
		id, caller, len(data), millis(ttl), callerQuota, totalQuota, string(meta), chunks).Result()
	if err != nil {
		client.Del(context.WithoutCancel(ctx), keys...)
		return s.wrap("export admit", err)
	}
	v, err := ints(res, 2)
	if err != nil {
		return s.wrap("export admit", err)
	}
	switch v[0] {
	case -1:
		client.Del(ctx, keys...)
		return fmt.Errorf("%w (%d of %d bytes held)", ErrExportCallerQuota, v[1], callerQuota)
	case -2:
		client.Del(ctx, keys...)
		return fmt.Errorf("%w (%d of %d bytes held)", ErrExportTotalQuota, v[1], totalQuota)
	}
	return nil
}

// GetExport returns an export's meta and bytes; nil meta when there is
// none (expired, or never stored).
func (s *Store) GetExport(ctx context.Context, id string) (meta, data []byte, err error) {
	client := s.exports()
	m, err := client.Get(ctx, s.exportKey("meta", id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, s.wrap("export read", err)
	}
	size, err := client.HGet(ctx, s.exportKey("sizes", "all"), id).Int()
	if errors.Is(err, redis.Nil) {
		return nil, nil, nil // expired meanwhile
	}
	if err != nil {
		return nil, nil, s.wrap("export read", err)
	}
	chunks := max(1, (size+exportChunk-1)/exportChunk)
	data = make([]byte, 0, size)
	for i := range chunks {
		part, err := client.Get(ctx, s.exportKey("data", fmt.Sprintf("%s:%d", id, i))).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil, nil, nil // expired meanwhile
		}
		if err != nil {
			return nil, nil, s.wrap("export read", err)
		}
		data = append(data, part...)
	}
	if len(data) != size {
		return nil, nil, s.wrap("export read", fmt.Errorf("export %s holds %d bytes, %d were stored", id, len(data), size))
	}
	return m, data, nil
}
