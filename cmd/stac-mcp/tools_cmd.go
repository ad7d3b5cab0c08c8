package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runTools lists the tools as an MCP client sees them (tools/list over the
// in-memory transport): a table, or with --json the full definitions.
func runTools(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	a, err := newApp(cfg, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	cs, closeSession, err := a.connectInProcess(ctx)
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
