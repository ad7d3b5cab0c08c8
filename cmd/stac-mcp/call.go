package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runCall runs one tool through the MCP server over the in-memory
// transport and prints its structuredContent (or, with --text, its text
// block). A tool error is printed on stderr and exits 1.
func runCall(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	if len(cfg.Args) == 0 || len(cfg.Args) > 2 {
		return usageError(`call wants TOOL and optionally one JSON object of arguments, e.g. call get_item '{"collection_id":"naip","item_id":"…"}'; got %d arguments`, len(cfg.Args))
	}
	name := cfg.Args[0]
	args := json.RawMessage(`{}`)
	if len(cfg.Args) == 2 {
		raw := strings.TrimSpace(cfg.Args[1])
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return usageError("call %s: the arguments must be one JSON object, e.g. '{\"max_items\":2}'; got %q (%v)", name, truncate(raw, 80), err)
		}
		args = json.RawMessage(raw)
	}
	cs, closeSession, err := openInProcessSession(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeSession()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if strings.Contains(err.Error(), "unknown tool") {
			return usageError("unknown tool %q; `stac-mcp tools` lists them: %s", name, strings.Join(toolNames(ctx, cs), ", "))
		}
		return fmt.Errorf("call %s: %w", name, err)
	}
	if res.IsError {
		return &exitError{code: 1, err: fmt.Errorf("%s", textOf(res))}
	}
	if cfg.ImageDir != "" {
		if err := saveImages(cfg.ImageDir, name, res, stderr); err != nil {
			return err
		}
	}
	if cfg.Text {
		_, err := fmt.Fprintln(stdout, textOf(res))
		return err
	}
	return writeIndentedJSON(stdout, res.StructuredContent)
}

var imageExtensions = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}

// saveImages writes the result's image content blocks into dir as
// <tool>-<n>.<ext> and names each file on stderr.
func saveImages(dir, tool string, res *mcp.CallToolResult, stderr io.Writer) error {
	n := 0
	for _, c := range res.Content {
		ic, ok := c.(*mcp.ImageContent)
		if !ok {
			continue
		}
		if n == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--image-dir: %w", err)
			}
		}
		n++
		ext, known := imageExtensions[ic.MIMEType]
		if !known {
			ext = ".bin"
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-%d%s", tool, n, ext))
		if err := os.WriteFile(path, ic.Data, 0o644); err != nil {
			return fmt.Errorf("--image-dir: %w", err)
		}
		_, _ = fmt.Fprintf(stderr, "wrote %s (%s, %d bytes)\n", path, ic.MIMEType, len(ic.Data)) // a note beside the result
	}
	if n == 0 {
		_, _ = fmt.Fprintf(stderr, "%s returned no image\n", tool)
	}
	return nil
}

// textOf joins a result's text blocks.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func writeIndentedJSON(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

func toolNames(ctx context.Context, cs *mcp.ClientSession) []string {
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			break
		}
		names = append(names, t.Name)
	}
	return names
}
