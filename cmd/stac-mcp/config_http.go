package main

import (
	"strconv"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
)

// The limits of `stac-mcp http` (adr/0010-http-exposure-limits.md): how many
// connections one server holds, and how long and how large what a client
// sends may be. Each one bounds a resource an unauthenticated or
// misbehaving client could otherwise take from everyone else. The server
// keeps no sessions (adr/0015), and a connection carries one request at a
// time (HTTP/1.1; no HTTP/2 without TLS), so the connection cap also bounds
// the requests served at once. internal/transport enforces them.
var (
	setHTTPMaxConns      = setting{"http-max-conns", "STAC_MCP_HTTP_MAX_CONNS", "N", "http: most client connections open at once; past it new connections wait to be accepted (default 512)"}
	setHTTPMaxConnsPerIP = setting{"http-max-conns-per-ip", "STAC_MCP_HTTP_MAX_CONNS_PER_IP", "N", "http: most connections from one non-loopback client address; past it new ones are closed at once; 0 turns the per-address limit off, e.g. behind a proxy on another machine (default 64)"}
	setHTTPIdle          = setting{"http-idle-timeout-secs", "STAC_MCP_HTTP_IDLE_TIMEOUT_SECS", "SECS", "http: close keep-alive connections idle this long (default 60)"}
	setHTTPBodyTimeout   = setting{"http-body-timeout-secs", "STAC_MCP_HTTP_BODY_TIMEOUT_SECS", "SECS", "http: a request body must arrive within this time (default 30); responses and event streams are not limited"}
	setHTTPMaxBody       = setting{"http-max-body-bytes", "STAC_MCP_HTTP_MAX_BODY_BYTES", "BYTES", "http: largest request body accepted, answered 413 past it (default 1048576, 1 MiB)"}
)

var httpSettings = []setting{setHTTPMaxConns, setHTTPMaxConnsPerIP, setHTTPIdle, setHTTPBodyTimeout, setHTTPMaxBody}

// retiredSettings are accepted, so that existing command lines and
// environments still start, and do nothing; each is reported at startup.
// The session settings went when the server stopped keeping sessions
// (adr/0015).
var retiredSettings = []setting{
	{"http-max-sessions", "STAC_MCP_HTTP_MAX_SESSIONS", "N", "retired, no effect: stac-mcp http keeps no sessions (adr/0015); STAC_MCP_HTTP_MAX_CONNS bounds the requests served at once"},
	{"http-session-idle-secs", "STAC_MCP_HTTP_SESSION_IDLE_SECS", "SECS", "retired, no effect: stac-mcp http keeps no sessions (adr/0015), so none idles"},
}

// retiredWarnings names each retired setting that is set.
func retiredWarnings(lookup func(setting) (string, string, bool)) []string {
	var warnings []string
	for _, s := range retiredSettings {
		if _, name, ok := lookup(s); ok {
			warnings = append(warnings, name+" is "+s.help)
		}
	}
	return warnings
}

func defaultHTTPLimits() transport.Limits {
	return transport.Limits{MaxConns: 512, MaxConnsPerIP: 64, IdleTimeout: time.Minute, BodyTimeout: 30 * time.Second,
		MaxBodyBytes: 1 << 20}
}

// loadHTTPLimits reads the http settings through lookup (flag first).
func loadHTTPLimits(lookup func(setting) (string, string, bool)) (transport.Limits, error) {
	l := defaultHTTPLimits()
	ints := []struct {
		s      setting
		dst    *int
		lo, hi int
	}{
		{setHTTPMaxConns, &l.MaxConns, 1, 1 << 20},
		{setHTTPMaxConnsPerIP, &l.MaxConnsPerIP, 0, 1 << 20},
	}
	for _, c := range ints {
		if v, name, ok := lookup(c.s); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < c.lo || n > c.hi {
				return l, usageError("%s=%q: want a whole number from %d to %d", name, v, c.lo, c.hi)
			}
			*c.dst = n
		}
	}
	if v, name, ok := lookup(setHTTPMaxBody); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1024 || n > 64<<20 {
			return l, usageError("%s=%q: want a number of bytes from 1024 to %d (64 MiB)", name, v, 64<<20)
		}
		l.MaxBodyBytes = n
	}
	secs := []struct {
		s      setting
		dst    *time.Duration
		lo, hi float64
	}{
		{setHTTPIdle, &l.IdleTimeout, 1, 3600},
		{setHTTPBodyTimeout, &l.BodyTimeout, 1, 600},
	}
	for _, c := range secs {
		if v, name, ok := lookup(c.s); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= c.lo && f <= c.hi) {
				return l, usageError("%s=%q: want a number of seconds from %g to %g", name, v, c.lo, c.hi)
			}
			*c.dst = time.Duration(f * float64(time.Second))
		}
	}
	return l, nil
}
