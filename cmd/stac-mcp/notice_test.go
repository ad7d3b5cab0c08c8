package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/bundle"
)

// licenceNames are the licences a data folder's README may name, as
// regular expressions; what one matches must appear in a NOTICE section
// that lists the folder (normalised by noticeKey).
var licenceNames = []*regexp.Regexp{
	regexp.MustCompile(`Apache`),
	regexp.MustCompile(`\bMIT\b`),
	regexp.MustCompile(`\bISC\b`),
	regexp.MustCompile(`\bBSD\b`),
	regexp.MustCompile(`\bCC0\b`),
	regexp.MustCompile(`\bCC[- ]BY(?:[- ]SA)?(?:[- ][0-9.]+)?`),
	regexp.MustCompile(`\bPDDL\b`),
	regexp.MustCompile(`\bMPL\b|Mozilla Public License`),
	regexp.MustCompile(`(?i)public[ -]domain`),
	regexp.MustCompile(`(?i)OGC (?:document )?licen[cs]e`),
}

// ownWork marks a README line about this project's own material, whose
// licence is the repository's and needs no NOTICE entry.
var ownWork = regexp.MustCompile(`this project's own|same as this repository|written for these tests`)

func noticeKey(s string) string {
	return strings.NewReplacer("-", " ", "document ", "").Replace(strings.ToLower(s))
}

// dataREADMEs lists, relative to the repository root, the README.md of
// every folder of data from elsewhere: those under a testdata directory,
// and those of what a //go:embed directive puts in the binary (the nearest
// README.md from the embedded path up to its package's directory).
func dataREADMEs(t *testing.T, root string) []string {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "README.md" && slices.Contains(strings.Split(rel, "/"), "testdata") {
			found[rel] = true
		}
		if strings.HasSuffix(d.Name(), ".go") && !strings.HasSuffix(d.Name(), "_test.go") {
			for _, readme := range embeddedREADMEs(t, root, path) {
				found[readme] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(found))
	for p := range found {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// embeddedREADMEs reads a Go file's //go:embed patterns and returns the
// README.md nearest to each embedded path, if any.
func embeddedREADMEs(t *testing.T, root, goFile string) []string {
	t.Helper()
	f, err := os.Open(goFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pkgDir := filepath.Dir(goFile)
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		patterns, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "//go:embed ")
		if !ok {
			continue
		}
		for _, p := range strings.Fields(patterns) {
			dir := filepath.Join(pkgDir, filepath.FromSlash(strings.TrimPrefix(p, "all:")))
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				dir = filepath.Dir(dir)
			}
			for ; ; dir = filepath.Dir(dir) {
				if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
					rel, _ := filepath.Rel(root, filepath.Join(dir, "README.md"))
					out = append(out, filepath.ToSlash(rel))
					break
				}
				if dir == pkgDir || len(dir) <= len(pkgDir) {
					break
				}
			}
		}
	}
	return out
}

// noticeSections splits NOTICE into its "## " sections: heading and body.
func noticeSections(notice string) (headings []string, bodies map[string]string) {
	bodies = map[string]string{}
	var cur string
	for _, line := range strings.Split(notice, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = h
			headings = append(headings, h)
			continue
		}
		if cur != "" {
			bodies[cur] += line + "\n"
		}
	}
	return headings, bodies
}

// listsFolder reports whether a NOTICE section names dir or a folder
// above it (at least two levels deep), as a whole path.
func listsFolder(body, dir string) bool {
	for d := dir; strings.Count(d, "/") >= 1; d = filepath.ToSlash(filepath.Dir(d)) {
		re := regexp.MustCompile(`(^|[\s(])` + regexp.QuoteMeta(d) + `($|[\s,.;:)])`)
		if re.MatchString(body) {
			return true
		}
	}
	return false
}

// Every folder of data from elsewhere says under which licence, and NOTICE
// has a section listing it with that licence; NOTICE's sections are one per
// source, in alphabetical order, so that several people can add theirs.
func TestNoticeListsEveryDataFolder(t *testing.T) {
	t.Parallel()
	root := docsRoot
	raw, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}
	headings, bodies := noticeSections(string(raw))
	sorted := slices.SortedFunc(slices.Values(headings), func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	if !slices.Equal(headings, sorted) {
		t.Errorf("NOTICE's sections are not in alphabetical order (case aside):\n%s\nwant:\n%s", strings.Join(headings, "\n"), strings.Join(sorted, "\n"))
	}
	if len(bodies) != len(headings) {
		t.Errorf("NOTICE has %d sections under %d distinct headings: give each source one section", len(headings), len(bodies))
	}
	readmes := dataREADMEs(t, root)
	for _, want := range []string{"stacclient/stacdoc/schemas/README.md", "stacclient/stacserver/demo/README.md", "tools/internal/mapview/README.md", "tools/internal/raster/cog/testdata/README.md"} {
		if !slices.Contains(readmes, want) {
			t.Errorf("%s is not found as a data folder's README (found %v)", want, readmes)
		}
	}
	for _, readme := range readmes {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(readme)))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.ToSlash(filepath.Dir(readme))
		var sections []string
		for _, h := range headings {
			if listsFolder(bodies[h], dir) {
				sections = append(sections, h)
			}
		}
		named := map[string]bool{}
		for _, line := range strings.Split(string(text), "\n") {
			if ownWork.MatchString(line) {
				continue
			}
			for _, re := range licenceNames {
				for _, m := range re.FindAllString(line, -1) {
					named[noticeKey(m)] = true
				}
			}
		}
		if len(named) == 0 {
			t.Errorf("%s names no licence: say under which licence the data is (and its source and version)", readme)
			continue
		}
		if len(sections) == 0 {
			t.Errorf("NOTICE has no section listing %s (%s): add one for its source", dir, readme)
			continue
		}
		for name := range named {
			if !slices.ContainsFunc(sections, func(h string) bool { return strings.Contains(noticeKey(h+"\n"+bodies[h]), name) }) {
				t.Errorf("%s names the licence %q, which no NOTICE section listing %s names (sections: %s)", readme, name, dir, strings.Join(sections, "; "))
			}
		}
	}
}

// LICENSE is the licence the bundle's manifest and the registry entry
// state (bundle.License), and NOTICE says so.
func TestLicenceIsStatedAlike(t *testing.T) {
	t.Parallel()
	licence, err := os.ReadFile(filepath.Join(docsRoot, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	notice, err := os.ReadFile(filepath.Join(docsRoot, "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Join(strings.Fields(string(licence)), " ")
	if bundle.License != "Apache-2.0" || !strings.HasPrefix(words, "Apache License Version 2.0, January 2004") ||
		!strings.Contains(words, "END OF TERMS AND CONDITIONS") {
		t.Errorf("bundle.License is %q and LICENSE begins %.60q: they must name the same licence", bundle.License, words)
	}
	if !strings.Contains(string(notice), "Licensed under the Apache License, Version 2.0") {
		t.Error("NOTICE does not say the repository's licence")
	}
	for _, f := range []string{"manifest.json", "server.json"} {
		raw, err := os.ReadFile(filepath.Join(docsRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), `"license": "`+bundle.License+`"`) {
			t.Errorf("%s does not state the licence %s", f, bundle.License)
		}
	}
}
