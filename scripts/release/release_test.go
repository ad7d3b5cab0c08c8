package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func readRepoFile(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

const testSHA = "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce"

// TestServerJSONIsAValidRegistryEntry fills the template as a release
// does and validates it against the registry's 2025-12-11 schema; the
// bundle's URL is the asset the bundle step writes, on the tag's release.
func TestServerJSONIsAValidRegistryEntry(t *testing.T) {
	for _, v := range []string{"1.2.3", "0.0.1-snapshot-0a1b2c3"} {
		entry, err := fillServerJSON(readRepoFile(t, "server.json"), serverJSONFields{Version: v, MCPBSHA256: testSHA})
		if err != nil {
			t.Fatalf("version %s: %v", v, err)
		}
		var e struct {
			Version  string `json:"version"`
			Packages []struct {
				RegistryType string `json:"registryType"`
				Identifier   string `json:"identifier"`
				FileSHA256   string `json:"fileSha256"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(entry, &e); err != nil {
			t.Fatal(err)
		}
		if e.Version != v {
			t.Errorf("version = %q, want %q", e.Version, v)
		}
		var types []string
		for _, p := range e.Packages {
			types = append(types, p.RegistryType)
			switch p.RegistryType {
			case "mcpb":
				want := "https://github.com/stacmcp/stac-mcp/releases/download/v" + v + "/stac-mcp-" + v + ".mcpb"
				if p.Identifier != want || p.FileSHA256 != testSHA {
					t.Errorf("mcpb package = %s %s, want %s %s", p.Identifier, p.FileSHA256, want, testSHA)
				}
			case "oci":
				if p.Identifier != "ghcr.io/stacmcp/stac-mcp:"+v {
					t.Errorf("oci package = %s", p.Identifier)
				}
			}
		}
		if !slices.Equal(types, []string{"mcpb", "oci"}) {
			t.Errorf("packages %v, want mcpb and oci", types)
		}
	}
}

// TestServerJSONValidationRejects: the checks can fail (bad inputs, and an
// entry the schema refuses).
func TestServerJSONValidationRejects(t *testing.T) {
	tmpl := readRepoFile(t, "server.json")
	for _, f := range []serverJSONFields{
		{Version: "v1.2.3", MCPBSHA256: testSHA},
		{Version: "1.2", MCPBSHA256: testSHA},
		{Version: "1.2.3", MCPBSHA256: strings.ToUpper(testSHA)},
		{Version: "1.2.3", MCPBSHA256: "abc"},
	} {
		if _, err := fillServerJSON(tmpl, f); err == nil {
			t.Errorf("%+v accepted", f)
		}
	}
	broken := bytes.Replace(tmpl, []byte(`"name": "io.github.stacmcp/stac-mcp"`), []byte(`"name": "no slash here"`), 1)
	if _, err := fillServerJSON(broken, serverJSONFields{Version: "1.2.3", MCPBSHA256: testSHA}); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("a name without a namespace passed the schema: %v", err)
	}
	if err := validateServerJSON([]byte(`{"name":"io.github.a/b","description":"d","version":"1.0.0","$schema":"https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"}`)); err == nil {
		t.Error("an entry declaring another schema version passed")
	}
}

// TestServerJSONEnvironmentMatchesManifest: the registry entry offers the
// settings the bundle's form offers, with the same defaults, secrecy and
// descriptions (both files are generated from the code by
// cmd/stac-mcp/internal/gen; this holds the committed pair together).
func TestServerJSONEnvironmentMatchesManifest(t *testing.T) {
	var m struct {
		Server struct {
			MCPConfig struct {
				Env orderedEnv `json:"env"`
			} `json:"mcp_config"`
		} `json:"server"`
		UserConfig map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
			Default     any    `json:"default"`
			Sensitive   bool   `json:"sensitive"`
		} `json:"user_config"`
	}
	if err := json.Unmarshal(readRepoFile(t, "manifest.json"), &m); err != nil {
		t.Fatal(err)
	}
	type envVar struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Default     string `json:"default,omitempty"`
		Format      string `json:"format,omitempty"`
		IsSecret    bool   `json:"isSecret,omitempty"`
	}
	var want []envVar
	for _, kv := range m.Server.MCPConfig.Env {
		key := strings.TrimSuffix(strings.TrimPrefix(kv[1], "${user_config."), "}")
		uc, ok := m.UserConfig[key]
		if !ok {
			t.Fatalf("manifest env %s maps to %s, which is not in user_config", kv[0], kv[1])
		}
		v := envVar{Name: kv[0], Description: uc.Description, IsSecret: uc.Sensitive}
		if uc.Default != "" {
			v.Default = fmt.Sprint(uc.Default)
		}
		if uc.Type == "number" {
			v.Format = "number"
		}
		want = append(want, v)
	}
	var entry struct {
		Packages []struct {
			RegistryType string   `json:"registryType"`
			Env          []envVar `json:"environmentVariables"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(readRepoFile(t, "server.json"), &entry); err != nil {
		t.Fatal(err)
	}
	for _, p := range entry.Packages {
		if !slices.Equal(p.Env, want) {
			wantJSON, _ := json.MarshalIndent(want, "      ", "  ")
			t.Errorf("server.json %s package: environmentVariables differ from manifest.json's settings; want (choices may be added):\n%s", p.RegistryType, wantJSON)
		}
	}
}

// orderedEnv reads a JSON object of strings keeping its key order.
type orderedEnv [][2]string

func (o *orderedEnv) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, [2]string{k.(string), v})
	}
	return nil
}

func TestSnapshotVersion(t *testing.T) {
	for _, c := range []struct{ tag, want string }{
		{"v0.0.0", "0.0.1-snapshot-0ab12cd"},
		{"v1.4.9", "1.4.10-snapshot-0ab12cd"},
		{"v2.0.0-rc.1", "2.0.1-snapshot-0ab12cd"},
	} {
		got, err := snapshotVersion(c.tag, "0ab12cd")
		if err != nil || got != c.want {
			t.Errorf("snapshotVersion(%s) = %q, %v; want %q", c.tag, got, err, c.want)
		}
		if !semverRe.MatchString(got) {
			t.Errorf("%q is not semver", got)
		}
	}
	if _, err := snapshotVersion("release-1", "abc"); err == nil {
		t.Error("a tag that is not vX.Y.Z was accepted")
	}
}

// TestLauncherPicksTheMachinesBinary runs launcher.sh with uname faked for
// each platform and checks it executes that platform's binary.
func TestLauncherPicksTheMachinesBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launcher is for macOS and Linux")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	bundle := t.TempDir()
	launcher := filepath.Join(bundle, filepath.FromSlash(launcherPath))
	for _, tg := range targets {
		if tg.goos == "windows" {
			continue
		}
		bin := filepath.Join(bundle, filepath.FromSlash(tg.binary()))
		writeExecutable(t, bin, "#!/bin/sh\necho \""+tg.dir()+" $*\"\n")
	}
	writeExecutable(t, launcher, string(launcherScript))

	cases := []struct{ s, m, want string }{
		{"Darwin", "arm64", "server/darwin-arm64"},
		{"Darwin", "x86_64", "server/darwin-amd64"},
		{"Linux", "x86_64", "server/linux-amd64"},
		{"Linux", "aarch64", "server/linux-arm64"},
		{"Linux", "arm64", "server/linux-arm64"},
	}
	for _, c := range cases {
		fake := t.TempDir()
		writeExecutable(t, filepath.Join(fake, "uname"), "#!/bin/sh\ncase \"$1\" in -s) echo "+c.s+";; -m) echo "+c.m+";; esac\n")
		cmd := exec.Command(sh, launcher, "stdio", "--log-level", "debug")
		cmd.Env = append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != c.want+" stdio --log-level debug" {
			t.Errorf("%s/%s: %v, %q; want %s with the arguments", c.s, c.m, err, out, c.want)
		}
	}

	fake := t.TempDir()
	writeExecutable(t, filepath.Join(fake, "uname"), "#!/bin/sh\ncase \"$1\" in -s) echo FreeBSD;; -m) echo amd64;; esac\n")
	cmd := exec.Command(sh, launcher)
	cmd.Env = append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no binary for FreeBSD/amd64") {
		t.Errorf("an unsupported platform: %v, %q; want exit 1 naming it", err, out)
	}
}

func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestManifestStartsTheBundlesBinaries: the manifest's commands name the
// launcher and the Windows binary this tool puts in the bundle.
func TestManifestStartsTheBundlesBinaries(t *testing.T) {
	manifest := readRepoFile(t, "manifest.json")
	for goos, want := range map[string]string{
		"linux":   "/b/" + launcherPath,
		"darwin":  "/b/" + launcherPath,
		"windows": "/b/" + targets[len(targets)-1].binary(),
	} {
		got, err := bundleCommand(manifest, "/b", goos)
		if err != nil || filepath.ToSlash(got) != want {
			t.Errorf("%s: command %q, %v; want %q", goos, got, err, want)
		}
	}
	if targets[len(targets)-1].goos != "windows" {
		t.Fatal("the last target is expected to be the Windows one")
	}
	if n := bytes.Count(manifest, []byte(devManifestVersion)); n != 1 {
		t.Errorf("manifest.json has %d %s to stamp, want 1", n, devManifestVersion)
	}
}

// TestPackBundleIsReproducible: the same staged files give the same bytes,
// every time the commit's (never the clock's) and every mode 0644 or 0755
// whatever the umask left on disk, which the host restores on unpacking.
func TestPackBundleIsReproducible(t *testing.T) {
	stage := t.TempDir()
	writeExecutable(t, filepath.Join(stage, "server", "stac-mcp"), "#!/bin/sh\n")
	if err := os.WriteFile(filepath.Join(stage, "manifest.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	commit := time.Date(2026, 11, 20, 10, 11, 12, 0, time.UTC)
	var bundles [][]byte
	for range 2 {
		out := filepath.Join(t.TempDir(), "x.mcpb")
		if err := packBundle(stage, out, commit); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		bundles = append(bundles, raw)
	}
	if !bytes.Equal(bundles[0], bundles[1]) {
		t.Fatal("two packs of the same files differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(bundles[0]), int64(len(bundles[0])))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		wantMode := os.FileMode(0o644)
		if f.Name == "server/stac-mcp" {
			wantMode = 0o755
		}
		if f.Mode() != wantMode || !f.Modified.Equal(commit) {
			t.Errorf("%s: mode %v, time %v; want %v, %v", f.Name, f.Mode(), f.Modified, wantMode, commit)
		}
	}
	if !slices.Equal(names, []string{"manifest.json", "server/stac-mcp"}) {
		t.Errorf("entries %v", names)
	}
}

// TestTargetsMatchGoreleaser: the archives and the bundle ship the same
// platforms, built with the same flags and linker variables.
func TestTargetsMatchGoreleaser(t *testing.T) {
	cfg := string(readRepoFile(t, ".goreleaser.yaml"))
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- (\w+)_(\w+?)_v[\d.]+$`).FindAllStringSubmatch(cfg, -1) {
		got = append(got, m[1]+"/"+m[2])
	}
	var want []string
	for _, tg := range targets {
		want = append(want, tg.goos+"/"+tg.goarch)
	}
	if !slices.Equal(got, want) {
		t.Errorf(".goreleaser.yaml targets %v, scripts/release targets %v", got, want)
	}
	f := facts{Version: "{{.Version}}", Commit: "{{.FullCommit}}"}
	ld := strings.Replace(f.ldflags(), "main.buildDate="+f.Date(), "main.buildDate={{.CommitDate}}", 1)
	for _, want := range []string{"- " + ld, "- -trimpath", "- -buildvcs=false", "- CGO_ENABLED=0", "mod_timestamp: \"{{ .CommitTimestamp }}\"",
		`version_template: "{{ incpatch .Version }}-snapshot-{{ .ShortCommit }}"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf(".goreleaser.yaml lacks %q", want)
		}
	}
}

// TestIconMatchesTheGenerator: icon.png is drawIcon's picture, 512×512
// (the size Claude Desktop recommends); `go run ./scripts/release icon`
// redraws it.
func TestIconMatchesTheGenerator(t *testing.T) {
	committed, err := png.Decode(bytes.NewReader(readRepoFile(t, "icon.png")))
	if err != nil {
		t.Fatal(err)
	}
	want := drawIcon()
	if committed.Bounds() != want.Bounds() || want.Bounds().Dx() != 512 || want.Bounds().Dy() != 512 {
		t.Fatalf("icon.png is %v, the generator draws %v; want 512×512", committed.Bounds(), want.Bounds())
	}
	for y := range 512 {
		for x := range 512 {
			r1, g1, b1, a1 := committed.At(x, y).RGBA()
			r2, g2, b2, a2 := want.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				t.Fatalf("icon.png differs from drawIcon at (%d,%d); run go run ./scripts/release icon", x, y)
			}
		}
	}
}
