package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/doccmd"
	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/reliability"
)

// The user and operator docs (README.md, docs/, bench/RESULTS.md) are
// checked here like code: every command they show runs, every output they
// show is what the command prints now, every image a command writes is the
// committed one, every relative link reaches a file and heading, and the
// settings table is complete. The tool tables are generated and checked by
// tools/internal/gen.

// docsRoot is the repository root as seen from this package's directory,
// where go test runs.
const docsRoot = "../.."

// configurationDoc holds the full settings table.
const configurationDoc = "docs/configuration.md"

// docFiles lists the Markdown files whose commands and outputs are checked,
// relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := doccmd.Files(docsRoot)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readDoc reads a file given relative to the repository root.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(docsRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// excerptMarker, on the prose line right before a command block, says that
// the output block after it shows only some consecutive lines of the output.
const excerptMarker = "<!-- output: excerpt -->"

// docCommand is a `go run ./cmd/stac-mcp …` line of a doc and, when the doc
// shows what it prints, that output block.
type docCommand struct {
	file    string
	line    int
	command string        // the line as written
	args    []string      // its arguments after "go run ./cmd/stac-mcp"
	output  *doccmd.Block // the text or json block right after the command block
	excerpt bool
	gdal    bool // a `gdalinfo …` line: GDAL opening what an export wrote
}

// docCommands finds every command line of a doc and the output block shown
// after it. A text block that no command precedes is reported in
// unproduced: every output a doc shows must come from a checked command.
func docCommands(t *testing.T, file, doc string) (cmds []docCommand, unproduced []doccmd.Block) {
	t.Helper()
	blocks := doccmd.Split(doc)
	produced := map[int]bool{} // index of output blocks that follow a command
	for i, b := range blocks {
		lines, err := doccmd.Commands(b)
		if err != nil {
			t.Fatalf("%s:%v", file, err)
		}
		var found []docCommand
		for _, c := range lines {
			found = append(found, docCommand{file: file, line: c.Line, command: c.Text, args: c.Args})
		}
		found = append(found, gdalCommands(t, file, b)...)
		if len(found) == 0 {
			continue
		}
		out := nextBlock(blocks, i)
		if out >= 0 && blocks[out].Fenced && (blocks[out].Lang == "text" || blocks[out].Lang == "json") {
			if len(found) > 1 {
				t.Errorf("%s:%d: an output block follows a block of %d commands: give each command shown with its output a block of its own", file, blocks[out].Line, len(found))
			} else {
				found[0].output = &blocks[out]
				found[0].excerpt = prevProse(blocks, i) == excerptMarker
				produced[out] = true
			}
		}
		cmds = append(cmds, found...)
	}
	for i, b := range blocks {
		if b.Fenced && b.Lang == "text" && !produced[i] {
			unproduced = append(unproduced, b)
		}
	}
	return cmds, unproduced
}

// nextBlock is the index of the first block after i that is not a blank
// prose line, or -1.
func nextBlock(blocks []doccmd.Block, i int) int {
	for j := i + 1; j < len(blocks); j++ {
		if blocks[j].Fenced || strings.TrimSpace(blocks[j].Text) != "" {
			return j
		}
	}
	return -1
}

// prevProse is the last non-blank prose line before block i.
func prevProse(blocks []doccmd.Block, i int) string {
	for j := i - 1; j >= 0; j-- {
		if blocks[j].Fenced {
			return ""
		}
		if s := strings.TrimSpace(blocks[j].Text); s != "" {
			return s
		}
	}
	return ""
}

// TestDocCommands runs every `go run ./cmd/stac-mcp …` line of the README,
// docs/ and bench/RESULTS.md in-process, so the commands cannot silently
// rot, and compares what each prints with the output block the doc shows
// after it. Normalisations, for what legitimately differs between runs and
// machines:
//   - a cursor is signed with the machine's own key (the state directory's
//     cursor.key), so every cursor, in text (`cursor "…"`) or JSON
//     (`"cursor": "…"`), compares as "…" (the docs shorten them anyway);
//   - a JSON block is compared as JSON, so the doc may fold arrays onto one
//     line;
//   - off amd64, the byte size of an image in a text answer is not compared:
//     Go may fuse multiply-adds there, which can shift a pixel's
//     anti-aliasing and so the PNG's size (the images are compared on amd64).
//
// A command with `--image-dir DIR` writes its images to a temporary
// directory instead, and each must be the file of that name committed in
// DIR (on amd64, byte for byte; elsewhere, same dimensions:
// doccmd.SameImage); go generate ./... writes them (internal/gen).
// A text block that no command produces fails the test: show the command,
// or show no output.
//
// An export writes to STAC_MCP_EXPORT_DIR, one temporary folder per doc,
// shown as ~/Downloads/stac-mcp (the default folder) in what the doc
// shows; a `gdalinfo …` line after it opens the file there (GDAL is the
// reference a reader would use), so a doc shows what GDAL says of an
// export.
func TestDocCommands(t *testing.T) {
	total := 0
	for _, file := range docFiles(t) {
		exportDir := filepath.Join(t.TempDir(), "Downloads", "stac-mcp")
		doc := readDoc(t, file)
		for _, b := range doccmd.Split(doc) {
			if b.Unclosed {
				t.Errorf("%s:%d: this code block is never closed: the rest of the file renders as code", file, b.Line)
			}
		}
		cmds, unproduced := docCommands(t, file, doc)
		for _, b := range unproduced {
			t.Errorf("%s:%d: this text block is not the output of a command the test can run; put the `go run ./cmd/stac-mcp …` line that prints it in a sh block right before it (the test then checks it), or do not show it as output", file, b.Line)
		}
		for _, c := range cmds {
			total++
			t.Run(fmt.Sprintf("%s:%d", file, c.line), func(t *testing.T) { checkDocCommand(t, c, exportDir) })
		}
	}
	if !strings.Contains(readDoc(t, "README.md"), "\n"+doccmd.GoRunPrefix) {
		t.Errorf("README.md has no %q command (the demo call)", doccmd.GoRunPrefix)
	}
	if total == 0 {
		t.Fatal("the docs have no commands")
	}
}

// shownExportDir is how the docs show the export folder.
const shownExportDir = "~/Downloads/stac-mcp"

// gdalCommands are the `gdalinfo …` lines of a sh block.
func gdalCommands(t *testing.T, file string, b doccmd.Block) []docCommand {
	t.Helper()
	if !b.Fenced || b.Lang != "sh" {
		return nil
	}
	var out []docCommand
	for j, line := range strings.Split(b.Text, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "gdalinfo ")
		if !ok {
			continue
		}
		args, err := doccmd.ShellWords(rest)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, b.Line+1+j, err)
		}
		out = append(out, docCommand{file: file, line: b.Line + 1 + j, command: line, args: args, gdal: true})
	}
	return out
}

// runGDALInfo runs a doc's gdalinfo line on the export folder.
func runGDALInfo(t *testing.T, c docCommand, exportDir string) string {
	t.Helper()
	if _, err := exec.LookPath("gdalinfo"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s:%d: gdalinfo not found; CI=true, so this is a failure (.ci/run installs gdal-bin)", c.file, c.line)
		}
		t.Skipf("%s:%d: gdalinfo not found (apt-get install gdal-bin to run it)", c.file, c.line)
	}
	args := slices.Clone(c.args)
	for i, a := range args {
		args[i] = strings.Replace(a, shownExportDir, exportDir, 1)
	}
	out, err := exec.Command("gdalinfo", args...).Output()
	if err != nil {
		t.Fatalf("%s:%d: %q: %v", c.file, c.line, c.command, err)
	}
	return strings.ReplaceAll(string(out), exportDir, shownExportDir)
}

func checkDocCommand(t *testing.T, c docCommand, exportDir string) {
	if c.gdal {
		if stdout := runGDALInfo(t, c, exportDir); c.output != nil {
			compareDocOutput(t, c, stdout)
		}
		return
	}
	args := slices.Clone(c.args)
	imageDir := ""
	tmp := t.TempDir()
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--image-dir" {
			imageDir, args[i+1] = args[i+1], tmp
		}
	}
	env := map[string]string{"STAC_MCP_STATE_DIR": t.TempDir(), "STAC_MCP_EXPORT_DIR": exportDir}
	code, stdout, stderr := runForTest(t, env, args...)
	stdout = strings.ReplaceAll(stdout, exportDir, shownExportDir)
	if code != 0 || stdout == "" {
		t.Fatalf("%s:%d: %q: exit %d, stdout %d bytes, stderr %s", c.file, c.line, c.command, code, len(stdout), stderr)
	}
	if c.output != nil {
		compareDocOutput(t, c, stdout)
	}
	if imageDir != "" {
		compareDocImages(t, c, imageDir, tmp)
	}
}

var (
	textCursor = regexp.MustCompile(`cursor "[^"]*"`)
	jsonCursor = regexp.MustCompile(`"cursor":\s*"[^"]*"`)
	imageBytes = regexp.MustCompile(`image/png, \d+ bytes \([0-9.]+ KiB\)`)
)

// normaliseDocOutput applies TestDocCommands' normalisations to a doc block
// or a command's output.
func normaliseDocOutput(s string) string {
	s = textCursor.ReplaceAllString(s, `cursor "…"`)
	s = jsonCursor.ReplaceAllString(s, `"cursor": "…"`)
	if runtime.GOARCH != "amd64" {
		s = imageBytes.ReplaceAllString(s, "image/png, N bytes")
	}
	return strings.TrimRight(s, "\n")
}

func compareDocOutput(t *testing.T, c docCommand, stdout string) {
	t.Helper()
	shown, got := normaliseDocOutput(c.output.Text), normaliseDocOutput(stdout)
	where := fmt.Sprintf("%s:%d", c.file, c.output.Line)
	switch {
	case c.output.Lang == "json":
		var shownV, gotV any
		if err := json.Unmarshal([]byte(shown), &shownV); err != nil {
			t.Fatalf("%s: the JSON block shown is not JSON: %v", where, err)
		}
		if err := json.Unmarshal([]byte(got), &gotV); err != nil {
			t.Fatalf("%s: %q did not print JSON: %v\n%s", where, c.command, err, stdout)
		}
		if !reflect.DeepEqual(shownV, gotV) {
			t.Errorf("%s: the output shown is not what %q prints now; it prints:\n%s", where, c.command, stdout)
		}
	case c.excerpt:
		if !strings.Contains("\n"+got+"\n", "\n"+shown+"\n") {
			t.Errorf("%s: the excerpt shown is not a run of whole lines of what %q prints now; it prints:\n%s", where, c.command, stdout)
		}
	case shown != got:
		t.Errorf("%s: the output shown is not what %q prints now; it prints:\n%s", where, c.command, stdout)
	}
}

// compareDocImages checks the images a command wrote to tmp against the
// ones committed in the directory its --image-dir names.
func compareDocImages(t *testing.T, c docCommand, imageDir, tmp string) {
	t.Helper()
	written, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) == 0 {
		t.Fatalf("%s:%d: %q wrote no image", c.file, c.line, c.command)
	}
	for _, e := range written {
		got, err := os.ReadFile(filepath.Join(tmp, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		committedPath := filepath.Join(docsRoot, filepath.FromSlash(imageDir), e.Name())
		rel := filepath.ToSlash(filepath.Join(imageDir, e.Name()))
		committed, err := os.ReadFile(committedPath)
		reason := "it differs"
		switch {
		case err != nil:
			reason = err.Error()
		case doccmd.SameImage(committed, got):
			continue
		}
		t.Errorf("%s:%d: %s is not the image %q writes now (%s); run go generate ./... and look at it", c.file, c.line, rel, c.command, reason)
	}
}

// TestDocLinksResolve: every relative link in the README, docs/,
// bench/RESULTS.md and adr/ points at a file or directory that exists, and
// an #anchor at a heading of that Markdown file (GitHub's heading ids).
func TestDocLinksResolve(t *testing.T) {
	files := docFiles(t)
	adrs, err := filepath.Glob(filepath.Join(docsRoot, "adr", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range adrs {
		rel, _ := filepath.Rel(docsRoot, a)
		files = append(files, filepath.ToSlash(rel))
	}
	checked := 0
	for _, file := range files {
		for _, l := range docLinks(readDoc(t, file)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
			}
			if _, err := os.Stat(filepath.Join(docsRoot, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s:%d: link %q: %s does not exist", file, l.line, l.target, target)
				continue
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", file, l.line, l.target)
				continue
			}
			if !slices.Contains(headingIDs(readDoc(t, target)), anchor) {
				t.Errorf("%s:%d: link %q: %s has no heading with the id %q (it has %v)", file, l.line, l.target, target, anchor, headingIDs(readDoc(t, target)))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the link parser is broken")
	}
}

type docLink struct {
	target string
	line   int
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	htmlSrc  = regexp.MustCompile(`\b(?:src|href)="([^"]+)"`)
	codeSpan = regexp.MustCompile("`[^`]*`")
)

// docLinks lists the link targets of a Markdown file outside code blocks
// and code spans: [text](target), ![alt](target), and src/href attributes.
func docLinks(doc string) []docLink {
	var links []docLink
	for _, b := range doccmd.Split(doc) {
		if b.Fenced {
			continue
		}
		prose := codeSpan.ReplaceAllString(b.Text, "")
		for _, re := range []*regexp.Regexp{mdLink, htmlSrc} {
			for _, m := range re.FindAllStringSubmatch(prose, -1) {
				links = append(links, docLink{target: m[1], line: b.Line})
			}
		}
	}
	return links
}

// headingIDs lists the ids GitHub gives a Markdown file's headings: the
// text lower-cased, code marks dropped, punctuation other than '-' and '_'
// removed, spaces turned into '-', and a repeated id suffixed -1, -2….
func headingIDs(doc string) []string {
	var ids []string
	seen := map[string]int{}
	for _, b := range doccmd.Split(doc) {
		if b.Fenced || !strings.HasPrefix(b.Text, "#") {
			continue
		}
		text := strings.TrimLeft(b.Text, "#")
		if text == "" || text[0] != ' ' {
			continue
		}
		var id strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				id.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				id.WriteRune(r)
			}
		}
		s := id.String()
		if n := seen[s]; n > 0 {
			ids = append(ids, fmt.Sprintf("%s-%d", s, n))
		} else {
			ids = append(ids, s)
		}
		seen[s]++
	}
	return ids
}

// TestConfigurationDocListsEverySetting keeps the settings table complete:
// every flag and variable the command reads (reliability ones are checked
// against PolicyFromEnv in TestEveryReliabilityVariableIsASetting).
func TestConfigurationDocListsEverySetting(t *testing.T) {
	doc := readDoc(t, configurationDoc)
	for _, s := range slices.Concat(settings.WithFlags(), settings.Secrets) {
		if !strings.Contains(doc, "`"+s.Env+"`") {
			t.Errorf("%s lacks %s", configurationDoc, s.Env)
		}
		if s.Flag != "" && !strings.Contains(doc, "`--"+s.Flag+"`") {
			t.Errorf("%s lacks --%s", configurationDoc, s.Flag)
		}
	}
}

// TestReliabilitySettingsShowTheirDefaults: --help and the settings table
// give every reliability setting's default, and it is the one the policy
// uses (the cache and bulkhead defaults were missing from both).
func TestReliabilitySettingsShowTheirDefaults(t *testing.T) {
	doc := readDoc(t, configurationDoc)
	p := reliability.DefaultPolicy()
	defaults := map[string]string{
		"STAC_MCP_MAX_HOSTS":            fmt.Sprint(p.MaxHosts),
		"STAC_MCP_BODY_BUDGET_BYTES":    fmt.Sprint(p.BodyBudgetBytes),
		"STAC_MCP_TOOL_TIMEOUT_SECS":    fmt.Sprint(p.ToolTimeout.Seconds()),
		"STAC_MCP_ATTEMPT_TIMEOUT_SECS": fmt.Sprint(p.AttemptTimeout.Seconds()),
		"STAC_MCP_MAX_ATTEMPTS":         fmt.Sprint(p.MaxAttempts),
		"STAC_MCP_BACKOFF_BASE_SECS":    fmt.Sprint(p.BackoffBase.Seconds()),
		"STAC_MCP_RETRY_AFTER_CAP_SECS": fmt.Sprint(p.RetryAfterCap.Seconds()),
		"STAC_MCP_CACHE_TTL_SECS":       fmt.Sprint(p.CacheTTL.Seconds()),
		"STAC_MCP_CACHE_MAX_BYTES":      fmt.Sprint(p.CacheMaxBytes),
		"STAC_MCP_BULKHEAD_MAX":         fmt.Sprint(p.BulkheadMax),
		"STAC_MCP_HEDGE":                map[bool]string{true: "on", false: "off"}[p.Hedge],
	}
	for _, s := range settings.Reliability {
		want, ok := defaults[s.Env]
		if !ok {
			t.Errorf("%s: no default known to this test", s.Env)
			continue
		}
		if !containsWord(s.Help, want) || !strings.Contains(s.Help, "default") {
			t.Errorf("--help for %s %q does not give its default %s", s.Env, s.Help, want)
		}
		row := ""
		for line := range strings.Lines(doc) {
			if strings.HasPrefix(line, "|") && strings.Contains(line, "`"+s.Env+"`") {
				row = line
			}
		}
		if !containsWord(row, "("+want) && !containsWord(row, want+")") && !containsWord(row, "("+humanBytes(want)+")") {
			t.Errorf("%s row for %s %q does not give its default (%s)", configurationDoc, s.Env, strings.TrimSpace(row), want)
		}
	}
}

// containsWord reports s containing w not glued to more digits or letters.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before := start == 0 || !isWordByte(s[start-1])
		after := end == len(s) || !isWordByte(s[end])
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '.'
}

// humanBytes writes a whole number of MiB as the docs do ("256 MiB");
// anything else is returned as it is.
func humanBytes(n string) string {
	var v int64
	if _, err := fmt.Sscan(n, &v); err == nil && v >= 1<<20 && v%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", v>>20)
	}
	return n
}

// TestReadmeTestCommandIsCIs: the command the README's Tests section gives is
// the one .ci/run runs, word for word, so "what CI runs" stays true.
func TestReadmeTestCommandIsCIs(t *testing.T) {
	readme := readDoc(t, "README.md")
	start := strings.Index(readme, "\n## Tests\n")
	if start < 0 {
		t.Fatal("README.md has no Tests section")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var command string
	for _, b := range doccmd.Split(section) {
		if b.Fenced && b.Lang == "sh" {
			command = strings.TrimSpace(b.Text)
			break
		}
	}
	if command == "" {
		t.Fatal("README.md's Tests section shows no sh command")
	}
	ci := readDoc(t, ".ci/run")
	if !slices.Contains(strings.Split(ci, "\n"), command) {
		t.Errorf("README.md's test command %q is not a line of .ci/run", command)
	}
}

// repoTopDirs are the repository's top-level directories; a doc token that
// starts with one of them is a path into the repository.
var repoTopDirs = []string{"cmd", "tools", "stacclient", "reliability", "faultinject", "bench", "adr", "e2e", "scripts", "docs", ".ci"}

var pathToken = regexp.MustCompile(`[A-Za-z0-9_.\-/]+`)

// notRepoPaths look like repository paths but are not: MCP method names,
// and what `npm ci` installs.
var notRepoPaths = []string{"tools/list", "tools/call", "e2e/node_modules"}

// TestDocRepoPathsExist: every file or package path into the repository
// that the README, docs/ and bench/RESULTS.md name in code (`tools/__toolsnaps__/`,
// `./bench/`, `cmd/stac-mcp/e2e_test.go`) exists, so a doc cannot keep
// pointing at code that moved. Paths with a pattern in them (…, <…>, {…},
// *) are not checked.
func TestDocRepoPathsExist(t *testing.T) {
	checked := 0
	for _, file := range docFiles(t) {
		for _, ref := range docRepoPaths(readDoc(t, file)) {
			checked++
			if _, err := os.Stat(filepath.Join(docsRoot, filepath.FromSlash(ref.target))); err != nil {
				t.Errorf("%s:%d: names %s, which does not exist (if it moved, name its new place)", file, ref.line, ref.target)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no repository paths found: the parser is broken")
	}
}

// docRepoPaths lists the repository paths named in a doc's code spans and
// code blocks.
func docRepoPaths(doc string) []docLink {
	var refs []docLink
	add := func(code string, line int) {
		for _, tok := range strings.Fields(code) {
			if strings.ContainsAny(tok, "<>{}*$…") || strings.Contains(tok, "...") {
				continue
			}
			for _, m := range pathToken.FindAllString(tok, -1) {
				m = strings.TrimPrefix(m, "./")
				m = strings.TrimRight(m, ".")
				first, _, ok := strings.Cut(m, "/")
				if !ok || !slices.Contains(repoTopDirs, first) || slices.Contains(notRepoPaths, strings.TrimSuffix(m, "/")) {
					continue
				}
				refs = append(refs, docLink{target: strings.TrimSuffix(m, "/"), line: line})
			}
		}
	}
	for _, b := range doccmd.Split(doc) {
		if b.Fenced {
			if b.Lang == "sh" {
				add(b.Text, b.Line)
			}
			continue
		}
		for _, span := range codeSpan.FindAllString(b.Text, -1) {
			add(strings.Trim(span, "`"), b.Line)
		}
	}
	return refs
}
