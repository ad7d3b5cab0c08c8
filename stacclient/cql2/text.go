package cql2

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ToText writes a CQL2-JSON expression as CQL2 text. Every operation is
// parenthesized and every property name double-quoted, so the text parses
// back (ParseText) to the same expression whatever the precedence rules or
// names. An expression that is not CQL2-JSON is an error naming the part.
func ToText(expr any) (string, error) {
	var b strings.Builder
	if err := writeText(&b, expr, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// maxDepth bounds the nesting accepted from a request (parsing and
// rendering are recursive).
const maxDepth = 200

var infixText = map[string]string{
	"=": "=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
	"+": "+", "-": "-", "*": "*", "/": "/", "%": "%", "div": "div", "^": "^", "like": "LIKE",
}

func writeText(b *strings.Builder, v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("the expression is nested more than %d levels deep", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return fmt.Errorf("null is not a CQL2 value")
	case bool:
		if x {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case json.Number:
		b.WriteString(x.String())
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		b.WriteString(strconv.Itoa(x))
	case string:
		return writeString(b, x)
	case []any:
		b.WriteString("(")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeText(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteString(")")
	case map[string]any:
		return writeObject(b, x, depth)
	default:
		return fmt.Errorf("unsupported value %v (%T)", v, v)
	}
	return nil
}

// writeString writes a character literal. A quote is doubled, except
// after a backslash, where "\'" would itself read as an escaped quote:
// there it is written \' (the backslash stays a backslash, \' is the
// quote). A string ending in a backslash cannot be written: the closing
// quote would read as escaped (the BNF's escapeQuote).
func writeString(b *strings.Builder, s string) error {
	if strings.HasSuffix(s, `\`) {
		return fmt.Errorf("the string %q ends in a backslash, which CQL2 text cannot hold before the closing quote", s)
	}
	b.WriteString("'")
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'' && i > 0 && s[i-1] == '\\':
			b.WriteString(`\'`)
		case s[i] == '\'':
			b.WriteString("''")
		default:
			b.WriteByte(s[i])
		}
	}
	b.WriteString("'")
	return nil
}

// writeObject writes a JSON object of CQL2: a literal object (a property,
// a date or timestamp, an interval, a bbox, a GeoJSON geometry) or an
// operation ({"op", "args"}).
func writeObject(b *strings.Builder, x map[string]any, depth int) error {
	if done, err := writeLiteralObject(b, x, depth); done {
		return err
	}
	if _, ok := x["type"]; ok {
		return writeWKT(b, x)
	}
	op, isStr := x["op"].(string)
	args, isList := x["args"].([]any)
	if !isStr || !isList {
		return fmt.Errorf("not a CQL2 expression: %s", compact(x))
	}
	if done, err := writeOperator(b, op, args, depth); done {
		return err
	}
	return writeFunction(b, op, args, depth)
}

// writeLiteralObject writes the one-member objects that are literals or
// property references; done is false for any other object.
func writeLiteralObject(b *strings.Builder, x map[string]any, depth int) (done bool, err error) {
	if len(x) != 1 {
		return false, nil
	}
	if p, ok := x["property"]; ok {
		name, isStr := p.(string)
		if !isStr || name == "" || strings.Contains(name, `"`) {
			return true, fmt.Errorf("property name %s cannot be written in CQL2 text", compact(p))
		}
		b.WriteString(`"` + name + `"`)
		return true, nil
	}
	for _, k := range []string{"date", "timestamp"} {
		if s, ok := x[k].(string); ok {
			b.WriteString(strings.ToUpper(k) + "(")
			if err := writeString(b, s); err != nil {
				return true, err
			}
			b.WriteString(")")
			return true, nil
		}
	}
	if iv, ok := x["interval"].([]any); ok {
		if len(iv) != 2 {
			return true, fmt.Errorf("an interval has 2 ends, got %s", compact(x))
		}
		return true, writeParts(b, depth, textPart("INTERVAL("), iv[0], textPart(", "), iv[1], textPart(")"))
	}
	if bb, ok := x["bbox"].([]any); ok {
		b.WriteString("BBOX(")
		for i, n := range bb {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeNumber(b, n); err != nil {
				return true, fmt.Errorf("bbox: %w", err)
			}
		}
		b.WriteString(")")
		return true, nil
	}
	return false, nil
}

// textPart is text writeParts writes as it is, not as a CQL2 literal.
type textPart string

// writeParts writes each textPart as it is and every other part as a CQL2
// operand, depth+1.
func writeParts(b *strings.Builder, depth int, parts ...any) error {
	for _, p := range parts {
		if t, ok := p.(textPart); ok {
			b.WriteString(string(t))
			continue
		}
		if err := writeText(b, p, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// writeOperator writes the operations CQL2 text spells with keywords or
// symbols (and, or, not, comparisons and arithmetic, between, in, is
// null), parenthesized; done is false for a function call. An operator
// with the wrong number of arguments is an error.
func writeOperator(b *strings.Builder, op string, args []any, depth int) (done bool, err error) {
	lower := strings.ToLower(op)
	switch {
	case (lower == "and" || lower == "or") && len(args) >= 2: // the JSON schema's minItems
		parts := []any{textPart("(")}
		for i, a := range args {
			if i > 0 {
				parts = append(parts, textPart(" "+strings.ToUpper(lower)+" "))
			}
			parts = append(parts, a)
		}
		return true, writeParts(b, depth, append(parts, textPart(")"))...)
	case lower == "not" && len(args) == 1:
		// NOT binds tighter than comparisons in the grammar only when its
		// operand is parenthesized, which every operation written here is;
		// a bare literal or property needs no more.
		return true, writeParts(b, depth, textPart("NOT "), args[0])
	case infixText[lower] != "" && len(args) == 2:
		return true, writeParts(b, depth, textPart("("), args[0], textPart(" "+infixText[lower]+" "), args[1], textPart(")"))
	case lower == "between" && len(args) == 3:
		return true, writeParts(b, depth, textPart("("), args[0], textPart(" BETWEEN "), args[1], textPart(" AND "), args[2], textPart(")"))
	case lower == "in" && len(args) == 2:
		if _, ok := args[1].([]any); !ok {
			return true, fmt.Errorf("in needs a list as its second arg, got %s", compact(args[1]))
		}
		return true, writeParts(b, depth, textPart("("), args[0], textPart(" IN "), args[1], textPart(")"))
	case lower == "isnull" && len(args) == 1:
		return true, writeParts(b, depth, textPart("("), args[0], textPart(" IS NULL)"))
	}
	if infixText[lower] != "" || lower == "between" || lower == "in" || lower == "isnull" || lower == "not" || lower == "and" || lower == "or" {
		return true, fmt.Errorf("%q with %d args is not CQL2", op, len(args))
	}
	return false, nil
}

// writeFunction writes a function call: the standard functions in upper
// case, any other name as it is when CQL2 text can hold it.
func writeFunction(b *strings.Builder, op string, args []any, depth int) error {
	lower := strings.ToLower(op)
	if !validFunctionName(op) {
		return fmt.Errorf("%q is not a function name CQL2 text can hold", op)
	}
	name := op
	if _, ok := functionOps[lower]; ok {
		name = strings.ToUpper(lower)
	}
	if _, isArrayFn := arrayOps[lower]; isArrayFn {
		for _, a := range args {
			if m, ok := a.(map[string]any); ok && infixText[strings.ToLower(fmt.Sprint(m["op"]))] != "" {
				return fmt.Errorf("an operand of %s is an array, a property or a function (BNF arrayOperand), not %s", op, compact(a))
			}
		}
	}
	parts := []any{textPart(name + "(")}
	for i, a := range args {
		if i > 0 {
			parts = append(parts, textPart(", "))
		}
		parts = append(parts, a)
	}
	return writeParts(b, depth, append(parts, textPart(")"))...)
}

func validFunctionName(s string) bool {
	for i, r := range s {
		if i == 0 && !identStart(r) || i > 0 && !identPart(r) {
			return false
		}
	}
	return s != ""
}

func writeNumber(b *strings.Builder, n any) error {
	switch n := n.(type) {
	case json.Number:
		b.WriteString(n.String())
	case float64:
		b.WriteString(strconv.FormatFloat(n, 'g', -1, 64))
	default:
		return fmt.Errorf("%s is not a number", compact(n))
	}
	return nil
}

var wktNames = map[string]string{}

func init() {
	for k, v := range geometryKeywords {
		wktNames[v] = k
	}
}

func writeWKT(b *strings.Builder, g map[string]any) error {
	typ, _ := g["type"].(string)
	name, ok := wktNames[typ]
	if !ok {
		return fmt.Errorf("%s is not a GeoJSON geometry", compact(g))
	}
	b.WriteString(name)
	if typ == "GeometryCollection" {
		geoms, _ := g["geometries"].([]any)
		if len(geoms) == 0 {
			return fmt.Errorf("a GeometryCollection needs geometries")
		}
		b.WriteString("(")
		for i, sub := range geoms {
			if i > 0 {
				b.WriteString(", ")
			}
			m, ok := sub.(map[string]any)
			if !ok {
				return fmt.Errorf("%s is not a GeoJSON geometry", compact(sub))
			}
			if err := writeWKT(b, m); err != nil {
				return err
			}
		}
		b.WriteString(")")
		return nil
	}
	depth := map[string]int{"Point": 0, "LineString": 1, "MultiPoint": 1, "Polygon": 2, "MultiLineString": 2, "MultiPolygon": 3}[typ]
	if hasZ(g["coordinates"], depth) {
		b.WriteString(" Z")
	}
	b.WriteString(" ")
	return writeCoords(b, g["coordinates"], depth, typ == "MultiPoint")
}

func hasZ(c any, depth int) bool {
	for ; depth > 0; depth-- {
		list, _ := c.([]any)
		if len(list) == 0 {
			return false
		}
		c = list[0]
	}
	pos, _ := c.([]any)
	return len(pos) == 3
}

func writeCoords(b *strings.Builder, c any, depth int, multiPoint bool) error {
	list, ok := c.([]any)
	if !ok || len(list) == 0 {
		return fmt.Errorf("bad GeoJSON coordinates %s", compact(c))
	}
	if depth == 0 {
		b.WriteString("(")
		err := writePosition(b, list)
		b.WriteString(")")
		return err
	}
	b.WriteString("(")
	for i, e := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		var err error
		if depth == 1 && !multiPoint {
			pos, _ := e.([]any)
			err = writePosition(b, pos)
		} else {
			err = writeCoords(b, e, depth-1, false)
		}
		if err != nil {
			return err
		}
	}
	b.WriteString(")")
	return nil
}

func writePosition(b *strings.Builder, pos []any) error {
	if len(pos) < 2 || len(pos) > 3 {
		return fmt.Errorf("a position has 2 or 3 numbers, got %s", compact(pos))
	}
	for i, n := range pos {
		if i > 0 {
			b.WriteString(" ")
		}
		if err := writeNumber(b, n); err != nil {
			return err
		}
	}
	return nil
}

// compact renders v for error messages, trimmed to 200 bytes.
func compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(b.String())
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// sortedKeys is for deterministic messages.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
