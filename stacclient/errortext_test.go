package stacclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A catalog's own short text error reaches the model,
// as Planetary Computer's 422 text/plain "collection is required" to an
// unfiltered search: from an operator-configured catalog at once, from any
// other URL once its landing page answered as STAC. A URL that never
// answered as a catalog, and a redirect to another origin, keep the
// description (no read-back of services that are not catalogs).
func TestCatalogErrorTextIsShownFromCatalogs(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "internal admin text")
	}))
	defer other.Close()
	root := `{"type":"Catalog","id":"pc","stac_version":"1.0.0","description":"d","links":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/":
			fmt.Fprint(w, root)
		case "/api/moved":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprint(w, "collection is required")
		}
	}))
	defer srv.Close()
	const shown, described = "collection is required", "a 22-byte text/plain answer (not shown)"
	message := func(c *Client, path string) string {
		t.Helper()
		_, err := c.CollectionAt(context.Background(), srv.URL+path)
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("err = %v, want *Error", err)
		}
		return se.Message
	}

	known, _ := New(srv.URL+"/api/", Options{KnownCatalog: true})
	if got := message(known, "/api/search"); got != shown {
		t.Errorf("operator's catalog: %q, want %q", got, shown)
	}
	if got := message(known, "/api/moved"); got != "a 19-byte text/plain answer (not shown)" {
		t.Errorf("redirected to another origin: %q, want the description", got)
	}

	named, _ := New(srv.URL+"/api/", Options{})
	if got := message(named, "/api/search"); got != described {
		t.Errorf("a URL not yet seen as a catalog: %q, want %q", got, described)
	}
	if _, err := named.Root(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := message(named, "/api/search"); got != shown {
		t.Errorf("after its landing page answered as STAC: %q, want %q", got, shown)
	}

	root = `{"id":"not-stac","links":[]}` // JSON, but no stac_version nor conformsTo
	plain, _ := New(srv.URL+"/api/", Options{})
	if _, err := plain.Root(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := message(plain, "/api/search"); got != described {
		t.Errorf("a landing page that is not STAC: %q, want %q", got, described)
	}
}
