package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
)

// Test-only tools that exercise define() without depending on any real
// tool: one reports the resolved catalog, one fails the way a handler can.

type probeIn struct {
	CatalogArg
	Fail string `json:"fail,omitempty" jsonschema:"how to fail: denial, not_found, plain; empty succeeds"`
}

type probeOut struct {
	Name   string       `json:"name"`
	URL    string       `json:"url"`
	Host   string       `json:"host"`
	Ref    string       `json:"ref"`
	RootID string       `json:"root_id"`
	Tags   []string     `json:"tags"`
	Nested []probeEntry `json:"nested,omitempty"`
	Item   *stacclient.Item
}

type probeEntry struct {
	Keys []string `json:"keys"`
}

func probeTool() Tool {
	return define(&mcp.Tool{
		Name:        "probe",
		Title:       "Probe",
		Description: "Test-only tool. Example: {\"fail\": \"denial\"}",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	}, true, func(ctx context.Context, c *Call, in probeIn) (probeOut, string, error) {
		switch in.Fail {
		case "denial":
			return probeOut{}, "", &reliability.Denial{Code: "retry_exhausted", Attempts: 3, LastStatus: 503, Next: "wait and retry"}
		case "not_found":
			return probeOut{}, "", &stacclient.Error{Kind: stacclient.KindNotFound, Status: 404, Method: "GET", URL: c.Catalog.URL + "/collections/nope", Message: "collection not found"}
		case "plain":
			return probeOut{}, "", errors.New("plain failure")
		}
		root, err := c.Catalog.Client.Root(ctx)
		if err != nil {
			return probeOut{}, "", err
		}
		out := probeOut{Name: c.Catalog.Name, URL: c.Catalog.URL, Host: c.Catalog.Host, Ref: c.Catalog.Ref, RootID: root.ID, Tags: []string{}}
		return out, "probe of " + root.ID, nil
	})
}

func TestDefineSuccessCarriesTextStructuredAndReceipt(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{probeTool()}})
	res := callOK(t, cs, "probe", map[string]any{})
	out := structured[probeOut](t, res)
	if out.Name != DemoCatalog || out.URL != "http://demo.stac-mcp.invalid" || out.Host == "" {
		t.Errorf("default catalog resolved to %+v, want the in-process demo catalog", out)
	}
	if out.RootID == "" {
		t.Errorf("demo root has no id: %+v", out)
	}
	if got := resultText(res); got != "probe of "+out.RootID {
		t.Errorf("text block = %q, want the handler's readable text", got)
	}
	rec, ok := receiptOf(t, res)
	if !ok {
		t.Fatalf("success result has no %s in _meta: %v", MetaReceipt, res.Meta)
	}
	if rec.CatalogHost != out.Host {
		t.Errorf("receipt catalog_host = %q, want %q", rec.CatalogHost, out.Host)
	}
}

func TestDefineErrorsAreIsErrorWithReceiptAndDenial(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{probeTool()}})

	res := callTool(t, cs, "probe", map[string]any{"fail": "denial"})
	if !res.IsError {
		t.Fatalf("denial: want isError, got %s", resultText(res))
	}
	if _, ok := receiptOf(t, res); !ok {
		t.Errorf("denial result has no receipt in _meta: %v", res.Meta)
	}
	raw, _ := json.Marshal(res.Meta[MetaDenial])
	var denial reliability.Denial
	if err := json.Unmarshal(raw, &denial); err != nil || denial.Code != "retry_exhausted" || denial.LastStatus != 503 {
		t.Errorf("denial in _meta = %s (%v), want code retry_exhausted, last_status 503", raw, err)
	}
	if text := resultText(res); !strings.Contains(text, "probe") {
		t.Errorf("denial text %q does not name the tool", text)
	}

	res = callTool(t, cs, "probe", map[string]any{"fail": "not_found"})
	if !res.IsError {
		t.Fatalf("not_found: want isError")
	}
	if _, ok := res.Meta[MetaDenial]; ok {
		t.Errorf("a plain upstream error must not carry a denial: %v", res.Meta)
	}
	if _, ok := receiptOf(t, res); !ok {
		t.Errorf("not_found result has no receipt")
	}
	if text := resultText(res); !strings.Contains(text, "404") && !strings.Contains(strings.ToLower(text), "not found") {
		t.Errorf("not_found text %q says neither 404 nor not found", text)
	}
}

func TestDefineRejectsUnknownArgumentsBeforeTheHandler(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	tool := define(&mcp.Tool{Name: "counted", Description: "Example: {}"}, false,
		func(ctx context.Context, c *Call, in probeIn) (probeOut, string, error) {
			calls.Add(1)
			return probeOut{Tags: []string{}}, "ok", nil
		})
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{tool}})
	text := callErr(t, cs, "counted", map[string]any{"bogus": 1})
	for _, want := range []string{"counted", "bogus", "Accepted arguments: catalog_url, fail"} {
		if !strings.Contains(text, want) {
			t.Errorf("error %q does not contain %q (tool, offending argument, accepted ones)", text, want)
		}
	}
	text = callErr(t, cs, "counted", map[string]any{"fail": 5})
	if !strings.Contains(text, "fail is a whole number (5), but it takes") {
		t.Errorf("type error %q does not name the argument, what it got and what it takes", text)
	}
	if calls.Load() != 0 {
		t.Errorf("handler ran %d times for invalid arguments", calls.Load())
	}
}

func TestDefineResolvesCatalogArgument(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"type":"Catalog","id":"upstream-root","stac_version":"1.0.0","description":"d","links":[]}`))
	}))
	defer upstream.Close()
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{probeTool()}})

	out := structured[probeOut](t, callOK(t, cs, "probe", map[string]any{"catalog_url": upstream.URL}))
	if out.RootID != "upstream-root" || out.Name != "" || out.Ref != upstream.URL {
		t.Errorf("catalog_url=%s resolved to %+v", upstream.URL, out)
	}
	if hits.Load() == 0 {
		t.Errorf("the upstream catalog was never asked")
	}

	res := callTool(t, cs, "probe", map[string]any{"catalog_url": "not-a-catalog"})
	if !res.IsError {
		t.Fatalf("catalog_url=not-a-catalog succeeded")
	}
	if rec, ok := receiptOf(t, res); !ok || rec.CatalogHost != "" {
		t.Errorf("a catalog that does not resolve should still get a receipt (with no host); got %+v, %v", rec, ok)
	}
	text := resultText(res)
	for _, want := range []string{"not-a-catalog", "earth-search", "planetary-computer", "demo", "catalog.json"} {
		if !strings.Contains(text, want) {
			t.Errorf("bad catalog_url error %q does not mention %q", text, want)
		}
	}
}

func TestDefineServesLocalStaticCatalog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("catalog.json", `{"type":"Catalog","id":"my-local","stac_version":"1.0.0","description":"local test catalog",
		"links":[{"rel":"child","href":"./c1/collection.json"}]}`)
	write("c1/collection.json", `{"type":"Collection","id":"c1","stac_version":"1.0.0","description":"c","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[0,0,1,1]]},"temporal":{"interval":[["2020-01-01T00:00:00Z",null]]}},"links":[]}`)
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{probeTool()}})

	for _, ref := range []string{filepath.Join(dir, "catalog.json"), dir} {
		out := structured[probeOut](t, callOK(t, cs, "probe", map[string]any{"catalog_url": ref}))
		if out.Name != "local" || out.RootID != "my-local" {
			t.Errorf("catalog_url=%s resolved to %+v, want the local catalog my-local", ref, out)
		}
	}
}

func TestOutputSchemaArraysAreNonNullableExceptInUpstreamDocuments(t *testing.T) {
	t.Parallel()
	s := mustOutputSchema[probeOut]("probe")
	if got := s.Properties["tags"]; got.Type != "array" || got.Types != nil {
		t.Errorf("tags schema type=%q types=%v, want type array", got.Type, got.Types)
	}
	nested := s.Properties["nested"]
	if nested.Type != "array" || nested.Items.Properties["keys"].Type != "array" {
		t.Errorf("nested arrays not fixed: %v / %v", nested.Types, nested.Items.Properties["keys"].Types)
	}
	item := s.Properties["Item"]
	if item.AdditionalProperties != nil {
		t.Errorf("a STAC Item must be an open object (extension fields), got additionalProperties %v", item.AdditionalProperties)
	}
	if links := item.Properties["links"]; links == nil || links.Type == "array" {
		t.Errorf("links inside an upstream Item should stay nullable, got %+v", links)
	}
}

func TestDefineToolDeadlineIsADenialWithReceipt(t *testing.T) {
	t.Parallel()
	slow := define(&mcp.Tool{Name: "slow", Description: "Example: {}"}, true,
		func(ctx context.Context, c *Call, in probeIn) (probeOut, string, error) {
			<-ctx.Done() // a handler that only stops when the layer's deadline fires
			return probeOut{}, "", ctx.Err()
		})
	policy := testPolicy()
	policy.ToolTimeout = time.Second // the smallest the layer accepts
	policy.AttemptTimeout = 500 * time.Millisecond
	cs := newTestSession(t, testSessionOptions{Tools: []Tool{slow}, Policy: &policy})

	res := callTool(t, cs, "slow", map[string]any{})
	if !res.IsError {
		t.Fatalf("a call past its deadline succeeded: %s", resultText(res))
	}
	raw, _ := json.Marshal(res.Meta[MetaDenial])
	var denial reliability.Denial
	if err := json.Unmarshal(raw, &denial); err != nil || denial.Code != reliability.CodeTimeout || denial.Next == "" {
		t.Errorf("denial in _meta = %s (%v), want code %q with a next step", raw, err, reliability.CodeTimeout)
	}
	if _, ok := receiptOf(t, res); !ok {
		t.Errorf("timed-out call has no receipt")
	}
	if text := resultText(res); !strings.Contains(text, "slow") {
		t.Errorf("timeout text %q does not name the tool", text)
	}
}
