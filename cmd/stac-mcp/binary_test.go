package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testBinaryEnv names a stac-mcp binary for the tests that run the real
// process (stdio clients, the Inspector, the conformance suite, restarts),
// so a script that built it once (.ci/run) shares it with every test run.
// Without it, the first such test builds one for the whole run.
const testBinaryEnv = "STAC_MCP_TEST_BINARY"

// The build facts the tests' own binary is linked with, as the release
// builds link theirs (-X; TestLinkerFlagsReachTheBinary).
const (
	testVersion = "9.8.7"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testDate    = "2026-11-20T10:11:12Z"
)

// testLDFlags are the release builds' -X flags with the test's facts.
const testLDFlags = "-X main.buildVersion=" + testVersion + " -X main.buildCommit=" + testCommit + " -X main.buildDate=" + testDate

var (
	buildOnce sync.Once
	builtPath string // the binary this run built, removed by TestMain
	binPath   string
	buildErr  error
)

// binary returns the stac-mcp binary: $STAC_MCP_TEST_BINARY, or one built
// on first use and shared by the rest of the run. The build adds -race
// when the tests run under it, so it reuses the packages `go test -race`
// compiled and costs little more than a link (-ldflags -X changes only the
// link). No -trimpath: it would recompile every dependency; the release
// packaging in .ci/run builds with it and checks the version it stamps.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv(testBinaryEnv); p != "" {
			binPath, buildErr = filepath.Abs(p)
			if buildErr == nil {
				_, buildErr = os.Stat(binPath)
			}
			if buildErr != nil {
				buildErr = fmt.Errorf("%s: %w", testBinaryEnv, buildErr)
			}
			return
		}
		dir, err := os.MkdirTemp("", "stac-mcp-test-")
		if err != nil {
			buildErr = err
			return
		}
		builtPath = filepath.Join(dir, "stac-mcp")
		args := []string{"build", "-ldflags", testLDFlags, "-o", builtPath}
		if raceBuild {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
			return
		}
		binPath = builtPath
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// linkedFacts reads the -X values bin was linked with from its build
// information: the test's facts for the binary binary() built, whatever
// the build script chose for $STAC_MCP_TEST_BINARY.
func linkedFacts(t *testing.T, bin string) buildFacts {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var ldflags string
	for _, s := range info.Settings {
		if s.Key == "-ldflags" {
			ldflags = s.Value
		}
	}
	var f buildFacts
	fields := strings.Fields(ldflags)
	for i, field := range fields {
		var assignment string
		switch {
		case field == "-X" && i+1 < len(fields):
			assignment = fields[i+1]
		case strings.HasPrefix(field, "-X="):
			assignment = strings.TrimPrefix(field, "-X=")
		default:
			continue
		}
		name, value, _ := strings.Cut(assignment, "=")
		switch name {
		case "main.buildVersion":
			f.Version = value
		case "main.buildCommit":
			f.Commit = value
		case "main.buildDate":
			f.Date = value
		}
	}
	if f.Version == "" || f.Commit == "" || f.Date == "" {
		t.Fatalf("%s was linked with -ldflags %q: want -X main.buildVersion, main.buildCommit and main.buildDate (%s: build it as .ci/run does)",
			bin, ldflags, testBinaryEnv)
	}
	return f
}
