package catalog

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/tools/internal/catalog/catalogtest"
)

// Every spelling of one local catalog shares one server.
func TestCatalogsLocalAliasesShareOneServer(t *testing.T) {
	dir := t.TempDir()
	path := catalogtest.WriteLocal(t, dir)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	t.Chdir(filepath.Dir(dir))
	cats := New(Options{HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	var urls []string
	for _, ref := range []string{dir, dir + "/", path, "./" + filepath.Base(dir), filepath.Base(dir) + "/catalog.json",
		link, filepath.Join(link, "catalog.json"), "file://" + path, dir + "/./coll/../catalog.json"} {
		cat, err := cats.Resolve(t.Context(), ref)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", ref, err)
		}
		if cat.Ref != ref {
			t.Errorf("Ref = %q, want %q as given", cat.Ref, ref)
		}
		urls = append(urls, cat.URL)
	}
	if n := len(cats.servers); n != 1 {
		t.Errorf("%d in-process servers for one catalog (URLs %v), want 1", n, urls)
	}
}

// Over http a tool argument may not name a local path at
// all, and the refusal is the same whether the path exists or not.
func TestCatalogsUntrustedCallersCannotNameLocalPaths(t *testing.T) {
	dir := t.TempDir()
	path := catalogtest.WriteLocal(t, dir)
	other := catalogtest.WriteLocal(t, t.TempDir())
	named, err := ParseNamed("STAC_MCP_CATALOGS", "archive="+other)
	if err != nil {
		t.Fatal(err)
	}
	cats := New(Options{Default: path, HTTPClient: &http.Client{}, Named: named, UntrustedCallers: true})
	defer func() { _ = cats.Close() }()
	for _, ref := range []string{path, dir, "file://" + path, "/dev/zero", "/etc/passwd", filepath.Join(dir, "nope.json"), "../" + filepath.Base(dir)} {
		_, err := cats.Resolve(t.Context(), ref)
		if err == nil {
			t.Errorf("Resolve(%q) was accepted from an untrusted caller", ref)
			continue
		}
		msg := strings.ReplaceAll(err.Error(), ref, "REF")
		if !strings.Contains(msg, "does not open local paths named by a tool call") || !strings.Contains(msg, "STAC_MCP_CATALOGS") ||
			strings.Contains(msg, "no such file") || strings.Contains(msg, "directory") || strings.Contains(msg, "regular") {
			t.Errorf("Resolve(%q) = %q; want the same refusal for every path, saying nothing about the file", ref, msg)
		}
	}
	if len(cats.servers) != 0 {
		t.Errorf("refused paths started %d servers", len(cats.servers))
	}
	// The operator's own local catalogs still work: the default and names.
	if cat, err := cats.Resolve(t.Context(), ""); err != nil || cat.Name != "local" {
		t.Errorf("default local catalog: %+v, %v", cat, err)
	}
	if cat, err := cats.Resolve(t.Context(), "ARCHIVE"); err != nil || cat.Name != "archive" {
		t.Errorf("named local catalog: %+v, %v", cat, err)
	}
}

// Device files and FIFOs are refused without being opened
// (a FIFO used to block Resolve forever while holding the catalogs lock).
func TestCatalogsRefuseSpecialFilesWithoutBlocking(t *testing.T) {
	cats := New(Options{HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	refs := []string{"/dev/zero", "/dev/null"}
	if fifo := makeFIFO(t); fifo != "" {
		refs = append(refs, fifo)
	}
	for _, ref := range refs {
		if _, err := os.Stat(ref); err != nil {
			continue
		}
		// The refusal comes before any read, so no deadline is needed to
		// get it; these bounds only end a Resolve that blocks (its error
		// would then be the deadline's, not the refusal).
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := cats.Resolve(ctx, ref)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Resolve(%q) = %v, want a refusal: not a regular file", ref, err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("Resolve(%q) did not return", ref)
		}
	}
}

// Loading one catalog holds no lock that other references need, and a
// caller stops waiting at its own deadline.
func TestCatalogsLoadingDoesNotBlockOtherCatalogs(t *testing.T) {
	cats := New(Options{HTTPClient: &http.Client{}})
	defer func() { _ = cats.Close() }()
	release := make(chan struct{})
	defer close(release)
	var loads sync.WaitGroup
	loads.Add(1)
	slow := func(ctx context.Context) (*staticStore, error) {
		loads.Done()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("released")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		_, err := cats.inProcess(ctx, "slow", "local", "/slow/catalog.json", slow)
		waited <- err
	}()
	loads.Wait()
	other := catalogtest.WriteLocal(t, t.TempDir())
	for _, ref := range []string{"https://stac.example/v1", "demo", other} {
		if _, err := cats.Resolve(t.Context(), ref); err != nil {
			t.Errorf("Resolve(%q) while another catalog loads: %v", ref, err)
		}
	}
	select {
	case err := <-waited:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the slow load ended with %v, want the caller's deadline", err)
		}
	case <-time.After(time.Minute): // only ends a caller that never stops
		t.Fatal("the caller of a slow load did not stop at its deadline")
	}
}

// recordingTransport answers 200 with no body to everything and records
// each request's headers by host and path, so presets can be "contacted"
// offline.
type recordingTransport struct {
	mu   sync.Mutex
	seen map[string][]http.Header
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	if r.seen == nil {
		r.seen = map[string][]http.Header{}
	}
	key := req.URL.Host + req.URL.Path
	r.seen[key] = append(r.seen[key], req.Header.Clone())
	r.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: http.NoBody, Request: req}, nil
}

func (r *recordingTransport) headers(hostPath string) []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[hostPath]
}

// STAC_MCP_HEADERS go to the default catalog only, and
// per-catalog headers to their catalog only: never to a caller's URL, a
// preset the operator configured nothing for, or another named catalog.
func TestHeadersGoOnlyToTheirConfiguredCatalog(t *testing.T) {
	rt := &recordingTransport{}
	named, err := ParseNamed("STAC_MCP_CATALOGS", "internal=https://stac.internal.example/v1,plain=https://plain.example/stac")
	if err != nil {
		t.Fatal(err)
	}
	cats := New(Options{
		Default:    "https://private.example/stac",
		HTTPClient: &http.Client{Transport: rt},
		Headers:    http.Header{"Authorization": {"Bearer DEFAULT-SECRET"}},
		CatalogHeaders: map[string]http.Header{
			"internal":           {"X-Api-Key": {"INTERNAL-SECRET"}},
			"planetary-computer": {"Ocp-Apim-Subscription-Key": {"PC-SECRET"}},
		},
		Named: named,
	})
	defer func() { _ = cats.Close() }()
	visit := func(ref string) {
		t.Helper()
		cat, err := cats.Resolve(t.Context(), ref)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", ref, err)
		}
		_, _ = cat.Client.Root(t.Context()) // the answer does not matter, the headers do
	}
	for _, ref := range []string{"", "https://private.example/stac/", "internal", "plain", "earth-search", "planetary-computer",
		"https://attacker.example/stac", "https://stac.internal.example/other"} {
		visit(ref)
	}
	secrets := []string{"DEFAULT-SECRET", "INTERNAL-SECRET", "PC-SECRET"}
	want := map[string]string{ // host and root path: the only secret it may see ("" none)
		"private.example/stac":                        "DEFAULT-SECRET",
		"stac.internal.example/v1":                    "INTERNAL-SECRET",
		"stac.internal.example/other":                 "", // a caller's URL on a configured host is not the configured catalog
		"plain.example/stac":                          "",
		"earth-search.aws.element84.com/v1":           "",
		"planetarycomputer.microsoft.com/api/stac/v1": "PC-SECRET",
		"attacker.example/stac":                       "",
	}
	for host, allowed := range want {
		seen := rt.headers(host)
		if len(seen) == 0 {
			t.Errorf("%s was never contacted", host)
		}
		for _, h := range seen {
			all := strings.Join(append(append(h.Values("Authorization"), h.Values("X-Api-Key")...), h.Values("Ocp-Apim-Subscription-Key")...), " ")
			for _, s := range secrets {
				switch present := strings.Contains(all, s); {
				case present && s != allowed:
					t.Errorf("%s received %s (headers %v); it may see only %q", host, s, h, allowed)
				case !present && s == allowed:
					t.Errorf("%s: its configured header %s was not sent (headers %v)", host, s, h)
				}
			}
		}
	}
}
