package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// target is one platform the release ships; the list is the one
// .goreleaser.yaml builds (TestTargetsMatchGoreleaser).
type target struct{ goos, goarch string }

var targets = []target{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"},
}

// dir is the target's directory inside the bundle, e.g. server/linux-arm64;
// launcher.sh and the manifest's Windows entry point name these.
func (t target) dir() string { return "server/" + t.goos + "-" + t.goarch }

func (t target) binary() string {
	if t.goos == "windows" {
		return t.dir() + "/stac-mcp.exe"
	}
	return t.dir() + "/stac-mcp"
}

// facts are what the build links in and stamps: the same values goreleaser
// derives from git ({{.Version}}, {{.FullCommit}}, {{.CommitDate}}).
type facts struct {
	Version string
	Commit  string
	Time    time.Time // commit time: the build date, and every file time in the bundle
}

// Date is the build date as linked in: the commit time, UTC, RFC 3339.
func (f facts) Date() string { return f.Time.UTC().Format(time.RFC3339) }

// ldflags are .goreleaser.yaml's: stripped, with the build facts.
func (f facts) ldflags() string {
	return fmt.Sprintf("-s -w -X main.buildVersion=%s -X main.buildCommit=%s -X main.buildDate=%s", f.Version, f.Commit, f.Date())
}

// readFacts asks git; $VERSION overrides the version, $SOURCE_DATE_EPOCH
// the time (for builds from a source archive without .git).
func readFacts(root string) (facts, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	var f facts
	var err error
	if f.Commit, err = git("rev-parse", "HEAD"); err != nil {
		return f, fmt.Errorf("git rev-parse HEAD: %w (set VERSION and SOURCE_DATE_EPOCH to build outside a git checkout)", err)
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct", "HEAD"); err != nil {
			return f, fmt.Errorf("git log: %w", err)
		}
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return f, fmt.Errorf("commit time %q is not Unix seconds", epoch)
	}
	f.Time = time.Unix(secs, 0).UTC()

	if v := os.Getenv("VERSION"); v != "" {
		f.Version = strings.TrimPrefix(v, "v")
		return f, nil
	}
	last, err := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*")
	if err != nil {
		last = "v0.0.0" // no release yet
	}
	short, err := git("rev-parse", "--short", "HEAD")
	if err != nil {
		return f, err
	}
	f.Version, err = snapshotVersion(last, short)
	return f, err
}

// snapshotVersion is .goreleaser.yaml's snapshot.version_template,
// "{{ incpatch .Version }}-snapshot-{{ .ShortCommit }}": the next patch
// after the last tag, so a snapshot sorts after the release it follows.
// "snapshot-<hex>" is one alphanumeric identifier, valid semver even when
// the hex has a leading zero.
func snapshotVersion(lastTag, shortCommit string) (string, error) {
	core, _, _ := strings.Cut(strings.TrimPrefix(lastTag, "v"), "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("last tag %q is not vMAJOR.MINOR.PATCH", lastTag)
	}
	patch, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", fmt.Errorf("last tag %q: patch %q is not a number", lastTag, parts[2])
	}
	return fmt.Sprintf("%s.%s.%d-snapshot-%s", parts[0], parts[1], patch+1, shortCommit), nil
}

// crossCompile builds every target into stage, with the flags
// .goreleaser.yaml passes, so both share the build cache and the same
// commit gives the same binaries.
func crossCompile(root, stage string, f facts, tags string) error {
	for _, t := range targets {
		out := filepath.Join(stage, filepath.FromSlash(t.binary()))
		start := time.Now()
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-tags", tags, "-ldflags", f.ldflags(), "-o", out, "./cmd/stac-mcp")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch, "GOAMD64=v1", "GOARM64=v8.0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build for %s/%s: %w", t.goos, t.goarch, err)
		}
		fmt.Fprintf(os.Stderr, "built %s (%s)\n", t.binary(), time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}
