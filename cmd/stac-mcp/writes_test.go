package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

func TestWriteSettings(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cfg, err := loadConfig([]string{"--allow-writes", "tools"}, env(nil))
	if err != nil || !cfg.AllowWrites || cfg.IdempotencyTTL != 24*time.Hour || cfg.Command != "tools" {
		t.Fatalf("--allow-writes: %+v %v", cfg, err)
	}
	cfg, err = loadConfig([]string{"--allow-writes=false"}, env(map[string]string{"STAC_MCP_ALLOW_WRITES": "true"}))
	if err != nil || cfg.AllowWrites {
		t.Errorf("the flag must win over the variable: %v %v", cfg.AllowWrites, err)
	}
	cfg, err = loadConfig(nil, env(map[string]string{"STAC_MCP_ALLOW_WRITES": "yes", "STAC_MCP_IDEMPOTENCY_TTL_SECS": "3600",
		"STAC_MCP_STATE_DIR": "/srv/state", "STAC_MCP_REDIS_URL": "redis://:pw@127.0.0.1:6379/1"}))
	if err != nil || !cfg.AllowWrites || cfg.IdempotencyTTL != time.Hour || cfg.StateDir != "/srv/state" || cfg.RedisURL == "" {
		t.Errorf("from the environment: %+v %v", cfg, err)
	}
	for name, c := range map[string]struct {
		env  map[string]string
		args []string
		want string
	}{
		"bad boolean":   {map[string]string{"STAC_MCP_ALLOW_WRITES": "perhaps"}, nil, "STAC_MCP_ALLOW_WRITES"},
		"TTL too short": {map[string]string{"STAC_MCP_IDEMPOTENCY_TTL_SECS": "5"}, nil, "from 60 to 2592000"},
		"TTL flag":      {nil, []string{"--idempotency-ttl-secs", "x"}, "--idempotency-ttl-secs"},
		"bad Redis URL": {map[string]string{"STAC_MCP_REDIS_URL": "http://user:hunter2@h/"}, nil, "not a Redis URL"},
	} {
		_, err := loadConfig(c.args, env(c.env))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
}

func TestToolsListsWriteToolsOnlyWithAllowWrites(t *testing.T) {
	t.Parallel()
	state := map[string]string{"STAC_MCP_STATE_DIR": t.TempDir()}
	code, stdout, stderr := runForTest(t, state, "--catalog", "demo", "tools")
	if code != 0 || strings.Contains(stdout, "create_item") {
		t.Fatalf("read-only tools list (exit %d, %s):\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runForTest(t, state, "--catalog", "demo", "--allow-writes", "tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"create_item", "update_item", "delete_item", "create_collection", "update_collection"} {
		if !strings.Contains(stdout, w+" ") {
			t.Errorf("--allow-writes tools list lacks %s:\n%s", w, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(state["STAC_MCP_STATE_DIR"], "idempotency.db")); err != nil {
		t.Errorf("the idempotency store was not created in STAC_MCP_STATE_DIR: %v", err)
	}
}

// copyJoplin copies the joplin test catalog into a new directory and
// returns the path of its catalog.json.
func copyJoplin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(reporoot.ForTest(t), "stacclient", "stacserver", "testdata", "joplin"))); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "catalog.json")
}

// TestWriteSurvivesARestart: two `stac-mcp call` processes, the second a
// retry of the first with the same key, on a copy of a local catalog: the
// second answers duplicate: true from the SQLite store, and the catalog on
// disk has the item once.
func TestWriteSurvivesARestart(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	catalog := copyJoplin(t)
	state := t.TempDir()
	args := `{"collection_id":"joplin","idempotency_key":"9f1c2d3e-restart","item":{"type":"Feature","stac_version":"1.0.0","id":"restart-1",
		"geometry":{"type":"Point","coordinates":[-94.5,37.08]},"bbox":[-94.5,37.08,-94.5,37.08],
		"properties":{"datetime":"2024-06-01T10:00:00Z"},"assets":{}}}`
	run := func() map[string]any {
		t.Helper()
		cmd := exec.Command(bin, "--allow-writes", "--catalog", catalog, "call", "create_item", args)
		cmd.Env = append(os.Environ(), "STAC_MCP_STATE_DIR="+state)
		out, err := cmd.Output()
		if err != nil {
			var stderr string
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("stac-mcp call create_item: %v\n%s", err, stderr)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return m
	}
	first := run()
	second := run()
	if first["status"] != "created" || first["duplicate"] != false {
		t.Fatalf("first process: %v", first)
	}
	if second["duplicate"] != true || second["correlation_id"] != first["correlation_id"] || second["status"] != "created" {
		t.Fatalf("second process: %v, want the first's outcome with duplicate true", second)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(catalog), "collection.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "restart-1.json"); n != 1 {
		t.Errorf("collection.json links the item %d times, want 1", n)
	}
}

// TestConcurrentCallsKeepEveryChange: 8 `stac-mcp call
// update_item` processes patch one item of a local catalog at once, and 8
// `call create_item` processes add an item each: every patch is in the
// file and every new item is linked from the collection (before, 1 patch of
// 8 survived and a create per batch lost its link, every call exit 0).
//
// The writes queue on the catalog's lock, so on a loaded machine the last
// ones wait long; with the default 4 s attempt timeout a call could then
// give up (outcome_unknown, exit 1) and its change be missing, which is a
// loud failure, not a lost update. The children get timeouts a loaded
// machine does not reach, and a missing change says whether its call
// exited 0 (a lost update) or failed.
func TestConcurrentCallsKeepEveryChange(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	catalog := copyJoplin(t)
	state := t.TempDir()
	const n, item = 8, "f2cca2a3-288b-4518-8a3e-a4492bb60b08"
	var wg sync.WaitGroup
	// call reports whether the call exited 0.
	call := func(tool, args string) bool {
		cmd := exec.Command(bin, "--allow-writes", "--catalog", catalog, "call", tool, args)
		cmd.Env = append(os.Environ(), "STAC_MCP_STATE_DIR="+state, "STAC_MCP_TOOL_TIMEOUT_SECS=120", "STAC_MCP_ATTEMPT_TIMEOUT_SECS=120")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("stac-mcp call %s: %v\n%s", tool, err, out)
		}
		return err == nil
	}
	var patched, created [n]bool // each written by its own goroutine, read after Wait
	for i := range n {
		wg.Go(func() {
			patched[i] = call("update_item", fmt.Sprintf(`{"collection_id":"joplin","item_id":%q,"idempotency_key":"patch-%d","patch":{"properties":{"k%d":"v"}}}`, item, i, i))
		})
		wg.Go(func() {
			created[i] = call("create_item", fmt.Sprintf(`{"collection_id":"joplin","idempotency_key":"create-%d","item":{"type":"Feature","stac_version":"1.0.0","id":"new-%d",
				"geometry":{"type":"Point","coordinates":[-94.5,37.08]},"bbox":[-94.5,37.08,-94.5,37.08],
				"properties":{"datetime":"2024-06-01T10:00:00Z"},"assets":{}}}`, i, i))
		})
	}
	wg.Wait()
	dir := filepath.Dir(catalog)
	index, err := os.ReadFile(filepath.Join(dir, "index.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	collection, err := os.ReadFile(filepath.Join(dir, "collection.json"))
	if err != nil {
		t.Fatal(err)
	}
	how := func(ok bool) string {
		if ok {
			return "its call exited 0: a lost update"
		}
		return "its call failed, see above"
	}
	for i := range n {
		if !strings.Contains(string(index), fmt.Sprintf(`"k%d": "v"`, i)) {
			t.Errorf("patch k%d lost (%s)", i, how(patched[i]))
		}
		if !strings.Contains(string(collection), fmt.Sprintf("new-%d.json", i)) {
			t.Errorf("item new-%d has no link in collection.json (%s)", i, how(created[i]))
		}
	}
}
