package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeToolsTable renders a README tools table from tools: the name,
// the title and the first sentence of each description, so the README
// cannot list a tool that does not exist or miss one that does.
func readmeToolsTable(tools []Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | Title | What it does | Upstream requests |\n|---|---|---|---|\n")
	for _, t := range tools {
		upstream := "no"
		if t.Network {
			upstream = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", t.Def.Name, t.Def.Title, firstSentence(t.Def.Description), upstream)
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

// TestReadmeToolsTableMatchesInventory fails when a generated table
// between the README's markers drifts from Inventory() (the read tools)
// or WriteTools() (in "Writing to catalogs"); run
// UPDATE_README=true go test ./tools/ -run Docs to regenerate them.
func TestReadmeToolsTableMatchesInventoryDocs(t *testing.T) {
	checkReadmeTable(t, "tools", Inventory())
	checkReadmeTable(t, "write-tools", WriteTools())
}

func checkReadmeTable(t *testing.T, marker string, tools []Tool) {
	t.Helper()
	readmeToolsStart, readmeToolsEnd := "<!-- "+marker+":start -->", "<!-- "+marker+":end -->"
	path := filepath.Join("..", "README.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, readmeToolsStart)
	end := strings.Index(readme, readmeToolsEnd)
	if start < 0 || end < start {
		t.Fatalf("README.md lacks the %s … %s markers around the tools table", readmeToolsStart, readmeToolsEnd)
	}
	current := readme[start+len(readmeToolsStart) : end]
	want := "\n" + readmeToolsTable(tools)
	if current == want {
		return
	}
	if os.Getenv("UPDATE_README") == "true" {
		updated := readme[:start+len(readmeToolsStart)] + want + readme[end:]
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("README.md %s table regenerated", marker)
		return
	}
	t.Errorf("README.md's %s table is out of date; run UPDATE_README=true go test ./tools/ -run Docs and review the diff.\nwant:\n%s\ngot:\n%s", marker, want, current)
}
