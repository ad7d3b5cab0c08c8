package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools"
)

// runTools lists the tools as an MCP client sees them (tools/list over the
// in-memory transport): a table, or with --json the full definitions, in
// inventory order.
func runTools(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	cs, closeSession, err := openInProcessSession(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeSession()
	var list []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		list = append(list, t)
	}
	// tools/list is alphabetical; show them in the order a model should
	// meet them, as the inventory lists them.
	order := map[string]int{}
	for i, t := range append(tools.Inventory(), tools.WriteTools()...) {
		order[t.Def.Name] = i
	}
	slices.SortStableFunc(list, func(a, b *mcp.Tool) int { return order[a.Name] - order[b.Name] })
	if cfg.JSON {
		return writeIndentedJSON(stdout, list)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, firstSentence(t.Description))
	}
	return tw.Flush()
}

func firstSentence(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
