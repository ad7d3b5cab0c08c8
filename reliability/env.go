package reliability

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// EnvToolTimeout is the setting that limits a whole tool call
// (Policy.ToolTimeout): advice about a call that ran out of time names it.
const EnvToolTimeout = "STAC_MCP_TOOL_TIMEOUT_SECS"

// The other environment variables read by PolicyFromEnv.
const (
	envAttemptTimeout = "STAC_MCP_ATTEMPT_TIMEOUT_SECS"
	envMaxAttempts    = "STAC_MCP_MAX_ATTEMPTS"
	envBackoffBase    = "STAC_MCP_BACKOFF_BASE_SECS"
	envRetryAfterCap  = "STAC_MCP_RETRY_AFTER_CAP_SECS"
	envCacheTTL       = "STAC_MCP_CACHE_TTL_SECS"
	envCacheMaxBytes  = "STAC_MCP_CACHE_MAX_BYTES"
	envBulkheadMax    = "STAC_MCP_BULKHEAD_MAX"
	envHedge          = "STAC_MCP_HEDGE"
	envMaxHosts       = "STAC_MCP_MAX_HOSTS"
	envBodyBudget     = "STAC_MCP_BODY_BUDGET_BYTES"
)

// PolicyFromEnv starts from DefaultPolicy and applies every STAC_MCP_*
// variable that lookup finds (os.LookupEnv in production). An unparsable or
// out-of-range value is an error naming the variable, the value received and
// what is accepted, so the server refuses to start instead of guessing.
func PolicyFromEnv(lookup func(string) (string, bool)) (Policy, error) {
	p := DefaultPolicy()
	seconds := []struct {
		name     string
		dst      *time.Duration
		accepted secondsRange
	}{
		{EnvToolTimeout, &p.ToolTimeout, toolTimeoutSecs},
		// Up to the tool timeout, checked below once both are known.
		{envAttemptTimeout, &p.AttemptTimeout, secondsRange{0.1, toolTimeoutSecs.max}},
		{envBackoffBase, &p.BackoffBase, backoffBaseSecs},
		{envRetryAfterCap, &p.RetryAfterCap, retryAfterCapSecs},
		{envCacheTTL, &p.CacheTTL, cacheTTLSecs},
	}
	set := map[string]bool{}
	for _, s := range seconds {
		raw, ok := lookup(s.name)
		if !ok {
			continue
		}
		set[s.name] = true
		v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || math.IsNaN(v) || v < s.accepted.min || v > s.accepted.max {
			return Policy{}, fmt.Errorf("%s=%q is not valid; accepted: a number of seconds from %g to %g", s.name, raw, s.accepted.min, s.accepted.max)
		}
		*s.dst = time.Duration(v * float64(time.Second))
	}
	integers := []struct {
		name     string
		set      func(int64)
		accepted intRange
	}{
		{envMaxAttempts, func(v int64) { p.MaxAttempts = int(v) }, maxAttemptsRange},
		{envCacheMaxBytes, func(v int64) { p.CacheMaxBytes = v }, intRange{0, 1 << 34}},
		{envBulkheadMax, func(v int64) { p.BulkheadMax = int(v) }, bulkheadMaxRange},
		{envMaxHosts, func(v int64) { p.MaxHosts = int(v) }, maxHostsRange},
		{envBodyBudget, func(v int64) { p.BodyBudgetBytes = v }, bodyBudgetRange},
	}
	for _, n := range integers {
		raw, ok := lookup(n.name)
		if !ok {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil || !n.accepted.holds(v) {
			return Policy{}, fmt.Errorf("%s=%q is not valid; accepted: %s", n.name, raw, n.accepted)
		}
		n.set(v)
	}
	if raw, ok := lookup(envHedge); ok {
		hedge, delay, err := parseHedge(raw)
		if err != nil {
			return Policy{}, err
		}
		p.Hedge, p.HedgeDelay = hedge, delay
	}
	// An attempt timeout nobody set follows the tool timeout, so that
	// STAC_MCP_TOOL_TIMEOUT_SECS alone is valid across its whole range. One
	// that was set cannot exceed the tool timeout; say which pair conflicts
	// rather than reporting one of them alone.
	switch {
	case !set[envAttemptTimeout]:
		p.AttemptTimeout = defaultAttemptTimeout(p.ToolTimeout)
	case p.AttemptTimeout > p.ToolTimeout:
		tool := fmt.Sprintf("%s (%v)", EnvToolTimeout, p.ToolTimeout)
		if !set[EnvToolTimeout] {
			tool = fmt.Sprintf("the default %s (%v)", EnvToolTimeout, p.ToolTimeout)
		}
		return Policy{}, fmt.Errorf("%s (%v) is longer than %s; accepted: an attempt timeout no longer than the tool timeout, or leave %s unset and it follows the tool timeout",
			envAttemptTimeout, p.AttemptTimeout, tool, envAttemptTimeout)
	}
	if p.MinUsefulAttempt > p.AttemptTimeout {
		p.MinUsefulAttempt = p.AttemptTimeout
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// parseHedge reads STAC_MCP_HEDGE: on (a delay learned per host and
// operation), off, or a fixed delay in seconds.
func parseHedge(raw string) (hedge bool, delay time.Duration, err error) {
	switch v := strings.ToLower(strings.TrimSpace(raw)); v {
	case "off", "false", "no":
		return false, 0, nil
	case "on", "true", "yes", "p95":
		return true, 0, nil
	default:
		secs, perr := strconv.ParseFloat(v, 64)
		if perr != nil || math.IsNaN(secs) || secs <= 0 || secs > 60 {
			return false, 0, fmt.Errorf("%s=%q is not valid; accepted: on (the default: a copy once a read is slower than the p98.5 of the host's answers to the same operation, sooner when reads hang), off (cut attempts at the attempt timeout and retry instead), or a delay in seconds above 0, e.g. 0.3", envHedge, raw)
		}
		return true, time.Duration(secs * float64(time.Second)), nil
	}
}
