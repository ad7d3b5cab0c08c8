package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

var writeToolNames = []string{"create_item", "update_item", "delete_item", "create_collection", "update_collection"}

// sqliteWrites is write support with an SQLite store in a test directory.
func sqliteWrites(t testing.TB, dir string) *Writes {
	t.Helper()
	s, err := idempotency.OpenSQLite(t.Context(), dir, idempotency.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Writes{Store: s}
}

// writableCatalog is an in-process STAC API with the Transaction
// endpoints over the test store, wrapped by wrap (nil: none); applied
// counts the changes it made.
type writableCatalog struct {
	*httptest.Server
	applied atomic.Int32
	mu      sync.Mutex
	methods []string // "METHOD path" of every request
}

func newWritableCatalog(t testing.TB, wrap func(http.Handler) http.Handler) *writableCatalog {
	t.Helper()
	wc := &writableCatalog{}
	store := stacserver.NewStore()
	must := func(doc string, add func([]byte) error) {
		if err := add([]byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	must(`{"type":"Collection","stac_version":"1.0.0","id":"survey","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[-180,-90,180,90]]},"temporal":{"interval":[[null,null]]}},"links":[]}`, store.AddCollection)
	must(writeTestItem("existing", 1), store.AddItem)
	api := stacserver.New(store, stacserver.Options{
		Writes: &stacserver.WriteOptions{OnApplied: func(*http.Request) { wc.applied.Add(1) }},
		OnRequest: func(r *http.Request) {
			wc.mu.Lock()
			wc.methods = append(wc.methods, r.Method+" "+r.URL.Path)
			wc.mu.Unlock()
		},
	})
	var h http.Handler = api
	if wrap != nil {
		h = wrap(h)
	}
	wc.Server = httptest.NewServer(h)
	t.Cleanup(wc.Close)
	return wc
}

// count is how many requests "METHOD path" the catalog saw.
func (wc *writableCatalog) count(methodPath string) int {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	n := 0
	for _, m := range wc.methods {
		if m == methodPath {
			n++
		}
	}
	return n
}

func writeTestItem(id string, x float64) string {
	xs := strings.TrimRight(strings.TrimRight(jsonNumber(x), "0"), ".")
	return `{"type":"Feature","stac_version":"1.0.0","id":"` + id + `","collection":"survey",
		"geometry":{"type":"Point","coordinates":[` + xs + `,40]},"bbox":[` + xs + `,40,` + xs + `,40],
		"properties":{"datetime":"2024-06-01T10:00:00Z","gsd":10},"links":[],"assets":{"data":{"href":"https://example.com/` + id + `.tif"}}}`
}

func jsonNumber(f float64) string { b, _ := json.Marshal(f); return string(b) + ".0" }

func itemArg(t testing.TB, id string, x float64) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(writeTestItem(id, x)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeSession(t testing.TB, catalogURL string, w *Writes, p *reliability.Policy) *mcp.ClientSession {
	t.Helper()
	return newTestSession(t, testSessionOptions{CatalogURL: catalogURL, Writes: w, Policy: p})
}

func denialOf(t testing.TB, res *mcp.CallToolResult) reliability.Denial {
	t.Helper()
	raw, err := json.Marshal(res.Meta[MetaDenial])
	if err != nil {
		t.Fatal(err)
	}
	var d reliability.Denial
	if err := json.Unmarshal(raw, &d); err != nil || d.Code == "" {
		t.Fatalf("no denial in _meta: %s (%s)", raw, resultText(res))
	}
	return d
}

func TestWriteToolsAreListedOnlyWithWritesAllowed(t *testing.T) {
	names := func(cs *mcp.ClientSession) []string {
		var out []string
		for _, tool := range listTools(t, cs) {
			out = append(out, tool.Name)
		}
		return out
	}
	readOnly := names(newTestSession(t, testSessionOptions{}))
	for _, w := range writeToolNames {
		if slices.Contains(readOnly, w) {
			t.Errorf("%s is listed without --allow-writes", w)
		}
	}
	writable := names(newTestSession(t, testSessionOptions{Writes: sqliteWrites(t, t.TempDir())}))
	for _, w := range writeToolNames {
		if !slices.Contains(writable, w) {
			t.Errorf("%s is not listed with writes allowed", w)
		}
	}
	if len(writable) != len(readOnly)+len(writeToolNames) {
		t.Errorf("%d tools with writes, %d without", len(writable), len(readOnly))
	}
	for _, tool := range WriteTools() {
		if tool.SideEffect == reliability.SideEffectRead || tool.SideEffect == "" {
			t.Errorf("%s has side effect %q", tool.Def.Name, tool.SideEffect)
		}
	}
	for _, tool := range Inventory() {
		if tool.SideEffect != reliability.SideEffectRead {
			t.Errorf("read tool %s has side effect %q", tool.Def.Name, tool.SideEffect)
		}
	}
}

// TestWriteToolMetadataIsHonest: annotations say what each write does,
// every write requires an idempotency_key, and each has a worked example.
func TestWriteToolMetadataIsHonest(t *testing.T) {
	cs := newTestSession(t, testSessionOptions{Writes: sqliteWrites(t, t.TempDir())})
	want := map[string]struct{ destructive, idempotent bool }{
		"create_item": {false, false}, "create_collection": {false, false},
		"update_item": {true, true}, "update_collection": {true, true}, "delete_item": {true, true},
	}
	for _, tool := range listTools(t, cs) {
		w, isWrite := want[tool.Name]
		if !isWrite {
			continue
		}
		a := tool.Annotations
		if a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint != w.destructive || a.IdempotentHint != w.idempotent ||
			a.OpenWorldHint == nil || !*a.OpenWorldHint {
			t.Errorf("%s annotations %+v, want readOnly false, destructive %v, idempotent %v, openWorld true", tool.Name, a, w.destructive, w.idempotent)
		}
		in := tool.InputSchema.(map[string]any)
		required, _ := in["required"].([]any)
		if !slices.Contains(required, any("idempotency_key")) {
			t.Errorf("%s: idempotency_key is not required (required %v)", tool.Name, required)
		}
		props := in["properties"].(map[string]any)
		desc, _ := props["idempotency_key"].(map[string]any)["description"].(string)
		if !strings.Contains(desc, "SAME key") {
			t.Errorf("%s: the key's description does not tell the model to reuse it on retry: %q", tool.Name, desc)
		}
		if !strings.Contains(tool.Description, "Example") || !strings.Contains(tool.Description, "idempotency_key") {
			t.Errorf("%s: description lacks a worked example with idempotency_key", tool.Name)
		}
	}
}

func TestCreateItemThenDuplicate(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "new-1", 2), "idempotency_key": "k-create-1"}
	first := callOK(t, cs, "create_item", args)
	out := structured[WriteOut](t, first)
	rc, _ := receiptOf(t, first)
	if out.Status != "created" || out.ReplayDecision != writeflow.DecisionExecuted || out.Duplicate || out.UpstreamStatus != 201 ||
		out.CorrelationID != rc.CorrelationID || out.SideEffect != reliability.SideEffectCreate {
		t.Fatalf("first call: %+v (receipt %+v)", out, rc)
	}
	if rc.SideEffect != reliability.SideEffectCreate || rc.IdempotencyKey != "k-create-1" || rc.ReplayDecision != writeflow.DecisionExecuted {
		t.Errorf("receipt %+v", rc)
	}
	second := callOK(t, cs, "create_item", args)
	dup := structured[WriteOut](t, second)
	rc2, _ := receiptOf(t, second)
	if !dup.Duplicate || dup.CorrelationID != out.CorrelationID || dup.Status != "created" || dup.ReplayDecision != writeflow.DecisionExecuted {
		t.Errorf("repeat: %+v, want the stored outcome with duplicate true", dup)
	}
	if !rc2.Duplicate || rc2.ReplayDecision != writeflow.DecisionDuplicate || rc2.OriginalCorrelationID != out.CorrelationID || rc2.Attempts != 0 {
		t.Errorf("repeat receipt %+v", rc2)
	}
	if !strings.Contains(resultText(second), "Duplicate") {
		t.Errorf("repeat text: %s", resultText(second))
	}
	if n := wc.count("POST /collections/survey/items"); n != 1 || wc.applied.Load() != 1 {
		t.Fatalf("the catalog saw %d POSTs and applied %d changes; want 1 and 1", n, wc.applied.Load())
	}
	got := callOK(t, cs, "get_item", map[string]any{"collection_id": "survey", "item_id": "new-1"})
	if structured[GetItemOut](t, got).Item["id"] != "new-1" {
		t.Error("get_item does not see the created item")
	}
}

func TestSameKeyOtherArgumentsIsAConflict(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	w := sqliteWrites(t, t.TempDir())
	d := newTestDeps(t, testSessionOptions{CatalogURL: wc.URL, Writes: w})
	cs := connect(t, newServer(d, "test", Tools(d)))
	callOK(t, cs, "create_item", map[string]any{"collection_id": "survey", "item": itemArg(t, "a", 2), "idempotency_key": "k"})
	res := callTool(t, cs, "create_item", map[string]any{"collection_id": "survey", "item": itemArg(t, "b", 3), "idempotency_key": "k"})
	if !res.IsError {
		t.Fatal("the same key with another item was accepted")
	}
	d1 := denialOf(t, res)
	if d1.Code != reliability.CodeIdempotencyConflict || d1.Recovery != reliability.RecoveryNewKey || d1.IdempotencyKey != "k" {
		t.Errorf("denial %+v", d1)
	}
	if wc.count("POST /collections/survey/items") != 1 {
		t.Error("the conflicting call reached the catalog")
	}
	if n := metricValue(t, d.Layer, "idempotency_conflicts_total", "create_item"); n != 1 {
		t.Errorf("idempotency_conflicts_total = %v", n)
	}
}

// metricValue sums a counter of the layer's registry over the series of
// one tool.
func metricValue(t testing.TB, l *reliability.Layer, name, tool string) float64 {
	t.Helper()
	mfs, err := l.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		total := 0.0
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "tool_name" && lp.GetValue() == tool {
					total += m.GetCounter().GetValue()
				}
			}
		}
		return total
	}
	return 0
}

func TestInFlightKeyIsDeniedWithARetryAfter(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	wc := newWritableCatalog(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				entered <- struct{}{}
				<-release
			}
			next.ServeHTTP(w, r)
		})
	})
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "slow", 2), "idempotency_key": "k-slow"}
	done := make(chan *mcp.CallToolResult)
	go func() { done <- callTool(t, cs, "create_item", args) }()
	<-entered
	res := callTool(t, cs, "create_item", args)
	d := denialOf(t, res)
	if d.Code != reliability.CodeInFlight || d.Recovery != reliability.RecoveryRetrySameKey || d.RetryAfterMS <= 0 {
		t.Errorf("denial %+v, want in_flight with a retry-after and retry_same_key", d)
	}
	close(release)
	if first := <-done; first.IsError {
		t.Fatalf("the first call failed: %s", resultText(first))
	}
	if dup := structured[WriteOut](t, callOK(t, cs, "create_item", args)); !dup.Duplicate {
		t.Error("after the first call finished, the same key is not a duplicate")
	}
}

// TestStoredFailureIsReturnedUnchanged: a create refused by the catalog
// (409) is stored: a repeat returns it (duplicate, isError, same text) and
// sends nothing.
func TestStoredFailureIsReturnedUnchanged(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "existing", 1), "idempotency_key": "k-exists"}
	first := callTool(t, cs, "create_item", args)
	out := structured[WriteOut](t, first)
	if !first.IsError || out.Status != "failed" || out.UpstreamStatus != 409 || !strings.Contains(resultText(first), "exists already") {
		t.Fatalf("create of an existing item: isError %v, %+v, %s", first.IsError, out, resultText(first))
	}
	second := callTool(t, cs, "create_item", args)
	dup := structured[WriteOut](t, second)
	if !second.IsError || !dup.Duplicate || dup.Status != "failed" || dup.Error != out.Error {
		t.Fatalf("repeat: isError %v %+v", second.IsError, dup)
	}
	if n := wc.count("POST /collections/survey/items"); n != 1 {
		t.Errorf("%d POSTs; a stored failure must not be sent again", n)
	}
}

func TestBadDocumentsSendAndRecordNothing(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	bad := itemArg(t, "bad", 2)
	bad["properties"].(map[string]any)["gsd"] = -1 // the schema: gsd > 0 (such a document was once written)
	text := callErr(t, cs, "create_item", map[string]any{"collection_id": "survey", "item": bad, "idempotency_key": "k-bad"})
	if !strings.Contains(text, "properties.gsd") || !strings.Contains(text, "Nothing was sent") {
		t.Errorf("error text: %s", text)
	}
	for name, args := range map[string]map[string]any{
		"id differs from item_id": {"collection_id": "survey", "item_id": "other", "item": itemArg(t, "x", 2), "idempotency_key": "k2"},
		"both item and patch":     {"collection_id": "survey", "item_id": "x", "item": itemArg(t, "x", 2), "patch": map[string]any{}, "idempotency_key": "k3"},
		"empty key":               {"collection_id": "survey", "item_id": "x", "patch": map[string]any{"properties": map[string]any{"gsd": 1}}, "idempotency_key": ""},
		"key too long":            {"collection_id": "survey", "item_id": "x", "patch": map[string]any{"properties": map[string]any{"gsd": 1}}, "idempotency_key": strings.Repeat("k", 256)},
		"patch changes the id":    {"collection_id": "survey", "item_id": "existing", "patch": map[string]any{"id": "y"}, "idempotency_key": "k4"},
		"patch breaks the item":   {"collection_id": "survey", "item_id": "existing", "patch": map[string]any{"properties": map[string]any{"datetime": "soon"}}, "idempotency_key": "k5"},
	} {
		if text := callErr(t, cs, "update_item", args); text == "" {
			t.Errorf("%s: no error text", name)
		}
	}
	if wc.applied.Load() != 0 {
		t.Fatalf("%d changes applied by refused writes", wc.applied.Load())
	}
	// The refused call recorded nothing: the same key now works.
	good := itemArg(t, "bad", 2)
	if out := structured[WriteOut](t, callOK(t, cs, "create_item", map[string]any{"collection_id": "survey", "item": good, "idempotency_key": "k-bad"})); out.Status != "created" {
		t.Errorf("after fixing the document: %+v", out)
	}
	// A patch whose result was refused released its key too.
	if out := structured[WriteOut](t, callOK(t, cs, "update_item", map[string]any{"collection_id": "survey", "item_id": "existing",
		"patch": map[string]any{"properties": map[string]any{"datetime": "2025-01-01T00:00:00Z"}}, "idempotency_key": "k5-fixed"})); out.Status != "updated" {
		t.Errorf("fixed patch: %+v", out)
	}
}

func TestCatalogWithoutTransactionsIsRefusedClearly(t *testing.T) {
	cs := writeSession(t, "", sqliteWrites(t, t.TempDir()), nil) // the demo catalog
	item := itemArg(t, "x", 2)
	delete(item, "collection")
	text := callErr(t, cs, "create_item", map[string]any{"collection_id": "naip", "item": item, "idempotency_key": "k"})
	if !strings.Contains(text, "does not declare the STAC Transaction extension") {
		t.Errorf("refusal text: %s", text)
	}
}

func TestUpdateAndDeleteMapEveryAnswer(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	replaced := itemArg(t, "existing", 5)
	if out := structured[WriteOut](t, callOK(t, cs, "update_item", map[string]any{"collection_id": "survey", "item_id": "existing", "item": replaced, "idempotency_key": "u1"})); out.Status != "updated" || out.UpstreamStatus != 200 {
		t.Errorf("replace: %+v", out)
	}
	if out := structured[WriteOut](t, callOK(t, cs, "update_item", map[string]any{"collection_id": "survey", "item_id": "existing",
		"patch": `{"properties":{"gsd":null,"title":"patched"}}`, "idempotency_key": "u2"})); out.Status != "updated" {
		t.Errorf("patch: %+v", out)
	}
	item := structured[GetItemOut](t, callOK(t, cs, "get_item", map[string]any{"collection_id": "survey", "item_id": "existing"})).Item
	props := item["properties"].(map[string]any)
	if _, kept := props["gsd"]; kept || props["title"] != "patched" || item["bbox"].([]any)[0] != 5.0 {
		t.Errorf("after replace and patch: %v", item)
	}
	missing := callTool(t, cs, "update_item", map[string]any{"collection_id": "survey", "item_id": "nope", "item": itemArg(t, "nope", 1), "idempotency_key": "u3"})
	if out := structured[WriteOut](t, missing); !missing.IsError || out.UpstreamStatus != 404 || !strings.Contains(resultText(missing), "404") {
		t.Errorf("update of a missing item: %+v %s", out, resultText(missing))
	}
	if out := structured[WriteOut](t, callOK(t, cs, "delete_item", map[string]any{"collection_id": "survey", "item_id": "existing", "idempotency_key": "d1"})); out.Status != "deleted" || out.UpstreamStatus != 204 {
		t.Errorf("delete: %+v", out)
	}
	again := callTool(t, cs, "delete_item", map[string]any{"collection_id": "survey", "item_id": "existing", "idempotency_key": "d2"})
	if out := structured[WriteOut](t, again); !again.IsError || out.UpstreamStatus != 404 {
		t.Errorf("delete of a deleted item with a new key: %+v", out)
	}
	// The first delete's key still answers with its outcome.
	if out := structured[WriteOut](t, callOK(t, cs, "delete_item", map[string]any{"collection_id": "survey", "item_id": "existing", "idempotency_key": "d1"})); !out.Duplicate || out.Status != "deleted" {
		t.Errorf("repeat of the first delete: %+v", out)
	}
	coll := map[string]any{"type": "Collection", "stac_version": "1.0.0", "id": "second", "description": "d", "license": "CC0-1.0",
		"extent": map[string]any{"spatial": map[string]any{"bbox": []any{[]any{-10, -10, 10, 10}}}, "temporal": map[string]any{"interval": []any{[]any{nil, nil}}}}}
	if out := structured[WriteOut](t, callOK(t, cs, "create_collection", map[string]any{"collection": coll, "idempotency_key": "c1"})); out.Status != "created" || out.CollectionID != "second" {
		t.Errorf("create_collection: %+v", out)
	}
	if out := structured[WriteOut](t, callOK(t, cs, "update_collection", map[string]any{"collection_id": "second", "patch": map[string]any{"title": "Second"}, "idempotency_key": "c2"})); out.Status != "updated" {
		t.Errorf("update_collection: %+v", out)
	}
	got := structured[GetCollectionOut](t, callOK(t, cs, "get_collection", map[string]any{"collection_id": "second"}))
	if got.Title != "Second" {
		t.Errorf("collection after the patch: title %q", got.Title)
	}
}

// acceptingCatalog declares the Transaction classes and answers every
// write 202, as an asynchronous ingest would.
func TestAcceptedWriteIsReportedAsQueued(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		_, _ = io.WriteString(w, `{"type":"Catalog","id":"async","stac_version":"1.0.0","description":"d","links":[],
			"conformsTo":["https://api.stacspec.org/v1.0.0/core","https://api.stacspec.org/v1.0.0/ogcapi-features/extensions/transaction"]}`)
	}))
	defer srv.Close()
	cs := writeSession(t, srv.URL, sqliteWrites(t, t.TempDir()), nil)
	res := callOK(t, cs, "delete_item", map[string]any{"collection_id": "survey", "item_id": "x", "idempotency_key": "k"})
	if out := structured[WriteOut](t, res); out.Status != "accepted" || out.UpstreamStatus != 202 || !strings.Contains(resultText(res), "not visible yet") {
		t.Errorf("202: %+v %s", out, resultText(res))
	}
}

// faultFirstWrite sends the first write request (any method but GET/HEAD)
// through the injector, so exactly that one gets the plan's fault; every
// other request passes untouched.
func faultFirstWrite(t testing.TB, kind faultinject.Kind) func(http.Handler) http.Handler {
	t.Helper()
	in, err := faultinject.New(faultinject.Plan{Seed: 1, Rate: 1, Mix: faultinject.EqualMix(kind)})
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	return func(next http.Handler) http.Handler {
		faulty := in.Middleware(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead && done.CompareAndSwap(false, true) {
				faulty.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// writePolicy keeps hang faults short: a hung write is cut after 1 s. The
// lookups that follow get the same 1 s per attempt, far more than an
// in-process catalog needs even on a loaded machine, so a slow machine
// does not turn a lookup into an unknown outcome.
func writePolicy() *reliability.Policy {
	p := testPolicy()
	p.AttemptTimeout = time.Second
	p.ToolTimeout = 5 * time.Second
	p.MinUsefulAttempt = 10 * time.Millisecond
	return &p
}

// TestLostAnswerIsLookedUpNotReplayed: the catalog applied the write, then
// its answer was lost; the tool looks the item up and does not send it
// again.
func TestLostAnswerIsLookedUpNotReplayed(t *testing.T) {
	for _, kind := range faultinject.KindsOf(faultinject.ClassApplied) {
		t.Run(kind.String(), func(t *testing.T) {
			wc := newWritableCatalog(t, faultFirstWrite(t, kind))
			cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), writePolicy())
			res := callOK(t, cs, "create_item", map[string]any{"collection_id": "survey", "item": itemArg(t, "lost", 2), "idempotency_key": "k"})
			out := structured[WriteOut](t, res)
			if out.ReplayDecision != writeflow.DecisionLookedUp || out.Status != "created" || len(out.Notes) == 0 {
				t.Errorf("result %+v, want created by lookup", out)
			}
			if n := wc.count("POST /collections/survey/items"); n != 1 || wc.applied.Load() != 1 {
				t.Errorf("%d POSTs, %d applied; want 1 and 1", n, wc.applied.Load())
			}
		})
	}
	t.Run("update", func(t *testing.T) {
		wc := newWritableCatalog(t, faultFirstWrite(t, faultinject.AppliedThen503))
		cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), writePolicy())
		out := structured[WriteOut](t, callOK(t, cs, "update_item", map[string]any{"collection_id": "survey", "item_id": "existing",
			"item": itemArg(t, "existing", 7), "idempotency_key": "k"}))
		if out.ReplayDecision != writeflow.DecisionLookedUp || wc.count("PUT /collections/survey/items/existing") != 1 {
			t.Errorf("%+v after %d PUTs; want looked-up after one (the layer must not retry the keyed PUT)", out, wc.count("PUT /collections/survey/items/existing"))
		}
	})
	t.Run("delete", func(t *testing.T) {
		wc := newWritableCatalog(t, faultFirstWrite(t, faultinject.AppliedThenReset))
		cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), writePolicy())
		out := structured[WriteOut](t, callOK(t, cs, "delete_item", map[string]any{"collection_id": "survey", "item_id": "existing", "idempotency_key": "k"}))
		if out.ReplayDecision != writeflow.DecisionLookedUp || out.Status != "deleted" || wc.count("DELETE /collections/survey/items/existing") != 1 {
			t.Errorf("%+v", out)
		}
	})
}

// TestLostRequestIsReplayedOnce: the write never reached the catalog; the
// lookup finds nothing and the tool sends it once more.
func TestLostRequestIsReplayedOnce(t *testing.T) {
	wc := newWritableCatalog(t, faultFirstWrite(t, faultinject.ResetBeforeResponse))
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), writePolicy())
	out := structured[WriteOut](t, callOK(t, cs, "create_item", map[string]any{"collection_id": "survey", "item": itemArg(t, "lost", 2), "idempotency_key": "k"}))
	if out.ReplayDecision != writeflow.DecisionReplayed || out.Status != "created" {
		t.Errorf("result %+v, want created by a replay", out)
	}
	if n := wc.count("POST /collections/survey/items"); n != 1 || wc.applied.Load() != 1 {
		// The reset fault answers before the catalog sees the request.
		t.Errorf("the catalog saw %d POSTs and applied %d", n, wc.applied.Load())
	}
}

// TestUnknownOutcomeIsResolvedByTheNextCall: the answer is lost and the
// lookup fails too; the call ends outcome_unknown (retry with the same
// key), and the next call looks before it sends: no second write.
func TestUnknownOutcomeIsResolvedByTheNextCall(t *testing.T) {
	var failGets atomic.Bool
	failGets.Store(true)
	lost := faultFirstWrite(t, faultinject.AppliedThenReset)
	wc := newWritableCatalog(t, func(next http.Handler) http.Handler {
		inner := lost(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/items/") && failGets.Load() {
				http.Error(w, `{"code":"Unavailable","description":"down"}`, http.StatusServiceUnavailable)
				return
			}
			inner.ServeHTTP(w, r)
		})
	})
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), writePolicy())
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "unsure", 2), "idempotency_key": "k-unsure"}
	res := callTool(t, cs, "create_item", args)
	d := denialOf(t, res)
	if d.Code != reliability.CodeOutcomeUnknown || d.Recovery != reliability.RecoveryRetrySameKey || !strings.Contains(resultText(res), "same arguments and idempotency_key") {
		t.Fatalf("denial %+v, text %s", d, resultText(res))
	}
	failGets.Store(false)
	out := structured[WriteOut](t, callOK(t, cs, "create_item", args))
	if out.ReplayDecision != writeflow.DecisionLookedUp || out.Duplicate {
		t.Errorf("second call %+v, want a looked-up success", out)
	}
	if n := wc.count("POST /collections/survey/items"); n != 1 || wc.applied.Load() != 1 {
		t.Errorf("%d POSTs, %d applied; want exactly one write", n, wc.applied.Load())
	}
	if dup := structured[WriteOut](t, callOK(t, cs, "create_item", args)); !dup.Duplicate || dup.CorrelationID != out.CorrelationID {
		t.Errorf("third call %+v, want the second call's outcome as a duplicate", dup)
	}
}

// TestOutcomeSurvivesARestart: a new process (a new store on the same
// directory, a new server) answers a repeat with duplicate: true.
func TestOutcomeSurvivesARestart(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	dir := t.TempDir()
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "r-1", 2), "idempotency_key": "k-restart"}
	func() {
		store, err := idempotency.OpenSQLite(t.Context(), dir, idempotency.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		d := newTestDeps(t, testSessionOptions{CatalogURL: wc.URL, Writes: &Writes{Store: store}})
		serverT, clientT := mcp.NewInMemoryTransports()
		ss, _ := newServer(d, "test", Tools(d)).Connect(context.Background(), serverT, nil)
		cs, _ := mcp.NewClient(&mcp.Implementation{Name: "first"}, nil).Connect(context.Background(), clientT, nil)
		callOK(t, cs, "create_item", args)
		cs.Close()
		_ = ss.Wait() // the client closed the session: its end needs no check
	}()
	cs := writeSession(t, wc.URL, sqliteWrites(t, dir), nil)
	out := structured[WriteOut](t, callOK(t, cs, "create_item", args))
	if !out.Duplicate || wc.applied.Load() != 1 {
		t.Fatalf("after a restart: %+v, %d applied", out, wc.applied.Load())
	}
}

// TestRedisStoreSharesOutcomesBetweenReplicas: two servers on one Redis
// (two replicas) answer the same key with one write.
func TestRedisStoreSharesOutcomesBetweenReplicas(t *testing.T) {
	mr := miniredis.RunT(t)
	wc := newWritableCatalog(t, nil)
	replica := func() *mcp.ClientSession {
		s, err := idempotency.OpenRedis("redis://"+mr.Addr(), idempotency.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return writeSession(t, wc.URL, &Writes{Store: s}, nil)
	}
	a, b := replica(), replica()
	args := map[string]any{"collection_id": "survey", "item": itemArg(t, "shared", 2), "idempotency_key": "k-shared"}
	first := structured[WriteOut](t, callOK(t, a, "create_item", args))
	second := structured[WriteOut](t, callOK(t, b, "create_item", args))
	if first.Duplicate || !second.Duplicate || second.CorrelationID != first.CorrelationID || wc.applied.Load() != 1 {
		t.Fatalf("replica A %+v, replica B %+v, %d applied", first, second, wc.applied.Load())
	}
}

// TestReadAfterWriteIsFresh: with the response cache on (30 s), get_item
// after update_item returns the updated item, not the cached one.
func TestReadAfterWriteIsFresh(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	p := testPolicy()
	p.CacheTTL = 30 * time.Second
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), &p)
	get := func() map[string]any {
		return structured[GetItemOut](t, callOK(t, cs, "get_item", map[string]any{"collection_id": "survey", "item_id": "existing"})).Item
	}
	get()
	if hits := wc.count("GET /collections/survey/items/existing"); get() == nil || wc.count("GET /collections/survey/items/existing") != hits {
		t.Fatal("the second read was not served from the cache, so this test proves nothing")
	}
	callOK(t, cs, "update_item", map[string]any{"collection_id": "survey", "item_id": "existing",
		"patch": map[string]any{"properties": map[string]any{"title": "fresh"}}, "idempotency_key": "k"})
	if title := get()["properties"].(map[string]any)["title"]; title != "fresh" {
		t.Fatalf("get_item after the update returned title %v: a stale cached item", title)
	}
}

// TestLocalCatalogIsCuratedOnDisk: a local catalog.json served with writes
// allowed changes on disk, and a fresh load sees the change.
func TestLocalCatalogIsCuratedOnDisk(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "stacclient", "stacserver", "testdata", "joplin"))); err != nil {
		t.Fatal(err)
	}
	cs := writeSession(t, filepath.Join(dir, "catalog.json"), sqliteWrites(t, t.TempDir()), nil)
	item := itemArg(t, "drone-1", -94.5)
	delete(item, "collection")
	delete(item, "links")
	out := structured[WriteOut](t, callOK(t, cs, "create_item", map[string]any{"collection_id": "joplin", "item": item, "idempotency_key": "k"}))
	if out.Status != "created" {
		t.Fatalf("%+v", out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "drone-1", "drone-1.json"))
	if err != nil || !bytes.Contains(raw, []byte(`"collection": "joplin"`)) {
		t.Fatalf("the item file: %v\n%s", err, raw)
	}
	store, err := stacserver.LoadDir(dir)
	if err != nil || store.ItemCount() != 31 {
		t.Fatalf("reloading the catalog: %v, %d items", err, store.ItemCount())
	}
	found := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"ids": []string{"drone-1"}}))
	if found.Returned != 1 {
		t.Errorf("search_items finds %d", found.Returned)
	}
}

func TestDemoCatalogStaysReadOnly(t *testing.T) {
	cs := writeSession(t, DemoCatalog, sqliteWrites(t, t.TempDir()), nil)
	caps := structured[GetCapabilitiesOut](t, callOK(t, cs, "get_capabilities", map[string]any{}))
	if slices.Contains(caps.Supported, "transaction") {
		t.Error("the demo catalog declares transactions")
	}
}
