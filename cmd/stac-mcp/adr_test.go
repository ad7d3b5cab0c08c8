package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// adrRow is a row of adr/README.md's table: | [NNNN](file) title | status | summary |.
var adrRow = regexp.MustCompile(`^\| \[(\d{4})\]\(([^)]+)\)[^|]*\| ([^|]+) \| [^|]+ \|$`)

// adrStatus is an ADR's status paragraph: the lines after its title up to
// the first blank line.
func adrStatus(text string) string {
	lines := strings.Split(text, "\n")
	var para []string
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, l)
	}
	return strings.ToLower(strings.Join(para, " "))
}

// Every ADR has one row in adr/README.md, linking to it, and the row's
// status agrees with the ADR's own status line: "superseded by" for a
// superseded one, "superseded" mentioned exactly when the ADR says it is,
// in part or whole.
func TestADRIndexListsEveryADR(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(docsRoot, "adr")
	index, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // file → status cell
	for _, line := range strings.Split(string(index), "\n") {
		m := adrRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if !strings.HasPrefix(m[2], m[1]+"-") {
			t.Errorf("adr/README.md: row %s links to %s", m[1], m[2])
		}
		if _, dup := rows[m[2]]; dup {
			t.Errorf("adr/README.md lists %s twice", m[2])
		}
		rows[m[2]] = strings.ToLower(m[3])
	}
	files, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no ADRs found")
	}
	for _, f := range files {
		name := filepath.Base(f)
		cell, ok := rows[name]
		if !ok {
			t.Errorf("adr/README.md has no row for %s: add its number, title, status and a one-line summary", name)
			continue
		}
		delete(rows, name)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		status := adrStatus(string(raw))
		whole := strings.HasPrefix(status, "status: superseded by") || strings.HasPrefix(status, "superseded by")
		switch {
		case whole && !strings.HasPrefix(cell, "superseded by"):
			t.Errorf("adr/README.md says %q for %s, whose status line says it is superseded", cell, name)
		case strings.Contains(status, "superseded") != strings.Contains(cell, "superseded"):
			t.Errorf("adr/README.md says %q for %s, whose status line says %q", cell, name, status)
		}
	}
	for name := range rows {
		t.Errorf("adr/README.md lists %s, which does not exist", name)
	}
}
