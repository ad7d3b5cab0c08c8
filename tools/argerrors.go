package tools

import (
	"context"
	"encoding/json"
	"fmt"
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

// argumentAliasMiddleware renames the older argument names a tool still
// accepts (Tool.Aliases) to the names its schema lists, before the SDK
// validates the arguments: old calls keep working without the schema
// advertising two ways to say one thing. Naming one argument twice (an
// alias and its target, or two aliases of it) is refused with what to send
// instead. A null alias counts as absent.
func argumentAliasMiddleware(tools []Tool) mcp.Middleware {
	aliases := map[string]map[string]string{}
	for _, t := range tools {
		if len(t.Aliases) > 0 {
			aliases[t.Def.Name] = t.Aliases
		}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if method != "tools/call" || !ok || aliases[p.Name] == nil {
				return next(ctx, method, req)
			}
			renamed, err := renameAliases(p.Arguments, aliases[p.Name])
			if err != nil {
				res := &mcp.CallToolResult{}
				res.SetError(fmt.Errorf("%s: %w", p.Name, err))
				return res, nil
			}
			p.Arguments = renamed
			return next(ctx, method, req)
		}
	}
}

// renameAliases moves each alias in args to its target name; args that
// are not a JSON object are left to the SDK's validation.
func renameAliases(args json.RawMessage, aliases map[string]string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return args, nil //nolint:nilerr // not a JSON object: the SDK's validation reports it
	}
	changed := false
	givenAs := map[string]string{} // target → the name it was given under
	for name := range m {
		if _, isAlias := aliases[name]; !isAlias {
			givenAs[name] = name
		}
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic messages
	for _, name := range names {
		target, isAlias := aliases[name]
		if !isAlias {
			continue
		}
		value := m[name]
		delete(m, name)
		changed = true
		if strings.TrimSpace(string(value)) == "null" {
			continue
		}
		if first, dup := givenAs[target]; dup {
			return nil, fmt.Errorf("%s was given twice, as %s and as %s; send it once, as %s (%s)",
				target, first, name, target, aliasNames(aliases, target))
		}
		givenAs[target] = name
		m[target] = value
	}
	if !changed {
		return args, nil
	}
	return json.Marshal(m)
}

// aliasNames says which older names a target has.
func aliasNames(aliases map[string]string, target string) string {
	var names []string
	for alias, t := range aliases {
		if t == target {
			names = append(names, alias)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ") + " are older names for it"
}
