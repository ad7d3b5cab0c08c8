package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/prometheus/client_golang/prometheus"
)

// Limits bound what one client may take from the others
// (adr/0010-http-exposure-limits.md). The server keeps no sessions
// (adr/0015), and a connection carries one request at a time (HTTP/1.1; no
// HTTP/2 without TLS), so the connection cap also bounds the requests
// served at once.
type Limits struct {
	MaxConns      int           // client connections open at once; past it Accept waits
	MaxConnsPerIP int           // from one non-loopback address; past it closed at once; 0: no per-address limit
	IdleTimeout   time.Duration // keep-alive connections idle this long are closed
	BodyTimeout   time.Duration // a request body must arrive within this time
	MaxBodyBytes  int64         // a larger request body is answered 413
}

// Fixed limits: not worth a setting.
const (
	// httpReadHeaderTimeout bounds how long a connection may take to send
	// its request line and headers, so a silent connection is closed.
	httpReadHeaderTimeout = 10 * time.Second
	// httpMaxHeaderBytes: MCP requests carry a handful of short headers.
	httpMaxHeaderBytes = 64 << 10
)

// limitListener caps the connections the server holds: MaxConns in all
// and MaxConnsPerIP from one remote address (past it, the connection is
// closed at once, so one client cannot take every slot). Loopback peers are
// exempt from the per-address limit: on this machine they are the operator
// or a local reverse proxy that speaks for every client. So that exemption
// cannot starve anyone, a connection that has not proven the token (and is
// not serving a request) gives its slot up when the cap is reached and
// another client connects (admitListener); only when every slot
// is busy or authenticated does Accept wait, and new clients queue in the
// kernel's backlog until a connection ends.
func limitListener(ln net.Listener, l Limits, refused prometheus.Counter) *admitListener {
	if l.MaxConnsPerIP > 0 {
		ln = &perAddrListener{Listener: ln, max: l.MaxConnsPerIP, exempt: netip.Addr.IsLoopback, open: map[netip.Addr]int{}, refused: refused}
	}
	return newAdmitListener(ln, l.MaxConns)
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
			return c, nil //nolint:nilerr // not an IP connection (tests' pipes): nothing to count
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
// calls answered on them. The refusals name the settings that raise the
// limits (maxBodySetting, bodyTimeoutSetting), for the client's operator.
func boundRequestBody(l Limits, maxBodySetting, bodyTimeoutSetting string, next http.Handler) http.Handler {
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
					fmt.Sprintf("the request body is larger than the %d bytes this server accepts (%s)", l.MaxBodyBytes, maxBodySetting))
			case errors.As(err, &netErr) && netErr.Timeout():
				writeJSONRPCError(w, http.StatusRequestTimeout, nullID, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("the request body did not arrive within %s (%s)", l.BodyTimeout, bodyTimeoutSetting))
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
