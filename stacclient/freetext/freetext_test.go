package freetext

import (
	"reflect"
	"testing"
)

func TestMatchesWordsNotSubstrings(t *testing.T) {
	q := Parse("DEM")
	for _, c := range []struct {
		fields []string
		want   bool
	}{
		{[]string{"cop-dem-glo-30", "Copernicus DEM GLO-30"}, true},
		{[]string{"3dep-lidar", "elevation", "dem"}, true}, // a keyword
		{[]string{"demo", "A demo collection"}, false},
		{[]string{"ondemand", "OnDemand processing"}, false},
		{[]string{"academic", "Academic datasets"}, false},
	} {
		if _, ok := q.Match(c.fields...); ok != c.want {
			t.Errorf("q=DEM on %q: match=%v, want %v", c.fields, ok, c.want)
		}
	}
}

func TestHyphenatedTermsMatchTheirWordsInOrder(t *testing.T) {
	q := Parse("sentinel-2")
	for _, c := range []struct {
		text string
		want bool
	}{
		{"sentinel-2-l2a", true},
		{"Sentinel 2 Level-2A", true},
		{"sentinel-20", false},
		{"2 sentinel", false},
	} {
		if _, ok := q.Match(c.text); ok != c.want {
			t.Errorf("q=sentinel-2 on %q: %v, want %v", c.text, ok, c.want)
		}
	}
}

func TestSpaceSeparatedWordsAreRankedAlternatives(t *testing.T) {
	q := Parse("sentinel reflectance")
	both, ok1 := q.Match("Sentinel-2 surface reflectance")
	one, ok2 := q.Match("Sentinel-1 radar")
	_, ok3 := q.Match("Landsat")
	if !ok1 || !ok2 || ok3 {
		t.Fatalf("matches = %v %v %v, want true true false", ok1, ok2, ok3)
	}
	if both <= one {
		t.Errorf("score with both words %d not above one word %d", both, one)
	}
}

func TestQuotedPhrase(t *testing.T) {
	q := Parse(`"land cover"`)
	if _, ok := q.Match("Global land cover map"); !ok {
		t.Error("phrase in order did not match")
	}
	if _, ok := q.Match("cover of the land"); ok {
		t.Error("words out of order matched a phrase")
	}
	if _, ok := q.Match("land", "cover"); ok {
		t.Error("a phrase matched across two fields")
	}
}

func TestCommasSeparateTermsAsWritten(t *testing.T) {
	q := Parse("EO,Earth Observation")
	if len(q.Terms) != 2 || !reflect.DeepEqual(q.Terms[1].Words, []string{"earth", "observation"}) {
		t.Fatalf("terms = %+v", q.Terms)
	}
	if _, ok := q.Match("Earth observation programme"); !ok {
		t.Error("the phrase term did not match")
	}
	if _, ok := q.Match("Observation of the Earth"); ok {
		t.Error("a comma-separated term with spaces is a phrase, but its words matched out of order")
	}
	if _, ok := q.Match("eo data"); !ok {
		t.Error("the first term did not match")
	}
	if terms := Parse(`"a, b",c`).Terms; len(terms) != 2 {
		t.Errorf("a comma inside quotes split the term: %+v", terms)
	}
}

func TestRequiredAndExcludedTerms(t *testing.T) {
	q := Parse("quick +brown -fox")
	for _, c := range []struct {
		text string
		want bool
	}{
		{"brown dog", true},        // required present, optional absent
		{"quick brown dog", true},  // both
		{"quick dog", false},       // required absent
		{"quick brown fox", false}, // excluded present
	} {
		if _, ok := q.Match(c.text); ok != c.want {
			t.Errorf("%q: %v, want %v", c.text, ok, c.want)
		}
	}
	if _, ok := Parse("-landsat").Match("sentinel"); !ok {
		t.Error("only an excluded term: a record without it must match")
	}
	if _, ok := Parse("-landsat").Match("Landsat 9"); ok {
		t.Error("only an excluded term: a record with it matched")
	}
	if _, ok := Parse(`-"land cover"`).Match("land cover"); ok {
		t.Error("an excluded phrase matched")
	}
	if _, ok := Parse("EO, -radar").Match("EO radar"); ok {
		t.Error("an excluded comma term matched")
	}
}

func TestKeywordsAndParentheses(t *testing.T) {
	and := Parse("climate AND model")
	if _, ok := and.Match("climate data"); ok {
		t.Error("AND: one side alone matched")
	}
	if _, ok := and.Match("climate model run"); !ok {
		t.Error("AND: both sides did not match")
	}
	or := Parse("climate OR model")
	if len(or.Terms) != 2 {
		t.Errorf("OR is a keyword, not a term: %+v", or.Terms)
	}
	if _, ok := Parse("(quick OR brown)").Match("brown"); !ok {
		t.Error("parentheses are not ignored")
	}
	if _, ok := Parse("or").Match("or else"); !ok {
		t.Error("lower-case or is a word, not the keyword")
	}
}

func TestEmptyQueriesMatchEverything(t *testing.T) {
	for _, q := range []string{"", "  ", "-", `""`, ",,", "()"} {
		if _, ok := Parse(q).Match("anything"); !ok {
			t.Errorf("q=%q did not match", q)
		}
	}
}

func FuzzParseMatch(f *testing.F) {
	for _, s := range []string{`a "b c" +d -e`, `x,"y, z",-w`, `"unterminated`, `AND OR ( )`, `+-"`} {
		f.Add(s, "some text")
	}
	f.Fuzz(func(t *testing.T, q, text string) {
		parsed := Parse(q)
		for _, term := range parsed.Terms {
			if len(term.Words) == 0 {
				t.Fatalf("Parse(%q) made an empty term", q)
			}
		}
		parsed.Match(text, q)
	})
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"sentinel2-l2a", "sentinel-2-l2a", 1}, {"é", "e", 1}, {"STAC_MCP_HEDG", "STAC_MCP_HEDGE", 1}} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
