package sharedstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stacmcp/stac-mcp/reliability"
)

// Per-host state: budget:<host> holds the tokens spent from the host's
// retry budget (absent: a full budget), breaker:<host> a hash with the
// breaker's state and its outcome window. Both expire when the host goes
// unused (budgetIdle; the breaker after ten windows), like a host the
// in-process table forgets.

// budgetIdle is how long a host's budget deficit is kept without use.
const budgetIdle = time.Hour

func (s *Store) budgetKey(host string) string  { return s.key("budget", host) }
func (s *Store) breakerKey(host string) string { return s.key("breaker", host) }

// budgetTakeScript spends ARGV[1] of ARGV[2] tokens from KEYS[1] if they
// are there: {taken, tokens left}.
var budgetTakeScript = script(`
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local capacity, cost = tonumber(ARGV[2]), tonumber(ARGV[1])
if capacity - spent < cost then return {0, capacity - spent} end
spent = spent + cost
redis.call('SET', KEYS[1], int(spent), 'PX', ARGV[3])
return {1, capacity - spent}`)

// budgetRefundScript gives back up to ARGV[1] tokens: tokens left.
var budgetRefundScript = script(`
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local capacity = tonumber(ARGV[2])
if spent <= 0 then return capacity end
spent = math.max(0, spent - tonumber(ARGV[1]))
if spent == 0 then
	redis.call('DEL', KEYS[1])
else
	redis.call('SET', KEYS[1], int(spent), 'PX', ARGV[3])
end
return capacity - spent`)

// BudgetTake implements reliability.SharedStore.
func (s *Store) BudgetTake(ctx context.Context, host string, cost, capacity int) (bool, int, error) {
	v, err := budgetTakeScript.Run(ctx, s.client, []string{s.budgetKey(host)}, cost, capacity, millis(budgetIdle)).Result()
	if err != nil {
		return false, 0, s.wrap("budget take", err)
	}
	n, err := ints(v, 2)
	if err != nil {
		return false, 0, s.wrap("budget take", err)
	}
	return n[0] == 1, int(n[1]), nil
}

// BudgetRefund implements reliability.SharedStore.
func (s *Store) BudgetRefund(ctx context.Context, host string, amount, capacity int) (int, error) {
	n, err := budgetRefundScript.Run(ctx, s.client, []string{s.budgetKey(host)}, amount, capacity, millis(budgetIdle)).Int()
	return n, s.wrap("budget refund", err)
}

// The breaker is the in-process one (reliability/breaker.go) in Lua, with
// the thresholds passed in (reliability.BreakerRules) and the replica's
// clock (now, in ms; the replicas' clocks agree to well within a bucket).
// Fields: state (closed when absent), until (ms, when open), probes (half-
// open probes out), ok (probes that succeeded), lease (ms: past it, probes
// out are presumed lost), and per bucket i: s<i> (its slot number), a<i>
// (attempts), f<i> (retryable failures).

// breakerAllowScript: ARGV now, probes, probe lease, idle (ms) →
// {admitted, probe, state, until}.
var breakerAllowScript = script(`
local h, now = KEYS[1], tonumber(ARGV[1])
local st = redis.call('HMGET', h, 'state', 'until', 'probes', 'ok', 'lease')
local state = st[1] or 'closed'
if state == 'closed' then return {1, 0, 'closed', 0} end
local open_until = tonumber(st[2] or '0')
local probes, ok, limit = tonumber(st[3] or '0'), tonumber(st[4] or '0'), tonumber(ARGV[2])
if state == 'open' then
	if now < open_until then return {0, 0, 'open', open_until} end
	state, probes, ok = 'half_open', 0, 0
	redis.call('HSET', h, 'state', state, 'probes', 0, 'ok', 0)
elseif probes >= limit - ok and now >= tonumber(st[5] or '0') then
	probes = 0
end
if probes >= limit - ok then return {0, 0, 'half_open', 0} end
redis.call('HSET', h, 'probes', int(probes + 1), 'lease', int(now + tonumber(ARGV[3])))
redis.call('PEXPIRE', h, ARGV[4])
return {1, 1, 'half_open', 0}`)

// breakerRecordScript: ARGV now, probe, failed, neutral (0/1), open for,
// window, buckets, min calls, failure rate, probes, idle → {state, until}.
var breakerRecordScript = script(`
local h, now = KEYS[1], tonumber(ARGV[1])
local st = redis.call('HMGET', h, 'state', 'until', 'probes', 'ok')
local state = st[1] or 'closed'
local open_until = tonumber(st[2] or '0')
local function trip()
	local u = now + tonumber(ARGV[5])
	redis.call('HSET', h, 'state', 'open', 'until', int(u), 'probes', 0, 'ok', 0)
	redis.call('PEXPIRE', h, ARGV[11])
	return {'open', u}
end
if ARGV[2] == '1' then
	if state ~= 'half_open' then return {state, open_until} end
	local probes = math.max(0, tonumber(st[3] or '0') - 1)
	if ARGV[4] == '1' then
		redis.call('HSET', h, 'probes', int(probes))
		return {state, 0}
	end
	if ARGV[3] == '1' then return trip() end
	local ok = tonumber(st[4] or '0') + 1
	if ok >= tonumber(ARGV[10]) then
		redis.call('DEL', h)
		return {'closed', 0}
	end
	redis.call('HSET', h, 'probes', int(probes), 'ok', int(ok))
	redis.call('PEXPIRE', h, ARGV[11])
	return {state, 0}
end
if ARGV[4] == '1' or state ~= 'closed' then return {state, open_until} end
local buckets = tonumber(ARGV[7])
local width = math.floor(tonumber(ARGV[6]) / buckets)
local slot = math.floor(now / width)
local i = slot % buckets
if tonumber(redis.call('HGET', h, 's' .. i) or '-1') ~= slot then
	redis.call('HSET', h, 's' .. i, int(slot), 'a' .. i, 0, 'f' .. i, 0)
end
redis.call('HINCRBY', h, 'a' .. i, 1)
if ARGV[3] == '1' then redis.call('HINCRBY', h, 'f' .. i, 1) end
local names = {}
for j = 0, buckets - 1 do
	names[#names + 1] = 's' .. j
	names[#names + 1] = 'a' .. j
	names[#names + 1] = 'f' .. j
end
local v = redis.call('HMGET', h, unpack(names))
local total, failures = 0, 0
for j = 0, buckets - 1 do
	if tonumber(v[3 * j + 1] or '-1') > slot - buckets then
		total = total + tonumber(v[3 * j + 2] or '0')
		failures = failures + tonumber(v[3 * j + 3] or '0')
	end
end
if total >= tonumber(ARGV[8]) and failures >= tonumber(ARGV[9]) * total then return trip() end
redis.call('PEXPIRE', h, ARGV[11])
return {'closed', 0}`)

// breakerIdle is how long a host's breaker is kept without use: long
// after its window, its open period and a probe's lease are over.
func breakerIdle(r reliability.BreakerRules, openFor time.Duration) time.Duration {
	return max(10*r.Window, 2*r.ProbeLease, 2*openFor)
}

// BreakerAllow implements reliability.SharedStore.
func (s *Store) BreakerAllow(ctx context.Context, host string, now time.Time, r reliability.BreakerRules) (bool, bool, reliability.BreakerView, error) {
	v, err := breakerAllowScript.Run(ctx, s.client, []string{s.breakerKey(host)},
		now.UnixMilli(), r.Probes, millis(r.ProbeLease), millis(breakerIdle(r, 0))).Result()
	if err != nil {
		return false, false, reliability.BreakerView{}, s.wrap("breaker allow", err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 4 {
		return false, false, reliability.BreakerView{}, s.wrap("breaker allow", fmt.Errorf("unexpected script answer %v", v))
	}
	view, err := breakerView(arr[2], arr[3])
	if err != nil {
		return false, false, reliability.BreakerView{}, s.wrap("breaker allow", err)
	}
	return arr[0] == int64(1), arr[1] == int64(1), view, nil
}

// BreakerRecord implements reliability.SharedStore.
func (s *Store) BreakerRecord(ctx context.Context, host string, o reliability.BreakerOutcome, now time.Time, openFor time.Duration,
	r reliability.BreakerRules) (reliability.BreakerView, error) {
	flag := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	v, err := breakerRecordScript.Run(ctx, s.client, []string{s.breakerKey(host)},
		now.UnixMilli(), flag(o.Probe), flag(o.Failed), flag(o.Neutral), millis(openFor),
		millis(r.Window), r.Buckets, r.MinCalls, strconv.FormatFloat(r.FailureRate, 'f', -1, 64), r.Probes,
		millis(breakerIdle(r, openFor))).Result()
	if err != nil {
		return reliability.BreakerView{}, s.wrap("breaker record", err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 2 {
		return reliability.BreakerView{}, s.wrap("breaker record", fmt.Errorf("unexpected script answer %v", v))
	}
	view, err := breakerView(arr[0], arr[1])
	return view, s.wrap("breaker record", err)
}

func breakerView(state, until any) (reliability.BreakerView, error) {
	st, _ := state.(string)
	ms, _ := until.(int64)
	switch st {
	case reliability.BreakerClosed, reliability.BreakerHalfOpen:
		return reliability.BreakerView{State: st}, nil
	case reliability.BreakerOpen:
		return reliability.BreakerView{State: st, OpenUntil: time.UnixMilli(ms)}, nil
	}
	return reliability.BreakerView{}, fmt.Errorf("unknown breaker state %v", state)
}

// Peek implements reliability.SharedStore in one pipeline.
func (s *Store) Peek(ctx context.Context, hosts []string, capacity int) ([]reliability.BreakerView, []int, error) {
	states := make([]*redis.SliceCmd, len(hosts))
	spent := make([]*redis.StringCmd, len(hosts))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, h := range hosts {
			states[i] = p.HMGet(ctx, s.breakerKey(h), "state", "until")
			spent[i] = p.Get(ctx, s.budgetKey(h))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, s.wrap("peek", err)
	}
	views := make([]reliability.BreakerView, len(hosts))
	tokens := make([]int, len(hosts))
	for i := range hosts {
		v := states[i].Val()
		state, _ := v[0].(string)
		if state == "" {
			state = reliability.BreakerClosed
		}
		until, _ := strconv.ParseInt(fmt.Sprint(v[1]), 10, 64)
		view, err := breakerView(state, until)
		if err != nil {
			return nil, nil, s.wrap("peek", err)
		}
		views[i] = view
		n, _ := strconv.Atoi(spent[i].Val())
		tokens[i] = capacity - n
	}
	return views, tokens, nil
}
