package reliability

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// guardedLayer uses the dedicated transport (Transport nil), whose dialer
// applies the NetworkPolicy.
func guardedLayer(t *testing.T, np NetworkPolicy) *Layer {
	t.Helper()
	p := noCache()
	p.BackoffBase = time.Millisecond
	log := zerolog.Nop()
	return New(p, Options{Logger: &log, Network: np, Advice: testAdvice})
}

// countingServer answers 200 {} and counts requests; it closes every
// connection so no keep-alive goroutine outlives the test.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func getThrough(t *testing.T, l *Layer, rawURL string) error {
	t.Helper()
	_, err := l.Run(t.Context(), "get_root", "", func(ctx contextLike) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		resp, err := l.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	return err
}

// Over http a loopback catalog_url (here an httptest
// server, which is "private" for the guard) is refused at dial time, once,
// with advice naming the settings that allow it.
func TestDialGuardRefusesLoopbackOnceWithAdvice(t *testing.T) {
	srv, hits := countingServer(t)
	l := guardedLayer(t, NetworkPolicy{DenyPrivate: true})
	err := getThrough(t, l, srv.URL+"/")
	var d *Denial
	if !errors.As(err, &d) {
		t.Fatalf("err = %v, want a *Denial", err)
	}
	var denied *NetworkDeniedError
	if !errors.As(err, &denied) || d.ErrorClass != classNetworkDenied || d.Code != CodeNotRetryable || d.Attempts != 1 {
		t.Errorf("denial %+v (err %v): want one not_retryable attempt of class %s wrapping *NetworkDeniedError", d, err, classNetworkDenied)
	}
	msg := err.Error()
	for _, want := range []string{"loopback", "STAC_MCP_ALLOW_PRIVATE_NETWORKS", "STAC_MCP_ALLOWED_CATALOG_HOSTS", srv.Listener.Addr().String()} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the refused server got %d request(s)", hits.Load())
	}
}

func TestDialGuardAllowsWhatTheOperatorAllowed(t *testing.T) {
	srv, hits := countingServer(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	cases := []struct {
		name string
		np   NetworkPolicy
		url  string
	}{
		{"no policy (stdio)", NetworkPolicy{}, srv.URL},
		{"IP allowed", NetworkPolicy{DenyPrivate: true, AllowedHosts: []string{"127.0.0.1"}}, srv.URL},
		{"CIDR allowed", NetworkPolicy{DenyPrivate: true, AllowedHosts: []string{"127.0.0.0/8"}}, srv.URL},
		{"host name allowed", NetworkPolicy{DenyPrivate: true, AllowedHosts: []string{"localhost"}}, "http://localhost:" + port},
	}
	for _, c := range cases {
		before := hits.Load()
		if err := getThrough(t, guardedLayer(t, c.np), c.url+"/"); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if hits.Load() != before+1 {
			t.Errorf("%s: the server was not reached", c.name)
		}
	}
}

// In-process catalogs (demo, local static catalogs) listen on 127.0.0.1:
// trustAddress lets exactly that address through, until it is revoked.
func TestDialGuardTrustsInProcessAddressOnly(t *testing.T) {
	trusted, _ := countingServer(t)
	other, otherHits := countingServer(t)
	l := guardedLayer(t, NetworkPolicy{DenyPrivate: true})
	untrust := l.trustAddress(trusted.Listener.Addr().String())
	if err := getThrough(t, l, trusted.URL+"/"); err != nil {
		t.Fatalf("trusted address: %v", err)
	}
	if err := getThrough(t, l, other.URL+"/"); err == nil || otherHits.Load() != 0 {
		t.Errorf("another loopback port was reached (err %v)", err)
	}
	untrust()
	if err := getThrough(t, l, trusted.URL+"/x"); err == nil {
		t.Error("the address stayed trusted after untrust")
	}
}

// A redirect from an allowed catalog to a private address is refused too:
// the guard runs at every dial, not on the first URL only.
func TestDialGuardCoversRedirects(t *testing.T) {
	target, targetHits := countingServer(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		http.Redirect(w, r, target.URL+"/secret", http.StatusFound)
	}))
	defer front.Close()
	l := guardedLayer(t, NetworkPolicy{DenyPrivate: true})
	defer l.trustAddress(front.Listener.Addr().String())()
	err := getThrough(t, l, front.URL+"/")
	var denied *NetworkDeniedError
	if !errors.As(err, &denied) || targetHits.Load() != 0 {
		t.Errorf("redirect to a private address: err %v, target hits %d; want refused", err, targetHits.Load())
	}
}

func TestPrivateKind(t *testing.T) {
	for addr, private := range map[string]bool{
		"127.0.0.1": true, "::1": true, "::ffff:127.0.0.1": true, "10.1.2.3": true, "::ffff:10.1.2.3": true,
		"172.16.0.1": true, "192.168.1.1": true, "169.254.169.254": true, "fe80::1": true, "fd00::1": true,
		"0.0.0.0": true, "::": true, "100.64.0.1": true, "64:ff9b::a9fe:a9fe": true, "224.0.0.1": true,
		"8.8.8.8": false, "2606:4700::1111": false, "64:ff9b::808:808": false, "::ffff:1.1.1.1": false,
	} {
		ip := netip.MustParseAddr(addr).Unmap()
		if got := privateKind(ip) != ""; got != private {
			t.Errorf("%s: private = %v, want %v (%q)", addr, got, private, privateKind(ip))
		}
	}
}

func TestParseAllowedHosts(t *testing.T) {
	got, err := ParseAllowedHosts("X", "stac.internal.example, 10.0.0.5;10.20.0.0/16\n[fd00::1] Localhost. stac.internal.example:8443 [fd00::2]:9000")
	if err != nil {
		t.Fatal(err)
	}
	// A bare name or address admits ports 80 and 443 only;
	// host:port that port; a CIDR prefix its whole range.
	want := []string{"stac.internal.example:80", "stac.internal.example:443", "10.0.0.5:80", "10.0.0.5:443", "10.20.0.0/16",
		"[fd00::1]:80", "[fd00::1]:443", "localhost:80", "localhost:443", "stac.internal.example:8443", "[fd00::2]:9000"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"https://stac.internal", "host:0", "host:http", "a/b", "x@y", ":8080"} {
		if _, err := ParseAllowedHosts("STAC_MCP_ALLOWED_CATALOG_HOSTS", bad); err == nil || !strings.Contains(err.Error(), "STAC_MCP_ALLOWED_CATALOG_HOSTS") {
			t.Errorf("%q: err %v, want a refusal naming the setting", bad, err)
		}
	}
}

// A configured catalog, or an STAC_MCP_ALLOWED_CATALOG_HOSTS entry, is
// admitted by host:port, not its whole host: the other loopback ports stay
// closed. A bare name admits 80 and 443 only.
func TestDialGuardHostPortEntryAdmitsThatPortOnly(t *testing.T) {
	srv, hits := countingServer(t)
	other, otherHits := countingServer(t)
	l := guardedLayer(t, NetworkPolicy{DenyPrivate: true, AllowedHosts: []string{srv.Listener.Addr().String()}})
	if err := getThrough(t, l, srv.URL+"/"); err != nil || hits.Load() != 1 {
		t.Errorf("the admitted host:port: %v", err)
	}
	if err := getThrough(t, l, other.URL+"/"); err == nil || otherHits.Load() != 0 {
		t.Errorf("another port of the same host was reached (err %v)", err)
	}
	bare, err := ParseAllowedHosts("STAC_MCP_ALLOWED_CATALOG_HOSTS", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	l = guardedLayer(t, NetworkPolicy{DenyPrivate: true, AllowedHosts: bare})
	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	if err := getThrough(t, l, "http://localhost:"+port+"/"); err == nil || otherHits.Load() != 0 {
		t.Errorf("a bare allowed name opened port %s of its host (err %v)", port, err)
	}
}
