package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeToolsTable renders a README tools table from tools: the name,
// the toolset, the title and the first sentence of each description, so
// the README cannot list a tool that does not exist or miss one that does.
func readmeToolsTable(tools []Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | Toolset | Title | What it does | Upstream requests |\n|---|---|---|---|---|\n")
	for _, t := range tools {
		upstream := "no"
		if t.Network {
			upstream = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", t.Def.Name, t.Toolset, t.Def.Title, firstSentence(t.Def.Description), upstream)
	}
	return b.String()
}

// readmeToolsetsTable renders the README's toolsets table: each toolset,
// what it is for, and its tools.
func readmeToolsetsTable(tools []Tool) string {
	var b strings.Builder
	b.WriteString("| Toolset | For | Tools |\n|---|---|---|\n")
	for _, ts := range Toolsets() {
		var names []string
		for _, t := range tools {
			if t.Toolset == ts.Name {
				names = append(names, "`"+t.Def.Name+"`")
			}
		}
		if len(names) == 0 {
			names = []string{"(none in this build)"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", ts.Name, ts.Description, strings.Join(names, ", "))
	}
	return b.String()
}

// firstSentence is the description up to the first ". " or line end,
// with '|' escaped for the Markdown table.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`)
}

// TestReadmeToolsTableMatchesInventoryDocs fails when a generated table
// between the README's markers drifts from the inventory (the read tools,
// the write tools in "Writing to catalogs", the toolsets); run
// UPDATE_README=true go test ./tools/ -run Docs to regenerate them.
func TestReadmeToolsTableMatchesInventoryDocs(t *testing.T) {
	checkReadmeBlock(t, "tools", readmeToolsTable(Inventory()))
	checkReadmeBlock(t, "write-tools", readmeToolsTable(WriteTools()))
	checkReadmeBlock(t, "toolsets", readmeToolsetsTable(Candidates(true)))
}

func checkReadmeBlock(t *testing.T, marker, content string) {
	t.Helper()
	startMarker, endMarker := "<!-- "+marker+":start -->", "<!-- "+marker+":end -->"
	path := filepath.Join("..", "README.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, startMarker)
	end := strings.Index(readme, endMarker)
	if start < 0 || end < start {
		t.Fatalf("README.md lacks the %s … %s markers", startMarker, endMarker)
	}
	current := readme[start+len(startMarker) : end]
	want := "\n" + content
	if current == want {
		return
	}
	if os.Getenv("UPDATE_README") == "true" {
		updated := readme[:start+len(startMarker)] + want + readme[end:]
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("README.md %s table regenerated", marker)
		return
	}
	t.Errorf("README.md's %s table is out of date with the inventory; run UPDATE_README=true go test ./tools/ -run Docs and review the diff.\nwant:\n%s\ngot:\n%s", marker, want, current)
}
