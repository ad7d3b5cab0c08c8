package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// getHost runs one tool call that GETs https://host/path.
func (tl *testLayer) getHost(ctx context.Context, host string) error {
	_, err := tl.Run(ctx, "get_root", host, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+"/", nil)
		_, _, err := tl.readThrough(req)
		return err
	})
	return err
}

func trackedNames(l *Layer) map[string]HostHealth {
	out := map[string]HostHealth{}
	for _, h := range l.Health(context.Background()) {
		out[h.Host] = h
	}
	return out
}

// TestHostStateIsBoundedAndNeverForgetsProtection: past MaxHosts the least
// recently used idle host is forgotten, but never one with a request
// running (its bulkhead would restart empty) or an open breaker (the pause
// would end); when every host must be kept, a new host is refused with an
// "overloaded" denial naming the setting, while a pinned (configured) host
// still works.
func TestHostStateIsBoundedAndNeverForgetsProtection(t *testing.T) {
	p := noCache()
	p.MaxHosts = 4
	p.MaxAttempts = 1
	release := make(chan struct{})
	var entered sync.WaitGroup
	tl := newTestLayer(t, p, func(_ int, req *http.Request) (*http.Response, error) {
		if strings.HasPrefix(req.URL.Host, "busy") {
			entered.Done()
			select {
			case <-release:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return answer(200, "{}"), nil
	})
	tl.PinHosts("configured.test")

	// down.test: breaker open.
	b := tl.host("down.test").breaker
	for range breakerMinCalls {
		b.allow()
		b.record(noProbe, true, false)
	}
	// busy0.test: a request hangs in flight.
	entered.Add(1)
	busyDone := make(chan error, 3)
	go func() { busyDone <- tl.getHost(context.Background(), "busy0.test") }()
	entered.Wait()

	for i := range 20 {
		if err := tl.getHost(context.Background(), fmt.Sprintf("h%d.test", i)); err != nil {
			t.Fatalf("h%d.test: %v", i, err)
		}
	}
	hosts := trackedNames(tl.Layer)
	if len(hosts) > 4 {
		t.Errorf("%d hosts tracked, want at most MaxHosts=4: %v", len(hosts), hosts)
	}
	if h, ok := hosts["down.test"]; !ok || h.Breaker != BreakerOpen {
		t.Errorf("down.test was forgotten or its breaker reset: %+v (present %v)", h, ok)
	}
	if h, ok := hosts["busy0.test"]; !ok || h.InFlight != 1 {
		t.Errorf("busy0.test was forgotten or lost its request in flight: %+v (present %v)", h, ok)
	}
	if _, ok := hosts["h19.test"]; !ok {
		t.Errorf("the most recent host is not tracked: %v", hosts)
	}
	if got := testutil.ToFloat64(tl.metrics.evictedHosts); got != 20-2 {
		t.Errorf("evicted_hosts_total %v, want 18", got)
	}
	if got := testutil.ToFloat64(tl.metrics.trackedHosts); got != float64(len(hosts)) {
		t.Errorf("tracked_hosts %v, want %d", got, len(hosts))
	}

	// Two more hosts hang: all four are now kept, so a fifth is refused.
	entered.Add(2)
	go func() { busyDone <- tl.getHost(context.Background(), "busy1.test") }()
	go func() { busyDone <- tl.getHost(context.Background(), "busy2.test") }()
	entered.Wait()
	hitsBefore := tl.up.hitCount()
	err := tl.getHost(context.Background(), "new.test")
	var d *Denial
	if !errors.As(err, &d) || d.Code != CodeOverloaded || !strings.Contains(err.Error(), "STAC_MCP_MAX_HOSTS") ||
		strings.Contains(err.Error(), "check catalog_url") {
		t.Errorf("new host with every tracked host busy or paused: %v; want an overloaded denial naming STAC_MCP_MAX_HOSTS", err)
	}
	if tl.up.hitCount() != hitsBefore {
		t.Error("the refused request reached the upstream")
	}
	if got := testutil.ToFloat64(tl.metrics.toolCalls.WithLabelValues("get_root", CodeOverloaded)); got != 1 {
		t.Errorf(`tool_calls_total{outcome="overloaded"} = %v, want 1`, got)
	}
	if err := tl.getHost(context.Background(), "configured.test"); err != nil {
		t.Errorf("a pinned host must be served even when the table is full: %v", err)
	}
	close(release)
	for range 3 {
		if err := <-busyDone; err != nil {
			t.Errorf("busy call: %v", err)
		}
	}
	if err := tl.getHost(context.Background(), "new.test"); err != nil {
		t.Errorf("after the busy hosts finished, a new host is still refused: %v", err)
	}
}

// TestMetricsHostLabelsAreCapped: thousands of distinct hosts do not mean
// thousands of series: past maxHostLabels hosts share the label "other",
// and "other" gets no breaker or budget gauge (it is not one host).
func TestMetricsHostLabelsAreCapped(t *testing.T) {
	tl := newTestLayer(t, noCache(), always(200, "{}"))
	tl.PinHosts("configured.test")
	const hosts = 300
	for i := range hosts {
		if err := tl.getHost(context.Background(), fmt.Sprintf("h%d.test", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tl.getHost(context.Background(), "configured.test"); err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	mfs, err := tl.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "host" {
					labels[lp.GetValue()] = true
					if lp.GetValue() == otherHostLabel && mf.GetName() != "upstream_requests_total" {
						t.Errorf("%s has an %q series; only counters may aggregate hosts", mf.GetName(), otherHostLabel)
					}
				}
			}
		}
	}
	if len(labels) != maxHostLabels+2 || !labels[otherHostLabel] || !labels["configured.test"] || !labels["h0.test"] {
		t.Errorf("%d host label values, want %d (the first %d hosts, the pinned one and %q)", len(labels), maxHostLabels+2, maxHostLabels, otherHostLabel)
	}
	other := testutil.ToFloat64(tl.metrics.upstreamRequests.WithLabelValues(otherHostLabel, "2xx"))
	if other != hosts-maxHostLabels {
		t.Errorf(`upstream_requests_total{host="other"} = %v, want %d`, other, hosts-maxHostLabels)
	}
}

// TestDeclareToolsStartsEverySeriesAtZero: /metrics lists every tool's
// counters, each tool_calls_total outcome included, before the first call.
func TestDeclareToolsStartsEverySeriesAtZero(t *testing.T) {
	tl := newTestLayer(t, noCache(), always(200, "{}"))
	tl.DeclareTools("get_root", "search_items")
	for _, c := range []struct {
		name   string
		labels string
	}{
		{"retries_attempted_total", `tool_name="search_items"`},
		{"timeouts_total", `tool_name="get_root"`},
		{"retry_exhausted_total", `tool_name="search_items"`},
		{"tool_calls_total", `outcome="ok",tool_name="get_root"`},
		{"tool_calls_total", `outcome="timeout",tool_name="search_items"`},
		{"tool_calls_total", `outcome="overloaded",tool_name="search_items"`},
	} {
		if n, err := testutil.GatherAndCount(tl.Registry(), c.name); err != nil || n == 0 {
			t.Errorf("%s: %d series (%v)", c.name, n, err)
		}
		if !strings.Contains(scrape(t, tl.Layer), c.name+"{"+c.labels+"} 0") {
			t.Errorf("/metrics lacks %s{%s} 0", c.name, c.labels)
		}
	}
	for _, family := range []string{"go_goroutines", "process_open_fds"} {
		if !strings.Contains(scrape(t, tl.Layer), family) {
			t.Errorf("/metrics lacks the %s series of the Go/process collectors", family)
		}
	}
}

func scrape(t *testing.T, l *Layer) string {
	t.Helper()
	rec := httptest.NewRecorder()
	l.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}
