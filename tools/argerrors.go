package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// argumentErrorMiddleware makes the SDK's own argument errors actionable.
// The SDK validates arguments against the input schema before a handler
// runs and answers with its validator's message, in the validator's words
// (`validating "arguments": validating root: validating
// /properties/max_items: maximum: 500/1 is greater than 100.000000`,
// `type: <invalid reflect.Value> has type "null"`). This says the same in
// plain words with the tool name (plainArgumentError), and adds the tool's
// argument names when the argument itself is unknown or the message could
// not be read.
// It must run inside callMetaMiddleware: a call whose handler never
// recorded a receipt is how it knows the SDK rejected the arguments.
func argumentErrorMiddleware(tools []Tool) mcp.Middleware {
	accepted := map[string][]string{}
	schemas := map[string]*jsonschema.Schema{}
	for _, t := range tools {
		if s, ok := t.Def.InputSchema.(*jsonschema.Schema); ok {
			schemas[t.Def.Name] = s
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
			if plain, ok := plainArgumentError(tc.Text, schemas[p.Name], p.Arguments); ok {
				tc.Text = p.Name + ": " + plain
				return res, err
			}
			raw := strings.TrimPrefix(strings.TrimPrefix(tc.Text, `validating "arguments": `), "validating root: ")
			tc.Text = p.Name + ": invalid arguments: " + strings.TrimSuffix(strings.ReplaceAll(raw, "<invalid reflect.Value>", "null"), ".") +
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

// validatorError reads the first line of a jsonschema-go message: the
// pointer of the schema that failed (its last "validating /..." part) and
// the keyword with its detail ("maximum", "500/1 is greater than ...").
var validatorError = regexp.MustCompile(`validating (/[^:\s]*): ([a-zA-Z]+)(?:\[[^\]]*\])?: (.*)$`)

// plainArgumentError says a schema validation failure as the tools' own
// argument errors say theirs: which argument, what was given, what is
// accepted, what to do. ok is false for a message it cannot read (the
// caller then shows the validator's, cleaned). The value shown is taken
// from the call's arguments, not from the message, which prints a JSON
// null as "<invalid reflect.Value>" and 500 as "500/1".
func plainArgumentError(msg string, schema *jsonschema.Schema, rawArgs json.RawMessage) (string, bool) {
	if schema == nil {
		return "", false
	}
	first, _, _ := strings.Cut(msg, "\n")
	m := validatorError.FindStringSubmatch(first)
	if m == nil {
		switch _, root, _ := strings.Cut(first, "validating root: "); {
		case strings.HasPrefix(root, "unexpected additional properties"):
			return unknownArguments(root, schema)
		case strings.HasPrefix(root, "required: missing properties: "):
			var missing []string
			for _, q := range quoted.FindAllString(root, -1) {
				if u, err := strconv.Unquote(q); err == nil {
					missing = append(missing, u)
				}
			}
			if len(missing) == 0 {
				return "", false
			}
			return "missing required argument " + strings.Join(missing, ", ") + "; the tool's description has an example.", true
		}
		return "", false
	}
	pointer, keyword, detail := m[1], m[2], m[3]
	rest, ok := strings.CutPrefix(pointer, "/properties/")
	if !ok {
		return "", false
	}
	name, sub, _ := strings.Cut(rest, "/")
	prop := schema.Properties[name]
	if prop == nil {
		return "", false
	}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(rawArgs, &args)
	given := strings.TrimSpace(string(args[name]))
	if sub != "" {
		// An item or member inside the argument: name the argument and say
		// what its parts take.
		what := name
		if sub == "items" {
			what = "an item of " + name
		}
		if keyword == "type" {
			if want := prop.Items; want != nil && sub == "items" {
				return fmt.Sprintf("%s is %s; each item takes %s. Received: %s.", what, typeInWords(jsonTypeOf(detail)), typesInWords(want), given), true
			}
		}
		return fmt.Sprintf("%s does not have an accepted form (%s: %s). Received: %s.", what, keyword, detail, given), true
	}
	advice := ""
	if d := prop.Description; d != "" {
		advice = " (" + name + ": " + d + ")"
	}
	switch keyword {
	case "maximum", "exclusiveMaximum":
		// The bound is read from the message: the schema the SDK checked
		// against is the registered one (max_items' ceiling is the
		// server's setting), not necessarily the inventory's.
		bound, ok := boundOf(detail)
		if !ok {
			return "", false
		}
		if name == "max_items" {
			next := "then page with the cursor the answer returns"
			if schema.Properties["cursor"] == nil {
				next = "or narrow the area, period or collections"
			}
			return fmt.Sprintf("max_items %s is above this server's ceiling %s (STAC_MCP_MAX_ITEMS_CEILING): "+
				"ask for at most %[2]s, %s.", given, bound, next), true
		}
		return fmt.Sprintf("%s %s is above the largest accepted value, %s%s.", name, given, bound, advice), true
	case "minimum", "exclusiveMinimum":
		bound, ok := boundOf(detail)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("%s %s is below the smallest accepted value, %s%s.", name, given, bound, advice), true
	case "type":
		got := jsonTypeOf(given)
		if got == "null" && name == "cursor" {
			return "cursor is null: leave cursor out to start a search from its first page, or give the cursor string a previous result returned.", true
		}
		if got == "null" {
			return fmt.Sprintf("%s is null, which this tool does not take for it: leave %[1]s out to use its default, or give %s%s.",
				name, typesInWords(prop), advice), true
		}
		return fmt.Sprintf("%s is %s (%s), but it takes %s%s.", name, typeInWords(got), given, typesInWords(prop), advice), true
	case "enum":
		var values []string
		for _, v := range prop.Enum {
			values = append(values, fmt.Sprint(v))
		}
		var g string
		suggestion := ""
		if json.Unmarshal(args[name], &g) == nil {
			if close := closestIDs(g, values); len(close) > 0 {
				suggestion = " (did you mean " + strings.Join(close, " or ") + "?)"
			}
		}
		return fmt.Sprintf("%s %s is not one of %s%s.", name, given, strings.Join(values, ", "), suggestion), true
	case "minItems", "maxItems", "minLength", "maxLength", "pattern":
		return fmt.Sprintf("%s %s does not have an accepted length or form (%s)%s.", name, given, strings.ReplaceAll(detail, "Unicode code points", "characters"), advice), true
	}
	return "", false
}

// unknownArguments says which arguments the tool does not have, with the
// closest name for each and the names it has.
func unknownArguments(line string, schema *jsonschema.Schema) (string, bool) {
	_, list, ok := strings.Cut(line, "unexpected additional properties ")
	var unknown []string
	for _, q := range quoted.FindAllString(list, -1) { // %q of a []string: ["a" "b"]
		if u, err := strconv.Unquote(q); err == nil {
			unknown = append(unknown, u)
		}
	}
	if !ok || len(unknown) == 0 {
		return "", false
	}
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, u := range unknown {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s is not an argument of this tool", u)
		if close := closestIDs(u, names); len(close) > 0 {
			fmt.Fprintf(&b, " (did you mean %s?)", strings.Join(close, " or "))
		}
	}
	fmt.Fprintf(&b, ". Accepted arguments: %s (the tool's inputSchema gives each one's type; its description has an example).", strings.Join(names, ", "))
	return b.String(), true
}

// jsonTypeOf is the JSON type of a value written as JSON ("" when it does
// not parse); a whole number is "integer".
func jsonTypeOf(raw string) string {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		if t := validatorType.FindStringSubmatch(raw); t != nil {
			return t[1] // a validator detail: `5 has type "integer", want ...`
		}
		return ""
	}
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// quoted is a Go-quoted string.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// boundOf reads the bound at the end of a validator's "is greater than
// 100.000000".
func boundOf(detail string) (string, bool) {
	fields := strings.Fields(detail)
	if len(fields) == 0 {
		return "", false
	}
	f, err := strconv.ParseFloat(fields[len(fields)-1], 64)
	if err != nil {
		return "", false
	}
	return number(f), true
}

var validatorType = regexp.MustCompile(`has type "([a-z]+)"`)

var typeWords = map[string]string{
	"null": "null", "boolean": "true or false", "integer": "a whole number", "number": "a number",
	"string": "a string", "array": "a list", "object": "an object",
}

func typeInWords(t string) string {
	if w, ok := typeWords[t]; ok {
		return w
	}
	return "a value of another type"
}

// typesInWords lists the types s accepts other than null: "a list or a
// string".
func typesInWords(s *jsonschema.Schema) string {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	var words []string
	for _, t := range types {
		if t != "null" {
			words = append(words, typeInWords(t))
		}
	}
	if len(words) == 0 {
		return "another value"
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// number writes a schema bound without a needless ".000000".
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
