package reliability

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// A denial quotes a catalog's own short text error when the request was
// marked as going to that catalog, and only describes
// it otherwise.
func TestDenialQuotesCatalogText(t *testing.T) {
	synctest.Test(t, testDenialQuotesCatalogText) // the retries' backoff on a fake clock
}

func testDenialQuotesCatalogText(t *testing.T) {
	for _, c := range []struct {
		name   string
		marked bool
		want   string
	}{
		{"catalog", true, "index rebuilding, retry later"},
		{"unmarked", false, "a 29-byte text/plain answer (not shown)"},
	} {
		tl := newTestLayer(t, noCache(), func(_ int, req *http.Request) (*http.Response, error) {
			resp := answer(503, "index rebuilding, retry later", "Content-Type", "text/plain")
			resp.Request = req // as net/http's transport sets it
			return resp, nil
		})
		ctx := context.Background()
		if c.marked {
			ctx = upstream.WithCatalogOrigin(ctx, "https://"+testHost+":443")
		}
		_, err := tl.Run(ctx, "search_items", testHost, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+"/search", nil)
			_, _, err := tl.readThrough(req)
			return err
		})
		var d *Denial
		if !errors.As(err, &d) || d.LastStatus != 503 || d.LastMessage != c.want {
			t.Errorf("%s: denial %+v, want last message %q", c.name, d, c.want)
		}
	}
}
