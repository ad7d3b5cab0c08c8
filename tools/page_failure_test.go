package tools

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// pagingFailsFrom serves the demo catalog two items a page; the search page
// number from (counting from 1) and the ones after it answer 400 "token
// expired", as a catalog whose paging token lapsed does.
func pagingFailsFrom(t *testing.T, from int) string {
	t.Helper()
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		t.Fatal(err)
	}
	inner := stacserver.New(store, stacserver.Options{MaxLimit: 2})
	var continuations atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/search") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if r.URL.Query().Has("next") || bytes.Contains(body, []byte(`"next"`)) {
				if int(continuations.Add(1))+1 >= from {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					_, _ = w.Write([]byte(`{"code":"BadRequest","description":"token expired"}`))
					return
				}
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAFailedPageKeepsThePagesRead: Page 3 of 3 fails:
// check_coverage, map_items and estimate_data_size answer over the 4 items
// of pages 1–2, say which page failed and why, and advise what fits a
// paging failure (not "check the id").
func TestAFailedPageKeepsThePagesRead(t *testing.T) {
	t.Parallel()
	args := map[string]any{"collections": []string{"sentinel-2-l2a"}, "aoi": []float64{-40.5, -5.3, -37.5, -3.5}}
	for _, tool := range []string{"check_coverage", "map_items", "estimate_data_size"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			cs := newTestSession(t, testSessionOptions{CatalogURL: pagingFailsFrom(t, 3)})
			res := callTool(t, cs, tool, args)
			text := resultText(res)
			if res.IsError {
				t.Fatalf("%s failed outright:\n%s", tool, text)
			}
			for _, want := range []string{"page 3 of the search failed", "token expired", "pages 1–2", "4 item(s)", "call again"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "check the id") || strings.Contains(text, "raise max_items") {
				t.Errorf("advice for another failure:\n%s", text)
			}
		})
	}
}
