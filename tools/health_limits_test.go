package tools

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// anyHostCatalog answers every host in memory with a minimal STAC landing
// page, so a test can name as many catalog hosts as it likes without a
// byte leaving the process.
type anyHostCatalog struct{}

func (anyHostCatalog) RoundTrip(req *http.Request) (*http.Response, error) {
	body := fmt.Sprintf(`{"type":"Catalog","id":%q,"stac_version":"1.0.0","description":"in-memory","links":[],"conformsTo":[]}`, req.URL.Hostname())
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}, nil
}

// TestManyCatalogHostsKeepHealthAndMetricsBounded (issue 9, item 9): a
// client naming many distinct catalog hosts no longer grows /metrics and
// get_service_health with them. The report lists at most 50 hosts and says
// how many it left out; /metrics gives the first 64 unconfigured hosts
// their own label and the rest share "other".
func TestManyCatalogHostsKeepHealthAndMetricsBounded(t *testing.T) {
	d := newTestDeps(t, testSessionOptions{Transport: anyHostCatalog{}})
	cs := connect(t, newServer(d, "test", Inventory()))
	const hosts = 120
	for i := range hosts {
		callOK(t, cs, "get_root", map[string]any{"catalog_url": fmt.Sprintf("https://h%03d.example/stac", i)})
	}
	res := callOK(t, cs, "get_service_health", map[string]any{})
	out := structured[map[string]any](t, res)
	listed, _ := out["hosts"].([]any)
	if len(listed) != 50 || out["omitted_hosts"] != float64(hosts-50) {
		t.Errorf("report lists %d hosts with omitted_hosts=%v; want 50 and %d", len(listed), out["omitted_hosts"], hosts-50)
	}
	if text := resultText(res); !strings.Contains(text, fmt.Sprintf("%d more host(s) not shown", hosts-50)) {
		t.Errorf("the text does not say how many hosts were left out:\n%s", text)
	}

	rec := httptest.NewRecorder()
	d.Layer.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	labels := map[string]bool{}
	for _, m := range regexp.MustCompile(`host="([^"]*)"`).FindAllStringSubmatch(rec.Body.String(), -1) {
		labels[m[1]] = true
	}
	if len(labels) > 64+1 || !labels["other"] {
		t.Errorf("/metrics has %d distinct host labels (other: %v); want at most 64 hosts plus \"other\"", len(labels), labels["other"])
	}
}

// TestServiceHealthOfASharedServerShowsOnlyThisSessionsHosts: with
// SessionScoped (http), a session sees the configured catalogs and the
// hosts it used, never another session's catalog_url, not even by naming it.
func TestServiceHealthOfASharedServerShowsOnlyThisSessionsHosts(t *testing.T) {
	d := newTestDeps(t, testSessionOptions{Transport: anyHostCatalog{}, CatalogURL: "https://configured.example/stac"})
	d.SessionScoped = true
	srv := newServer(d, "test", Inventory())
	alice, bob := connect(t, srv), connect(t, srv)
	callOK(t, alice, "get_root", map[string]any{"catalog_url": "https://alice-private.example/stac"})
	callOK(t, bob, "get_root", map[string]any{"catalog_url": "https://bob.example/stac"})
	callOK(t, bob, "get_root", map[string]any{})

	hostsSeen := func(cs *mcp.ClientSession, args map[string]any) (map[string]bool, string) {
		res := callOK(t, cs, "get_service_health", args)
		out := structured[GetServiceHealthOut](t, res)
		seen := map[string]bool{}
		for _, h := range out.Hosts {
			seen[h.Host] = true
		}
		return seen, resultText(res)
	}
	seen, text := hostsSeen(bob, map[string]any{})
	if !seen["bob.example"] || !seen["configured.example"] || seen["alice-private.example"] || strings.Contains(text, "alice-private") {
		t.Errorf("bob sees %v; want his own host and the configured catalog, never alice's:\n%s", seen, text)
	}
	seen, text = hostsSeen(bob, map[string]any{"catalog_url": "https://alice-private.example/stac"})
	if len(seen) != 0 || !strings.Contains(text, "no request has been made") {
		t.Errorf("bob naming alice's catalog sees %v:\n%s", seen, text)
	}
	seen, _ = hostsSeen(alice, map[string]any{})
	if !seen["alice-private.example"] || seen["bob.example"] {
		t.Errorf("alice sees %v; want her host, not bob's", seen)
	}
	if !seen["configured.example"] {
		t.Errorf("alice does not see the configured catalog, which every session may see: %v", seen)
	}

	// Without SessionScoped (stdio: one user, the operator) everything shows.
	d.SessionScoped = false
	if seen, _ = hostsSeen(bob, map[string]any{}); !seen["alice-private.example"] {
		t.Errorf("stdio-style report hides hosts: %v", seen)
	}
}
