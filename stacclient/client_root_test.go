package stacclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestColdCapabilitiesFetchLandingPageAndConformanceSideBySide holds the
// landing page until /conformance has been asked for: a client that waits
// for the landing page before it asks (two round trips) never sends it
// while the landing page is held, and the test sees that.
func TestColdCapabilitiesFetchLandingPageAndConformanceSideBySide(t *testing.T) {
	conformanceAsked := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var paths []string
	sawConformanceFirst := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			select {
			case <-conformanceAsked:
				sawConformanceFirst = true
			case <-time.After(30 * time.Second): // a client that asks in turn: answer anyway (only then does the test wait this long)
			case <-r.Context().Done():
			}
			fmt.Fprint(w, `{"type":"Catalog","id":"c","conformsTo":[`+confCore+`],"links":[{"rel":"conformance","href":"/conformance"}]}`)
		case "/conformance":
			once.Do(func() { close(conformanceAsked) })
			fmt.Fprint(w, `{"conformsTo":[`+confCore+`,`+confSearch+`]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	caps, err := c.Capabilities(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !sawConformanceFirst {
		t.Error("the landing page was answered before /conformance was asked for: they were fetched one after the other, not side by side")
	}
	if !caps.Has(CapItemSearch) {
		t.Errorf("capabilities %v lack item-search, which only /conformance declares", caps.Supported)
	}
	if _, err := c.Conformance(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(paths)
	if want := []string{"/", "/conformance"}; !slices.Equal(paths, want) {
		t.Errorf("requests %v, want each of %v once (then cached)", paths, want)
	}
}

// TestConformanceFollowsALinkElsewhere: the speculative {base}/conformance
// is not the catalog's answer when the landing page links its conformance
// classes somewhere else.
func TestConformanceFollowsALinkElsewhere(t *testing.T) {
	cs := newCapabilityServer(t, `[`+confCore+`]`, `{"rel":"conformance","href":"BASE/api/conformance"}`)
	cs.routes["/conformance"] = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"conformsTo":["https://example.com/not-the-answer"]}`)
	}
	cs.routes["/api/conformance"] = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"conformsTo":[`+confCore+`,`+confSearch+`]}`)
	}
	c, _ := New(cs.URL, Options{})
	conf, err := c.Conformance(context.Background())
	if err != nil || !slices.Equal(conf, []string{"https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/item-search"}) {
		t.Errorf("conformance %v, %v; want the linked document's 2 classes", conf, err)
	}
}

// TestColdConformanceFailsWithTheLandingPage: when the landing page cannot
// be had, the call fails with its error, whatever /conformance answered.
func TestColdConformanceFailsWithTheLandingPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/conformance" {
			fmt.Fprint(w, `{"conformsTo":[`+confCore+`]}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"description":"no catalog here"}`)
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	_, err := c.Capabilities(context.Background())
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("err = %v, want the landing page's not_found", err)
	}
}
