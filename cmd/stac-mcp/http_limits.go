package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"
)

// The limits of `stac-mcp http` (adr/0010-http-exposure-limits.md): how many
// connections one server holds, and how long and how large what a client
// sends may be. Each one bounds a resource an unauthenticated or
// misbehaving client could otherwise take from everyone else. The server
// keeps no sessions (adr/0015), and a connection carries one request at a
// time (HTTP/1.1; no HTTP/2 without TLS), so the connection cap also bounds
// the requests served at once.
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

// httpLimits are the parsed http settings.
type httpLimits struct {
	MaxConns      int
	MaxConnsPerIP int // 0: no per-address limit
	IdleTimeout   time.Duration
	BodyTimeout   time.Duration
	MaxBodyBytes  int64
}

func defaultHTTPLimits() httpLimits {
	return httpLimits{MaxConns: 512, MaxConnsPerIP: 64, IdleTimeout: time.Minute, BodyTimeout: 30 * time.Second,
		MaxBodyBytes: 1 << 20}
}

// Fixed limits: not worth a setting.
const (
	// httpReadHeaderTimeout bounds how long a connection may take to send
	// its request line and headers, so a silent connection is closed.
	httpReadHeaderTimeout = 10 * time.Second
	// httpMaxHeaderBytes: MCP requests carry a handful of short headers.
	httpMaxHeaderBytes = 64 << 10
)

// loadHTTPLimits reads the http settings through lookup (flag first).
func loadHTTPLimits(lookup func(setting) (string, string, bool)) (httpLimits, error) {
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

// limitListener caps the connections the server holds: MaxConns in all
// (past it, Accept waits, so the process never runs out of descriptors
// and new clients queue in the kernel's backlog until a connection ends),
// and MaxConnsPerIP from one remote address (past it, the connection is
// closed at once, so one client cannot take every slot). Loopback peers are
// exempt from the per-address limit: on this machine they are the operator
// or a local reverse proxy that speaks for every client.
func limitListener(ln net.Listener, l httpLimits, refused prometheus.Counter) net.Listener {
	ln = netutil.LimitListener(ln, l.MaxConns)
	if l.MaxConnsPerIP > 0 {
		ln = &perAddrListener{Listener: ln, max: l.MaxConnsPerIP, exempt: netip.Addr.IsLoopback, open: map[netip.Addr]int{}, refused: refused}
	}
	return ln
}

// perAddrListener closes connections past max open from one address.
type perAddrListener struct {
	net.Listener
	max     int
	exempt  func(netip.Addr) bool
	refused prometheus.Counter

	mu   sync.Mutex
	open map[netip.Addr]int
}

func (l *perAddrListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil {
			return c, nil // not an IP connection (tests' pipes): nothing to count
		}
		addr := ap.Addr().Unmap()
		if l.exempt(addr) {
			return c, nil
		}
		l.mu.Lock()
		if l.open[addr] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			l.refused.Inc()
			continue
		}
		l.open[addr]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.open[addr]--; l.open[addr] <= 0 {
				delete(l.open, addr)
			}
		}}, nil
	}
}

// countedConn runs release once, on its first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// boundRequestBody reads a POST body before the MCP handler sees it, under
// a read deadline and a size cap. The deadline is set on the connection
// for the body alone and cleared once it is read: a server-wide
// ReadTimeout would also cut the long-lived event streams and the tool
// calls answered on them.
func boundRequestBody(l httpLimits, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(l.BodyTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.MaxBodyBytes))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			w.Header().Set("Connection", "close")
			var tooLarge *http.MaxBytesError
			var netErr net.Error
			switch {
			case errors.As(err, &tooLarge):
				writeJSONRPCError(w, http.StatusRequestEntityTooLarge, nullID, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("the request body is larger than the %d bytes this server accepts (%s)", l.MaxBodyBytes, setHTTPMaxBody.env))
			case errors.As(err, &netErr) && netErr.Timeout():
				writeJSONRPCError(w, http.StatusRequestTimeout, nullID, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("the request body did not arrive within %s (%s)", l.BodyTimeout, setHTTPBodyTimeout.env))
			default:
				writeJSONRPCError(w, http.StatusBadRequest, nullID, jsonrpc.CodeInvalidRequest, "reading the request body: "+err.Error())
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// writeJSONRPCError answers with status and a JSON-RPC error response, the
// form MCP clients (the go-sdk's among them) read from a refused POST.
func writeJSONRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonRPCError(id, code, message))
}
