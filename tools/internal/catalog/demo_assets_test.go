package catalog

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The offline first run reads pixels: the demo's synthetic Sentinel-2 Items
// name COGs that the in-process demo serves with Range support, at hrefs
// under the demo's own host.
func TestDemoServesItsCOGAssetsWithRanges(t *testing.T) {
	cats := New(Options{Default: Demo, HTTPClient: &http.Client{}})
	t.Cleanup(func() { _ = cats.Close() })
	demo, err := cats.Resolve(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	client := cats.opts.HTTPClient
	resp, err := client.Get(demo.URL + "/collections/sentinel-2-l2a-synthetic/items?limit=10")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Features []struct {
			ID     string `json:"id"`
			Assets map[string]struct {
				Href string `json:"href"`
			} `json:"assets"`
		} `json:"features"`
	}
	err = json.NewDecoder(resp.Body).Decode(&page)
	_ = resp.Body.Close()
	if err != nil || len(page.Features) < 2 {
		t.Fatalf("synthetic items: %v, %d features; want at least 2", err, len(page.Features))
	}
	for _, f := range page.Features {
		for _, key := range []string{"blue", "green", "red", "nir", "swir16", "swir22", "scl"} {
			href := f.Assets[key].Href
			if !strings.HasPrefix(href, demo.URL+"/") {
				t.Errorf("%s asset %s: href %q is not served by the demo", f.ID, key, href)
				continue
			}
			req, _ := http.NewRequest(http.MethodGet, href, nil)
			req.Header.Set("Range", "bytes=0-15")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			head, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusPartialContent || len(head) != 16 || string(head[:4]) != "II*\x00" {
				t.Errorf("%s asset %s: %s, %d bytes %q; want 206 with the first 16 bytes of a TIFF", f.ID, key, resp.Status, len(head), head)
			}
		}
	}
}
