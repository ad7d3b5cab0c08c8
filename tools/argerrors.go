package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// argumentErrorMiddleware makes the SDK's own argument errors actionable.
// The SDK validates arguments against the input schema before a handler
// runs and answers with its validator's message (which names the offending
// property, e.g. `unexpected additional properties ["bogus"]`), but not
// what the tool accepts. This adds the tool name and its argument names.
// It must run inside callMetaMiddleware: a call whose handler never
// recorded a receipt is how it knows the SDK rejected the arguments.
func argumentErrorMiddleware(tools []Tool) mcp.Middleware {
	accepted := map[string][]string{}
	for _, t := range tools {
		if s, ok := t.Def.InputSchema.(*jsonschema.Schema); ok {
			names := make([]string, 0, len(s.Properties))
			for name := range s.Properties {
				names = append(names, name)
			}
			slices.Sort(names)
			accepted[t.Def.Name] = names
		}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "tools/call" || err != nil {
				return res, err
			}
			r, ok := res.(*mcp.CallToolResult)
			p, pok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || r == nil || !r.IsError || !pok || callMetaFrom(ctx).handlerRan() {
				return res, err
			}
			names, known := accepted[p.Name]
			if !known || len(r.Content) != 1 {
				return res, err
			}
			tc, ok := r.Content[0].(*mcp.TextContent)
			if !ok {
				return res, err
			}
			tc.Text = p.Name + ": invalid arguments: " + strings.TrimSuffix(tc.Text, ".") +
				". Accepted arguments: " + strings.Join(names, ", ") +
				" (the tool's inputSchema gives each one's type; its description has an example)."
			return res, err
		}
	}
}
