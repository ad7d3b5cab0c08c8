package tools

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestServiceHealthBeforeAnyCallIsEmptyWithANote(t *testing.T) {
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec})
	res := callOK(t, cs, "get_service_health", map[string]any{})
	out := structured[GetServiceHealthOut](t, res)
	if len(out.Hosts) != 0 || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "no catalog has been contacted yet") {
		t.Errorf("before any call: %+v, want no hosts and a note", out)
	}
	if n := len(rec.snapshot()); n != 0 {
		t.Errorf("get_service_health made %d upstream requests, want none", n)
	}
}

func TestServiceHealthReportsRetriesPerHost(t *testing.T) {
	// The catalog answers its landing page with a 503 once, then works.
	var rootHits atomic.Int32
	store := demoCatalogHandler(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && rootHits.Add(1) == 1 {
			http.Error(w, `{"description":"busy"}`, http.StatusServiceUnavailable)
			return
		}
		store.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cs := newTestSession(t, testSessionOptions{CatalogURL: srv.URL})
	callOK(t, cs, "get_root", map[string]any{})

	res := callOK(t, cs, "get_service_health", map[string]any{})
	out := structured[GetServiceHealthOut](t, res)
	host := strings.TrimPrefix(srv.URL, "http://")
	if len(out.Hosts) != 1 || out.Hosts[0].Host != host {
		t.Fatalf("hosts %+v, want exactly %s", out.Hosts, host)
	}
	h := out.Hosts[0]
	if h.Retries5m != 1 || h.Breaker != "closed" || h.BudgetCapacity == 0 || h.BudgetTokens > h.BudgetCapacity || h.Status != "healthy" {
		t.Errorf("health %+v, want 1 retry, breaker closed, a budget, healthy", h)
	}
	text := resultText(res)
	for _, want := range []string{host, "breaker closed", "1 retries", "retry budget"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Narrowed to another catalog: nothing to report, and it says so.
	other := structured[GetServiceHealthOut](t, callOK(t, cs, "get_service_health", map[string]any{"catalog_url": "https://elsewhere.example/stac"}))
	if len(other.Hosts) != 0 || len(other.Notes) != 1 || !strings.Contains(other.Notes[0], "elsewhere.example") {
		t.Errorf("narrowed to an uncontacted catalog: %+v", other)
	}
}

func TestListCatalogsShowsPresetsDemoAndTheDefault(t *testing.T) {
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec, CatalogURL: "planetary-computer"})
	res := callOK(t, cs, "list_catalogs", map[string]any{})
	out := structured[ListCatalogsOut](t, res)
	if out.Default != "planetary-computer" {
		t.Errorf("default %q, want planetary-computer", out.Default)
	}
	byName := map[string]CatalogEntry{}
	for _, e := range out.Catalogs {
		byName[e.Name] = e
	}
	for _, p := range Presets() {
		e, ok := byName[p.Name]
		if !ok || e.URL != p.URL || e.Kind != "preset" {
			t.Errorf("preset %s: listed as %+v", p.Name, e)
		}
		if e.Default != (p.Name == "planetary-computer") {
			t.Errorf("preset %s: default %v", p.Name, e.Default)
		}
	}
	if d, ok := byName[DemoCatalog]; !ok || d.Kind != "demo" || d.Default {
		t.Errorf("demo entry %+v", d)
	}
	if !strings.Contains(resultText(res), "planetary-computer (default)") {
		t.Errorf("text does not mark the default:\n%s", resultText(res))
	}
	if n := len(rec.snapshot()); n != 0 {
		t.Errorf("list_catalogs made %d upstream requests, want none", n)
	}
}

func TestListCatalogsSaysWhenTheDefaultIsAPlainURL(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{CatalogURL: "https://stac.example/v1"})
	out := structured[ListCatalogsOut](t, callOK(t, cs, "list_catalogs", map[string]any{}))
	for _, e := range out.Catalogs {
		if e.Default {
			t.Errorf("%s marked default, want none", e.Name)
		}
	}
	if !strings.Contains(strings.Join(out.Notes, " "), `"https://stac.example/v1" is a URL or path`) {
		t.Errorf("notes %v lack the plain-URL default", out.Notes)
	}
}
