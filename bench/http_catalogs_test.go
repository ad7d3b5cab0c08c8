package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// BenchmarkHTTPDistinctCatalogURLs: the resident memory of a `stac-mcp
// http` process (the real binary, default settings but private networks
// allowed) after one client has called get_root with N distinct
// catalog_urls of one catalog that answers (the demo catalog on a loopback
// stacserver; the URLs differ by a query string). Everything the server
// keeps per URL is bounded, so the growth levels off (at about twice the
// response cache's bound). Reports the growth over the RSS after one call
// (rss_growth_MiB) and the final RSS (rss_MiB), Linux only (/proc). The
// environment reaches the server: STAC_MCP_CACHE_MAX_BYTES=... go test ...
//
//	go test -run '^$' -bench HTTPDistinctCatalogURLs -benchtime 1x ./bench/
func BenchmarkHTTPDistinctCatalogURLs(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads the server's RSS from /proc")
	}
	bin := filepath.Join(b.TempDir(), "stac-mcp")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/stac-mcp").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		b.Fatal(err)
	}
	catalog := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	b.Cleanup(catalog.Close)
	for _, urls := range []int{2000, 4000, 8000, 16000} {
		b.Run(fmt.Sprintf("urls=%d", urls), func(b *testing.B) {
			var growth, final float64
			for b.Loop() {
				g, f := distinctURLsRSS(b, bin, catalog.URL, urls)
				growth += g
				final += f
			}
			b.ReportMetric(growth/float64(b.N), "rss_growth_MiB")
			b.ReportMetric(final/float64(b.N), "rss_MiB")
		})
	}
}

// distinctURLsRSS starts the server, makes one warm-up call and then urls
// get_root calls, each naming a new catalog URL, and returns the RSS growth
// and the final RSS in MiB.
func distinctURLsRSS(b *testing.B, bin, catalogURL string, urls int) (growth, final float64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "http", "--addr", "127.0.0.1:0", "--catalog", "demo", "--log-level", "info")
	cmd.Env = append(os.Environ(), "STAC_MCP_ALLOW_PRIVATE_NETWORKS=true", "XDG_STATE_HOME="+b.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	defer cancel()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
				select {
				case addr <- line.Addr:
				default:
				}
			}
		}
	}()
	var endpoint string
	select {
	case a := <-addr:
		endpoint = "http://" + a + "/mcp"
	case <-time.After(30 * time.Second):
		b.Fatal("the server did not log its address")
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func(ref string) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{"catalog_url": ref}})
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("get_root %s: %s", ref, textOf(res))
		}
	}
	call(catalogURL + "/?warm")
	before := rssMiB(b, cmd.Process.Pid)
	for i := range urls {
		call(catalogURL + "/?x=" + strconv.Itoa(i))
	}
	after := rssMiB(b, cmd.Process.Pid)
	return after - before, after
}

// rssMiB is VmRSS of process pid.
func rssMiB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS in /proc/pid/status")
	return 0
}
