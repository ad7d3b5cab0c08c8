package freetext

import (
	"math"
	"sort"
)

// Doc is one record's text by field, for Rank: a collection's id, title,
// keywords and description.
type Doc struct {
	ID, Title   string
	Keywords    []string
	Description string
}

// field is how one kind of field weighs in BM25F: weight multiplies its term
// frequency, b is how much its length normalises that frequency.
type field struct{ weight, b float64 }

// The fields in Doc order. An id, title or keyword names what a record is;
// a description also mentions what it is not ("derived from land cover",
// "unlike Sentinel-2"), so a word there counts a third of one in a title.
var fields = [4]field{
	{weight: 3, b: 0.5},  // id
	{weight: 3, b: 0},    // title
	{weight: 2, b: 0.5},  // keywords (one field: all of a record's keywords)
	{weight: 1, b: 0.75}, // description
}

// k1 is BM25's term-frequency saturation: the tenth mention of a term adds
// little over the second.
const k1 = 1.2

// Rank returns the indexes of the docs q matches (as Match decides), best
// first, by BM25F (Robertson and Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond", 2009) over the fields of Doc: each term's
// frequency in a field is weighted by the field and normalised by the
// field's length against its average over docs, summed over the fields,
// saturated with k1 and multiplied by the term's inverse document frequency
// among docs, so a rare term counts more than one most records have. A
// quoted phrase is one term (its occurrences as consecutive words); a query
// of several terms also scores the whole query as a phrase. Equal scores
// keep the docs' order. The zero Query matches every doc, in order.
func (q Query) Rank(docs []Doc) []int {
	// The average length of each field is taken over the docs that have it:
	// records without keywords say nothing about how long a keyword list is.
	split := make([][4][][]string, len(docs))
	var avg, have [4]float64
	for i, d := range docs {
		split[i] = docFields(d)
		for f := range split[i] {
			if n := fieldLen(split[i][f]); n > 0 {
				avg[f] += float64(n)
				have[f]++
			}
		}
	}
	for f := range avg {
		avg[f] = max(avg[f]/max(have[f], 1), 1)
	}

	var matched []int
	for i := range docs {
		if q.matchWords(flatten(split[i])) {
			matched = append(matched, i)
		}
	}
	if q.Empty() {
		return matched
	}
	terms := q.scoringTerms()
	idf := make([]float64, len(terms))
	for t, term := range terms {
		n := 0
		for i := range docs {
			if containsTerm(flatten(split[i]), term.words) {
				n++
			}
		}
		N := float64(len(docs))
		idf[t] = term.boost * math.Log(1+(N-float64(n)+0.5)/(float64(n)+0.5))
	}
	score := make(map[int]float64, len(matched))
	for _, i := range matched {
		s := 0.0
		for t, term := range terms {
			for f, spec := range fields {
				n := 0
				for _, words := range split[i][f] {
					n += countTerm(words, term.words)
				}
				if n > 0 {
					norm := 1 - spec.b + spec.b*float64(fieldLen(split[i][f]))/avg[f]
					s += idf[t] * spec.weight * float64(n) / (k1*norm + float64(n))
				}
			}
		}
		score[i] = s
	}
	sort.SliceStable(matched, func(a, b int) bool { return score[matched[a]] > score[matched[b]] })
	return matched
}

type scoringTerm struct {
	words []string
	boost float64
}

// scoringTerms are the terms that add to a score (required and optional
// ones), and the whole query as a phrase when it has several, weighing as
// much as its terms together: "land cover" in a title or keyword beats
// "land" and "cover" scattered over a title and a description.
func (q Query) scoringTerms() []scoringTerm {
	var out []scoringTerm
	var all []string
	for _, t := range q.Terms {
		if t.Mode == Excluded {
			continue
		}
		out = append(out, scoringTerm{words: t.Words, boost: 1})
		all = append(all, t.Words...)
	}
	if len(out) > 1 {
		out = append(out, scoringTerm{words: all, boost: float64(len(out))})
	}
	return out
}

// docFields splits each field into words; a field is a list of texts a term
// must not span (each keyword is its own text).
func docFields(d Doc) [4][][]string {
	kw := make([][]string, 0, len(d.Keywords))
	for _, k := range d.Keywords {
		kw = append(kw, Words(k))
	}
	return [4][][]string{{Words(d.ID)}, {Words(d.Title)}, kw, {Words(d.Description)}}
}

func fieldLen(texts [][]string) int {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	return n
}

func flatten(f [4][][]string) [][]string {
	var out [][]string
	for _, texts := range f {
		out = append(out, texts...)
	}
	return out
}

// countTerm counts the occurrences of term as consecutive words.
func countTerm(words, term []string) int {
	n := 0
	for i := 0; i+len(term) <= len(words); i++ {
		if equalWords(words[i:i+len(term)], term) {
			n++
		}
	}
	return n
}
