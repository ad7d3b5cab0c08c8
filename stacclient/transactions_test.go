package stacclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// txServer is a catalog that declares the given classes and answers every
// write with the scripted status, recording what it received.
type txServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []txRequest
	status   int
	body     string
	header   http.Header
}

type txRequest struct {
	method, path string
	header       http.Header
	body         string
}

func newTxServer(t *testing.T, conformsTo ...string) *txServer {
	ts := &txServer{status: 201, header: http.Header{}}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			classes, _ := json.Marshal(append([]string{"https://api.stacspec.org/v1.0.0/core"}, conformsTo...))
			_, _ = io.WriteString(w, `{"type":"Catalog","id":"tx","stac_version":"1.0.0","description":"d","links":[],"conformsTo":`+string(classes)+`}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		ts.mu.Lock()
		ts.requests = append(ts.requests, txRequest{r.Method, r.URL.EscapedPath(), r.Header.Clone(), string(body)})
		status, answer, header := ts.status, ts.body, ts.header
		ts.mu.Unlock()
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *txServer) writes() []txRequest {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]txRequest(nil), ts.requests...)
}

const itemTx = "https://api.stacspec.org/v1.0.0/ogcapi-features/extensions/transaction"
const collectionTx = "https://api.stacspec.org/v1.0.0/collections/extensions/transaction"

func testItem(id string) map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(`{"type":"Feature","stac_version":"1.0.0","id":"`+id+`","collection":"c",
		"geometry":{"type":"Point","coordinates":[10,50]},"bbox":[10,50,10,50],
		"properties":{"datetime":"2024-06-01T10:00:00Z"},"links":[],"assets":{}}`), &m)
	return m
}

func testCollection(id string) map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"`+id+`","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[]}`), &m)
	return m
}

func TestWriteRequestsAreTheTransactionEndpoints(t *testing.T) {
	ts := newTxServer(t, itemTx, collectionTx)
	c, err := New(ts.URL+"/v1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := WriteOptions{IdempotencyKey: "key-1"}
	ts.header.Set("Location", "/v1/collections/c/items/a")
	ts.body = `{"type":"Feature","id":"a"}`
	res, err := c.CreateItem(ctx, "c", testItem("a"), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 201 || res.Accepted || res.Location != ts.URL+"/v1/collections/c/items/a" || res.Document["id"] != "a" {
		t.Errorf("create result %+v", res)
	}
	calls := []func() (*WriteResult, error){
		func() (*WriteResult, error) { return c.ReplaceItem(ctx, "c", "a", testItem("a"), o) },
		func() (*WriteResult, error) {
			return c.PatchItem(ctx, "c", "a", map[string]any{"properties": map[string]any{"gsd": 10}}, o)
		},
		func() (*WriteResult, error) { return c.DeleteItem(ctx, "c", "a", o) },
		func() (*WriteResult, error) { return c.CreateCollection(ctx, testCollection("c2"), o) },
		func() (*WriteResult, error) { return c.ReplaceCollection(ctx, "c2", testCollection("c2"), o) },
		func() (*WriteResult, error) { return c.PatchCollection(ctx, "c2", map[string]any{"title": "T"}, o) },
	}
	for _, call := range calls {
		if _, err := call(); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct{ method, path, contentType string }{
		{"POST", "/v1/collections/c/items", "application/json"},
		{"PUT", "/v1/collections/c/items/a", "application/json"},
		{"PATCH", "/v1/collections/c/items/a", MergePatchContentType},
		{"DELETE", "/v1/collections/c/items/a", ""},
		{"POST", "/v1/collections", "application/json"},
		{"PUT", "/v1/collections/c2", "application/json"},
		{"PATCH", "/v1/collections/c2", MergePatchContentType},
	}
	got := ts.writes()
	if len(got) != len(want) {
		t.Fatalf("%d writes sent, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.method != w.method || g.path != w.path || g.header.Get("Content-Type") != w.contentType || g.header.Get("Idempotency-Key") != "key-1" {
			t.Errorf("write %d: %s %s Content-Type %q Idempotency-Key %q; want %s %s %q key-1",
				i, g.method, g.path, g.header.Get("Content-Type"), g.header.Get("Idempotency-Key"), w.method, w.path, w.contentType)
		}
	}
	if !strings.Contains(got[0].body, `"id":"a"`) || got[3].body != "" {
		t.Errorf("bodies: create %q, delete %q", got[0].body, got[3].body)
	}
}

func TestWriteAnswersAreTyped(t *testing.T) {
	ts := newTxServer(t, itemTx)
	c, _ := New(ts.URL, Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		status int
		kind   ErrorKind
	}{{409, KindConflict}, {404, KindNotFound}, {400, KindBadRequest}, {503, KindServer}} {
		ts.mu.Lock()
		ts.status, ts.body = tc.status, `{"code":"x","description":"told you"}`
		ts.mu.Unlock()
		_, err := c.CreateItem(ctx, "c", testItem("a"), WriteOptions{})
		var se *Error
		if !errors.As(err, &se) || se.Kind != tc.kind || se.Status != tc.status || se.Message != "told you" {
			t.Errorf("%d: %v, want kind %s with the catalog's message", tc.status, err, tc.kind)
		}
	}
	ts.mu.Lock()
	ts.status, ts.body = 202, ""
	ts.mu.Unlock()
	res, err := c.DeleteItem(ctx, "c", "a", WriteOptions{})
	if err != nil || !res.Accepted || res.Status != 202 || res.Document != nil {
		t.Errorf("202: %+v %v, want Accepted", res, err)
	}
}

func TestWritesAreCheckedBeforeSending(t *testing.T) {
	ts := newTxServer(t, itemTx, collectionTx)
	c, _ := New(ts.URL, Options{})
	ctx := context.Background()
	bad := testItem("a")
	delete(bad, "properties")
	other := testItem("a")
	other["collection"] = "elsewhere"
	for name, call := range map[string]func() error{
		"invalid item": func() error { _, err := c.CreateItem(ctx, "c", bad, WriteOptions{}); return err },
		"wrong collection": func() error {
			_, err := c.CreateItem(ctx, "c", other, WriteOptions{})
			return err
		},
		"id differs from the path": func() error { _, err := c.ReplaceItem(ctx, "c", "b", testItem("a"), WriteOptions{}); return err },
		"slash in the path id":     func() error { _, err := c.DeleteItem(ctx, "c", "a/b", WriteOptions{}); return err },
		"patch changes the id": func() error {
			_, err := c.PatchItem(ctx, "c", "a", map[string]any{"id": "b"}, WriteOptions{})
			return err
		},
		"collection id differs": func() error {
			_, err := c.ReplaceCollection(ctx, "c", testCollection("d"), WriteOptions{})
			return err
		},
		"invalid collection": func() error {
			_, err := c.CreateCollection(ctx, map[string]any{"type": "Collection", "id": "x"}, WriteOptions{})
			return err
		},
	} {
		err := call()
		var pe *ParamError
		var de *stacdoc.Error
		if !errors.As(err, &pe) && !errors.As(err, &de) {
			t.Errorf("%s: %v, want a ParamError or a stacdoc.Error", name, err)
		}
	}
	if n := len(ts.writes()); n != 0 {
		t.Fatalf("%d writes reached the catalog; a bad document must send nothing", n)
	}
}

func TestCatalogWithoutTransactionsIsRefused(t *testing.T) {
	ts := newTxServer(t) // declares core only
	c, _ := New(ts.URL, Options{})
	_, err := c.CreateItem(context.Background(), "c", testItem("a"), WriteOptions{})
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindUnsupported || !strings.Contains(se.Message, "ogcapi-features/extensions/transaction") {
		t.Fatalf("err %v, want KindUnsupported naming the Transaction class", err)
	}
	// Items-only: collection writes are refused, item writes allowed.
	ts2 := newTxServer(t, itemTx)
	c2, _ := New(ts2.URL, Options{})
	if err := c2.RequireTransactions(context.Background(), TxCollections); err == nil {
		t.Error("collection writes allowed by the item Transaction class alone")
	}
	if err := c2.RequireTransactions(context.Background(), TxItems); err != nil {
		t.Error(err)
	}
	if len(ts.writes())+len(ts2.writes()) != 0 {
		t.Fatal("a refused write reached the catalog")
	}
}

func TestFreshAsksForACurrentAnswer(t *testing.T) {
	var log headerLog
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		_, _ = io.WriteString(w, `{"type":"Collection","id":"c","stac_version":"1.0.0","description":"d","license":"x","extent":{},"links":[]}`)
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	if _, err := c.Collection(Fresh(context.Background()), "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Collection(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	h := log.all()
	if h[0].Get("Cache-Control") != "no-cache" || h[1].Get("Cache-Control") != "" {
		t.Errorf("Cache-Control %q then %q, want no-cache only on the fresh read", h[0].Get("Cache-Control"), h[1].Get("Cache-Control"))
	}
}
