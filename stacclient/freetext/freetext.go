// Package freetext matches the q parameter of the STAC API free-text
// extension against text fields, by words rather than substrings: q "DEM"
// matches "Copernicus DEM" and "cop-dem-glo-30" but not "demo" or
// "OnDemand".
//
// It is shared by the two places that evaluate q themselves: the
// in-process STAC API (stacserver's collection search) and the tools'
// client-side fallback for catalogs without collection search, so both
// answer the same q the same way.
//
// The syntax is the union of the extension's two forms
// (github.com/stac-api-extensions/freetext-search):
//
//   - words separated by spaces are alternatives (OR): `sentinel reflectance`;
//   - a quoted phrase matches its words in that order: `"land cover"`;
//   - commas separate alternative terms as in the basic form's GET
//     parameter, and each comma-separated term is matched as written, so a
//     term with spaces is a phrase: `EO,Earth Observation`;
//   - `+term` is required, `-term` excluded; the keyword OR is the default
//     and AND makes the terms on both sides required; parentheses are
//     ignored (terms are not grouped).
//
// Matching is case-insensitive. Text and terms are split into words at
// every character that is not a letter or a digit, and a term matches when
// its words appear consecutively in one field: "sentinel-2" matches
// "Sentinel 2 L2A" and "sentinel-2-l2a", not "sentinel-20".
//
// Rank orders the records a query matches by BM25 relevance, each field
// weighted (id, title and keywords above the description), so the
// collection titled "Land Cover" comes before one whose description
// mentions land cover in passing.
//
// EditDistance, for "did you mean …?" answers (collection ids, setting
// names), lives here too: it is the other way stac-mcp compares names.
package freetext

import (
	"strings"
	"unicode"
)

// Mode says how a term takes part in a match.
type Mode int

const (
	Optional Mode = iota // one of the optional terms must match (when there is no required one)
	Required             // must match (+term, or either side of AND)
	Excluded             // must not match (-term)
)

// Term is one word or phrase of a query.
type Term struct {
	Words []string // lower-cased words, matched consecutively
	Mode  Mode
}

// Query is a parsed q. The zero Query matches everything.
type Query struct {
	Terms []Term
}

// Parse reads q; it never fails (text that makes no term, such as a lone
// "-", is ignored).
func Parse(q string) Query {
	if containsUnquoted(q, ',') {
		return Query{Terms: commaTerms(q)}
	}
	return Query{Terms: spaceTerms(q)}
}

// Empty reports whether the query has no term (it then matches everything).
func (q Query) Empty() bool { return len(q.Terms) == 0 }

// Match evaluates the query against the text fields of one record (for a
// collection: id, title, description and each keyword). ok is false when a
// required term is missing, an excluded term is present, or no optional
// term matches while there is no required one. score counts the required
// and optional terms that matched; Rank orders records by relevance.
func (q Query) Match(fields ...string) (score int, ok bool) {
	if q.Empty() {
		return 0, true
	}
	words := make([][]string, len(fields))
	for i, f := range fields {
		words[i] = Words(f)
	}
	return q.matchScore(words)
}

// matchWords is Match over fields already split into words.
func (q Query) matchWords(words [][]string) bool {
	_, ok := q.matchScore(words)
	return ok
}

func (q Query) matchScore(words [][]string) (score int, ok bool) {
	optional, optionalHit, required := 0, false, false
	for _, t := range q.Terms {
		hit := containsTerm(words, t.Words)
		switch t.Mode {
		case Excluded:
			if hit {
				return 0, false
			}
		case Required:
			required = true
			if !hit {
				return 0, false
			}
			score++
		default:
			optional++
			if hit {
				optionalHit = true
				score++
			}
		}
	}
	if !required && optional > 0 && !optionalHit {
		return 0, false
	}
	return score, true
}

// Words splits s into lower-cased words at every character that is not a
// letter or a digit.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func containsTerm(fields [][]string, term []string) bool {
	for _, words := range fields {
		for i := 0; i+len(term) <= len(words); i++ {
			if equalWords(words[i:i+len(term)], term) {
				return true
			}
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// containsUnquoted reports whether r occurs outside double quotes.
func containsUnquoted(s string, r rune) bool {
	quoted := false
	for _, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
		case c == r && !quoted:
			return true
		}
	}
	return false
}

// commaTerms reads the basic form: each comma-separated part is one term,
// with an optional +/- sign and optional quotes.
func commaTerms(q string) []Term {
	var terms []Term
	for _, part := range splitUnquoted(q, ',') {
		part = strings.TrimSpace(part)
		mode, rest := sign(part)
		if t := newTerm(strings.Trim(rest, `"()`), mode); t != nil {
			terms = append(terms, *t)
		}
	}
	return terms
}

// spaceTerms reads the advanced form: words and quoted phrases separated by
// spaces, with +/- signs and the keywords AND and OR.
func spaceTerms(q string) []Term {
	var terms []Term
	andNext := false
	for _, tok := range tokens(q) {
		if !tok.quoted {
			switch tok.text {
			case "OR":
				continue
			case "AND":
				if n := len(terms); n > 0 && terms[n-1].Mode == Optional {
					terms[n-1].Mode = Required
				}
				andNext = true
				continue
			}
		}
		mode := tok.mode
		if andNext && mode == Optional {
			mode = Required
		}
		andNext = false
		if t := newTerm(tok.text, mode); t != nil {
			terms = append(terms, *t)
		}
	}
	return terms
}

type token struct {
	text   string
	mode   Mode
	quoted bool
}

// tokens splits on spaces outside quotes; a sign before a word or a quote
// applies to it.
func tokens(q string) []token {
	var out []token
	rs := []rune(q)
	for i := 0; i < len(rs); {
		if unicode.IsSpace(rs[i]) || rs[i] == '(' || rs[i] == ')' {
			i++
			continue
		}
		mode := Optional
		if rs[i] == '+' || rs[i] == '-' {
			if rs[i] == '+' {
				mode = Required
			} else {
				mode = Excluded
			}
			i++
		}
		if i < len(rs) && rs[i] == '"' {
			end := i + 1
			for end < len(rs) && rs[end] != '"' {
				end++
			}
			out = append(out, token{text: string(rs[i+1 : end]), mode: mode, quoted: true})
			i = end + 1
			continue
		}
		start := i
		for i < len(rs) && !unicode.IsSpace(rs[i]) && rs[i] != '"' && rs[i] != '(' && rs[i] != ')' {
			i++
		}
		out = append(out, token{text: string(rs[start:i]), mode: mode})
	}
	return out
}

func sign(s string) (Mode, string) {
	switch {
	case strings.HasPrefix(s, "+"):
		return Required, strings.TrimSpace(s[1:])
	case strings.HasPrefix(s, "-"):
		return Excluded, strings.TrimSpace(s[1:])
	}
	return Optional, s
}

func newTerm(text string, mode Mode) *Term {
	words := Words(text)
	if len(words) == 0 {
		return nil
	}
	return &Term{Words: words, Mode: mode}
}

// splitUnquoted splits s at sep outside double quotes.
func splitUnquoted(s string, sep rune) []string {
	var parts []string
	quoted, start := false, 0
	for i, c := range s {
		switch {
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + len(string(c))
		}
	}
	return append(parts, s[start:])
}

// EditDistance is the Levenshtein distance between a and b, in runes: how
// far a mistyped name is from a real one ("did you mean …?").
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
