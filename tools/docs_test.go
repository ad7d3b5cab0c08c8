package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeToolList renders the README's short tool list: each tool's name
// and the first sentence of its description, so the README cannot list a
// tool that does not exist or miss one that does.
func readmeToolList(tools []Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | What it does |\n|---|---|\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "| `%s` | %s |\n", t.Def.Name, firstSentence(t.Def.Description))
	}
	return b.String()
}

// readmeToolsTable renders a full tools table (docs/tools.md,
// docs/writes.md) from tools: the name, the toolset, the title, the first
// sentence of each description and whether it calls the catalog.
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

// readmeToolsetsTable renders the toolsets table (docs/configuration.md): each toolset,
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
// between a doc's markers drifts from the inventory (the read tools in the
// README and in docs/tools.md, the write tools in docs/writes.md, the
// toolsets in docs/configuration.md); run UPDATE_README=true go test
// ./tools/ -run Docs to regenerate them.
func TestReadmeToolsTableMatchesInventoryDocs(t *testing.T) {
	checkDocBlock(t, "README.md", "tools", readmeToolList(Inventory()))
	checkDocBlock(t, "docs/tools.md", "tools-table", readmeToolsTable(Inventory()))
	checkDocBlock(t, "docs/writes.md", "write-tools", readmeToolsTable(WriteTools()))
	checkDocBlock(t, "docs/configuration.md", "toolsets", readmeToolsetsTable(Candidates(true)))
}

// checkDocBlock compares the text between a doc's <!-- marker:start -->
// and <!-- marker:end --> with content; doc is relative to the repository
// root.
func checkDocBlock(t *testing.T, doc, marker, content string) {
	t.Helper()
	startMarker, endMarker := "<!-- "+marker+":start -->", "<!-- "+marker+":end -->"
	path := filepath.Join("..", filepath.FromSlash(doc))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, startMarker)
	end := strings.Index(text, endMarker)
	if start < 0 || end < start {
		t.Fatalf("%s lacks the %s … %s markers", doc, startMarker, endMarker)
	}
	current := text[start+len(startMarker) : end]
	want := "\n" + content
	if current == want {
		return
	}
	if os.Getenv("UPDATE_README") == "true" && os.Getenv("CI") != "true" { // CI never blesses a table nobody looked at
		updated := text[:start+len(startMarker)] + want + text[end:]
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %s table regenerated", doc, marker)
		return
	}
	t.Errorf("%s's %s table is out of date with the inventory; run UPDATE_README=true go test ./tools/ -run Docs and review the diff.\nwant:\n%s\ngot:\n%s", doc, marker, want, current)
}

// TestConfigurationDocStatesToolsListCost: the toolsets section of
// docs/configuration.md gives what the default tool set and the one with
// --allow-writes cost a model's context (TestToolsListBudget's measure), so
// the figures cannot drift from the tools.
func TestConfigurationDocStatesToolsListCost(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(raw)), " ")
	withCommas := func(n int) string {
		s := fmt.Sprint(n)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	}
	def := modelBytes(t, listTools(t, newTestSession(t, testSessionOptions{})))
	writes := modelBytes(t, listTools(t, newTestSession(t, testSessionOptions{Writes: sqliteWrites(t, t.TempDir())})))
	for _, want := range []string{
		fmt.Sprintf("costs %s bytes of names, descriptions and input schemas", withCommas(def)),
		fmt.Sprintf("(%s bytes in all)", withCommas(writes)),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/configuration.md does not say %q (TestToolsListBudget's measure now)", want)
		}
	}
}
