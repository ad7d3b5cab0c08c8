package tools

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A landing page that cannot be used fails search_items and
// estimate_data_size after one fetch of it: the capability check and the
// search need the same page, so fetching it again could only repeat the
// failure (reported by the SLO harness as two landing-page fetches per call).
func TestSearchToolsFetchAnUnusableLandingPageOnce(t *testing.T) {
	t.Parallel()
	catalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"not":"a landing page"}`))
	}))
	t.Cleanup(catalog.Close)
	recorder := &callRecorder{}
	cs := newClientSession(t, newTestDeps(t, testSessionOptions{CatalogURL: catalog.URL, Transport: recorder}), nil)

	for _, tool := range []string{"search_items", "estimate_data_size"} {
		t.Run(tool, func(t *testing.T) {
			recorder.reset()
			args := map[string]any{"collections": []string{"c1"}}
			if tool == "estimate_data_size" {
				args["force_metadata_only"] = true
			}
			msg := callErr(t, cs, tool, args)
			if !strings.Contains(msg, tool) || !strings.Contains(msg, "landing page") {
				t.Errorf("error does not name the tool and the landing page: %s", msg)
			}
			landing := 0
			for _, c := range recorder.snapshot() {
				if c.path == "GET " || c.path == "GET /" {
					landing++
				}
			}
			if landing != 1 {
				t.Errorf("landing page fetched %d times, want 1; requests: %v", landing, recorder.snapshot())
			}
		})
	}
}
