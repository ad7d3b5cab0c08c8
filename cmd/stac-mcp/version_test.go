package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// linkTimeFacts sets the link-time variables as the release builds'
// -ldflags -X do, for the duration of the test. Every app reads them
// (version()), so a test that calls it does not run in parallel.
func linkTimeFacts(t *testing.T, v, commit, date string) {
	t.Helper()
	oldV, oldC, oldD := buildVersion, buildCommit, buildDate
	buildVersion, buildCommit, buildDate = v, commit, date
	t.Cleanup(func() { buildVersion, buildCommit, buildDate = oldV, oldC, oldD })
}

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

// TestServerInfoVersionIsTheVersion: the MCP serverInfo.version is the
// --version string (stac_mcp_build_info: TestMetricsEndpointServesPrometheusText).
func TestServerInfoVersionIsTheVersion(t *testing.T) {
	linkTimeFacts(t, "1.2.3", testCommit, testDate)
	cfg, err := loadConfig([]string{"--catalog", "demo"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cs, closeSession, err := openInProcessSession(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	info := cs.InitializeResult().ServerInfo
	closeSession()
	if info.Name != "stac-mcp" || info.Version != "1.2.3" {
		t.Errorf("serverInfo = %s %s, want stac-mcp 1.2.3", info.Name, info.Version)
	}
}

// TestLinkerFlagsReachTheBinary runs the binary linked with the release
// builds' -X flags (the variable names .goreleaser.yaml and scripts/release
// pass: scripts/release's TestTargetsMatchGoreleaser) and checks that
// --version and the stdio serverInfo report them: a misspelt variable
// name would be ignored by the linker without a word. The release
// artefact itself (built with -trimpath) is checked by .ci/run's packaging
// step (scripts/release/snapshot.sh: its --version names the commit).
func TestLinkerFlagsReachTheBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := binary(t)
	want := linkedFacts(t, bin)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "stac-mcp "+want.Version+" (commit "+want.Commit+", built "+want.Date+", go") {
		t.Errorf("--version printed %q, want the linked version %s, commit %s and date %s", out, want.Version, want.Commit, want.Date)
	}

	cmd := exec.Command(bin, "--catalog", "demo", "stdio")
	cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=error", "XDG_STATE_HOME="+t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "version-test", Version: "0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ServerInfo.Version; v != want.Version {
		t.Errorf("serverInfo.version over stdio = %q, want %s", v, want.Version)
	}
}
