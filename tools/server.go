package tools

import (
	"context"
	_ "embed"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
)

// instructions tell the model the recommended order of the tools; they are
// prose, so they live in Markdown rather than in a Go string.
//
//go:embed instructions.md
var instructions string

// Instructions returns the server instructions sent at initialize.
func Instructions() string { return instructions }

// ServerName is the MCP implementation name.
const ServerName = "stac-mcp"

// NewServer builds the MCP server with Tools(d) registered: every
// Inventory tool, and the write tools when d.Writes is set.
func NewServer(d *Deps, version string) *mcp.Server {
	return newServer(d, version, Tools(d))
}

// newServer registers the given tools; tests pass test-only tools.
func newServer(d *Deps, version string, tools []Tool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{
		Name:    ServerName,
		Title:   "STAC catalog explorer",
		Version: version,
	}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       reliability.NewSlogLogger(d.Logger.With().Str("component", "mcp").Logger()),
		// Declared explicitly: the tool set is fixed at start-up, so there
		// is no listChanged, and no logging capability because stderr is
		// our log channel (client logging is deprecated in 2026-07-28).
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{}, Prompts: &mcp.PromptCapabilities{}},
		CompletionHandler: completionHandler(d),
	})
	// First listed is outermost: the receipt holder must wrap the others.
	// panicMiddleware is the last resort, so it wraps everything.
	s.AddReceivingMiddleware(panicMiddleware(d.Logger), callMetaMiddleware, callLogMiddleware(d.Logger), argumentErrorMiddleware(tools),
		argumentAliasMiddleware(tools))
	for _, t := range tools {
		t.Register(s, d)
	}
	registerResources(s, d)
	registerPrompts(s)
	return s
}

// callLogMiddleware logs one line per tool call (stderr, debug level; the
// reliability layer logs retries and denials).
func callLogMiddleware(logger zerolog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			ev := logger.Debug().Str("method", method).Dur("elapsed", time.Since(start))
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				ev = ev.Str("tool", p.Name)
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				ev = ev.Bool("is_error", r.IsError)
				if rec, ok := r.Meta[MetaReceipt]; ok {
					ev = ev.Interface("receipt", rec)
				}
			}
			if err != nil {
				ev = ev.Err(err)
			}
			ev.Msg("tool call")
			return res, err
		}
	}
}
