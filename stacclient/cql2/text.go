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

func writeObject(b *strings.Builder, x map[string]any, depth int) error {
	if p, ok := x["property"]; ok && len(x) == 1 {
		name, isStr := p.(string)
		if !isStr || name == "" || strings.Contains(name, `"`) {
			return fmt.Errorf("property name %s cannot be written in CQL2 text", compact(p))
		}
		b.WriteString(`"` + name + `"`)
		return nil
	}
	for _, k := range []string{"date", "timestamp"} {
		if s, ok := x[k].(string); ok && len(x) == 1 {
			b.WriteString(strings.ToUpper(k) + "(")
			if err := writeString(b, s); err != nil {
				return err
			}
			b.WriteString(")")
			return nil
		}
	}
	if iv, ok := x["interval"].([]any); ok && len(x) == 1 {
		if len(iv) != 2 {
			return fmt.Errorf("an interval has 2 ends, got %s", compact(x))
		}
		b.WriteString("INTERVAL(")
		for i, e := range iv {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeText(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteString(")")
		return nil
	}
	if bb, ok := x["bbox"].([]any); ok && len(x) == 1 {
		b.WriteString("BBOX(")
		for i, n := range bb {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeNumber(b, n); err != nil {
				return fmt.Errorf("bbox: %w", err)
			}
		}
		b.WriteString(")")
		return nil
	}
	if _, ok := x["type"]; ok {
		return writeWKT(b, x)
	}
	op, isStr := x["op"].(string)
	args, isList := x["args"].([]any)
	if !isStr || !isList {
		return fmt.Errorf("not a CQL2 expression: %s", compact(x))
	}
	arg := func(i int) error { return writeText(b, args[i], depth+1) }
	lower := strings.ToLower(op)
	switch {
	case (lower == "and" || lower == "or") && len(args) >= 2: // the JSON schema's minItems
		b.WriteString("(")
		for i := range args {
			if i > 0 {
				b.WriteString(" " + strings.ToUpper(lower) + " ")
			}
			if err := arg(i); err != nil {
				return err
			}
		}
		b.WriteString(")")
		return nil
	case lower == "not" && len(args) == 1:
		b.WriteString("NOT ")
		if err := arg(0); err != nil {
			return err
		}
		// NOT binds tighter than comparisons in the grammar only when its
		// operand is parenthesized, which every operation written here is;
		// a bare literal or property needs no more.
		return nil
	case infixText[lower] != "" && len(args) == 2:
		b.WriteString("(")
		if err := arg(0); err != nil {
			return err
		}
		b.WriteString(" " + infixText[lower] + " ")
		if err := arg(1); err != nil {
			return err
		}
		b.WriteString(")")
		return nil
	case lower == "between" && len(args) == 3:
		b.WriteString("(")
		if err := arg(0); err != nil {
			return err
		}
		b.WriteString(" BETWEEN ")
		if err := arg(1); err != nil {
			return err
		}
		b.WriteString(" AND ")
		if err := arg(2); err != nil {
			return err
		}
		b.WriteString(")")
		return nil
	case lower == "in" && len(args) == 2:
		if _, ok := args[1].([]any); !ok {
			return fmt.Errorf("in needs a list as its second arg, got %s", compact(args[1]))
		}
		b.WriteString("(")
		if err := arg(0); err != nil {
			return err
		}
		b.WriteString(" IN ")
		if err := arg(1); err != nil {
			return err
		}
		b.WriteString(")")
		return nil
	case lower == "isnull" && len(args) == 1:
		b.WriteString("(")
		if err := arg(0); err != nil {
			return err
		}
		b.WriteString(" IS NULL)")
		return nil
	}
	if infixText[lower] != "" || lower == "between" || lower == "in" || lower == "isnull" || lower == "not" || lower == "and" || lower == "or" {
		return fmt.Errorf("%q with %d args is not CQL2", op, len(args))
	}
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
	b.WriteString(name + "(")
	for i := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := arg(i); err != nil {
			return err
		}
	}
	b.WriteString(")")
	return nil
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
