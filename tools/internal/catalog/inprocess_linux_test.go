//go:build linux

package catalog

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/tools/internal/catalog/catalogtest"
)

// listeningSockets counts the TCP sockets of this process in the LISTEN
// state, from /proc: the sockets among its file descriptors that
// /proc/self/net/tcp{,6} lists with state 0A.
func listeningSockets(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" && inodes[fields[9]] {
				n++
			}
		}
		_ = f.Close()
	}
	return n
}

// noNetwork fails every request that would leave the process.
type noNetwork struct{ t *testing.T }

func (n noNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	n.t.Errorf("request for %s reached the network transport", req.URL)
	return nil, errors.New("network disabled in this test")
}

// The demo and a writable local catalog are served with
// no listening socket, so no other local user, browser page or
// DNS-rebinding site can read or write them; they work with the network
// transport disabled. On the old code each opened a 127.0.0.1 listener.
func TestInProcessCatalogsOpenNoSocket(t *testing.T) {
	before := listeningSockets(t)
	path := catalogtest.WriteLocal(t, t.TempDir())
	cats := New(Options{Default: path, HTTPClient: &http.Client{Transport: noNetwork{t}}, WritableLocal: true})
	defer func() { _ = cats.Close() }()
	ctx := context.Background()
	demoCat, err := cats.Resolve(ctx, Demo)
	if err != nil {
		t.Fatal(err)
	}
	local, err := cats.Resolve(ctx, "") // the operator's: writable
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demoCat.Client.Root(ctx); err != nil {
		t.Errorf("demo root: %v", err)
	}
	if _, err := local.Client.Root(ctx); err != nil {
		t.Errorf("local root: %v", err)
	}
	// A write reaches the local catalog in memory only.
	resp, err := cats.opts.HTTPClient.Post(local.URL+"/collections", "application/json",
		strings.NewReader(`{"type":"Collection","stac_version":"1.0.0","id":"new","description":"d","license":"proprietary","extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("create collection in memory: %s %s", resp.Status, body)
	}
	if after := listeningSockets(t); after != before {
		t.Errorf("listening TCP sockets went from %d to %d; in-process catalogs must open none", before, after)
	}
	for _, u := range []string{demoCat.URL, local.URL} {
		if !strings.HasSuffix(strings.TrimPrefix(u, "http://"), ".stac-mcp.invalid") {
			t.Errorf("in-process URL %s is not under the reserved domain", u)
		}
	}
}
