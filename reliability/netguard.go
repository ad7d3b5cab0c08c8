package reliability

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
)

// NetworkPolicy says which addresses upstream connections may reach. The
// check runs at dial time on the resolved address (net.Dialer.Control), so
// it covers every way a URL reaches the layer: catalog_url, next links,
// redirects, asset HEAD probes, and a host name that resolves to a private
// address (DNS rebinding included).
//
// The zero value allows everything: stdio and the one-shot commands, where
// the person who starts the server is the one it works for.
type NetworkPolicy struct {
	// DenyPrivate refuses loopback, private, link-local, shared (CGNAT),
	// unspecified and multicast addresses, in their IPv4-mapped forms too.
	DenyPrivate bool
	// AllowedHosts are reached even when DenyPrivate is set: host names
	// (matched case-insensitively against the URL's host, e.g.
	// stac.internal.example), IP addresses and CIDR prefixes (matched
	// against the resolved address, e.g. 10.20.0.0/16), and host:port
	// pairs (that port only: how cmd admits a configured catalog without
	// opening every port of its host). A bare host name here admits every
	// port; ParseAllowedHosts turns an operator's bare entry into its ports
	// 80 and 443.
	AllowedHosts []string
}

// ParseAllowedHosts checks an allow-list (STAC_MCP_ALLOWED_CATALOG_HOSTS):
// entries separated by ',', ';', spaces or newlines, each a host name or an
// IP address with or without a port, or a CIDR prefix. source names the
// setting in errors.
//
// An entry admits as little as it names: host:port admits that
// port; a bare host name or IP address admits the web's default ports, 80
// and 443, not every service of the host; a CIDR prefix admits every port of
// its addresses (a network the operator vouches for as a whole).
func ParseAllowedHosts(source, value string) ([]string, error) {
	var out []string
	for entry := range strings.FieldsFuncSeq(value, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	}) {
		entry = strings.ToLower(strings.TrimSpace(entry))
		if _, err := netip.ParsePrefix(entry); err == nil {
			out = append(out, entry)
			continue
		}
		host, port := entry, ""
		if h, p, err := net.SplitHostPort(entry); err == nil {
			host, port = h, p
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("%s: %q has no valid port (1-65535)", source, entry)
			}
		}
		host = strings.Trim(host, "[]")
		if _, err := netip.ParseAddr(host); err != nil {
			if host == "" || strings.ContainsAny(host, "/:@?#") || strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" {
				return nil, fmt.Errorf("%s: %q is not a host name or an IP address (with an optional port), or a CIDR prefix "+
					"(e.g. stac.internal.example, stac.internal.example:8443, 10.0.0.5, 10.20.0.0/16); give hosts without a scheme or path", source, entry)
			}
			host = strings.TrimSuffix(host, ".")
		}
		if port != "" {
			out = append(out, net.JoinHostPort(host, port))
			continue
		}
		out = append(out, net.JoinHostPort(host, "80"), net.JoinHostPort(host, "443"))
	}
	return out, nil
}

// dialGuard applies a NetworkPolicy in the dedicated transport's dialer.
type dialGuard struct {
	deny     bool
	names    map[string]bool // allowed host names and IP literals, as written in URLs
	prefixes []netip.Prefix  // allowed resolved addresses

	mu      sync.RWMutex
	trusted map[string]int // exact host:port reached regardless (in-process catalogs); a count per registration
}

func newDialGuard(p NetworkPolicy) *dialGuard {
	g := &dialGuard{deny: p.DenyPrivate, names: map[string]bool{}, trusted: map[string]int{}}
	for _, h := range p.AllowedHosts {
		h = strings.ToLower(h)
		if _, _, err := net.SplitHostPort(h); err == nil {
			g.names[h] = true
			continue
		}
		if pfx, err := netip.ParsePrefix(h); err == nil {
			g.prefixes = append(g.prefixes, pfx.Masked())
			continue
		}
		if a, err := netip.ParseAddr(h); err == nil {
			g.prefixes = append(g.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
		g.names[h] = true
	}
	return g
}

// wrap returns a DialContext that checks every connection d makes.
func (g *dialGuard) wrap(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	guarded := *d
	guarded.Control = g.control
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && inmemory.Reserved(host) {
			// In-process catalogs are served by the router above the
			// transport; their names never reach the network, whatever
			// the policy (adr/0025).
			return nil, &NetworkDeniedError{Host: addr, Addr: addr, Why: "a name reserved for in-process catalogs, which are never dialled"}
		}
		if !g.deny || g.allowedName(addr) {
			return d.DialContext(ctx, network, addr)
		}
		conn, err := guarded.DialContext(ctx, network, addr)
		var denied *NetworkDeniedError
		if errors.As(err, &denied) {
			denied.Host = addr
		}
		return conn, err
	}
}

// allowedName reports a host:port whose host the operator allowed by name,
// or an in-process catalog's exact address.
func (g *dialGuard) allowedName(addr string) bool {
	g.mu.RLock()
	trusted := g.trusted[addr] > 0
	g.mu.RUnlock()
	if trusted {
		return true
	}
	host, port, err := net.SplitHostPort(strings.ToLower(addr))
	if err != nil {
		return g.names[strings.TrimSuffix(strings.ToLower(addr), ".")]
	}
	host = strings.TrimSuffix(host, ".")
	return g.names[host] || g.names[net.JoinHostPort(host, port)]
}

// control runs after name resolution, before the connect: address is the
// IP and port the socket is about to reach.
func (g *dialGuard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &NetworkDeniedError{Addr: address, Why: "an address that could not be checked"}
	}
	ip := ap.Addr().Unmap()
	for _, p := range g.prefixes {
		if p.Contains(ip) {
			return nil
		}
	}
	if why := privateKind(ip); why != "" {
		return &NetworkDeniedError{Addr: address, Why: why}
	}
	return nil
}

// nonPublic are special-purpose ranges netip has no predicate for.
var nonPublic = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a 'this network' address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
}

// privateKind names why ip is not a public unicast address, or "".
func privateKind(ip netip.Addr) string {
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private-network address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata services live here)"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	if ip.Is6() {
		// NAT64 (64:ff9b::/96) carries an IPv4 address in its last 4 bytes.
		if nat64 := netip.MustParsePrefix("64:ff9b::/96"); nat64.Contains(ip) {
			b := ip.As16()
			return privateKind(netip.AddrFrom4([4]byte(b[12:])))
		}
		return ""
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(ip) {
			return r.why
		}
	}
	return ""
}

// trust lets connections reach addr (an exact host:port, e.g. an
// in-process catalog's 127.0.0.1 listener) until the returned func is
// called.
func (g *dialGuard) trust(addr string) (untrust func()) {
	g.mu.Lock()
	g.trusted[addr]++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.trusted[addr]--; g.trusted[addr] <= 0 {
				delete(g.trusted, addr)
			}
		})
	}
}

// NetworkDeniedError is a connection the NetworkPolicy refused. It is never
// retried: the same address would be refused again.
type NetworkDeniedError struct {
	Host string // host:port as the URL named it
	Addr string // the resolved address that was refused
	Why  string // "a loopback address", ...
}

func (e *NetworkDeniedError) Error() string {
	target := e.Addr
	if e.Host != "" && e.Host != e.Addr {
		target = e.Host + " (" + e.Addr + ")"
	}
	return fmt.Sprintf("not connecting to %s: it is %s, and this server does not reach private networks unless its operator allows them", target, e.Why)
}

// trustAddress lets upstream connections reach addr (host:port) even when
// the NetworkPolicy denies private addresses (tests' loopback servers; the
// in-process catalogs need no address, adr/0025). Call the returned func
// when the listener closes.
func (l *Layer) trustAddress(addr string) (untrust func()) {
	if l.guard == nil {
		return func() {}
	}
	return l.guard.trust(addr)
}
