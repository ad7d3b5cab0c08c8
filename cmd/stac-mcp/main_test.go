package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

// TestMain checks for goroutine leaks and removes the binary the stdio
// tests built.
func TestMain(m *testing.M) {
	if raceBuild {
		// Under -race the binary is race-built too (binary_test.go): its
		// processes, which inherit this environment, skip the race
		// detector's one-second sleep at exit that every server the
		// Inspector and the e2e clients start would otherwise pay.
		_ = os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(exitCode int) {
		if builtPath != "" {
			_ = os.RemoveAll(filepath.Dir(builtPath))
		}
		os.Exit(exitCode)
	}))
}

// patience is how long a test waits for something that must happen (an
// answer, an exit, a closed connection) before it fails: a safety net
// against a hung test, never a latency target, so it is generous enough for
// a machine whose cores are busy with other work. Speed targets are
// benchmarks (bench/).
const patience = 30 * time.Second

// runForTest runs the command in-process with an environment of only env.
func runForTest(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	environ := func() []string {
		var kv []string
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut, lookup, environ)
	return code, out.String(), errOut.String()
}

func TestCallPrintsStructuredContentAsJSON(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runForTest(t, nil, "--catalog", "demo", "call", "search_items", `{"collections":["naip"],"max_items":2}`)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var out struct {
		Returned int `json:"returned"`
		Items    []struct {
			ID         string `json:"id"`
			Collection string `json:"collection"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, stdout)
	}
	if out.Returned != 2 || len(out.Items) != 2 || out.Items[0].Collection != "naip" {
		t.Errorf("result = %+v, want 2 naip items", out)
	}
	if !strings.Contains(stdout, "\n  \"") {
		t.Errorf("stdout is not indented JSON:\n%s", stdout)
	}
}

func TestCallFlagsAfterTheCommandAndText(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runForTest(t, map[string]string{"STAC_MCP_CATALOG_URL": "demo"}, "call", "--text", "get_root")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if json.Valid([]byte(stdout)) || !strings.Contains(stdout, "stac-mcp-demo") {
		t.Errorf("--text should print the readable text block, got:\n%s", stdout)
	}
}

func TestCallImageDirSavesTheMap(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "images")
	code, stdout, stderr := runForTest(t, nil, "--catalog", "demo", "call", "--image-dir", dir, "map_items", `{"collections":["joplin"]}`)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	path := filepath.Join(dir, "map_items-1.png")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no map written: %v (stderr %s)", err, stderr)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("%s is not a PNG: %v", path, err)
	}
	if !strings.Contains(stderr, "wrote "+path) || !json.Valid([]byte(stdout)) {
		t.Errorf("stderr %q should name the file; stdout should stay the JSON result", stderr)
	}
}

func TestCallToolErrorGoesToStderrWithExit1(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runForTest(t, nil, "--catalog", "demo", "call", "get_item", `{"collection_id":"naip","item_id":"no-such-item"}`)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stdout %q stderr %q", code, stdout, stderr)
	}
	if stdout != "" {
		t.Errorf("a tool error must leave stdout empty, got %q", stdout)
	}
	if !strings.Contains(stderr, "no-such-item") {
		t.Errorf("stderr %q does not carry the tool's message", stderr)
	}
}

func TestUsageErrorsExit2WithActionableMessages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"unknown tool", nil, []string{"--catalog", "demo", "call", "nope"}, []string{`unknown tool "nope"`, "search_items"}},
		{"arguments not an object", nil, []string{"--catalog", "demo", "call", "get_root", "[1]"}, []string{"one JSON object", "[1]"}},
		{"no tool", nil, []string{"call"}, []string{"call wants TOOL"}},
		{"unknown command", nil, []string{"serve"}, []string{`unknown command "serve"`, "stdio", "call", "tools"}},
		{"bad catalog", nil, []string{"--catalog", "nowhere", "tools"}, []string{"nowhere", "earth-search", "demo"}},
		{"bad ceiling env", map[string]string{"STAC_MCP_MAX_ITEMS_CEILING": "lots"}, []string{"tools"}, []string{"STAC_MCP_MAX_ITEMS_CEILING", "lots", "1 to"}},
		{"bad ceiling flag wins", map[string]string{"STAC_MCP_MAX_ITEMS_CEILING": "50"}, []string{"--max-items-ceiling", "0", "tools"}, []string{"--max-items-ceiling", `"0"`}},
		{"bad policy env", map[string]string{"STAC_MCP_TOOL_TIMEOUT_SECS": "soon"}, []string{"tools"}, []string{"STAC_MCP_TOOL_TIMEOUT_SECS", "soon"}},
		{"bad policy flag", nil, []string{"--max-attempts", "0", "tools"}, []string{"--max-attempts", "STAC_MCP_MAX_ATTEMPTS"}},
		{"bad headers", map[string]string{"STAC_MCP_HEADERS": "Authorization: x"}, []string{"tools"}, []string{"STAC_MCP_HEADERS", "JSON object"}},
		{"bad log level", map[string]string{"STAC_MCP_LOG_LEVEL": "loud"}, []string{"tools"}, []string{"STAC_MCP_LOG_LEVEL", "loud"}},
		{"unknown flag", nil, []string{"--catalgo", "demo"}, []string{"catalgo"}},
		{"unknown toolset", nil, []string{"--catalog", "demo", "--toolsets", "search,discovery", "tools"}, []string{`unknown toolset "discovery"`, "discover, search, size"}},
		{"unknown tool env", map[string]string{"STAC_MCP_TOOLS": "get_itme"}, []string{"--catalog", "demo", "tools"}, []string{`unknown tool "get_itme"`, "get_item"}},
		{"write toolset without writes", nil, []string{"--catalog", "demo", "--toolsets", "write", "tools"}, []string{"write toolset", "--allow-writes"}},
		{"bad read-only", map[string]string{"STAC_MCP_READ_ONLY": "maybe"}, []string{"tools"}, []string{"STAC_MCP_READ_ONLY", "true or false"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runForTest(t, c.env, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want empty", stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
		})
	}
}

func TestFlagsWinOverEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"STAC_MCP_CATALOG_URL": "planetary-computer", "STAC_MCP_MAX_ITEMS_CEILING": "50", "STAC_MCP_TOOL_TIMEOUT_SECS": "20"}
	cfg, err := loadConfig([]string{"--catalog", "demo", "--tool-timeout-secs", "7", "tools"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Catalog != "demo" || cfg.MaxItemsCeiling != 50 || cfg.Policy.ToolTimeout.Seconds() != 7 || cfg.Command != "tools" {
		t.Errorf("config = catalog %q ceiling %d timeout %v command %q; want demo, 50 (env), 7s (flag), tools",
			cfg.Catalog, cfg.MaxItemsCeiling, cfg.Policy.ToolTimeout, cfg.Command)
	}
}

func TestHelpListsEveryFlagAndVariable(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runForTest(t, nil, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range append(append([]settings.Setting(nil), settings.Server...), settings.Reliability...) {
		if !strings.Contains(stdout, "--"+s.Flag) || !strings.Contains(stdout, s.Env) {
			t.Errorf("--help lacks --%s / %s", s.Flag, s.Env)
		}
	}
	for _, w := range []string{"stdio", "call", "tools", "--text", "--json", "--version", "earth-search", "planetary-computer", "usgs-landsat", "demo", "catalog.json"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
}

func TestToolsListsEveryToolAndJSONHasSchemas(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runForTest(t, nil, "--catalog", "demo", "tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	last := -1
	for _, name := range []string{"get_root", "search_collections", "search_items", "get_item", "estimate_data_size"} {
		i := strings.Index("\n"+stdout, "\n"+name+" ") // the name column
		if i < 0 {
			t.Errorf("tools output lacks %s:\n%s", name, stdout)
		} else if i < last {
			t.Errorf("tools output lists %s out of inventory order:\n%s", name, stdout)
		}
		last = i
	}
	code, stdout, stderr = runForTest(t, nil, "--catalog", "demo", "tools", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var defs []struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal([]byte(stdout), &defs); err != nil {
		t.Fatalf("tools --json is not a JSON list: %v", err)
	}
	if len(defs) < 10 {
		t.Errorf("tools --json lists %d tools, want at least 10", len(defs))
	}
	for _, d := range defs {
		if len(d.InputSchema) == 0 || len(d.OutputSchema) == 0 {
			t.Errorf("%s lacks a schema in tools --json", d.Name)
		}
	}
}

// TestToolsetsNarrowWhatIsListed: --toolsets and --tools (or their
// variables) choose the tools a client lists.
func TestToolsetsNarrowWhatIsListed(t *testing.T) {
	t.Parallel()
	listed := func(env map[string]string, args ...string) []string {
		t.Helper()
		code, stdout, stderr := runForTest(t, env, append([]string{"--catalog", "demo", "tools"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var names []string
		for line := range strings.Lines(stdout) {
			if f := strings.Fields(line); len(f) > 0 {
				names = append(names, f[0])
			}
		}
		return names
	}
	if got := listed(nil, "--toolsets", "search,size"); !slices.Equal(got, []string{"search_items", "get_item", "get_aggregations", "estimate_data_size"}) {
		t.Errorf("--toolsets search,size listed %v", got)
	}
	if got := listed(map[string]string{"STAC_MCP_TOOLS": "get_item"}, "--read-only"); !slices.Equal(got, []string{"get_item"}) {
		t.Errorf("STAC_MCP_TOOLS=get_item --read-only listed %v", got)
	}
	if got := listed(map[string]string{"STAC_MCP_TOOLSETS": "ops"}, "--tools", "get_root"); !slices.Equal(got, []string{"get_root", "get_service_health"}) {
		t.Errorf("STAC_MCP_TOOLSETS=ops --tools get_root listed %v", got)
	}
	withWrites := listed(map[string]string{"STAC_MCP_STATE_DIR": t.TempDir()}, "--allow-writes")
	readOnly := listed(map[string]string{"STAC_MCP_STATE_DIR": t.TempDir()}, "--allow-writes", "--read-only")
	if !slices.Contains(withWrites, "create_item") || slices.Contains(readOnly, "create_item") || len(readOnly) != len(listed(nil)) {
		t.Errorf("--allow-writes listed %v; with --read-only %v: want the write tools only without --read-only", withWrites, readOnly)
	}
	if got := listed(nil); len(got) < 12 {
		t.Errorf("the default lists %v, want every tool", got)
	}
}

// newDemoApp is the app of `stac-mcp --catalog demo`, closed at the end of
// the test.
func newDemoApp(t *testing.T) *app {
	t.Helper()
	cfg, err := loadConfig([]string{"--catalog", "demo", "--log-level", "error"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(t.Context(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.close)
	return a
}

func TestMetricsEndpointServesPrometheusText(t *testing.T) {
	linkTimeFacts(t, "1.2.3", testCommit, testDate)
	a := newDemoApp(t)
	// One tool call, so the layer has something to count.
	cs, closeSession, err := a.connectInProcess(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_root", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	closeSession()

	addr, shutdown, err := serveMetrics("127.0.0.1:0", a, "")
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "# TYPE ") {
		t.Errorf("/metrics: %s\n%.500s", resp.Status, body)
	}
	if !strings.Contains(string(body), "get_root") {
		t.Errorf("/metrics does not count the get_root call:\n%.2000s", body)
	}
	buildInfo := `stac_mcp_build_info{commit="` + testCommit + `",date="` + testDate + `",go_version="` + runtime.Version() + `",version="1.2.3"} 1`
	if !strings.Contains(string(body), buildInfo) {
		t.Errorf("/metrics lacks %s:\n%.2000s", buildInfo, body)
	}
}

// TestEveryReliabilityVariableIsASetting asks reliability.PolicyFromEnv
// which variables it reads, so a variable added there cannot be missing
// from --help, the flags and the settings table (docs/configuration.md).
func TestEveryReliabilityVariableIsASetting(t *testing.T) {
	t.Parallel()
	var asked []string
	if _, err := reliability.PolicyFromEnv(func(name string) (string, bool) {
		asked = append(asked, name)
		return "", false
	}); err != nil {
		t.Fatal(err)
	}
	if len(asked) == 0 {
		t.Fatal("PolicyFromEnv read no variables")
	}
	known := map[string]bool{}
	for _, s := range settings.Reliability {
		known[s.Env] = true
	}
	doc := readDoc(t, configurationDoc)
	for _, name := range asked {
		if !known[name] {
			t.Errorf("reliability reads %s but it is not in settings.Reliability (no flag, not in --help)", name)
		}
		if !strings.Contains(doc, name) {
			t.Errorf("%s's settings table lacks %s", configurationDoc, name)
		}
	}
}

// TestCallCursorContinuesInANewProcess is the scripting use of call: each
// run starts its own in-process demo server (on a new port) and is a new
// process as far as cursors go (its own Deps); the key file in the state
// directory lets a cursor printed by one run continue in the next without
// repeating items.
func TestCallCursorContinuesInANewProcess(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": state}
	get := func(args string) callPage {
		t.Helper()
		p, stderr := callSearch(t, env, args)
		if stderr != "" {
			t.Fatalf("search_items %s: %s", args, stderr)
		}
		return p
	}
	first := get(`{"collections":["naip"],"max_items":2}`)
	if !first.HasMore || first.Cursor == "" || len(first.Items) != 2 {
		t.Fatalf("first page = %+v, want 2 items and a cursor", first)
	}
	cursorArg, _ := json.Marshal(map[string]any{"cursor": first.Cursor, "max_items": 2})
	second := get(string(cursorArg))
	if len(second.Items) != 2 {
		t.Fatalf("second page has %d items, want 2", len(second.Items))
	}
	for _, a := range first.Items {
		for _, b := range second.Items {
			if a.ID == b.ID {
				t.Errorf("item %s repeated across the cursor", a.ID)
			}
		}
	}
}

type callPage struct {
	Cursor  string `json:"cursor"`
	HasMore bool   `json:"has_more"`
	Items   []struct {
		ID string `json:"id"`
	} `json:"items"`
}

// callSearch runs `stac-mcp --catalog demo call search_items args` with
// env; a failed call gives its stderr.
func callSearch(t *testing.T, env map[string]string, args string) (callPage, string) {
	t.Helper()
	code, stdout, stderr := runForTest(t, env, "--catalog", "demo", "call", "search_items", args)
	if code != 0 {
		return callPage{}, stderr
	}
	var p callPage
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatal(err)
	}
	return p, ""
}

// Which key signs cursors (adr/0009): the state directory's key file for
// stdio and call, STAC_MCP_CURSOR_KEY shared by replicas, else a key that
// dies with the process.
func TestCursorKeySources(t *testing.T) {
	t.Parallel()
	next := func(env1, env2 map[string]string) string {
		t.Helper()
		first, stderr := callSearch(t, env1, `{"collections":["naip"],"max_items":1}`)
		if stderr != "" || first.Cursor == "" {
			t.Fatalf("first call: %s %+v", stderr, first)
		}
		_, stderr = callSearch(t, env2, `{"cursor":"`+first.Cursor+`"}`)
		return stderr
	}
	const keyA, keyB = "0123456789abcdef0123456789abcdef-A", "0123456789abcdef0123456789abcdef-B"
	if msg := next(nil, nil); !strings.Contains(msg, "signature does not match") {
		t.Errorf("without a state directory or key, a cursor outlived its process: %q", msg)
	}
	if msg := next(map[string]string{settings.EnvCursorKey: keyA}, map[string]string{settings.EnvCursorKey: keyA}); msg != "" {
		t.Errorf("replicas sharing %s: %s", settings.EnvCursorKey, msg)
	}
	if msg := next(map[string]string{settings.EnvCursorKey: keyA}, map[string]string{settings.EnvCursorKey: keyB}); !strings.Contains(msg, "signature does not match") {
		t.Errorf("another key accepted the cursor: %q", msg)
	}

	state := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": state}
	if msg := next(env, env); msg != "" {
		t.Fatalf("key file: %s", msg)
	}
	path := filepath.Join(state, "stac-mcp", tools.CursorKeyFile)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v, mode %v; want 0600", path, err, info.Mode().Perm())
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, want 0700", dir.Mode().Perm())
	}

	// A key file others can read is not used (they could forge cursors).
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if key := cursorKeyFor(&config{Command: "stdio", StateDir: filepath.Dir(path)}, zerolog.New(&logs)); key != nil || !strings.Contains(logs.String(), "chmod 600") {
		t.Errorf("a 0644 key file gave key %x, log %s", key, logs.String())
	}
	// http does not use the file: a random key per process unless shared.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if key := cursorKeyFor(&config{Command: "http", StateDir: filepath.Dir(path)}, zerolog.Nop()); key != nil {
		t.Errorf("http used the key file")
	}
	if key := cursorKeyFor(&config{Command: "call", StateDir: filepath.Dir(path)}, zerolog.Nop()); len(key) != 32 {
		t.Errorf("call: key of %d bytes, want the file's 32", len(key))
	}

	code, _, stderr := runForTest(t, map[string]string{settings.EnvCursorKey: "short"}, "--catalog", "demo", "tools")
	if code != 2 || !strings.Contains(stderr, settings.EnvCursorKey) || strings.Contains(stderr, "short") {
		t.Errorf("a 5-character key: exit %d, %q; want a usage error naming the variable, not the value", code, stderr)
	}
}

// STAC_MCP_TOOL_TIMEOUT_SECS alone starts the server at the bottom of its
// range (1, 2 and 3 refused to start over an attempt timeout the
// user never set). Whether a tool call fits in one second depends on how
// busy the machine is, so the short timeouts start the server (the timeout
// in force, the tools listed) and the call runs under the longest one.
func TestShortToolTimeoutAloneStarts(t *testing.T) {
	t.Parallel()
	for _, secs := range []string{"1", "2", "3", "3600"} {
		env := map[string]string{"STAC_MCP_TOOL_TIMEOUT_SECS": secs}
		cfg, err := loadConfig([]string{"--catalog", "demo"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil || fmt.Sprint(cfg.Policy.ToolTimeout.Seconds()) != secs {
			t.Errorf("STAC_MCP_TOOL_TIMEOUT_SECS=%s: %v, tool timeout %v", secs, err, cfg.Policy.ToolTimeout)
			continue
		}
		args, want := []string{"--catalog", "demo", "tools"}, "get_root"
		if secs == "3600" {
			args, want = []string{"--catalog", "demo", "call", "get_root"}, "title"
		}
		code, stdout, stderr := runForTest(t, env, args...)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("STAC_MCP_TOOL_TIMEOUT_SECS=%s %v: exit %d, stderr %s", secs, args, code, stderr)
		}
	}
}
