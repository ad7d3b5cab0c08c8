package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
	"github.com/stacmcp/stac-mcp/tools/advice"
	"github.com/stacmcp/stac-mcp/tools/internal/golden"
	"github.com/stacmcp/stac-mcp/tools/internal/picture/picturetest"
)

// snapshotDir holds one snapshot per listed tool.
const snapshotDir = "tools/__toolsnaps__"

// surface is what clients are offered: the tools listed over MCP by a
// server with the defaults (readOnly) and by one with writes allowed
// (withWrites, the read tools first).
type surface struct {
	readOnly, withWrites []*mcp.Tool
}

// derivedFiles renders every file this generator owns, from the code and
// the committed docs (whose generated parts it replaces).
func derivedFiles(ctx context.Context, root string) ([]derivedFile, error) {
	s, err := listSurface(ctx)
	if err != nil {
		return nil, err
	}
	files, err := snapshotFiles(root, s.withWrites)
	if err != nil {
		return nil, err
	}
	docs, err := docFiles(root, docEdits(s))
	if err != nil {
		return nil, err
	}
	images, err := goldenFiles(root)
	if err != nil {
		return nil, err
	}
	return slices.Concat(files, docs, images), nil
}

// goldenFiles are the pinned images of the visual tools' machinery
// (tools/internal/golden), each left alone while the committed one is
// within the tolerance its test allows, so a platform whose encoders differ
// a little does not rewrite it.
func goldenFiles(root string) ([]derivedFile, error) {
	var files []derivedFile
	for _, g := range golden.Files(root) {
		data, err := g.Render()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Path, err)
		}
		tolerance := g.Tolerance
		files = append(files, derivedFile{path: g.Path, want: data, same: func(committed, want []byte) bool {
			return picturetest.WithinTolerance(committed, want, tolerance)
		}})
	}
	return files, nil
}

// listSurface lists the tools of a server with the defaults and of one
// with writes allowed, over the SDK's in-memory transport, as a client
// sees them.
func listSurface(ctx context.Context) (surface, error) {
	readOnly, err := listTools(ctx, false)
	if err != nil {
		return surface{}, err
	}
	withWrites, err := listTools(ctx, true)
	if err != nil {
		return surface{}, err
	}
	return surface{readOnly: readOnly, withWrites: withWrites}, nil
}

// listTools builds a server on the demo catalog (nothing is called, so
// nothing leaves the machine) and lists its tools. With writes, the write
// tools are listed; listing them needs no idempotency store.
func listTools(ctx context.Context, writes bool) ([]*mcp.Tool, error) {
	logger := zerolog.Nop()
	layer := reliability.New(reliability.DefaultPolicy(), reliability.Options{Logger: &logger, Advice: advice.Next})
	cats := tools.NewCatalogs(tools.CatalogsOptions{Default: tools.DemoCatalog, HTTPClient: layer.HTTPClient(), WritableLocal: writes})
	defer cats.Close()
	d := &tools.Deps{Layer: layer, Catalogs: cats, Limits: tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100}, Logger: logger}
	if writes {
		d.Writes = &tools.Writes{}
	}
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := tools.NewServer(d, "gen").Connect(ctx, serverT, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gen", Version: "0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var listed []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		listed = append(listed, tool)
	}
	return listed, nil
}

// snapshotFiles are the schema snapshots: every tool's definition as
// clients see it in tools/list (name, title, description, annotations,
// input and output schema), as sorted, indented JSON in
// tools/__toolsnaps__/<tool>.snap, so any change to what a model sees
// shows up in review; a snapshot of a tool no longer listed is removed.
func snapshotFiles(root string, listed []*mcp.Tool) ([]derivedFile, error) {
	var files []derivedFile
	for _, tool := range listed {
		snap, err := sortedJSON(tool)
		if err != nil {
			return nil, fmt.Errorf("snapshot of %s: %w", tool.Name, err)
		}
		files = append(files, derivedFile{path: snapshotPath(tool.Name), want: snap})
	}
	existing, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(snapshotDir), "*.snap"))
	if err != nil {
		return nil, err
	}
	for _, p := range existing {
		path := snapshotDir + "/" + filepath.Base(p)
		if !slices.ContainsFunc(files, func(f derivedFile) bool { return f.path == path }) {
			files = append(files, derivedFile{path: path}) // a tool no longer listed
		}
	}
	return files, nil
}

func snapshotPath(tool string) string { return snapshotDir + "/" + tool + ".snap" }

// sortedJSON renders v with map keys sorted (encoding/json sorts map keys),
// so snapshots do not depend on struct field order.
func sortedJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(generic, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// docEdit is one generated part of a doc.
type docEdit struct {
	doc   string // from the repository root
	what  string // for messages
	apply func(text string) (string, error)
}

// docEdits are the generated parts of the docs: the read tools in the
// README and in docs/tools.md, the write tools in docs/writes.md, the
// toolsets and what the tool sets cost a model's context in
// docs/configuration.md.
func docEdits(s surface) []docEdit {
	return []docEdit{
		markerBlock("README.md", "tools", toolList(tools.Inventory())),
		markerBlock("docs/tools.md", "tools-table", toolsTable(tools.Inventory())),
		markerBlock("docs/writes.md", "write-tools", toolsTable(tools.WriteTools())),
		markerBlock("docs/configuration.md", "toolsets", toolsetsTable(tools.Candidates(true))),
		statedFigure("docs/configuration.md", "the default tool set's cost", costOfDefault, tools.PromptBytes(s.readOnly)),
		statedFigure("docs/configuration.md", "the cost with --allow-writes", costWithWrites, tools.PromptBytes(s.withWrites)),
	}
}

// docFiles applies the edits to the committed docs, one file per doc.
func docFiles(root string, edits []docEdit) ([]derivedFile, error) {
	var files []derivedFile
	for _, e := range edits {
		i := slices.IndexFunc(files, func(f derivedFile) bool { return f.path == e.doc })
		if i < 0 {
			raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.doc)))
			if err != nil {
				return nil, err
			}
			files = append(files, derivedFile{path: e.doc, want: raw})
			i = len(files) - 1
		}
		text, err := e.apply(string(files[i].want))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", e.doc, e.what, err)
		}
		files[i].want = []byte(text)
	}
	return files, nil
}

// markerBlock replaces what is between a doc's <!-- marker:start --> and
// <!-- marker:end --> lines with content.
func markerBlock(doc, marker, content string) docEdit {
	startMarker, endMarker := "<!-- "+marker+":start -->", "<!-- "+marker+":end -->"
	return docEdit{doc: doc, what: "the " + marker + " table", apply: func(text string) (string, error) {
		start := strings.Index(text, startMarker)
		end := strings.Index(text, endMarker)
		if start < 0 || end < start {
			return "", fmt.Errorf("lacks the %s … %s markers", startMarker, endMarker)
		}
		return text[:start+len(startMarker)] + "\n" + content + text[end:], nil
	}}
}

// The sentences of docs/configuration.md that state what the tool sets
// cost (TestToolsListBudget's measure, tools.PromptBytes); the generator rewrites
// the figure, so the phrase must stay on one line.
var (
	costOfDefault  = regexp.MustCompile(`(costs )[0-9,]+( bytes of names, descriptions and input schemas)`)
	costWithWrites = regexp.MustCompile(`(\()[0-9,]+( bytes in all\))`)
)

// statedFigure writes n, with thousands separators, into the one place of
// doc that phrase matches.
func statedFigure(doc, what string, phrase *regexp.Regexp, n int) docEdit {
	return docEdit{doc: doc, what: what, apply: func(text string) (string, error) {
		if c := len(phrase.FindAllStringIndex(text, -1)); c != 1 {
			return "", fmt.Errorf("want one %q, found %d (keep the phrase on one line)", phrase, c)
		}
		return phrase.ReplaceAllString(text, "${1}"+withCommas(n)+"${2}"), nil
	}}
}

func withCommas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// toolList renders the README's short tool list: each tool's name and the
// first sentence of its description, so the README cannot list a tool that
// does not exist or miss one that does.
func toolList(ts []tools.Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | What it does |\n|---|---|\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "| `%s` | %s |\n", t.Def.Name, firstSentence(t.Def.Description))
	}
	return b.String()
}

// toolsTable renders a full tools table (docs/tools.md, docs/writes.md):
// the name, the toolset, the title, the first sentence of each description
// and whether it calls the catalog.
func toolsTable(ts []tools.Tool) string {
	var b strings.Builder
	b.WriteString("| Tool | Toolset | Title | What it does | Upstream requests |\n|---|---|---|---|---|\n")
	for _, t := range ts {
		upstream := "no"
		if t.Network {
			upstream = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", t.Def.Name, t.Toolset, t.Def.Title, firstSentence(t.Def.Description), upstream)
	}
	return b.String()
}

// toolsetsTable renders the toolsets table (docs/configuration.md): each
// toolset, what it is for, and its tools.
func toolsetsTable(ts []tools.Tool) string {
	var b strings.Builder
	b.WriteString("| Toolset | For | Tools |\n|---|---|---|\n")
	for _, set := range tools.Toolsets() {
		var names []string
		for _, t := range ts {
			if t.Toolset == set.Name {
				names = append(names, "`"+t.Def.Name+"`")
			}
		}
		if len(names) == 0 {
			names = []string{"(none in this build)"}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", set.Name, set.Description, strings.Join(names, ", "))
	}
	return b.String()
}

// firstSentence is the description up to the first ". " or line end, with
// '|' escaped for the Markdown table.
func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`)
}
