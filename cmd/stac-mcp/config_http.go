package main

import (
	"strconv"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
)

// The limits of `stac-mcp http` (adr/0010-http-exposure-limits.md): how many
// connections one server holds, and how long and how large what a client
// sends may be. Each one bounds a resource an unauthenticated or
// misbehaving client could otherwise take from everyone else. The server
// keeps no sessions (adr/0015), and a connection carries one request at a
// time (HTTP/1.1; no HTTP/2 without TLS), so the connection cap also bounds
// the requests served at once. internal/transport enforces them; their
// settings are settings.HTTP.

// retiredWarnings names each retired setting that is set.
func retiredWarnings(lookup func(settings.Setting) (string, string, bool)) []string {
	var warnings []string
	for _, s := range settings.Retired {
		if _, name, ok := lookup(s); ok {
			warnings = append(warnings, name+" is "+s.Help)
		}
	}
	return warnings
}

func defaultHTTPLimits() transport.Limits {
	return transport.Limits{MaxConns: 512, MaxConnsPerIP: 64, IdleTimeout: time.Minute, BodyTimeout: 30 * time.Second,
		MaxBodyBytes: 1 << 20}
}

// loadHTTPLimits reads the http settings through lookup (flag first).
func loadHTTPLimits(lookup func(settings.Setting) (string, string, bool)) (transport.Limits, error) {
	l := defaultHTTPLimits()
	ints := []struct {
		s      settings.Setting
		dst    *int
		lo, hi int
	}{
		{settings.HTTPMaxConns, &l.MaxConns, 1, 1 << 20},
		{settings.HTTPMaxConnsPerIP, &l.MaxConnsPerIP, 0, 1 << 20},
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
	if v, name, ok := lookup(settings.HTTPMaxBody); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1024 || n > 64<<20 {
			return l, usageError("%s=%q: want a number of bytes from 1024 to %d (64 MiB)", name, v, 64<<20)
		}
		l.MaxBodyBytes = n
	}
	secs := []struct {
		s      settings.Setting
		dst    *time.Duration
		lo, hi float64
	}{
		{settings.HTTPIdleTimeout, &l.IdleTimeout, 1, 3600},
		{settings.HTTPBodyTimeout, &l.BodyTimeout, 1, 600},
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
