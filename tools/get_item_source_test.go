package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// get_item passes on the bytes the catalog sent instead of re-encoding the
// typed item. These tests hold it to what it answered before:
// the structured result equal, as JSON, to the old route's (the typed item
// encoded and decoded: toJSONObject), the text identical, for every demo
// item and for real recorded items.

// recordedItems reads the items of tools/testdata/recorded-items, each as
// the exact JSON text recorded, by collection and id.
func recordedItems(t testing.TB) map[[2]string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "recorded-items", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded items: %v", err)
	}
	items := map[[2]string][]byte{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var fixture struct {
			Body json.RawMessage `json:"body"`
		}
		var body struct {
			Type     string            `json:"type"`
			Features []json.RawMessage `json:"features"`
		}
		if err := json.Unmarshal(raw, &fixture); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := json.Unmarshal(fixture.Body, &body); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		features := body.Features
		if body.Type == "Feature" {
			features = []json.RawMessage{fixture.Body}
		}
		for _, f := range features {
			var head struct{ ID, Collection string }
			if err := json.Unmarshal(f, &head); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if head.Collection == "" {
				head.Collection = "recorded"
			}
			items[[2]string{head.Collection, head.ID}] = f
		}
	}
	return items
}

// serveRecordedItems serves items at /collections/{c}/items/{id}, as
// recorded, under a synthetic landing page and conformance declaring the
// Features endpoints.
func serveRecordedItems(t testing.TB, items map[[2]string][]byte) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/":
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "Catalog", "id": "recorded", "description": "synthetic landing page",
				"stac_version": "1.0.0", "conformsTo": stacserver.DefaultConformance(),
				"links": []map[string]string{{"rel": "self", "href": srv.URL + "/"}}})
			return
		case "/conformance":
			_ = json.NewEncoder(w).Encode(map[string]any{"conformsTo": stacserver.DefaultConformance()})
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if len(parts) == 4 && parts[0] == "collections" && parts[2] == "items" {
			if raw, ok := items[[2]string{parts[1], parts[3]}]; ok {
				_, _ = w.Write(raw)
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// demoCollections lists the demo collections that hold items.
func demoCollections(t testing.TB) []string {
	t.Helper()
	entries, err := fs.ReadDir(demo.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := fs.Stat(demo.FS, e.Name()+"/items"); e.IsDir() && err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// oldGetItemAnswer is what get_item answered for the item the catalog
// serves as served before issue 25: the typed item encoded and decoded
// (toJSONObject), and the text rendered from that decoding.
func oldGetItemAnswer(t testing.TB, served []byte) (structured any, text string) {
	t.Helper()
	var it stacclient.Item
	if err := json.Unmarshal(served, &it); err != nil {
		t.Fatal(err)
	}
	full, err := toJSONObject(&it)
	if err != nil {
		t.Fatal(err)
	}
	out := GetItemOut{Item: full, Summary: summarizeItem(&it), Warnings: []string{}, Notes: []string{}}
	b, err := json.Marshal(getItemOutFields(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &structured); err != nil {
		t.Fatal(err)
	}
	return structured, fullItemText(full, out.Summary)
}

// asJSON is v as the client decodes JSON.
func asJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func fetchBytes(t testing.TB, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

func TestGetItemAnswersAsBeforeForEveryDemoAndRecordedItem(t *testing.T) {
	t.Parallel()
	type source struct {
		catalog string
		items   [][2]string // collection, id
	}
	demoURL := demoServer(t, stacserver.Options{})
	demoItems := source{catalog: demoURL}
	for _, c := range demoCollections(t) {
		for _, id := range demoItemIDs(t, c) {
			demoItems.items = append(demoItems.items, [2]string{c, id})
		}
	}
	recorded := recordedItems(t)
	recordedItems := source{catalog: serveRecordedItems(t, recorded)}
	for key := range recorded {
		recordedItems.items = append(recordedItems.items, key)
	}
	if len(demoItems.items) < 100 || len(recordedItems.items) < 14 {
		t.Fatalf("%d demo and %d recorded items; want all of them", len(demoItems.items), len(recordedItems.items))
	}
	for name, src := range map[string]source{"demo": demoItems, "recorded": recordedItems} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cs := newTestSession(t, testSessionOptions{CatalogURL: src.catalog})
			for _, ci := range src.items {
				served := fetchBytes(t, src.catalog+"/collections/"+ci[0]+"/items/"+ci[1])
				wantStructured, wantText := oldGetItemAnswer(t, served)
				res := callOK(t, cs, "get_item", map[string]any{"collection_id": ci[0], "item_id": ci[1]})
				if got := asJSON(t, res.StructuredContent); !reflect.DeepEqual(got, wantStructured) {
					t.Errorf("%s/%s: structured result differs from the old route's:\n got %.600v\nwant %.600v", ci[0], ci[1], got, wantStructured)
				}
				if got := resultText(res); got != wantText {
					t.Errorf("%s/%s: text differs from the old route's:\n got %.600s\nwant %.600s", ci[0], ci[1], got, wantText)
				}
			}
		})
	}
}

// The item leaves as the catalog wrote it (its member order and spacing),
// not re-encoded: what makes get_item cheap, checked on the result the
// server sends.
func TestGetItemPassesTheCatalogsBytesOn(t *testing.T) {
	t.Parallel()
	items := recordedItems(t)
	key := [2]string{"cop-dem-glo-30", "Copernicus_DSM_COG_10_S90_00_W180_00_DEM"}
	raw, ok := items[key]
	if !ok || !bytes.Contains(raw, []byte("\n")) {
		t.Fatalf("recorded item %v missing or not indented", key)
	}
	var mu sync.Mutex
	var sent json.RawMessage
	server := newServer(newTestDeps(t, testSessionOptions{CatalogURL: serveRecordedItems(t, items)}), "test", Inventory())
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok {
				mu.Lock()
				sent, _ = r.StructuredContent.(json.RawMessage)
				mu.Unlock()
			}
			return res, err
		}
	})
	cs := connect(t, server)
	callOK(t, cs, "get_item", map[string]any{"collection_id": key[0], "item_id": key[1]})
	mu.Lock()
	defer mu.Unlock()
	if !bytes.HasPrefix(sent, append([]byte(`{"item":`), raw...)) {
		t.Errorf("structuredContent does not carry the catalog's bytes of the item; it starts %.200s", sent)
	}
}

// Signed hrefs change the item, so its recorded bytes no longer describe
// it: the item is then encoded from the typed value.
func TestItemObjectEncodesAChangedItem(t *testing.T) {
	var it stacclient.Item
	if err := json.Unmarshal([]byte(`{"type":"Feature","id":"x","geometry":null,"properties":{},"links":[],
		"assets":{"a":{"href":"https://x/a.tif"}}}`), &it); err != nil {
		t.Fatal(err)
	}
	a := it.Assets["a"]
	a.Href = "https://x/a.tif?signed"
	it.Assets["a"] = a
	m, source, err := itemObject(&it, true)
	if err != nil {
		t.Fatal(err)
	}
	if source != nil {
		t.Error("a signed item was passed on as the catalog's bytes")
	}
	if href := m["assets"].(map[string]any)["a"].(map[string]any)["href"]; href != "https://x/a.tif?signed" {
		t.Errorf("href = %v, want the signed one", href)
	}
}

// search_items with detail=full sends each item as the catalog did too:
// the complete items and their text are the old route's.
func TestSearchItemsFullAnswersAsBefore(t *testing.T) {
	t.Parallel()
	catalog := demoServer(t, stacserver.Options{})
	cs := newTestSession(t, testSessionOptions{CatalogURL: catalog})
	checked := 0
	for _, c := range demoCollections(t) {
		res := callOK(t, cs, "search_items", map[string]any{"collections": []string{c}, "detail": "full", "max_items": 4, "limit": 4})
		got, _ := asJSON(t, res.StructuredContent).(map[string]any)
		features, _ := got["features"].([]any)
		// The same page, read directly.
		resp, err := http.Post(catalog+"/search", "application/json", strings.NewReader(`{"collections":["`+c+`"],"limit":4}`))
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Features []json.RawMessage `json:"features"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		_ = resp.Body.Close()
		if err != nil || len(page.Features) != len(features) || len(features) == 0 {
			t.Fatalf("%s: %d features from the tool, %d read directly (%v)", c, len(features), len(page.Features), err)
		}
		text := resultText(res)
		for i, raw := range page.Features {
			want, wantText := oldGetItemAnswer(t, raw)
			if !reflect.DeepEqual(features[i], want.(map[string]any)["item"]) {
				t.Errorf("%s: feature %d differs from the old route's", c, i)
			}
			if !strings.Contains(text, wantText) {
				t.Errorf("%s: text lacks feature %d as the old route wrote it", c, i)
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("only %d features checked", checked)
	}
}

// Items without the catalog's bytes (signed ones) are encoded in their
// place, wherever they fall among the others.
func TestSearchItemsOutMixesSentAndEncodedItems(t *testing.T) {
	out := SearchItemsOut{Items: []ItemSummary{}, Search: map[string]any{}, Warnings: []string{}, Notes: []string{},
		Features:       []map[string]any{{"id": "a"}, {"id": "b", "n": 1.5}, {"id": "c"}},
		featureSources: []json.RawMessage{nil, json.RawMessage(`{ "id" : "b", "n": 1.50 }`)}}
	b, err := encodeOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Features []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Features, out.Features) {
		t.Errorf("features = %v, want %v", got.Features, out.Features)
	}
	if !bytes.Contains(b, []byte(`{"id":"b","n":1.50}`)) {
		t.Errorf("the second item is not the catalog's bytes (compacted): %s", b)
	}
}
