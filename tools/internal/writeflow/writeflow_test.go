package writeflow

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCallerScopesKeys(t *testing.T) {
	stdio := &mcp.CallToolRequest{}
	withToken := func(tok string) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{"Authorization": {"Bearer " + tok}}}}
	}
	a, b := CallerOf(withToken("secret-a")), CallerOf(withToken("secret-b"))
	if CallerOf(stdio) != "stdio" || CallerOf(nil) != "stdio" {
		t.Errorf("stdio caller %q", CallerOf(stdio))
	}
	lower := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{"Authorization": {"bearer secret-a"}}}}
	if a == b || !strings.HasPrefix(a, "token:") || strings.Contains(a, "secret") || a != CallerOf(withToken("secret-a")) || a != CallerOf(lower) {
		t.Errorf("token callers %q %q: want distinct, stable hashes without the token", a, b)
	}
	if got := CallerOf(&mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{}}}); got != "http" {
		t.Errorf("tokenless HTTP caller without a session %q", got)
	}
}

func TestHolds(t *testing.T) {
	got := map[string]any{"id": "a", "properties": map[string]any{"datetime": "2024-06-01T10:00:00.000Z", "gsd": 10.0, "created": "x"},
		"links": []any{"server's own"}}
	for _, c := range []struct {
		want  string
		patch bool
		ok    bool
	}{
		{`{"id":"a","properties":{"datetime":"2024-06-01T10:00:00Z","gsd":10}}`, false, true},
		{`{"id":"a","links":[],"properties":{"gsd":10}}`, false, true},
		{`{"properties":{"gsd":11}}`, false, false},
		{`{"properties":{"missing":1}}`, false, false},
		{`{"properties":{"gone":null}}`, true, true},
		{`{"properties":{"gsd":null}}`, true, false},
	} {
		var want map[string]any
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if holds(got, want, c.patch) != c.ok {
			t.Errorf("holds(%s, patch %v) = %v", c.want, c.patch, !c.ok)
		}
	}
}

// TestClientNameIsNotACaller: over HTTP without a token, the name a client
// declares in initialize is not its identity (anyone can declare any
// name); every unauthenticated client is the one caller "http".
func TestClientNameIsNotACaller(t *testing.T) {
	callers := make(chan string, 2)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "who", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			callers <- CallerOf(req)
			return &mcp.CallToolResult{}, nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer ts.Close()
	for _, name := range []string{"victim-client", "attacker"} {
		client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		if got := <-callers; got != "http" {
			t.Errorf("client %q is caller %q; want the shared unauthenticated caller \"http\"", name, got)
		}
	}
}

// TestDuplicateOfRecordsOldAndNew: a record keeps only what the repeat
// cannot rebuild, and a record written before (the whole outcome and text)
// still answers as a duplicate.
func TestDuplicateOfRecordsOldAndNew(t *testing.T) {
	op := Op{Tool: "create_item", SideEffect: "create", Key: "k", Done: "created", Describe: "item a in collection c",
		Out: Outcome{Operation: "create_item", SideEffect: "create", CatalogURL: "https://cat.example", CollectionID: "c", ItemID: "a", IdempotencyKey: "k"}}
	for name, raw := range map[string]string{
		"compact": `{"s":"created","l":"https://cat.example/collections/c/items/a","u":201,"r":"executed","c":"corr-1"}`,
		"legacy": `{"out":{"status":"created","location":"https://cat.example/collections/c/items/a","upstream_status":201,` +
			`"replay_decision":"executed","correlation_id":"corr-1","catalog_url":"https://cat.example"},"text":"Created item a.","is_error":false}`,
	} {
		out, text, err := duplicateOf(t.Context(), op, []byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !out.Duplicate || out.Status != "created" || out.UpstreamStatus != 201 || out.ItemID != "a" || out.CatalogURL != "https://cat.example" ||
			out.CorrelationID != "corr-1" || !strings.Contains(text, "Created item a in collection c. HTTP 201.") {
			t.Errorf("%s: %+v\n%s", name, out, text)
		}
	}
}
