package cql2

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SyntaxError is a CQL2 text that does not parse: Pos is the byte offset
// of the problem in the text.
type SyntaxError struct {
	Pos    int
	Msg    string
	Near   string
	Source string
}

func (e *SyntaxError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("CQL2 text: %s at the end of the text", e.Msg)
	}
	return fmt.Sprintf("CQL2 text: %s at offset %d (near %q)", e.Msg, e.Pos, e.Near)
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent
	tString
	tNumber
	tOp // = <> < <= > >= + - * / % ^ ( ) ,
)

type token struct {
	kind tokKind
	text string // identifier, string contents, number text or operator
	pos  int
}

// lex splits CQL2 text into tokens. Numbers are unsigned: a sign is an
// operator, so that "balance-150.0" is a subtraction.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		r, w := utf8.DecodeRuneInString(src[i:])
		switch {
		case unicode.IsSpace(r):
			i += w
		case r == '\'':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tString, s, i})
			i += n
		case r == '"':
			end := strings.IndexByte(src[i+1:], '"')
			if end < 0 {
				return nil, syntaxErr(src, i, "unterminated quoted property name")
			}
			name := src[i+1 : i+1+end]
			if name == "" {
				return nil, syntaxErr(src, i, "empty quoted property name")
			}
			toks = append(toks, token{tQuotedIdent, name, i})
			i += end + 2
		case r >= '0' && r <= '9' || r == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			n := lexNumber(src[i:])
			toks = append(toks, token{tNumber, src[i : i+n], i})
			i += n
		case identStart(r):
			j := i + w
			for j < len(src) {
				r2, w2 := utf8.DecodeRuneInString(src[j:])
				if !identPart(r2) {
					break
				}
				j += w2
			}
			toks = append(toks, token{tIdent, src[i:j], i})
			i = j
		default:
			if i+1 < len(src) {
				two := src[i : i+2]
				if two == "<>" || two == "<=" || two == ">=" || two == "!=" {
					if two == "!=" {
						return nil, syntaxErr(src, i, `"!=" is not CQL2; use "<>"`)
					}
					toks = append(toks, token{tOp, two, i})
					i += 2
					continue
				}
			}
			if strings.ContainsRune("=<>+-*/%^(),", r) {
				toks = append(toks, token{tOp, string(r), i})
				i += w
				continue
			}
			return nil, syntaxErr(src, i, fmt.Sprintf("unexpected character %q", r))
		}
	}
	return append(toks, token{tEOF, "", len(src)}), nil
}

// lexString reads a '…' literal at src[start]: ” and \' are a quote
// (escapeQuote in the BNF); any other backslash is kept, so that a LIKE
// pattern's \% reaches the pattern.
func lexString(src string, start int) (string, int, error) {
	var b strings.Builder
	i := start + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\'' && i+1 < len(src) && src[i+1] == '\'':
			b.WriteByte('\'')
			i += 2
		case c == '\'':
			return b.String(), i + 1 - start, nil
		case c == '\\' && i+1 < len(src) && src[i+1] == '\'':
			b.WriteByte('\'')
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, syntaxErr(src, start, "unterminated string literal")
}

func lexNumber(s string) int {
	i := 0
	digits := func() {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	digits()
	if i < len(s) && s[i] == '.' {
		i++
		digits()
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			i = j
			digits()
		}
	}
	return i
}

// identStart and identPart follow the BNF's identifier rules.
func identStart(r rune) bool {
	switch {
	case r == ':' || r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z':
		return true
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFE, r >= 0x200C && r <= 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

func identPart(r rune) bool {
	return identStart(r) || r == '.' || r >= '0' && r <= '9' ||
		r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

func syntaxErr(src string, pos int, msg string) *SyntaxError {
	near := src[pos:]
	if len(near) > 30 {
		near = near[:30] + "…"
	}
	return &SyntaxError{Pos: pos, Msg: msg, Near: near, Source: src}
}

type parser struct {
	src   string
	toks  []token
	i     int
	depth int // nesting of the recursive descent, bounded by maxDepth
}

// nest guards one level of recursion: a filter of a million "(" would
// otherwise grow the stack until the process dies.
func (p *parser) nest() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errAt(p.peek(), fmt.Sprintf("the filter is nested more than %d levels deep", maxDepth))
	}
	return nil
}

// ParseText parses CQL2 text into its CQL2-JSON form (maps, slices,
// strings, json.Number, bool). Functions the evaluator does not know are
// parsed as {"op": name, "args": [...]}; Compile refuses them.
func ParseText(src string) (any, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	if p.peek().kind == tEOF {
		return nil, &SyntaxError{Msg: "empty filter"}
	}
	e, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errAt(t, "unexpected "+describe(t))
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errAt(t token, msg string) error {
	if t.kind == tEOF {
		return &SyntaxError{Pos: t.pos, Msg: msg, Source: p.src}
	}
	return syntaxErr(p.src, t.pos, msg)
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of text"
	case tString:
		return fmt.Sprintf("string '%s'", t.text)
	case tQuotedIdent:
		return fmt.Sprintf("property %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// keyword reports whether the next token is the (case-insensitive) keyword.
func (p *parser) keyword(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) acceptKeyword(kw string) bool {
	if p.keyword(kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func (p *parser) expectOp(op string) error {
	if !p.isOp(op) {
		return p.errAt(p.peek(), fmt.Sprintf("expected %q, found %s", op, describe(p.peek())))
	}
	p.i++
	return nil
}

func opNode(op string, args ...any) map[string]any {
	if args == nil {
		args = []any{}
	}
	return map[string]any{"op": op, "args": args}
}

// orExpr = andExpr {OR andExpr}; a chain becomes one n-ary "or".
func (p *parser) orExpr() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	return p.chain("OR", "or", p.andExpr)
}

// andExpr = notExpr {AND notExpr}; a chain becomes one n-ary "and".
func (p *parser) andExpr() (any, error) {
	return p.chain("AND", "and", p.notExpr)
}

// chain reads operand {keyword operand}: one operand is itself, more become
// one n-ary op node.
func (p *parser) chain(keyword, op string, operand func() (any, error)) (any, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	args := []any{first}
	for p.acceptKeyword(keyword) {
		e, err := operand()
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	if len(args) == 1 {
		return first, nil
	}
	return opNode(op, args...), nil
}

func (p *parser) notExpr() (any, error) {
	if p.acceptKeyword("NOT") {
		if err := p.nest(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		e, err := p.notExpr()
		if err != nil {
			return nil, err
		}
		return opNode("not", e), nil
	}
	return p.predicate()
}

var comparisonOps = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// predicate = additive [comparison | [NOT] LIKE | [NOT] BETWEEN | [NOT] IN | IS [NOT] NULL]
func (p *parser) predicate() (any, error) {
	left, err := p.additive()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind == tOp && comparisonOps[t.text] {
		p.i++
		right, err := p.additive()
		if err != nil {
			return nil, err
		}
		return opNode(t.text, left, right), nil
	}
	negate := false
	if p.keyword("NOT") {
		if n := p.peekAt(1); n.kind == tIdent && (strings.EqualFold(n.text, "LIKE") || strings.EqualFold(n.text, "BETWEEN") || strings.EqualFold(n.text, "IN")) {
			p.i++
			negate = true
		}
	}
	wrap := func(e any) any {
		if negate {
			return opNode("not", e)
		}
		return e
	}
	switch {
	case p.acceptKeyword("LIKE"):
		pattern, err := p.additive()
		if err != nil {
			return nil, err
		}
		return wrap(opNode("like", left, pattern)), nil
	case p.acceptKeyword("BETWEEN"):
		lo, err := p.additive()
		if err != nil {
			return nil, err
		}
		if !p.acceptKeyword("AND") {
			return nil, p.errAt(p.peek(), "expected AND in BETWEEN … AND …, found "+describe(p.peek()))
		}
		hi, err := p.additive()
		if err != nil {
			return nil, err
		}
		return wrap(opNode("between", left, lo, hi)), nil
	case p.acceptKeyword("IN"):
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		list, err := p.listTail(p.orExpr)
		if err != nil {
			return nil, err
		}
		return wrap(opNode("in", left, list)), nil
	case p.acceptKeyword("IS"):
		not := p.acceptKeyword("NOT")
		if !p.acceptKeyword("NULL") {
			return nil, p.errAt(p.peek(), "expected NULL after IS, found "+describe(p.peek()))
		}
		e := opNode("isNull", left)
		if not {
			return opNode("not", e), nil
		}
		return e, nil
	}
	if negate {
		return nil, p.errAt(p.peek(), "expected LIKE, BETWEEN or IN after NOT")
	}
	return left, nil
}

func (p *parser) additive() (any, error) {
	left, err := p.multiplicative()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		right, err := p.multiplicative()
		if err != nil {
			return nil, err
		}
		left = opNode(op, left, right)
	}
	return left, nil
}

func (p *parser) multiplicative() (any, error) {
	left, err := p.power()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") || p.keyword("div") {
		op := strings.ToLower(p.next().text)
		right, err := p.power()
		if err != nil {
			return nil, err
		}
		left = opNode(op, left, right)
	}
	return left, nil
}

func (p *parser) power() (any, error) {
	base, err := p.unary()
	if err != nil {
		return nil, err
	}
	if p.isOp("^") {
		p.i++
		if err := p.nest(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		exp, err := p.power() // right-associative: 2^3^2 is 2^(3^2)
		if err != nil {
			return nil, err
		}
		return opNode("^", base, exp), nil
	}
	return base, nil
}

// unary handles a sign: on a number it is part of the literal; on anything
// else "-x" is written as (-1 * x), as the standard's example 85 does.
func (p *parser) unary() (any, error) {
	if p.isOp("-") || p.isOp("+") {
		sign := p.next().text
		if t := p.peek(); t.kind == tNumber {
			p.i++
			if sign == "-" {
				return json.Number("-" + t.text), nil
			}
			return json.Number(t.text), nil
		}
		if err := p.nest(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		if sign == "+" {
			return e, nil
		}
		return opNode("*", json.Number("-1"), e), nil
	}
	return p.primary()
}

// functionOps maps the standard's functions, case-insensitively, to the
// name CQL2 JSON gives them (the JSON schema's enums: lower case but for
// t_finishedBy, t_metBy, t_overlappedBy, t_startedBy and a_containedBy).
var functionOps = map[string]string{}

func init() {
	for _, name := range []string{"casei", "accenti",
		"s_intersects", "s_equals", "s_disjoint", "s_touches", "s_within", "s_overlaps", "s_crosses", "s_contains",
		"t_after", "t_before", "t_contains", "t_disjoint", "t_during", "t_equals", "t_finishedBy", "t_finishes",
		"t_intersects", "t_meets", "t_metBy", "t_overlappedBy", "t_overlaps", "t_startedBy", "t_starts",
		"a_equals", "a_contains", "a_containedBy", "a_overlaps"} {
		functionOps[strings.ToLower(name)] = name
	}
}

// operatorCalls are operators that may also be written as a function call,
// like(a, 'x%') or in(a, (1, 2)), as cql2-rs and pygeofilter accept and
// print: the JSON form names them the same way.
var operatorCalls = map[string]string{
	"and": "and", "or": "or", "not": "not", "like": "like", "between": "between",
	"in": "in", "isnull": "isNull",
}

var geometryKeywords = map[string]string{
	"POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon", "MULTIPOINT": "MultiPoint",
	"MULTILINESTRING": "MultiLineString", "MULTIPOLYGON": "MultiPolygon", "GEOMETRYCOLLECTION": "GeometryCollection",
}

func (p *parser) primary() (any, error) {
	t := p.peek()
	switch t.kind {
	case tNumber:
		p.i++
		return json.Number(t.text), nil
	case tString:
		p.i++
		return t.text, nil
	case tQuotedIdent:
		p.i++
		return map[string]any{"property": t.text}, nil
	case tOp:
		if t.text == "(" {
			return p.parenthesized()
		}
		return nil, p.errAt(t, "unexpected "+describe(t))
	case tEOF:
		return nil, p.errAt(t, "the filter ends where an operand was expected")
	}
	// An identifier: keyword, literal constructor, function or property.
	upper := strings.ToUpper(t.text)
	isCall := p.peekAt(1).kind == tOp && p.peekAt(1).text == "("
	switch upper {
	case "TRUE", "FALSE":
		p.i++
		return upper == "TRUE", nil
	case "AND", "OR", "NOT", "LIKE", "BETWEEN", "IN", "IS", "NULL", "DIV":
		if op, ok := operatorCalls[strings.ToLower(upper)]; ok && isCall && upper != "NOT" {
			return p.operatorCall(op)
		}
		return nil, p.errAt(t, fmt.Sprintf("keyword %s where an operand was expected (quote a property with that name: \"%s\")", upper, t.text))
	}
	if _, ok := geometryKeywords[upper]; ok {
		return p.geometry()
	}
	if !isCall {
		p.i++
		return map[string]any{"property": t.text}, nil
	}
	switch upper {
	case "DATE", "TIMESTAMP":
		p.i += 2
		s := p.peek()
		if s.kind != tString {
			return nil, p.errAt(s, fmt.Sprintf("%s( needs a quoted string, found %s", upper, describe(s)))
		}
		p.i++
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return map[string]any{strings.ToLower(upper): s.text}, nil
	case "INTERVAL":
		p.i += 2
		var ends []any
		for k := 0; k < 2; k++ {
			if k == 1 {
				if err := p.expectOp(","); err != nil {
					return nil, err
				}
			}
			if s := p.peek(); s.kind == tString {
				p.i++
				ends = append(ends, s.text)
				continue
			}
			e, err := p.additive()
			if err != nil {
				return nil, err
			}
			ends = append(ends, e)
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return map[string]any{"interval": ends}, nil
	case "BBOX":
		p.i += 2
		nums, err := p.signedNumbers(",")
		if err != nil {
			return nil, err
		}
		if len(nums) != 4 && len(nums) != 6 {
			return nil, p.errAt(t, fmt.Sprintf("BBOX takes 4 or 6 numbers, got %d", len(nums)))
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return map[string]any{"bbox": nums}, nil
	}
	name := t.text
	lower := strings.ToLower(name)
	if canonical, ok := functionOps[lower]; ok {
		name = canonical
	}
	if op, ok := operatorCalls[lower]; ok {
		return p.operatorCall(op)
	}
	p.i += 2
	_, isArrayFn := arrayOps[lower]
	args, err := p.listTail(func() (any, error) {
		if isArrayFn && p.isOp("(") {
			// arrayOperand (BNF): "(" here opens an array, even of one.
			return p.arrayLiteral()
		}
		return p.orExpr()
	})
	if err != nil {
		return nil, err
	}
	return opNode(name, args...), nil
}

// parenthesized is "(" expr ")" or, with commas or nothing inside, an
// array literal.
func (p *parser) parenthesized() (any, error) {
	open := p.next()
	if p.isOp(")") {
		p.i++
		return []any{}, nil
	}
	first, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if p.isOp(")") {
		p.i++
		return first, nil
	}
	if !p.isOp(",") {
		return nil, p.errAt(p.peek(), fmt.Sprintf("expected \")\" to close the \"(\" at offset %d, found %s", open.pos, describe(p.peek())))
	}
	list := []any{first}
	for p.isOp(",") {
		p.i++
		e, err := p.arrayElement()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return list, nil
}

// arrayLiteral is "(" [element {"," element}] ")", always an array (an
// A_* operand of one element is still an array).
func (p *parser) arrayLiteral() (any, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	return p.listTail(p.arrayElement)
}

// listTail reads the rest of a parenthesised list after its "(":
// [element {"," element}] ")". An empty list is [], never nil (CQL2-JSON
// writes it as []).
func (p *parser) listTail(element func() (any, error)) ([]any, error) {
	list := []any{}
	if !p.isOp(")") {
		for {
			e, err := element()
			if err != nil {
				return nil, err
			}
			list = append(list, e)
			if !p.isOp(",") {
				break
			}
			p.i++
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return list, nil
}

func (p *parser) arrayElement() (any, error) {
	if p.isOp("(") {
		// A nested array or a parenthesized expression: parenthesized
		// decides by the commas.
		return p.parenthesized()
	}
	return p.orExpr()
}

func (p *parser) signedNumbers(sep string) ([]any, error) {
	var out []any
	for {
		n, err := p.signedNumber()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if sep == "" || !p.isOp(sep) {
			return out, nil
		}
		p.i++
	}
}

func (p *parser) signedNumber() (json.Number, error) {
	sign := ""
	if p.isOp("-") || p.isOp("+") {
		if p.next().text == "-" {
			sign = "-"
		}
	}
	t := p.peek()
	if t.kind != tNumber {
		return "", p.errAt(t, "expected a number, found "+describe(t))
	}
	p.i++
	return json.Number(sign + t.text), nil
}

// geometry parses WKT (with an optional Z) into a GeoJSON geometry object.
func (p *parser) geometry() (any, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.next()
	typ := geometryKeywords[strings.ToUpper(t.text)]
	if p.peek().kind == tIdent && strings.EqualFold(p.peek().text, "Z") {
		p.i++
	}
	if typ == "GeometryCollection" {
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		var geoms []any
		for {
			if _, ok := geometryKeywords[strings.ToUpper(p.peek().text)]; !ok || p.peek().kind != tIdent {
				return nil, p.errAt(p.peek(), "expected a geometry in GEOMETRYCOLLECTION, found "+describe(p.peek()))
			}
			g, err := p.geometry()
			if err != nil {
				return nil, err
			}
			geoms = append(geoms, g)
			if !p.isOp(",") {
				break
			}
			p.i++
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return map[string]any{"type": typ, "geometries": geoms}, nil
	}
	depth := map[string]int{"Point": 0, "LineString": 1, "MultiPoint": 1, "Polygon": 2, "MultiLineString": 2, "MultiPolygon": 3}[typ]
	coords, err := p.coordinates(depth, typ == "MultiPoint")
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": typ, "coordinates": coords}, nil
}

// coordinates reads a parenthesized WKT coordinate list nested depth
// levels deep (0: one position). A MultiPoint's points may or may not be
// parenthesized one by one: MULTIPOINT((1 2),(3 4)) is the BNF's form and
// MULTIPOINT(1 2, 3 4) the common one.
func (p *parser) coordinates(depth int, multiPoint bool) (any, error) {
	if depth > 3 {
		return nil, p.errAt(p.peek(), "coordinates nested too deep")
	}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var out any
	if depth == 0 {
		pos, err := p.signedNumbers("")
		if err != nil {
			return nil, err
		}
		for p.peek().kind == tNumber || p.isOp("-") || p.isOp("+") {
			n, err := p.signedNumber()
			if err != nil {
				return nil, err
			}
			pos = append(pos, n)
		}
		if len(pos) < 2 || len(pos) > 3 {
			return nil, p.errAt(p.peek(), fmt.Sprintf("a position has 2 or 3 numbers, got %d", len(pos)))
		}
		out = pos
	} else {
		var list []any
		for {
			var c any
			var err error
			switch {
			case depth == 1 && !(multiPoint && p.isOp("(")):
				c, err = p.bareCoordinates()
			default:
				c, err = p.coordinates(depth-1, false)
			}
			if err != nil {
				return nil, err
			}
			list = append(list, c)
			if !p.isOp(",") {
				break
			}
			p.i++
		}
		out = list
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return out, nil
}

// bareCoordinates reads "x y [z]" without parentheses.
func (p *parser) bareCoordinates() (any, error) {
	var pos []any
	for p.peek().kind == tNumber || p.isOp("-") || p.isOp("+") {
		n, err := p.signedNumber()
		if err != nil {
			return nil, err
		}
		pos = append(pos, n)
	}
	if len(pos) < 2 || len(pos) > 3 {
		return nil, p.errAt(p.peek(), fmt.Sprintf("a position has 2 or 3 numbers, got %d", len(pos)))
	}
	return pos, nil
}

// operatorCall reads like(a, b), in(a, (list)) or in(a, x, y, …),
// between(a, lo, hi), isNull(a), and(…), or(…): an operator written as a
// function.
func (p *parser) operatorCall(op string) (any, error) {
	start := p.peek()
	p.i += 2
	var args []any
	if !p.isOp(")") {
		for {
			a, err := p.arrayElement()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if !p.isOp(",") {
				break
			}
			p.i++
		}
	}
	if err := p.expectOp(")"); err != nil {
		return nil, err
	}
	want := map[string]int{"like": 2, "between": 3, "isNull": 1, "not": 1}[op]
	switch {
	case want > 0 && len(args) != want:
		return nil, p.errAt(start, fmt.Sprintf("%s( takes %d operands, got %d", strings.ToUpper(op), want, len(args)))
	case op == "in" && len(args) < 2:
		return nil, p.errAt(start, "IN( takes an operand and a list")
	case (op == "and" || op == "or") && len(args) < 2:
		return nil, p.errAt(start, strings.ToUpper(op)+"( takes at least two operands")
	}
	if op == "in" {
		if _, isList := args[1].([]any); !isList || len(args) > 2 {
			args = []any{args[0], args[1:]}
		}
	}
	return opNode(op, args...), nil
}
