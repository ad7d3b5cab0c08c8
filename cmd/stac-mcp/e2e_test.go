package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// These tests build the real binary and drive it over stdio, as an MCP host
// does.

// TestEndToEndWithTypeScriptSDK runs e2e/client.mjs, a client built on the
// official MCP TypeScript SDK, against the binary on the demo catalog: it
// lists the tools and makes every call in e2e/calls.json, and the SDK
// validates each structuredContent against the tool's outputSchema.
// A loopback catalog with a real thumbnail, configured by the operator
// (STAC_MCP_CATALOGS) as a catalog on a private address would be, gives
// get_item_preview an image to fetch, decode and scale.
func TestEndToEndWithTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node := typeScriptClient(t)
	preview := previewCatalog(t, reporoot.ForTest(t))
	out := runTypeScriptClient(t, node, []string{"STAC_MCP_CATALOGS=preview=" + preview, "STAC_MCP_E2E_PREVIEW_CATALOG=preview"},
		binary(t), "--catalog", "demo", "stdio")
	if !strings.Contains(out, "protocol version: 2025-11-25 over stdio") {
		t.Errorf("the TypeScript SDK did not negotiate 2025-11-25 over stdio:\n%s", out)
	}
}

// TestEndToEndWritesWithTypeScriptSDK runs the same client with
// e2e/write_calls.json against a temporary copy of a local catalog, the
// server started with --allow-writes: every write tool, a duplicate, a
// conflict, a bad document and the read-only demo catalog's refusal.
func TestEndToEndWritesWithTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node := typeScriptClient(t)
	runTypeScriptClient(t, node, []string{"E2E_CALLS=write_calls.json", "STAC_MCP_STATE_DIR=" + t.TempDir()},
		binary(t), "--allow-writes", "--catalog", copyJoplin(t), "stdio")
}

// typeScriptClient returns the node that runs e2e/client.mjs, or skips
// the test when node or e2e/node_modules is missing (fails it when
// CI=true). Tests call it first, before building or starting anything.
func typeScriptClient(t *testing.T) (node string) {
	t.Helper()
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(reporoot.ForTest(t), "e2e", "node_modules", "@modelcontextprotocol", "sdk"))
	if err != nil || modErr != nil {
		msg := "end-to-end test needs node and e2e/node_modules (run: cd e2e && npm ci)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true, so this is a failure (node: %v, node_modules: %v)", msg, err, modErr)
		}
		t.Skipf("%s; skipping (node: %v, node_modules: %v)", msg, err, modErr)
	}
	return node
}

// runTypeScriptClient runs e2e/client.mjs on node (typeScriptClient) with
// args (a binary and its arguments for stdio, or an http URL), fails the
// test unless every check passed, and returns the output.
func runTypeScriptClient(t *testing.T, node string, env []string, args ...string) string {
	t.Helper()
	root := reporoot.ForTest(t)
	cmd := exec.Command(node, append([]string{filepath.Join("e2e", "client.mjs")}, args...)...)
	cmd.Dir = root
	// The cursor key file (and without STAC_MCP_STATE_DIR the idempotency store) stays out of $HOME.
	// Exports go to a temporary folder, never the user's Downloads.
	cmd.Env = append(append(os.Environ(), "STAC_MCP_LOG_LEVEL=warn", "XDG_STATE_HOME="+t.TempDir(), "STAC_MCP_EXPORT_DIR="+t.TempDir()), env...)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	summary := lines[len(lines)-1]
	if err != nil {
		t.Fatalf("e2e client failed (%v): %s\n%s", err, summary, out)
	}
	if !strings.HasSuffix(summary, " passed, 0 failed") {
		t.Fatalf("unexpected summary %q\n%s", summary, out)
	}
	t.Log(summary)
	return string(out)
}

// previewCatalog serves, on loopback until the test ends, a one-item STAC
// API whose thumbnail is one of the picture package's generated test
// images, so get_item_preview has a real image to fetch, decode and scale.
func previewCatalog(t *testing.T, root string) string {
	t.Helper()
	thumb, err := os.ReadFile(filepath.Join(root, "tools", "internal", "picture", "testdata", "scene.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/assets/thumb.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(thumb)
	})
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"previews","description":"e2e previews",
		"license":"CC0-1.0","extent":{"spatial":{"bbox":[[10,45,11,46]]},"temporal":{"interval":[["2024-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	item := fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"thumb-jpeg","collection":"previews",
		"geometry":{"type":"Polygon","coordinates":[[[10,45],[11,45],[11,46],[10,46],[10,45]]]},"bbox":[10,45,11,46],
		"properties":{"datetime":"2024-06-01T10:00:00Z"},"links":[],
		"assets":{"thumbnail":{"href":"%s/assets/thumb.jpg","type":"image/jpeg","roles":["thumbnail"]}}}`, srv.URL)
	if err := store.AddItem([]byte(item)); err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", stacserver.New(store, stacserver.Options{}))
	return srv.URL
}

// TestStdoutCarriesOnlyJSONRPC runs the binary over stdio with debug
// logging and fails if any stdout line is not a JSON-RPC 2.0 message, across
// a session with successful, failing and invalid tool calls.
func TestStdoutCarriesOnlyJSONRPC(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary(t), "--catalog", "demo", "stdio")
	cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=debug", "XDG_STATE_HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer // written by exec's copying goroutine while we read it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdout-test","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_root","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_item","arguments":{"collection_id":"naip","item_id":"no-such-item"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_items","arguments":{"bbox":"nonsense","bogus":1}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	go func() {
		for _, r := range requests {
			_, _ = io.WriteString(stdin, r+"\n")
		}
	}()

	answered := map[int]json.RawMessage{}
	deadline := time.After(patience)
	for len(answered) < 6 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("stdout closed after %d answers; stderr:\n%s", len(answered), stderr.String())
			}
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      *int            `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("stdout line is not a JSON-RPC 2.0 message: %q", line)
			}
			if msg.ID != nil {
				if msg.Result != nil {
					answered[*msg.ID] = msg.Result
				} else {
					answered[*msg.ID] = msg.Error
				}
			}
		case <-deadline:
			t.Fatalf("only %d of 6 answers after %v; stderr:\n%s", len(answered), patience, stderr.String())
		}
	}
	_ = stdin.Close()
	for line := range lines { // anything written while shutting down
		if !json.Valid([]byte(line)) || !strings.Contains(line, `"jsonrpc":"2.0"`) {
			t.Errorf("stdout line after the session is not JSON-RPC: %q", line)
		}
	}
	for id, wantError := range map[int]bool{3: false, 4: true, 5: true} {
		var res struct {
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(answered[id], &res); err != nil || res.IsError != wantError {
			t.Errorf("answer %d = %s, want isError=%v", id, answered[id], wantError)
		}
	}
	if !strings.Contains(stderr.String(), `"level":"debug"`) {
		t.Errorf("expected debug logs on stderr (proving logs were produced and kept off stdout), got:\n%s", stderr.String())
	}
}
