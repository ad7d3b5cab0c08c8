package tools

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools/internal/mapview"
)

// instructionsTemplate tells the model the recommended order of the tools
// and explains the arguments they share, once; it is prose, so it lives in
// Markdown rather than in a Go string, as a template that mentions only
// the tools a server lists.
//
//go:embed instructions.md
var instructionsTemplate string

var instructionsTmpl = template.Must(template.New("instructions").Funcs(template.FuncMap{
	"has":            func(string) bool { return false },
	"any":            func(...string) bool { return false },
	"writeTools":     func() []string { return nil },
	"areaTools":      func() []string { return nil },
	"cloudTools":     func() []string { return nil },
	"federatedTools": func() []string { return nil },
}).Parse(instructionsTemplate))

// Instructions returns the server instructions sent at initialize for a
// server listing tools: only those tools are mentioned.
func Instructions(tools []Tool) string {
	enabled := map[string]bool{}
	var writes, areas, clouds, federated []string
	for _, t := range tools {
		enabled[t.Def.Name] = true
		if t.Toolset == ToolsetWrite {
			writes = append(writes, t.Def.Name)
		}
		if t.Aliases["bbox"] == "aoi" { // the tools of AreaSearch
			areas = append(areas, t.Def.Name)
		}
		if s, ok := t.Def.InputSchema.(*jsonschema.Schema); ok && s.Properties["max_cloud_cover"] != nil {
			clouds = append(clouds, t.Def.Name)
		}
		if s, ok := t.Def.InputSchema.(*jsonschema.Schema); ok && s.Properties["catalog_url"] != nil && slices.Contains(s.Properties["catalog_url"].Types, "array") {
			federated = append(federated, t.Def.Name) // CatalogsArg: several catalogs at once
		}
	}
	tmpl := template.Must(instructionsTmpl.Clone()).Funcs(template.FuncMap{
		"has": func(name string) bool { return enabled[name] },
		"any": func(names ...string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return enabled[n] })
		},
		"writeTools":     func() []string { return writes },
		"areaTools":      func() []string { return areas },
		"cloudTools":     func() []string { return clouds },
		"federatedTools": func() []string { return federated },
	})
	var b strings.Builder
	if err := tmpl.Execute(&b, nil); err != nil {
		panic(fmt.Sprintf("instructions.md: %v", err)) // a template bug, caught by the tests
	}
	return strings.TrimSpace(b.String())
}

// ServerName is the MCP implementation name.
const ServerName = "stac-mcp"

// NewServer builds the MCP server with Tools(d) registered: the inventory
// (and the write tools when d.Writes is set), narrowed by d.Surface.
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
		Instructions: Instructions(tools),
		Logger:       reliability.NewSlogLogger(d.Logger.With().Str("component", "mcp").Logger()),
		// Declared explicitly: the tool set is fixed at start-up, so there
		// is no listChanged, and no logging capability because stderr is
		// our log channel (client logging is deprecated in 2026-07-28).
		// The MCP Apps extension (the map view, mapview.go) is declared
		// as SEP-1724 extensions are.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{}, Prompts: &mcp.PromptCapabilities{},
			Extensions: map[string]any{mapview.Extension: map[string]any{}}},
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
	if slices.ContainsFunc(tools, func(t Tool) bool { return t.Def.Name == "export" }) {
		registerExportResource(s, d)
	}
	registerMapView(s)
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
