package transport

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Tokens splits STAC_MCP_HTTP_TOKEN: one token, or several separated by
// commas (white space around each is dropped; an empty entry is ignored).
// Each token is one caller: the idempotency records of the write tools
// are scoped by a hash of the token a request carried (adr/0014), so an
// operator who gives each client its own token keeps their keys apart,
// while the holders of one token share them.
func Tokens(setting string) []string {
	var out []string
	for _, t := range strings.Split(setting, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// requireBearerToken lets a request through only with
// "Authorization: Bearer <token>" for one of the tokens of setting (see
// Tokens) when it names any. The comparison takes constant time over
// SHA-256 digests and checks every token (so neither a token's length, a
// matching prefix nor which token matched shows in the timing), and a
// refusal is a bare 401 that says nothing about why (no hint whether the
// header was missing or the token wrong) and closes the connection, so an
// unauthenticated client cannot keep it open. /healthz stays open so load
// balancers can probe without the secret; it reports nothing but "ok".
func requireBearerToken(setting string, next http.Handler) http.Handler {
	tokens := Tokens(setting)
	if len(tokens) == 0 {
		// No token admits anyone: a bearer token a client sends anyway is
		// no identity (the write tools would scope its idempotency keys by
		// it, letting one client make itself any number of callers).
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("Authorization")
			next.ServeHTTP(w, r)
		})
	}
	want := make([][sha256.Size]byte, len(tokens))
	for i, t := range tokens {
		want[i] = sha256.Sum256([]byte(t))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := bearerToken(r.Header.Get("Authorization"))
		digest := sha256.Sum256([]byte(got))
		match := 0
		for i := range want {
			match |= subtle.ConstantTimeCompare(digest[:], want[i][:])
		}
		if !ok || match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="stac-mcp"`)
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		markAuthenticated(r.Context()) // its connection keeps its slot (admitListener)
		next.ServeHTTP(w, r)
	})
}

// bearerToken reads "Bearer <token>" from an Authorization value. The scheme
// is case-insensitive and followed by one or more spaces (RFC 9110 §11.1, §11.4).
func bearerToken(header string) (string, bool) {
	scheme, rest, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token := strings.TrimLeft(rest, " ")
	return token, token != ""
}

// rejectForeignHost answers 403 when a request that came in on a loopback
// address names another host: a DNS-rebinding page in a browser (its name
// now resolving to 127.0.0.1) would otherwise read the answer. It is the
// check the SDK applies to /mcp, for every route behind it.
func rejectForeignHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if ok && local != nil && isLoopbackAddr(local.String()) && !isLoopbackAddr(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackAddr is IsLoopbackHost for "host:port" or a bare host.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	return IsLoopbackHost(host)
}

// rejectForeignOrigin answers 403 when a browser sends an Origin (or
// Sec-Fetch-Site) that is not this server's, as the MCP spec requires for
// Streamable HTTP. net/http's CrossOriginProtection does the comparison;
// it exempts GET, HEAD and OPTIONS, but the spec asks for every request
// (a GET opens the server's event stream), so each request is checked as
// if it were a POST. Clients that are not browsers send no Origin and
// pass.
func rejectForeignOrigin(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asPost := r.Clone(r.Context())
		asPost.Method = http.MethodPost
		if err := cop.Check(asPost); err != nil {
			http.Error(w, "Forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// inflightCalls counts the MCP requests being served (a GET is refused at
// once: the server offers no event stream), for the shutdown log and the
// http_requests_in_flight gauge.
type inflightCalls struct {
	mu sync.Mutex
	n  int
}

func (c *inflightCalls) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		c.add(1)
		defer c.add(-1)
		next.ServeHTTP(w, r)
	})
}

func (c *inflightCalls) add(d int) {
	c.mu.Lock()
	c.n += d
	c.mu.Unlock()
}

func (c *inflightCalls) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
