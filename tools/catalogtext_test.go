package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakePlanetaryComputer answers like Planetary Computer does to a search
// without collections (as issue 24 recorded it: 422 text/plain "collection
// is required"), after a STAC landing page.
func fakePlanetaryComputer(t *testing.T) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/stac/v1", "/api/stac/v1/":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"type":"Catalog","id":"microsoft-pc","stac_version":"1.0.0","description":"fake",
				"conformsTo":["https://api.stacspec.org/v1.0.0/core","https://api.stacspec.org/v1.0.0/item-search"],
				"links":[{"rel":"search","href":"%[1]s/api/stac/v1/search","method":"POST"},{"rel":"search","href":"%[1]s/api/stac/v1/search","method":"GET"}]}`, srv.URL)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, "collection is required")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The catalog's own text error reaches the model, from
// the configured catalog and from a URL whose landing page is STAC; a URL
// that never answered as a catalog keeps the description.
func TestCatalogTextErrorIsShown(t *testing.T) {
	pc := fakePlanetaryComputer(t)
	cs := newTestSession(t, testSessionOptions{CatalogURL: pc.URL + "/api/stac/v1"})
	msg := callErr(t, cs, "search_items", map[string]any{"max_items": 2})
	if !strings.Contains(msg, "answered 422 (bad_request)") || !strings.Contains(msg, ": collection is required.") || strings.Contains(msg, "not shown") {
		t.Errorf("configured catalog: %s", msg)
	}

	// The operator's catalog is shown from the first answer, before any
	// landing page (here the landing page itself is refused).
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, "Ocp-Apim-Subscription-Key header missing")
	}))
	defer locked.Close()
	msg = callErr(t, newTestSession(t, testSessionOptions{CatalogURL: locked.URL}), "get_root", map[string]any{})
	if !strings.Contains(msg, ": Ocp-Apim-Subscription-Key header missing.") {
		t.Errorf("configured catalog refusing its landing page: %s", msg)
	}

	other := fakePlanetaryComputer(t) // a URL the caller names, STAC at its root
	demo := newTestSession(t, testSessionOptions{})
	msg = callErr(t, demo, "search_items", map[string]any{"catalog_url": other.URL + "/api/stac/v1", "max_items": 2})
	if !strings.Contains(msg, ": collection is required.") {
		t.Errorf("named STAC URL: %s", msg)
	}

	notCatalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "internal admin page")
	}))
	defer notCatalog.Close()
	msg = callErr(t, demo, "search_items", map[string]any{"catalog_url": notCatalog.URL, "max_items": 2})
	if strings.Contains(msg, "internal admin") || !strings.Contains(msg, "a 19-byte text/plain answer (not shown)") {
		t.Errorf("a URL that is not a catalog: its text is echoed or not described: %s", msg)
	}
}
