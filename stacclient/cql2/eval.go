package cql2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/peterstace/simplefeatures/geom"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Record is what a filter is evaluated against: Property returns the value
// of a queryable (as decoded JSON, or a time.Time, an Interval or a
// geom.Geometry), ok false when the record has none. A missing property
// and a JSON null are both NULL.
type Record interface {
	Property(name string) (v any, ok bool)
}

// Interval is a temporal extent a Record may return for a property (a STAC
// item's start_datetime/end_datetime, say); a zero end is open.
type Interval struct {
	Start, End time.Time
}

// Filter is a compiled CQL2 expression.
type Filter struct {
	eval evalFn
}

// Match reports whether the filter is TRUE for r: FALSE and NULL both
// leave the record out (OGC 21-065 §6).
func (f *Filter) Match(r Record) bool { return f.eval(r) == true }

// Eval returns the filter's value for r: true, false, or nil for NULL
// (or another value, for an expression that is not a predicate).
func (f *Filter) Eval(r Record) any { return f.eval(r) }

// evalFn computes one node for a record. Values are nil (NULL), bool,
// float64, string, instant, interval, geom.Geometry, []any, or a decoded
// JSON object (incomparable).
type evalFn func(Record) any

// instant is a timestamp, or a date (day granularity, t at 00:00 UTC).
type instant struct {
	t    time.Time
	date bool
}

// bound is an interval end: inf is -1 or +1 for an open end.
type bound struct {
	at  instant
	inf int
}

type interval struct{ start, end bound }

// ParseJSON decodes a CQL2-JSON document (numbers kept as json.Number).
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("CQL2 JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("CQL2 JSON: more than one JSON value")
	}
	return v, nil
}

// CompileError is a CQL2-JSON expression this package cannot evaluate.
type CompileError struct{ Msg string }

func (e *CompileError) Error() string { return e.Msg }

func compileErr(format string, a ...any) error {
	return &CompileError{Msg: fmt.Sprintf(format, a...)}
}

// Compile checks a CQL2-JSON expression and prepares it for evaluation.
// Unknown operators and functions, wrong argument counts and malformed
// literals are errors that name the part.
func Compile(expr any) (*Filter, error) {
	fn, err := compile(expr, 0)
	if err != nil {
		return nil, err
	}
	return &Filter{eval: fn}, nil
}

func constant(v any) evalFn { return func(Record) any { return v } }

func compile(expr any, depth int) (evalFn, error) {
	if depth > maxDepth {
		return nil, compileErr("the expression is nested more than %d levels deep", maxDepth)
	}
	switch x := expr.(type) {
	case nil:
		return nil, compileErr("null is not a CQL2 expression or value")
	case bool, string:
		return constant(x), nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, compileErr("%s is not a number", x)
		}
		return constant(f), nil
	case float64:
		return constant(x), nil
	case int:
		return constant(float64(x)), nil
	case []any:
		elems := make([]evalFn, len(x))
		for i, e := range x {
			var err error
			if elems[i], err = compile(e, depth+1); err != nil {
				return nil, err
			}
		}
		return func(r Record) any {
			out := make([]any, len(elems))
			for i, e := range elems {
				out[i] = e(r)
			}
			return out
		}, nil
	case map[string]any:
		return compileObject(x, depth)
	}
	return nil, compileErr("unsupported value %v (%T)", expr, expr)
}

func compileObject(x map[string]any, depth int) (evalFn, error) {
	if p, ok := x["property"]; ok && len(x) == 1 {
		name, isStr := p.(string)
		if !isStr || name == "" {
			return nil, compileErr("a property name is a non-empty string, got %s", compact(p))
		}
		return func(r Record) any {
			v, ok := r.Property(name)
			if !ok {
				return nil
			}
			return fromJSON(v)
		}, nil
	}
	if v, ok := x["date"]; ok && len(x) == 1 {
		s, _ := v.(string)
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, compileErr("{\"date\": %s} is not a date YYYY-MM-DD", compact(v))
		}
		return constant(instant{t: t, date: true}), nil
	}
	if v, ok := x["timestamp"]; ok && len(x) == 1 {
		s, _ := v.(string)
		t, err := parseTimestamp(s)
		if err != nil {
			return nil, compileErr("{\"timestamp\": %s} is not an RFC 3339 timestamp such as 2020-01-02T03:04:05Z", compact(v))
		}
		return constant(instant{t: t}), nil
	}
	if v, ok := x["interval"]; ok && len(x) == 1 {
		return compileInterval(v, depth)
	}
	if v, ok := x["bbox"]; ok && len(x) == 1 {
		g, err := bboxGeometry(v)
		if err != nil {
			return nil, err
		}
		return constant(g), nil
	}
	if _, ok := x["type"]; ok {
		if _, isOp := x["op"]; !isOp {
			g, err := geometryFromMap(x)
			if err != nil {
				return nil, compileErr("%s is not a valid GeoJSON geometry: %v", compact(x), err)
			}
			return constant(g), nil
		}
	}
	op, isStr := x["op"].(string)
	rawArgs, isList := x["args"].([]any)
	if !isStr || !isList {
		return nil, compileErr("expected a property {\"property\": name}, a literal or an operation {\"op\": ..., \"args\": [...]}, got %s", compact(x))
	}
	for _, k := range sortedKeys(x) {
		if k != "op" && k != "args" {
			return nil, compileErr("unexpected member %q in %s", k, compact(x))
		}
	}
	return compileOp(op, rawArgs, depth)
}

// Operators holds the operators and functions Compile evaluates, as
// written in CQL2 JSON, for messages.
const Operators = "and, or, not, =, <>, <, <=, >, >=, like, between, in, isNull, casei, accenti, " +
	"+, -, *, /, %, div, ^, s_intersects, s_equals, s_disjoint, s_touches, s_within, s_overlaps, s_crosses, s_contains, " +
	"t_after, t_before, t_contains, t_disjoint, t_during, t_equals, t_finishedby, t_finishes, t_intersects, t_meets, " +
	"t_metby, t_overlappedby, t_overlaps, t_startedby, t_starts, a_equals, a_contains, a_containedby, a_overlaps"

func compileOp(op string, rawArgs []any, depth int) (evalFn, error) {
	lower := strings.ToLower(op)
	if lower == "isnull" {
		lower = "isNull"
	}
	if err := checkArity(op, lower, rawArgs); err != nil {
		return nil, err
	}
	if err := checkLiteralArgs(op, lower, rawArgs); err != nil {
		return nil, err
	}
	args := make([]evalFn, len(rawArgs))
	for i, a := range rawArgs {
		var err error
		if args[i], err = compile(a, depth+1); err != nil {
			return nil, err
		}
	}
	if fn := opFunc(lower, rawArgs, args); fn != nil {
		return fn, nil
	}
	return nil, compileErr("operator %q is not supported", op)
}

// checkArity refuses an operator this evaluator does not know, or one
// called with the wrong number of arguments (and "in" without a list).
// lower is op in lower case ("isNull" kept in its CQL2 spelling).
func checkArity(op, lower string, rawArgs []any) error {
	var want int
	switch {
	case lower == "and" || lower == "or":
		if len(rawArgs) == 0 {
			return compileErr("%q needs at least one arg", op)
		}
		return nil
	case lower == "not" || lower == "isNull" || lower == "casei" || lower == "accenti":
		want = 1
	case lower == "between":
		want = 3
	case comparisonOps[lower], arithmeticOps[lower] != nil, lower == "like", lower == "in",
		spatialOps[lower] != nil, temporalOps[lower] != nil, arrayOps[lower] != nil:
		want = 2
	default:
		return compileErr("function %q is not supported here (supported: %s)", op, Operators)
	}
	if len(rawArgs) != want {
		return compileErr("%q takes %d args, got %d", op, want, len(rawArgs))
	}
	if lower == "in" {
		if _, ok := rawArgs[1].([]any); !ok {
			return compileErr("\"in\" needs a list as its second arg, got %s", compact(rawArgs[1]))
		}
	}
	return nil
}

// opFunc is the evaluation of a checked operator over its compiled
// arguments (rawArgs are the same arguments before compilation, for the
// spatial operators' envelope shortcut); nil for an operator it does not
// know.
func opFunc(lower string, rawArgs []any, args []evalFn) evalFn {
	switch {
	case lower == "and" || lower == "or" || lower == "not" || lower == "isNull":
		return logicalOp(lower, args)
	case comparisonOps[lower]:
		return comparisonOp(comparisonAccept[lower], args)
	case lower == "between":
		return betweenOp(args)
	case lower == "in":
		return inOp(args)
	case lower == "like" || lower == "casei" || lower == "accenti":
		return textOp(lower, args)
	case arithmeticOps[lower] != nil:
		return arithmeticOp(arithmeticOps[lower], args)
	case spatialOps[lower] != nil:
		return spatialOp(lower, spatialOps[lower], rawArgs, args)
	case temporalOps[lower] != nil:
		rel := temporalOps[lower]
		return func(r Record) any {
			a, okA := toInterval(args[0](r))
			b, okB := toInterval(args[1](r))
			if !okA || !okB {
				return nil
			}
			return rel(a, b)
		}
	case arrayOps[lower] != nil:
		rel := arrayOps[lower]
		return func(r Record) any {
			a, okA := args[0](r).([]any)
			b, okB := args[1](r).([]any)
			if !okA || !okB {
				return nil
			}
			return rel(a, b)
		}
	}
	return nil
}

// logicalOp is and, or, not and isNull in three-valued logic: NULL (nil)
// where a SQL engine would answer unknown.
func logicalOp(lower string, args []evalFn) evalFn {
	switch lower {
	case "and":
		return func(r Record) any {
			result := any(true)
			for _, a := range args {
				switch truth(a(r)) {
				case false:
					return false
				case nil:
					result = nil
				}
			}
			return result
		}
	case "or":
		return func(r Record) any {
			result := any(false)
			for _, a := range args {
				switch truth(a(r)) {
				case true:
					return true
				case nil:
					result = nil
				}
			}
			return result
		}
	case "not":
		return func(r Record) any {
			switch truth(args[0](r)) {
			case true:
				return false
			case false:
				return true
			}
			return nil
		}
	}
	return func(r Record) any { return args[0](r) == nil } // isNull
}

// comparisonOp is =, <>, <, <=, > and >=: accept reads the comparison's
// sign; values that cannot be compared are NULL.
func comparisonOp(accept func(int) bool, args []evalFn) evalFn {
	return func(r Record) any {
		c, ok := compareValues(args[0](r), args[1](r))
		if !ok {
			return nil
		}
		return accept(c)
	}
}

// betweenOp is "between": both bounds included.
func betweenOp(args []evalFn) evalFn {
	return func(r Record) any {
		v := args[0](r)
		lo, okLo := compareValues(v, args[1](r))
		hi, okHi := compareValues(v, args[2](r))
		return and3(tri(okLo, lo >= 0), tri(okHi, hi <= 0))
	}
}

// inOp is "in": true when a member of the list equals the value, NULL when
// none does but one could not be compared.
func inOp(args []evalFn) evalFn {
	list := args[1]
	return func(r Record) any {
		v := args[0](r)
		if v == nil {
			return nil
		}
		result := any(false)
		for _, w := range list(r).([]any) {
			c, ok := compareValues(v, w)
			switch {
			case ok && c == 0:
				return true
			case !ok:
				result = nil
			}
		}
		return result
	}
}

// textOp is like, casei and accenti; a value that is not a string is NULL.
func textOp(lower string, args []evalFn) evalFn {
	switch lower {
	case "like":
		return func(r Record) any {
			s, okS := args[0](r).(string)
			p, okP := args[1](r).(string)
			if !okS || !okP {
				return nil
			}
			return likeMatch(s, p)
		}
	case "casei":
		fold := cases.Fold()
		return func(r Record) any {
			s, ok := args[0](r).(string)
			if !ok {
				return nil
			}
			return fold.String(s)
		}
	}
	return func(r Record) any { // accenti
		s, ok := args[0](r).(string)
		if !ok {
			return nil
		}
		return stripAccents(s)
	}
}

// arithmeticOp is +, -, *, /, %, div and ^ on numbers; a result that is
// not a finite number (a division by zero) is NULL.
func arithmeticOp(f func(a, b float64) float64, args []evalFn) evalFn {
	return func(r Record) any {
		a, okA := args[0](r).(float64)
		b, okB := args[1](r).(float64)
		if !okA || !okB {
			return nil
		}
		v := f(a, b)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil // division by zero and the like are NULL
		}
		return v
	}
}

// spatialOp is the s_* relations. Envelopes that do not meet decide every
// relation without reading the record's geometry (the costly part).
func spatialOp(lower string, rel func(a, b geom.Geometry) (bool, error), rawArgs []any, args []evalFn) evalFn {
	bounds := [2]func(Record) (geom.Envelope, bool){spatialBounds(rawArgs[0]), spatialBounds(rawArgs[1])}
	return func(r Record) (result any) {
		// An invalid geometry (a footprint drawn crossing itself) can
		// make the overlay code panic; that is NULL for this record,
		// not the end of the process serving the search.
		defer func() {
			if recover() != nil {
				result = nil
			}
		}()
		if ea, ok := bounds[0](r); ok {
			if eb, ok := bounds[1](r); ok && !ea.Intersects(eb) {
				return lower == "s_disjoint"
			}
		}
		a, b := toGeometry(args[0](r)), toGeometry(args[1](r))
		if a == nil || b == nil {
			return nil
		}
		// Every relation but disjoint needs the two to meet. Deciding
		// that first with Intersects (its own algorithm) also keeps
		// out a wrong DE-9IM matrix simplefeatures v0.50 gives for
		// some far-apart pairs (Sudan's polygon "contains" a point in
		// Germany: TestSpatialFarApart).
		if !geom.Intersects(*a, *b) {
			return lower == "s_disjoint"
		}
		ok, err := rel(*a, *b)
		if err != nil {
			return nil
		}
		return ok
	}
}

// truth reads a value as a boolean: anything but true or false is NULL.
func truth(v any) any {
	if b, ok := v.(bool); ok {
		return b
	}
	return nil
}

func tri(known, v bool) any {
	if !known {
		return nil
	}
	return v
}

func and3(a, b any) any {
	if a == false || b == false {
		return false
	}
	if a == nil || b == nil {
		return nil
	}
	return true
}

var comparisonAccept = map[string]func(int) bool{
	"=": func(c int) bool { return c == 0 }, "<>": func(c int) bool { return c != 0 },
	"<": func(c int) bool { return c < 0 }, "<=": func(c int) bool { return c <= 0 },
	">": func(c int) bool { return c > 0 }, ">=": func(c int) bool { return c >= 0 },
}

var arithmeticOps = map[string]func(a, b float64) float64{
	"+": func(a, b float64) float64 { return a + b },
	"-": func(a, b float64) float64 { return a - b },
	"*": func(a, b float64) float64 { return a * b },
	"/": func(a, b float64) float64 { return a / b },
	"%": math.Mod,
	"div": func(a, b float64) float64 {
		return math.Trunc(a / b)
	},
	"^": math.Pow,
}

// fromJSON turns a property value into an evaluation value.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case time.Time:
		return instant{t: x}
	case Interval:
		iv := interval{start: bound{at: instant{t: x.Start}}, end: bound{at: instant{t: x.End}}}
		if x.Start.IsZero() {
			iv.start = bound{inf: -1}
		}
		if x.End.IsZero() {
			iv.end = bound{inf: 1}
		}
		return iv
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	}
	return v
}

// parseTimestamp accepts RFC 3339 with any fraction (the standard's
// examples write .000000Z) and a lower-case t or z.
func parseTimestamp(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, strings.ToUpper(s))
}

// temporalFromString reads a date or a timestamp.
func temporalFromString(s string) (instant, bool) {
	if len(s) == len("2006-01-02") {
		if t, err := time.Parse(time.DateOnly, s); err == nil {
			return instant{t: t, date: true}, true
		}
		return instant{}, false
	}
	if t, err := parseTimestamp(s); err == nil {
		return instant{t: t}, true
	}
	return instant{}, false
}

// compareInstants orders two instants; when either is a date, both are
// compared as dates (a timestamp's UTC date), the day being the date's
// granularity.
func compareInstants(a, b instant) int {
	if a.date || b.date {
		return dayOf(a.t).Compare(dayOf(b.t))
	}
	return a.t.Compare(b.t)
}

func dayOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// compareValues orders a and b; ok is false when either is NULL or they
// do not compare (different types).
func compareValues(a, b any) (int, bool) {
	if a == nil || b == nil {
		return 0, false
	}
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y), true
		case instant:
			if t, ok := temporalFromString(x); ok {
				return compareInstants(t, y), true
			}
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, true
			case !x:
				return -1, true
			}
			return 1, true
		}
	case instant:
		switch y := b.(type) {
		case instant:
			return compareInstants(x, y), true
		case string:
			if t, ok := temporalFromString(y); ok {
				return compareInstants(x, t), true
			}
		}
	}
	return 0, false
}

// likeMatch matches s against a LIKE pattern: % is any run of characters,
// _ one character, and \ makes the next character literal (REQ
// like-predicate).
func likeMatch(s, pattern string) bool {
	type ptok struct {
		kind byte // 'c' literal, '%' any run, '_' one
		r    rune
	}
	var pat []ptok
	pr := []rune(pattern)
	for i := 0; i < len(pr); i++ {
		switch pr[i] {
		case '\\':
			if i+1 < len(pr) {
				i++
			}
			pat = append(pat, ptok{'c', pr[i]})
		case '%':
			pat = append(pat, ptok{'%', 0})
		case '_':
			pat = append(pat, ptok{'_', 0})
		default:
			pat = append(pat, ptok{'c', pr[i]})
		}
	}
	str := []rune(s)
	// Iterative wildcard match with backtracking to the last %.
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(pat) && (pat[pi].kind == '_' || pat[pi].kind == 'c' && pat[pi].r == str[si]):
			si++
			pi++
		case pi < len(pat) && pat[pi].kind == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi].kind == '%' {
		pi++
	}
	return pi == len(pat)
}

// stripAccents removes combining marks after canonical decomposition, so
// that "débárquér" and "debarquer" compare equal.
func stripAccents(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// Spatial relations, DE-9IM by simplefeatures.
var spatialOps = map[string]func(a, b geom.Geometry) (bool, error){
	"s_intersects": func(a, b geom.Geometry) (bool, error) { return geom.Intersects(a, b), nil },
	"s_equals":     geom.Equals,
	"s_disjoint":   geom.Disjoint,
	"s_touches":    geom.Touches,
	"s_within":     geom.Within,
	"s_overlaps":   geom.Overlaps,
	"s_crosses":    geom.Crosses,
	"s_contains":   geom.Contains,
}

// Bounded is a Record that knows the envelope of a geometry property
// without decoding it (stacserver keeps every item's bounds): spatial
// relations with far-apart envelopes are then decided from it alone.
type Bounded interface {
	Bounds(name string) (geom.Envelope, bool)
}

// spatialBounds returns, for an argument of a spatial function, how to get
// its envelope cheaply: a literal's is computed once, a property's comes
// from a Bounded record; ok is false when it is not known that way.
func spatialBounds(arg any) func(Record) (geom.Envelope, bool) {
	m, _ := arg.(map[string]any)
	if name, ok := m["property"].(string); ok && len(m) == 1 {
		return func(r Record) (geom.Envelope, bool) {
			if b, ok := r.(Bounded); ok {
				return b.Bounds(name)
			}
			return geom.Envelope{}, false
		}
	}
	var g geom.Geometry
	var err error
	switch {
	case m == nil:
		err = fmt.Errorf("not an object")
	case m["bbox"] != nil && len(m) == 1:
		g, err = bboxGeometry(m["bbox"])
	case m["type"] != nil && m["op"] == nil:
		g, err = geometryFromMap(m)
	default:
		err = fmt.Errorf("not a literal")
	}
	if err != nil || g.IsEmpty() {
		return func(Record) (geom.Envelope, bool) { return geom.Envelope{}, false }
	}
	env := g.Envelope()
	return func(Record) (geom.Envelope, bool) { return env, true }
}

// toGeometry reads a value as a geometry (nil when it is not one).
func toGeometry(v any) *geom.Geometry {
	switch x := v.(type) {
	case geom.Geometry:
		return &x
	case *geom.Geometry:
		return x
	case map[string]any:
		g, err := geometryFromMap(x)
		if err != nil {
			return nil
		}
		return &g
	}
	return nil
}

// geometryFromMap builds a 2D geometry from a decoded GeoJSON geometry
// (without a round trip through JSON text: items are decoded already).
// A geometry that is not valid in the OGC sense (a self-intersecting
// footprint, as some STAC data has) is kept as drawn: the relations work
// on it, and simplefeatures' validation would refuse it.
func geometryFromMap(m map[string]any) (geom.Geometry, error) {
	typ, _ := m["type"].(string)
	if typ == "GeometryCollection" {
		list, ok := m["geometries"].([]any)
		if !ok {
			return geom.Geometry{}, fmt.Errorf("a GeometryCollection needs \"geometries\"")
		}
		geoms := make([]geom.Geometry, len(list))
		for i, e := range list {
			sub, ok := e.(map[string]any)
			if !ok {
				return geom.Geometry{}, fmt.Errorf("geometries[%d] is not an object", i)
			}
			g, err := geometryFromMap(sub)
			if err != nil {
				return geom.Geometry{}, err
			}
			geoms[i] = g
		}
		return geom.NewGeometryCollection(geoms).AsGeometry(), nil
	}
	c := m["coordinates"]
	switch typ {
	case "Point":
		xy, err := position(c)
		if err != nil {
			return geom.Geometry{}, err
		}
		return geom.NewPoint(geom.Coordinates{XY: xy, Type: geom.DimXY}).AsGeometry(), nil
	case "LineString":
		ls, err := lineString(c, 2)
		return ls.AsGeometry(), err
	case "Polygon":
		p, err := polygon(c)
		return p.AsGeometry(), err
	case "MultiPoint":
		list, _ := c.([]any)
		pts := make([]geom.Point, len(list))
		for i, e := range list {
			xy, err := position(e)
			if err != nil {
				return geom.Geometry{}, err
			}
			pts[i] = geom.NewPoint(geom.Coordinates{XY: xy, Type: geom.DimXY})
		}
		return geom.NewMultiPoint(pts).AsGeometry(), nil
	case "MultiLineString":
		list, _ := c.([]any)
		lines := make([]geom.LineString, len(list))
		for i, e := range list {
			ls, err := lineString(e, 2)
			if err != nil {
				return geom.Geometry{}, err
			}
			lines[i] = ls
		}
		return geom.NewMultiLineString(lines).AsGeometry(), nil
	case "MultiPolygon":
		list, _ := c.([]any)
		polys := make([]geom.Polygon, len(list))
		for i, e := range list {
			p, err := polygon(e)
			if err != nil {
				return geom.Geometry{}, err
			}
			polys[i] = p
		}
		return geom.NewMultiPolygon(polys).AsGeometry(), nil
	}
	return geom.Geometry{}, fmt.Errorf("%q is not a GeoJSON geometry type", typ)
}

func position(v any) (geom.XY, error) {
	list, _ := v.([]any)
	if len(list) < 2 || len(list) > 3 {
		return geom.XY{}, fmt.Errorf("a position has 2 or 3 numbers, got %s", compact(v))
	}
	x, okX := fromJSON(list[0]).(float64)
	y, okY := fromJSON(list[1]).(float64)
	if !okX || !okY || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return geom.XY{}, fmt.Errorf("a position has 2 or 3 numbers, got %s", compact(v))
	}
	return geom.XY{X: x, Y: y}, nil
}

func lineString(v any, minPoints int) (geom.LineString, error) {
	list, _ := v.([]any)
	if len(list) < minPoints {
		return geom.LineString{}, fmt.Errorf("a line needs at least %d positions, got %s", minPoints, compact(v))
	}
	flat := make([]float64, 0, 2*len(list))
	for _, e := range list {
		xy, err := position(e)
		if err != nil {
			return geom.LineString{}, err
		}
		flat = append(flat, xy.X, xy.Y)
	}
	return geom.NewLineString(geom.NewSequence(flat, geom.DimXY)), nil
}

func polygon(v any) (geom.Polygon, error) {
	list, _ := v.([]any)
	if len(list) == 0 {
		return geom.Polygon{}, fmt.Errorf("a polygon needs at least one ring")
	}
	rings := make([]geom.LineString, len(list))
	for i, e := range list {
		ls, err := lineString(e, 4)
		if err != nil {
			return geom.Polygon{}, err
		}
		if !ls.IsClosed() {
			return geom.Polygon{}, fmt.Errorf("polygon ring %d is not closed", i)
		}
		rings[i] = ls
	}
	return geom.NewPolygon(rings), nil
}

// bboxGeometry is the polygon of a {"bbox": [...]} (4 or 6 numbers); a box
// whose west is east of its east crosses the antimeridian and becomes two.
func bboxGeometry(v any) (geom.Geometry, error) {
	list, _ := v.([]any)
	nums := make([]float64, 0, len(list))
	for _, n := range list {
		f, ok := fromJSON(n).(float64)
		if !ok {
			return geom.Geometry{}, compileErr("{\"bbox\": %s} needs 4 or 6 numbers", compact(v))
		}
		nums = append(nums, f)
	}
	var w, s, e, n float64
	switch len(nums) {
	case 4:
		w, s, e, n = nums[0], nums[1], nums[2], nums[3]
	case 6:
		w, s, e, n = nums[0], nums[1], nums[3], nums[4]
	default:
		return geom.Geometry{}, compileErr("{\"bbox\": %s} needs 4 or 6 numbers, got %d", compact(v), len(nums))
	}
	if s > n {
		return geom.Geometry{}, compileErr("{\"bbox\": %s}: south %v is north of north %v", compact(v), s, n)
	}
	// A box of no width or height is a line or a point (Envelope's
	// geometry); a box across the antimeridian is its two halves.
	box := func(w, e float64) geom.Geometry {
		return geom.NewEnvelope(geom.XY{X: w, Y: s}, geom.XY{X: e, Y: n}).AsGeometry()
	}
	if w <= e {
		return box(w, e), nil
	}
	parts := []geom.Geometry{box(w, 180), box(-180, e)}
	if parts[0].IsPolygon() && parts[1].IsPolygon() {
		return geom.NewMultiPolygon([]geom.Polygon{parts[0].MustAsPolygon(), parts[1].MustAsPolygon()}).AsGeometry(), nil
	}
	return geom.NewGeometryCollection(parts).AsGeometry(), nil
}

func compileInterval(v any, depth int) (evalFn, error) {
	ends, ok := v.([]any)
	if !ok || len(ends) != 2 {
		return nil, compileErr("{\"interval\": %s} needs two ends", compact(v))
	}
	var fns [2]evalFn
	for i, e := range ends {
		if s, isStr := e.(string); isStr {
			if s == ".." {
				inf := -1
				if i == 1 {
					inf = 1
				}
				fns[i] = constant(bound{inf: inf})
				continue
			}
			t, ok := temporalFromString(s)
			if !ok {
				return nil, compileErr("interval end %q is not a date YYYY-MM-DD, an RFC 3339 timestamp or \"..\"", s)
			}
			fns[i] = constant(bound{at: t})
			continue
		}
		f, err := compile(e, depth+1)
		if err != nil {
			return nil, err
		}
		fns[i] = f
	}
	return func(r Record) any {
		var iv interval
		for i, f := range fns {
			var b bound
			switch x := f(r).(type) {
			case bound:
				b = x
			case instant:
				b = bound{at: x}
			case string:
				if x == ".." {
					b = bound{inf: 2*i - 1}
					break
				}
				t, ok := temporalFromString(x)
				if !ok {
					return nil
				}
				b = bound{at: t}
			default:
				return nil
			}
			if i == 0 {
				iv.start = b
			} else {
				iv.end = b
			}
		}
		return iv
	}, nil
}

// toInterval reads a temporal value: an instant is an interval of no
// length.
func toInterval(v any) (interval, bool) {
	switch x := v.(type) {
	case interval:
		return x, true
	case instant:
		return interval{bound{at: x}, bound{at: x}}, true
	case string:
		if t, ok := temporalFromString(x); ok {
			return interval{bound{at: t}, bound{at: t}}, true
		}
	}
	return interval{}, false
}

func cmpBound(a, b bound) int {
	if a.inf != 0 || b.inf != 0 {
		switch {
		case a.inf < b.inf:
			return -1
		case a.inf > b.inf:
			return 1
		}
		return 0
	}
	return compareInstants(a.at, b.at)
}

// Temporal relations (OWL-Time, as OGC 21-065 §7 defines them), for a = t1
// and b = t2.
var temporalOps = map[string]func(a, b interval) bool{
	"t_after":      func(a, b interval) bool { return cmpBound(a.start, b.end) > 0 },
	"t_before":     func(a, b interval) bool { return cmpBound(a.end, b.start) < 0 },
	"t_disjoint":   func(a, b interval) bool { return cmpBound(a.start, b.end) > 0 || cmpBound(a.end, b.start) < 0 },
	"t_intersects": func(a, b interval) bool { return cmpBound(a.start, b.end) <= 0 && cmpBound(a.end, b.start) >= 0 },
	"t_equals":     func(a, b interval) bool { return cmpBound(a.start, b.start) == 0 && cmpBound(a.end, b.end) == 0 },
	"t_contains":   func(a, b interval) bool { return cmpBound(a.start, b.start) < 0 && cmpBound(a.end, b.end) > 0 },
	"t_during":     func(a, b interval) bool { return cmpBound(a.start, b.start) > 0 && cmpBound(a.end, b.end) < 0 },
	"t_finishedby": func(a, b interval) bool { return cmpBound(a.start, b.start) < 0 && cmpBound(a.end, b.end) == 0 },
	"t_finishes":   func(a, b interval) bool { return cmpBound(a.start, b.start) > 0 && cmpBound(a.end, b.end) == 0 },
	"t_meets":      func(a, b interval) bool { return cmpBound(a.end, b.start) == 0 },
	"t_metby":      func(a, b interval) bool { return cmpBound(a.start, b.end) == 0 },
	"t_overlappedby": func(a, b interval) bool {
		return cmpBound(a.start, b.start) > 0 && cmpBound(a.start, b.end) < 0 && cmpBound(a.end, b.end) > 0
	},
	"t_overlaps": func(a, b interval) bool {
		return cmpBound(a.start, b.start) < 0 && cmpBound(a.end, b.start) > 0 && cmpBound(a.end, b.end) < 0
	},
	"t_startedby": func(a, b interval) bool { return cmpBound(a.start, b.start) == 0 && cmpBound(a.end, b.end) > 0 },
	"t_starts":    func(a, b interval) bool { return cmpBound(a.start, b.start) == 0 && cmpBound(a.end, b.end) < 0 },
}

// Array relations: both arrays are sets (REQ array-predicates B).
var arrayOps = map[string]func(a, b []any) any{
	"a_equals":      func(a, b []any) any { return and3(subset(a, b), subset(b, a)) },
	"a_contains":    func(a, b []any) any { return subset(b, a) },
	"a_containedby": func(a, b []any) any { return subset(a, b) },
	"a_overlaps": func(a, b []any) any {
		result := any(false)
		for _, x := range a {
			switch member(x, b) {
			case true:
				return true
			case nil:
				result = nil
			}
		}
		return result
	},
}

// member is true when x equals an element of set, NULL when it does not
// but some comparison was NULL, false otherwise.
func member(x any, set []any) any {
	result := any(false)
	for _, y := range set {
		c, ok := compareValues(x, y)
		if ok && c == 0 {
			return true
		}
		if !ok && sameKind(x, y) {
			result = nil
		}
	}
	return result
}

// sameKind: a NULL element makes membership unknown; elements of
// different types are simply not equal.
func sameKind(x, y any) bool { return x == nil || y == nil }

func subset(a, b []any) any {
	result := any(true)
	for _, x := range a {
		switch member(x, b) {
		case false:
			return false
		case nil:
			result = nil
		}
	}
	return result
}

// literalKind names the kind of a literal argument: "" for an operand whose
// value is only known per record (a property or an operation).
func literalKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case json.Number, float64, int:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		switch {
		case x["property"] != nil, x["op"] != nil:
			return ""
		case x["date"] != nil, x["timestamp"] != nil:
			return "instant"
		case x["interval"] != nil:
			return "interval"
		case x["bbox"] != nil, x["type"] != nil:
			return "geometry"
		}
	}
	return "value"
}

// checkLiteralArgs refuses a literal argument of a kind the operator
// cannot take, so that a typo is a clear error rather than an empty answer.
func checkLiteralArgs(op, lower string, args []any) error {
	allowed := func(kinds ...string) error {
		for i, a := range args {
			k := literalKind(a)
			if k == "" {
				continue
			}
			ok := false
			for _, want := range kinds {
				ok = ok || k == want
			}
			if !ok {
				return compileErr("%q cannot take %s %s (arg %d); it takes %s", op, article(k), compact(a), i+1, strings.Join(kinds, ", "))
			}
		}
		return nil
	}
	switch {
	case lower == "like" || lower == "casei" || lower == "accenti":
		return allowed("string")
	case strings.HasPrefix(lower, "s_"):
		return allowed("geometry")
	case strings.HasPrefix(lower, "t_"):
		return allowed("instant", "interval", "string")
	case strings.HasPrefix(lower, "a_"):
		return allowed("array")
	case arithmeticOps[lower] != nil:
		return allowed("number")
	case comparisonOps[lower] || lower == "between":
		return allowed("string", "number", "boolean", "instant")
	case lower == "and" || lower == "or" || lower == "not":
		return allowed("boolean")
	}
	return nil
}

func article(kind string) string {
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
