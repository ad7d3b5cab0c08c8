package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The test catalog (built in Go so every expected answer can be derived by
// hand):
//
//	sentinel: s-00..s-24, one every 10 days from 2021-01-01, eo:cloud_cover
//	          = 4*i, platform alternating sentinel-2a/-2b, a 1°×1° square at
//	          lon -10+i..-9+i, lat 40..41.
//	landsat:  l-0 square lon 178..179, l-1 square lon -179..-178 (both lat
//	          0..1), l-2 square lon 10..11, l-3 point (179.5, 0.5), l-4 a line
//	          from (20,20) to (22,22); l-4 has no eo:cloud_cover.
//	dem:      d-0, d-1 with datetime null and start/end_datetime ranges.
const (
	sentinelCount = 25
	landsatCount  = 5
	demCount      = 2
	totalItems    = sentinelCount + landsatCount + demCount
)

func squareGeometry(w, s, e, n float64) map[string]any {
	return map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{w, s}, {e, s}, {e, n}, {w, n}, {w, s}}}}
}

func sentinelDate(i int) time.Time {
	return time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 10*i)
}

func mustAdd(t testing.TB, add func([]byte) error, doc map[string]any) {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := add(raw); err != nil {
		t.Fatal(err)
	}
}

func collectionJSON(id, title string, keywords []string, bbox []float64, start, end any) map[string]any {
	return map[string]any{
		"type": "Collection", "stac_version": "1.0.0", "id": id, "title": title,
		"description": "Test collection " + id, "keywords": keywords, "license": "CC0-1.0",
		"extent": map[string]any{
			"spatial":  map[string]any{"bbox": [][]float64{bbox}},
			"temporal": map[string]any{"interval": [][]any{{start, end}}},
		},
		"links":         []any{map[string]any{"rel": "license", "href": "https://example.com/licence"}},
		"x-vendor-flag": map[string]any{"kept": true},
	}
}

func itemJSON(id, coll string, geom map[string]any, props map[string]any) map[string]any {
	return map[string]any{
		"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": coll,
		"geometry": geom, "properties": props,
		"links":  []any{map[string]any{"rel": "alternate", "href": "https://example.com/" + id}},
		"assets": map[string]any{"data": map[string]any{"href": "https://example.com/" + id + ".tif", "file:size": 1234}},
	}
}

func newTestStore(t testing.TB) *Store {
	t.Helper()
	s := NewStore()
	mustAdd(t, s.AddCollection, collectionJSON("sentinel", "Sentinel optical test", []string{"optical", "esa"},
		[]float64{-10, 40, 15, 41}, "2021-01-01T00:00:00Z", "2021-12-31T00:00:00Z"))
	mustAdd(t, s.AddCollection, collectionJSON("landsat", "Landsat across the antimeridian", []string{"usgs"},
		[]float64{170, 0, -170, 22}, "2019-01-01T00:00:00Z", nil))
	mustAdd(t, s.AddCollection, collectionJSON("dem", "Elevation model", []string{"elevation"},
		[]float64{-180, -90, 180, 90}, "2000-01-01T00:00:00Z", "2000-12-31T00:00:00Z"))
	for i := 0; i < sentinelCount; i++ {
		platform := "sentinel-2a"
		if i%2 == 1 {
			platform = "sentinel-2b"
		}
		w := -10 + float64(i)
		mustAdd(t, s.AddItem, itemJSON(fmt.Sprintf("s-%02d", i), "sentinel", squareGeometry(w, 40, w+1, 41), map[string]any{
			"datetime": sentinelDate(i).Format(time.RFC3339), "eo:cloud_cover": 4 * i, "platform": platform,
			"gsd": 10.5,
		}))
	}
	lands := []map[string]any{
		squareGeometry(178, 0, 179, 1),
		squareGeometry(-179, 0, -178, 1),
		squareGeometry(10, 0, 11, 1),
		{"type": "Point", "coordinates": []float64{179.5, 0.5}},
		{"type": "LineString", "coordinates": [][]float64{{20, 20}, {22, 22}}},
	}
	for i, g := range lands {
		props := map[string]any{"datetime": fmt.Sprintf("2019-0%d-15T10:00:00Z", i+1), "platform": "landsat-8",
			"eo:cloud_cover": 15 + 20*i}
		if i == 4 {
			delete(props, "eo:cloud_cover")
		}
		mustAdd(t, s.AddItem, itemJSON(fmt.Sprintf("l-%d", i), "landsat", g, props))
	}
	for i := 0; i < demCount; i++ {
		mustAdd(t, s.AddItem, itemJSON(fmt.Sprintf("d-%d", i), "dem", squareGeometry(-180, -90, 180, 90), map[string]any{
			"datetime":       nil,
			"start_datetime": fmt.Sprintf("2000-0%d-01T00:00:00Z", 2*i+1),
			"end_datetime":   fmt.Sprintf("2000-0%d-28T00:00:00Z", 2*i+2),
		}))
	}
	return s
}

// testServer is an httptest server over the test store.
type testServer struct {
	*httptest.Server
	api *Server
}

func startServer(t testing.TB, opts Options) *testServer {
	t.Helper()
	return startServerWith(t, newTestStore(t), opts)
}

func startServerWith(t testing.TB, store *Store, opts Options) *testServer {
	t.Helper()
	api := New(store, opts)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, api: api}
}

// response is a decoded JSON answer.
type response struct {
	status      int
	contentType string
	body        map[string]any
	raw         []byte
}

func (ts *testServer) do(t testing.TB, method, target string, body any) response {
	t.Helper()
	if !isAbsolute(target) {
		target = ts.URL + target
	}
	var rd io.Reader
	if body != nil {
		raw, ok := body.([]byte)
		if !ok {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&r.body); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, target, err, raw)
	}
	return r
}

func (ts *testServer) get(t testing.TB, target string) response {
	t.Helper()
	return ts.do(t, http.MethodGet, target, nil)
}

func (ts *testServer) post(t testing.TB, target string, body any) response {
	t.Helper()
	return ts.do(t, http.MethodPost, target, body)
}

func isAbsolute(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.IsAbs()
}

// wantStatus fails the test unless r has the status; for errors it also
// checks the JSON error shape.
func wantStatus(t testing.TB, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.raw)
	}
	if status >= 400 {
		if _, ok := r.body["code"].(string); !ok {
			t.Fatalf("error body has no string code: %s", r.raw)
		}
		if d, _ := r.body["description"].(string); d == "" {
			t.Fatalf("error body has no description: %s", r.raw)
		}
	}
}

func featureIDs(t testing.TB, r response) []string {
	t.Helper()
	features, ok := r.body["features"].([]any)
	if !ok {
		t.Fatalf("no features array: %s", r.raw)
	}
	ids := make([]string, len(features))
	for i, f := range features {
		ids[i], _ = f.(map[string]any)["id"].(string)
	}
	return ids
}

func sortedIDs(t testing.TB, r response) []string {
	ids := featureIDs(t, r)
	sort.Strings(ids)
	return ids
}

func linkByRel(body map[string]any, rel string) map[string]any {
	links, _ := body["links"].([]any)
	for _, l := range links {
		m, _ := l.(map[string]any)
		if m["rel"] == rel {
			return m
		}
	}
	return nil
}

func numberField(t testing.TB, m map[string]any, key string) int {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Fatalf("%q is not a number in %v", key, m)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return int(i)
}

// followAll fetches the first page and follows rel=next links exactly as a
// STAC client must (method, href, body, merge), returning every id in page
// order and the number of pages. It fails after maxPages pages.
func (ts *testServer) followAll(t testing.TB, method, target string, body map[string]any, maxPages int) (ids []string, pages int, requests []string) {
	t.Helper()
	var r response
	var reqBody any
	if body != nil {
		reqBody = body
	}
	for {
		if pages == maxPages {
			t.Fatalf("more than %d pages; requests: %v", maxPages, requests)
		}
		raw, _ := json.Marshal(reqBody)
		requests = append(requests, method+" "+target+" "+string(raw))
		r = ts.do(t, method, target, reqBody)
		wantStatus(t, r, http.StatusOK)
		pages++
		ids = append(ids, featureIDs(t, r)...)
		next := linkByRel(r.body, "next")
		if next == nil {
			return ids, pages, requests
		}
		target, _ = next["href"].(string)
		method, _ = next["method"].(string)
		if method == "" {
			method = http.MethodGet
		}
		linkBody, _ := next["body"].(map[string]any)
		switch {
		case method == http.MethodGet:
			reqBody = nil
		case next["merge"] == true:
			merged := map[string]any{}
			for k, v := range body {
				merged[k] = v
			}
			for k, v := range linkBody {
				merged[k] = v
			}
			reqBody = merged
		default:
			reqBody = linkBody
		}
	}
}

func sentinelIDs(from, to int) []string {
	var ids []string
	for i := from; i <= to; i++ {
		ids = append(ids, fmt.Sprintf("s-%02d", i))
	}
	return ids
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
