package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// Searching Earth Search and Planetary Computer in one call, over stdio,
// as a new user would: the binary, its presets by name, nothing configured
// but the network. The network is a loopback HTTPS proxy (HTTPS_PROXY)
// that answers for both catalogs' hosts, with certificates of a test CA
// the binary trusts through SSL_CERT_FILE; behind it each catalog serves
// its recorded items (tools/internal/federation/fedtest/testdata) with its
// own landing page (Earth Search's as recorded) and paging style.

// recordedCatalogs are the handlers of both catalogs' hosts.
func recordedCatalogs(t *testing.T) map[string]http.Handler {
	t.Helper()
	dir := filepath.Join("..", "..", "tools", "internal", "federation", "fedtest", "testdata", "real-stac")
	read := func(path string) (status int, body json.RawMessage, features []json.RawMessage) {
		raw, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Status int             `json:"status"`
			Body   json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		var page struct {
			Features []json.RawMessage `json:"features"`
		}
		_ = json.Unmarshal(rec.Body, &page)
		return rec.Status, rec.Body, page.Features
	}
	serve := func(basePath string, style stacserver.NextLinkStyle, requireCollections bool, features []json.RawMessage) *stacserver.Server {
		store := stacserver.NewStore()
		if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"sentinel-2-l2a","description":"Sentinel-2 L2A (recorded items)",
			"license":"proprietary","links":[],"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[["2015-06-27T00:00:00Z",null]]}}}`)); err != nil {
			t.Fatal(err)
		}
		for _, f := range features {
			var head struct{ Collection string }
			_ = json.Unmarshal(f, &head)
			if head.Collection != "sentinel-2-l2a" {
				continue
			}
			if err := store.AddItem(f); err != nil {
				t.Fatal(err)
			}
		}
		return stacserver.New(store, stacserver.Options{BasePath: basePath, NextLinkStyle: style, RequireCollections: requireCollections})
	}
	var es []json.RawMessage
	for _, f := range []string{"0005-POST-v1-search-b80653.json", "0006-POST-v1-search-264dd1.json"} {
		_, _, features := read("earth-search.aws.element84.com/" + f)
		es = append(es, features...)
	}
	_, _, pc := read("planetarycomputer.microsoft.com/0036-POST-api-stac-v1-search-bbb629.json")
	esAPI := serve("/v1", stacserver.NextPOSTMergeFalse, false, es)
	_, esRoot, _ := read("earth-search.aws.element84.com/0001-GET-v1-f63c21.json")
	return map[string]http.Handler{
		"earth-search.aws.element84.com": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/v1" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(esRoot) // the landing page as Earth Search answered it
				return
			}
			esAPI.ServeHTTP(w, r)
		}),
		"planetarycomputer.microsoft.com": serve("/api/stac/v1", stacserver.NextPOSTBodyToken, true, pc),
	}
}

// tlsProxy is an HTTPS proxy on loopback: CONNECT to a host it serves
// gets TLS with a certificate for that host from its own CA, then that
// host's handler; any other host is refused.
type tlsProxy struct {
	addr   string
	caFile string
	ln     net.Listener
	conns  chan net.Conn
	mu     sync.Mutex
	seen   map[string]int
}

func newTLSProxy(t *testing.T, hosts map[string]http.Handler) *tlsProxy {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stac-mcp test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := &tlsProxy{caFile: filepath.Join(t.TempDir(), "ca.pem"), conns: make(chan net.Conn), seen: map[string]int{}}
	if err := os.WriteFile(p.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	certs := map[string]*tls.Certificate{}
	for host := range hosts {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(len(certs) + 2)), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		certs[host] = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	tlsCfg := &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if c := certs[h.ServerName]; c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("no certificate for %q", h.ServerName)
	}}
	// The TLS side: one HTTP server over the connections CONNECT opened.
	inner := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		p.mu.Lock()
		p.seen[host]++
		p.mu.Unlock()
		if h := hosts[host]; h != nil {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, "not served by the test proxy", http.StatusBadGateway)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = inner.Serve(&chanListener{conns: p.conns, addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}) }()
	outer := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		if r.Method != http.MethodConnect || hosts[host] == nil {
			http.Error(w, "this test proxy only tunnels to "+fmt.Sprint(len(hosts))+" catalog hosts", http.StatusForbidden)
			return
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
		_ = buf.Flush()
		p.conns <- tls.Server(conn, tlsCfg)
	}), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	go func() { _ = outer.Serve(ln) }()
	t.Cleanup(func() {
		_ = outer.Close()
		_ = inner.Close()
	})
	return p
}

func (p *tlsProxy) requests(host string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[host]
}

// chanListener hands an http.Server the connections sent to it.
type chanListener struct {
	conns  chan net.Conn
	addr   net.Addr
	once   sync.Once
	closed chan struct{}
}

func (l *chanListener) init() { l.once.Do(func() { l.closed = make(chan struct{}) }) }

func (l *chanListener) Accept() (net.Conn, error) {
	l.init()
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.init()
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

func TestSearchTwoPresetCatalogsOverStdio(t *testing.T) {
	t.Parallel()
	proxy := newTLSProxy(t, recordedCatalogs(t))
	cmd := exec.Command(binary(t), "stdio")
	cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=warn", "XDG_STATE_HOME="+t.TempDir(),
		"HTTPS_PROXY=http://"+proxy.addr, "https_proxy=http://"+proxy.addr, "NO_PROXY=", "no_proxy=", "SSL_CERT_FILE="+proxy.caFile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	id := 0
	call := func(method string, params any) map[string]any {
		t.Helper()
		id++
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := io.WriteString(stdin, string(req)+"\n"); err != nil {
			t.Fatalf("writing: %v; stderr: %s", err, stderr.String())
		}
		deadline := time.After(patience)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed; stderr:\n%s", stderr.String())
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("not JSON: %q", line)
				}
				if m["id"] == float64(id) {
					return m
				}
			case <-deadline:
				t.Fatalf("no answer to %s; stderr:\n%s", method, stderr.String())
			}
		}
	}
	call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "federation-test", "version": "0"}})
	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")

	type page struct {
		Returned int    `json:"returned"`
		Cursor   string `json:"cursor"`
		Items    []struct {
			ID, Catalog, Datetime string
		} `json:"items"`
		Catalogs []struct {
			Catalog, Status string
			Returned        int
		} `json:"catalogs"`
	}
	search := func(args map[string]any) (page, string) {
		t.Helper()
		m := call("tools/call", map[string]any{"name": "search_items", "arguments": args})
		res, _ := m["result"].(map[string]any)
		if res == nil || res["isError"] == true {
			t.Fatalf("search_items %v: %v; stderr:\n%s", args, m, stderr.String())
		}
		raw, _ := json.Marshal(res["structuredContent"])
		var p page
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, c := range res["content"].([]any) {
			if c.(map[string]any)["type"] == "text" {
				text.WriteString(c.(map[string]any)["text"].(string))
			}
		}
		return p, text.String()
	}
	first, text := search(map[string]any{"catalog_url": []string{"earth-search", "planetary-computer"}, "collections": []string{"sentinel-2-l2a"}, "max_items": 10})
	if first.Returned != 10 || len(first.Catalogs) != 2 || first.Cursor == "" {
		t.Fatalf("first page: %+v\n%s", first, text)
	}
	for _, c := range first.Catalogs {
		if c.Status != "answered" {
			t.Errorf("%s: %s\n%s", c.Catalog, c.Status, text)
		}
	}
	// Newest first across catalogs: Earth Search's 2025 scenes, then
	// Planetary Computer's 2019 datatake, each item naming its catalog.
	for i, it := range first.Items {
		want := "planetary-computer"
		if strings.HasPrefix(it.Datetime, "2025") {
			want = "earth-search"
		}
		if it.Catalog != want || !strings.Contains(text, it.ID+" | sentinel-2-l2a") || !strings.Contains(text, "from "+want) {
			t.Errorf("item %d %s (%s) from %q (want %s), or not in the text", i, it.ID, it.Datetime, it.Catalog, want)
		}
		if i > 0 && it.Datetime > first.Items[i-1].Datetime {
			t.Errorf("item %d (%s) is newer than item %d (%s)", i, it.Datetime, i-1, first.Items[i-1].Datetime)
		}
	}
	if first.Items[0].Catalog != "earth-search" || first.Items[len(first.Items)-1].Catalog != "planetary-computer" {
		t.Errorf("the page does not hold both catalogs' items: %+v", first.Items)
	}
	second, _ := search(map[string]any{"cursor": first.Cursor, "max_items": 10})
	seen := map[string]bool{}
	for _, it := range append(first.Items, second.Items...) {
		if seen[it.ID] {
			t.Errorf("%s returned twice", it.ID)
		}
		seen[it.ID] = true
	}
	if second.Returned != 10 || second.Items[0].Catalog != "planetary-computer" {
		t.Errorf("second page: %+v", second)
	}
	if proxy.requests("earth-search.aws.element84.com") == 0 || proxy.requests("planetarycomputer.microsoft.com") == 0 {
		t.Error("a catalog was never asked through the proxy")
	}
}
