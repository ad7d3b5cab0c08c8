package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// linkTimeFacts sets the link-time variables as the release builds'
// -ldflags -X do, for the duration of the test.
func linkTimeFacts(t *testing.T, v, commit, date string) {
	t.Helper()
	oldV, oldC, oldD := buildVersion, buildCommit, buildDate
	buildVersion, buildCommit, buildDate = v, commit, date
	t.Cleanup(func() { buildVersion, buildCommit, buildDate = oldV, oldC, oldD })
}

const (
	testCommit = "0123456789abcdef0123456789abcdef01234567"
	testDate   = "2026-11-20T10:11:12Z"
)

// TestVersionFlagPrintsVersionCommitAndDate: one line, with every fact a
// bug report needs.
func TestVersionFlagPrintsVersionCommitAndDate(t *testing.T) {
	linkTimeFacts(t, "1.2.3", testCommit, testDate)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, stderr := runForTest(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %s", args, code, stderr)
		}
		want := "stac-mcp 1.2.3 (commit " + testCommit + ", built " + testDate + ", " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
		if stdout != want {
			t.Errorf("%v printed %q, want %q", args, stdout, want)
		}
	}
}

// TestBuildFactsFallBacks: a tag's "v" is dropped (goreleaser's .Version has
// none, so the bundle, the registry entry and serverInfo agree), and facts
// nobody recorded say so.
func TestBuildFactsFallBacks(t *testing.T) {
	linkTimeFacts(t, "v2.0.0-rc.1", "", "")
	f := build()
	if f.Version != "2.0.0-rc.1" {
		t.Errorf("version = %q, want 2.0.0-rc.1", f.Version)
	}
	// A test binary carries no VCS stamp (go test never adds one).
	if f.Commit != unknown || f.Date != unknown {
		t.Errorf("commit %q, date %q; want %q for both", f.Commit, f.Date, unknown)
	}
	linkTimeFacts(t, "", "", "")
	if v := version(); v != "dev" {
		t.Errorf("unstamped version = %q, want dev", v)
	}
}

// TestServerInfoVersionAndBuildInfoMetric: the MCP serverInfo.version is
// the --version string, and stac_mcp_build_info carries the same facts on
// the reliability layer's registry (what /metrics serves).
func TestServerInfoVersionAndBuildInfoMetric(t *testing.T) {
	linkTimeFacts(t, "1.2.3", testCommit, testDate)
	cfg, err := loadConfig([]string{"--catalog", "demo"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	cs, closeSession, err := a.connectInProcess(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	info := cs.InitializeResult().ServerInfo
	closeSession()
	if info.Name != "stac-mcp" || info.Version != "1.2.3" {
		t.Errorf("serverInfo = %s %s, want stac-mcp 1.2.3", info.Name, info.Version)
	}

	families, err := a.deps.Layer.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, mf := range families {
		if mf.GetName() != "stac_mcp_build_info" {
			continue
		}
		found = true
		if len(mf.GetMetric()) != 1 {
			t.Fatalf("stac_mcp_build_info has %d series, want 1", len(mf.GetMetric()))
		}
		m := mf.GetMetric()[0]
		if m.GetGauge().GetValue() != 1 {
			t.Errorf("stac_mcp_build_info = %v, want 1", m.GetGauge().GetValue())
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		want := map[string]string{"version": "1.2.3", "commit": testCommit, "date": testDate, "go_version": runtime.Version()}
		for k, v := range want {
			if labels[k] != v {
				t.Errorf("label %s = %q, want %q (all: %v)", k, labels[k], v, labels)
			}
		}
		if len(labels) != len(want) {
			t.Errorf("labels %v, want exactly %v", labels, want)
		}
	}
	if !found {
		t.Error("the layer's registry has no stac_mcp_build_info")
	}
}

// TestLinkerFlagsReachTheBinary builds the binary with the release builds'
// -X flags (the names in .goreleaser.yaml and scripts/release) and checks
// that --version and the stdio serverInfo report them: a misspelt variable
// name would be ignored by the linker without a word.
func TestLinkerFlagsReachTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "stac-mcp")
	ldflags := "-X main.buildVersion=9.8.7 -X main.buildCommit=" + testCommit + " -X main.buildDate=" + testDate
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "stac-mcp 9.8.7 (commit "+testCommit+", built "+testDate+", go") {
		t.Errorf("--version printed %q", out)
	}

	cmd := exec.Command(bin, "--catalog", "demo", "stdio")
	cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=error")
	client := mcp.NewClient(&mcp.Implementation{Name: "version-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ServerInfo.Version; v != "9.8.7" {
		t.Errorf("serverInfo.version over stdio = %q, want 9.8.7", v)
	}
}
