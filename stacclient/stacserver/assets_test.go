package stacserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// assetCatalog is a static catalog whose item names one file of its own
// (relative), one outside the catalog, one missing file, and a remote one.
func assetCatalog(pixels []byte) fstest.MapFS {
	return fstest.MapFS{
		"catalog.json": {Data: []byte(`{"type":"Catalog","id":"root","stac_version":"1.0.0","description":"d",
			"links":[{"rel":"child","href":"./c/collection.json"}]}`)},
		"c/collection.json": {Data: []byte(`{"type":"Collection","id":"c","stac_version":"1.0.0","description":"d","license":"CC0-1.0",
			"extent":{"spatial":{"bbox":[[0,0,1,1]]},"temporal":{"interval":[[null,null]]}},
			"links":[{"rel":"item","href":"./items/a.json"}]}`)},
		"c/items/a.json": {Data: []byte(`{"type":"Feature","stac_version":"1.0.0","id":"a","collection":"c",
			"geometry":{"type":"Point","coordinates":[0,0]},"bbox":[0,0,0,0],"properties":{"datetime":"2020-01-01T00:00:00Z"},
			"assets":{
				"red":{"href":"../assets/a/B04.tif","type":"image/tiff; application=geotiff; profile=cloud-optimized"},
				"escape":{"href":"../../../etc/passwd"},
				"missing":{"href":"../assets/a/none.tif"},
				"remote":{"href":"https://example.org/B04.tif"}},
			"links":[]}`)},
		"c/assets/a/B04.tif":   {Data: pixels},
		"c/assets/a/other.tif": {Data: []byte("not named by any item")},
	}
}

func startAssetServer(t *testing.T, serve bool) (*httptest.Server, *Store) {
	t.Helper()
	pixels := bytes.Repeat([]byte("0123456789"), 1000)
	store, err := LoadFSContext(t.Context(), assetCatalog(pixels), "catalog.json", LoadOptions{ServeAssetFiles: serve})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(store, Options{}))
	t.Cleanup(srv.Close)
	return srv, store
}

func itemAssets(t *testing.T, base string) map[string]map[string]any {
	t.Helper()
	resp, err := http.Get(base + "/collections/c/items/a")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Assets map[string]map[string]any `json:"assets"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.Assets
}

// The demo's COGs are read with HTTP range requests: the file an item names
// is served at an absolute href with Range support, nothing else is.
func TestAssetFilesServedWithRanges(t *testing.T) {
	srv, store := startAssetServer(t, true)
	assets := itemAssets(t, srv.URL)
	want := srv.URL + "/collections/c/items/a/assets/red"
	if got := assets["red"]["href"]; got != want {
		t.Errorf("red href = %v, want %s", got, want)
	}
	for key, href := range map[string]string{"escape": "../../../etc/passwd", "missing": "../assets/a/none.tif", "remote": "https://example.org/B04.tif"} {
		if got := assets[key]["href"]; got != href {
			t.Errorf("%s href = %v, want it unchanged: %s", key, got, href)
		}
	}
	resp, err := http.Get(srv.URL + "/search?ids=a")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Features []struct {
			Assets map[string]map[string]any `json:"assets"`
		} `json:"features"`
	}
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if err != nil || len(page.Features) != 1 || page.Features[0].Assets["red"]["href"] != want {
		t.Errorf("search answer: %v %+v, want the red asset at %s", err, page, want)
	}
	notes := strings.Join(store.Notes, "\n")
	for _, key := range []string{`asset "escape"`, `asset "missing"`} {
		if !strings.Contains(notes, key) {
			t.Errorf("load notes do not say %s is not served:\n%s", key, notes)
		}
	}

	req, _ := http.NewRequest(http.MethodGet, want, nil)
	req.Header.Set("Range", "bytes=10-29")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "01234567890123456789" {
		t.Errorf("range read: status %d body %q, want 206 and 20 bytes from offset 10", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "image/tiff") {
		t.Errorf("Content-Type %q, want the asset's type", ct)
	}
	if got := resp.Header.Get("Content-Range"); got != "bytes 10-29/10000" {
		t.Errorf("Content-Range %q", got)
	}

	for _, path := range []string{"/collections/c/items/a/assets/escape", "/collections/c/items/a/assets/missing",
		"/collections/c/items/a/assets/other", "/collections/c/items/b/assets/red", "/collections/x/items/a/assets/red",
		"/c/assets/a/B04.tif", "/c/assets/a/other.tif"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, resp.StatusCode)
		}
	}
}

// Without ServeAssetFiles relative asset hrefs are passed on as they are
// (what every catalog but the demo gets) and no file is served.
func TestAssetFilesOffByDefault(t *testing.T) {
	srv, _ := startAssetServer(t, false)
	if got := itemAssets(t, srv.URL)["red"]["href"]; got != "../assets/a/B04.tif" {
		t.Errorf("red href = %v, want it unchanged", got)
	}
	resp, err := http.Get(srv.URL + "/collections/c/items/a/assets/red")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
}
