package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The CQL2-JSON subset this server evaluates:
//
//	logic:       and, or (one or more args), not (one arg)
//	comparison:  =  <>  <  <=  >  >=   (args: two operands)
//	             like (property, pattern with % and _), in (operand, [list]),
//	             between (operand, low, high), isNull (operand)
//	spatial:     s_intersects (geometry property, GeoJSON geometry or {"bbox": [...]})
//	temporal:    t_intersects (property, {"timestamp"}, {"date"} or {"interval": [a, b]})
//	operands:    {"property": name} (id, collection, datetime, geometry or
//	             any item property, "properties." prefix optional),
//	             strings, numbers, booleans, {"timestamp": ...}, {"date": ...}
//
// Anything else is answered with 400 naming the construct.
const cql2Accepted = "CQL2-JSON with ops and, or, not, =, <>, <, <=, >, >=, like, in, between, isNull, s_intersects, t_intersects"

// operand evaluates one side of a CQL2 expression for an item; ok is false
// when the item has no such property.
type operand func(*storedItem) (v any, ok bool)

func compileCQL2(filter any) (predicate, error) {
	raw, _ := json.Marshal(filter)
	p, err := compileBool(filter)
	if err != nil {
		return nil, badParam("filter", string(raw), cql2Accepted, err.Error())
	}
	return p, nil
}

func compileBool(expr any) (predicate, error) {
	obj, ok := expr.(map[string]any)
	if !ok {
		if b, isBool := expr.(bool); isBool {
			return func(*storedItem) bool { return b }, nil
		}
		return nil, fmt.Errorf("expected an expression object {\"op\":..., \"args\":[...]}, got %s", compactJSON(expr))
	}
	op, _ := obj["op"].(string)
	args, argsOK := obj["args"].([]any)
	if op == "" || !argsOK {
		return nil, fmt.Errorf("expected an expression object {\"op\":..., \"args\":[...]}, got %s", compactJSON(expr))
	}
	nargs := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%q takes %d args, got %d", op, n, len(args))
		}
		return nil
	}
	switch strings.ToLower(op) {
	case "and", "or":
		if len(args) == 0 {
			return nil, fmt.Errorf("%q needs at least one arg", op)
		}
		subs := make([]predicate, len(args))
		for i, a := range args {
			p, err := compileBool(a)
			if err != nil {
				return nil, err
			}
			subs[i] = p
		}
		if strings.ToLower(op) == "and" {
			return allOf(subs), nil
		}
		return func(it *storedItem) bool {
			for _, p := range subs {
				if p(it) {
					return true
				}
			}
			return false
		}, nil
	case "not":
		if err := nargs(1); err != nil {
			return nil, err
		}
		p, err := compileBool(args[0])
		if err != nil {
			return nil, err
		}
		return func(it *storedItem) bool { return !p(it) }, nil
	case "=", "<>", "<", "<=", ">", ">=":
		if err := nargs(2); err != nil {
			return nil, err
		}
		return compileComparison(op, args[0], args[1])
	case "like":
		return compileLike(args)
	case "in":
		return compileIn(args)
	case "between":
		if err := nargs(3); err != nil {
			return nil, err
		}
		return compileBetween(args)
	case "isnull":
		if err := nargs(1); err != nil {
			return nil, err
		}
		get, err := compileOperand(args[0])
		if err != nil {
			return nil, err
		}
		return func(it *storedItem) bool {
			v, ok := get(it)
			return !ok || v == nil
		}, nil
	case "s_intersects":
		if err := nargs(2); err != nil {
			return nil, err
		}
		return compileSIntersects(args)
	case "t_intersects":
		if err := nargs(2); err != nil {
			return nil, err
		}
		return compileTIntersects(args)
	}
	return nil, fmt.Errorf("operator %q is not in the supported subset", op)
}

func compileComparison(op string, left, right any) (predicate, error) {
	l, err := compileOperand(left)
	if err != nil {
		return nil, err
	}
	r, err := compileOperand(right)
	if err != nil {
		return nil, err
	}
	accept := map[string]func(int) bool{
		"=": func(c int) bool { return c == 0 }, "<>": func(c int) bool { return c != 0 },
		"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
		">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
	}[op]
	return func(it *storedItem) bool {
		a, okA := l(it)
		b, okB := r(it)
		if !okA || !okB || a == nil || b == nil {
			return false
		}
		c, ok := compareValues(a, b)
		return ok && accept(c)
	}, nil
}

// operandAndLiteral reads the two args of an operator whose second arg must
// be a literal of type T (described by want in the error): the first is
// compiled as an operand, the second checked and returned as it is.
func operandAndLiteral[T any](op string, args []any, want string) (operand, T, error) {
	var literal T
	if len(args) != 2 {
		return nil, literal, fmt.Errorf("%q takes 2 args, got %d", op, len(args))
	}
	get, err := compileOperand(args[0])
	if err != nil {
		return nil, literal, err
	}
	literal, ok := args[1].(T)
	if !ok {
		return nil, literal, fmt.Errorf("%q needs %s as its second arg, got %s", op, want, compactJSON(args[1]))
	}
	return get, literal, nil
}

func compileLike(args []any) (predicate, error) {
	get, pattern, err := operandAndLiteral[string]("like", args, "a string pattern")
	if err != nil {
		return nil, err
	}
	var re strings.Builder
	re.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '%':
			re.WriteString(".*")
		case '_':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	rx := regexp.MustCompile(re.String())
	return func(it *storedItem) bool {
		v, ok := get(it)
		s, isStr := v.(string)
		return ok && isStr && rx.MatchString(s)
	}, nil
}

func compileIn(args []any) (predicate, error) {
	get, list, err := operandAndLiteral[[]any]("in", args, "a list")
	if err != nil {
		return nil, err
	}
	values := make([]operand, len(list))
	for i, v := range list {
		if values[i], err = compileOperand(v); err != nil {
			return nil, err
		}
	}
	return func(it *storedItem) bool {
		v, ok := get(it)
		if !ok || v == nil {
			return false
		}
		for _, w := range values {
			if wv, _ := w(it); wv != nil {
				if c, ok := compareValues(v, wv); ok && c == 0 {
					return true
				}
			}
		}
		return false
	}, nil
}

func compileBetween(args []any) (predicate, error) {
	ops := make([]operand, 3)
	for i, a := range args {
		var err error
		if ops[i], err = compileOperand(a); err != nil {
			return nil, err
		}
	}
	return func(it *storedItem) bool {
		v, ok := ops[0](it)
		lo, okLo := ops[1](it)
		hi, okHi := ops[2](it)
		if !ok || !okLo || !okHi || v == nil {
			return false
		}
		c1, ok1 := compareValues(v, lo)
		c2, ok2 := compareValues(v, hi)
		return ok1 && ok2 && c1 >= 0 && c2 <= 0
	}, nil
}

// compileOperand compiles a property reference or a literal.
func compileOperand(v any) (operand, error) {
	switch v := v.(type) {
	case string, bool, json.Number, float64, nil:
		return func(*storedItem) (any, bool) { return v, true }, nil
	case map[string]any:
		if name, ok := v["property"].(string); ok && len(v) == 1 {
			return func(it *storedItem) (any, bool) { return itemValue(it, name) }, nil
		}
		if t, err := temporalLiteral(v); err == nil {
			// A timestamp compares as itself and a date as its first
			// instant; an interval only makes sense in t_intersects.
			if _, isInterval := v["interval"]; !isInterval {
				return func(*storedItem) (any, bool) { return t.start, true }, nil
			}
			return nil, fmt.Errorf("an interval can only be used with t_intersects, got %s", compactJSON(v))
		} else if isTemporalLiteral(v) {
			return nil, err
		}
		if _, isOp := v["op"]; isOp {
			return nil, fmt.Errorf("a nested expression %s is not accepted as an operand (arithmetic and functions are not in the subset)", compactJSON(v))
		}
	}
	return nil, fmt.Errorf("unsupported operand %s (use {\"property\": name}, a string, number, boolean, {\"timestamp\": ...} or {\"date\": ...})", compactJSON(v))
}

func isTemporalLiteral(v map[string]any) bool {
	_, ts := v["timestamp"]
	_, d := v["date"]
	_, iv := v["interval"]
	return ts || d || iv
}

// temporalLiteral parses {"timestamp"}, {"date"} (a whole day) or
// {"interval": [a, b]} ("..” for an open end).
func temporalLiteral(v map[string]any) (timeRange, error) {
	if len(v) != 1 {
		return timeRange{}, fmt.Errorf("not a temporal literal")
	}
	parseInstant := func(x any) (time.Time, time.Time, error) {
		s, _ := x.(string)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t, t, nil
		}
		if d, err := time.Parse(time.DateOnly, s); err == nil {
			return d, d.Add(24*time.Hour - time.Second), nil
		}
		return time.Time{}, time.Time{}, fmt.Errorf("%s is not an RFC 3339 timestamp or YYYY-MM-DD date", compactJSON(x))
	}
	if ts, ok := v["timestamp"]; ok {
		s, _ := ts.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return timeRange{}, fmt.Errorf("{\"timestamp\": %s} is not RFC 3339", compactJSON(ts))
		}
		return timeRange{start: t, end: t}, nil
	}
	if d, ok := v["date"]; ok {
		s, _ := d.(string)
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return timeRange{}, fmt.Errorf("{\"date\": %s} is not YYYY-MM-DD", compactJSON(d))
		}
		return timeRange{start: t, end: t.Add(24*time.Hour - time.Second)}, nil
	}
	if iv, ok := v["interval"].([]any); ok && len(iv) == 2 {
		var r timeRange
		for i, end := range iv {
			if s, _ := end.(string); s == ".." {
				continue
			}
			if m, isObj := end.(map[string]any); isObj {
				sub, err := temporalLiteral(m)
				if err != nil {
					return timeRange{}, err
				}
				end = sub.start.Format(time.RFC3339Nano)
				if i == 1 {
					end = sub.end.Format(time.RFC3339Nano)
				}
			}
			a, b, err := parseInstant(end)
			if err != nil {
				return timeRange{}, fmt.Errorf("interval end %d: %w", i, err)
			}
			if i == 0 {
				r.start = a
			} else {
				r.end = b
			}
		}
		return r, nil
	}
	return timeRange{}, fmt.Errorf("%s is not a timestamp, date or two-element interval", compactJSON(v))
}

func compileSIntersects(args []any) (predicate, error) {
	propIdx := -1
	for i, a := range args {
		if m, ok := a.(map[string]any); ok {
			if name, ok := m["property"].(string); ok {
				if name != "geometry" {
					return nil, fmt.Errorf("s_intersects works on {\"property\": \"geometry\"}, got property %q", name)
				}
				propIdx = i
			}
		}
	}
	if propIdx < 0 {
		return nil, fmt.Errorf("s_intersects needs {\"property\": \"geometry\"} as one arg")
	}
	lit, _ := args[1-propIdx].(map[string]any)
	var shapes []*shape
	if bbox, ok := lit["bbox"]; ok {
		b, err := numberList(bbox)
		if err != nil || (len(b) != 4 && len(b) != 6) {
			return nil, fmt.Errorf("s_intersects {\"bbox\": ...} needs 4 or 6 numbers, got %s", compactJSON(bbox))
		}
		shapes = shapesFromBBox(b)
	} else {
		g, err := geometryFromJSONValue(lit)
		if err != nil || lit == nil {
			return nil, fmt.Errorf("s_intersects needs a GeoJSON geometry or {\"bbox\": [...]}, got %s", compactJSON(args[1-propIdx]))
		}
		shapes = []*shape{newShape(g)}
	}
	return func(it *storedItem) bool {
		for _, s := range shapes {
			if it.shape.intersects(s) {
				return true
			}
		}
		return false
	}, nil
}

func compileTIntersects(args []any) (predicate, error) {
	var name string
	var lit map[string]any
	for _, a := range args {
		m, _ := a.(map[string]any)
		if p, ok := m["property"].(string); ok {
			name = p
		} else {
			lit = m
		}
	}
	if name == "" || lit == nil {
		return nil, fmt.Errorf("t_intersects needs a {\"property\": ...} and a temporal literal, got %s", compactJSON(args))
	}
	r, err := temporalLiteral(lit)
	if err != nil {
		return nil, err
	}
	return func(it *storedItem) bool {
		if name == "datetime" {
			return it.hasTime && r.overlaps(it.start, it.end)
		}
		v, ok := itemValue(it, name)
		t, isTime := asTime(v)
		return ok && isTime && r.overlaps(t, t)
	}, nil
}

// compactJSON renders v for error messages, trimmed to 200 bytes.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<" readable in messages about CQL2 operators
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
