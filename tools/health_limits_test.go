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

// TestManyCatalogHostsKeepHealthAndMetricsBounded: a
// client naming many distinct catalog hosts no longer grows /metrics and
// get_service_health with them. The report lists at most 50 hosts and says
// how many it left out; /metrics gives the first 64 unconfigured hosts
// their own label and the rest share "other".
func TestManyCatalogHostsKeepHealthAndMetricsBounded(t *testing.T) {
	t.Parallel()
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

// TestServiceHealthOfASharedServerListsOnlyConfiguredOrNamedHosts: with
// Shared (http), a caller's report without catalog_url lists the configured
// catalogs only, never a host another caller named; naming a catalog shows
// its host. The rule remembers nothing per session (adr/0015), so a
// client whose calls land on fresh sessions, or on several replicas, gets
// the same answer; per-session memory would forget its own hosts there.
func TestServiceHealthOfASharedServerListsOnlyConfiguredOrNamedHosts(t *testing.T) {
	t.Parallel()
	d := newTestDeps(t, testSessionOptions{Transport: anyHostCatalog{}, CatalogURL: "https://configured.example/stac"})
	d.Shared = true
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
	for name, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		seen, text := hostsSeen(cs, map[string]any{})
		if len(seen) != 1 || !seen["configured.example"] || strings.Contains(text, "alice-private") || strings.Contains(text, "bob.example") {
			t.Errorf("%s's report without catalog_url lists %v; want the configured catalog alone:\n%s", name, seen, text)
		}
		if !strings.Contains(text, "pass catalog_url") {
			t.Errorf("%s's report does not say how to see another catalog:\n%s", name, text)
		}
	}
	// Alice sees her catalog by naming it, from a session that never used it.
	if seen, text := hostsSeen(connect(t, srv), map[string]any{"catalog_url": "https://alice-private.example/stac"}); len(seen) != 1 || !seen["alice-private.example"] {
		t.Errorf("naming a catalog shows %v; want its host:\n%s", seen, text)
	}

	// Without Shared (stdio: one user, the operator) everything shows.
	d.Shared = false
	if seen, _ := hostsSeen(bob, map[string]any{}); !seen["alice-private.example"] || !seen["bob.example"] {
		t.Errorf("stdio-style report hides hosts: %v", seen)
	}
}
