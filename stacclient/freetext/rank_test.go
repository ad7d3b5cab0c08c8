package freetext

import (
	"slices"
	"testing"
)

func rankIDs(q string, docs []Doc) []string {
	var ids []string
	for _, i := range Parse(q).Rank(docs) {
		ids = append(ids, docs[i].ID)
	}
	return ids
}

// A phrase in the title beats the same words scattered over, or even
// repeated in, a description; a keyword beats a description too.
func TestRankWeighsTitleAndKeywordsAboveDescription(t *testing.T) {
	docs := []Doc{
		{ID: "lst", Title: "Land Surface Temperature", Description: "Land surface temperature; snow cover and cloud cover are masked. Land cover classes are not used."},
		{ID: "biomass", Title: "Biomass", Description: "Maps derived from land cover, land cover change and land cover type products."},
		{ID: "kw", Title: "WorldCover", Keywords: []string{"Global", "Land Cover"}, Description: "A global map at 10 m."},
		{ID: "lc", Title: "Global Land Cover", Description: "Annual maps of 11 classes."},
		{ID: "other", Title: "Sea ice", Description: "Ice concentration."},
	}
	// Unquoted, the title word "land" of lst may count as much as biomass's
	// phrase in the description; both come after the phrase in a title or
	// keyword.
	if got, want := rankIDs("land cover", docs), []string{"lc", "kw"}; len(got) != 4 || !slices.Equal(got[:2], want) {
		t.Errorf("land cover: %v, want %v first", got, want)
	}
	if got, want := rankIDs(`"land cover"`, docs), []string{"lc", "kw", "biomass", "lst"}; !slices.Equal(got, want) {
		t.Errorf(`"land cover": %v, want %v`, got, want)
	}
}

// The id names the record: sentinel-2-l2a, whose id and title say
// Sentinel-2, beats a harmonised product that mentions Sentinel-2 and
// surface reflectance in its description.
func TestRankIDMatchesCount(t *testing.T) {
	docs := []Doc{
		{ID: "hls-s30", Title: "Harmonized Landsat and Sentinel-2", Description: "Surface reflectance from Landsat and Sentinel-2A, Sentinel-2B."},
		{ID: "sentinel-2-l2a", Title: "Sentinel-2 Level-2A", Keywords: []string{"Reflectance"}, Description: "Bottom of atmosphere imagery."},
		{ID: "modis", Title: "MODIS Surface Reflectance", Description: "Daily."},
	}
	if got := rankIDs("sentinel-2 surface reflectance", docs); len(got) != 3 || got[0] != "sentinel-2-l2a" {
		t.Errorf("%v, want sentinel-2-l2a first", got)
	}
}

// Rank keeps Match's decisions: excluded and required terms filter, equal
// scores keep the input order, the zero query keeps every record in order.
func TestRankFiltersAsMatchDoes(t *testing.T) {
	docs := []Doc{{ID: "a", Title: "Sentinel-2 L1C"}, {ID: "b", Title: "Sentinel-2 L2A"}, {ID: "c", Title: "Landsat"}, {ID: "d", Title: "Sentinel-2 L2A"}}
	if got, want := rankIDs("sentinel-2 -l1c", docs), []string{"b", "d"}; !slices.Equal(got, want) {
		t.Errorf("-l1c: %v, want %v", got, want)
	}
	if got, want := rankIDs("+landsat sentinel-2", docs), []string{"c"}; !slices.Equal(got, want) {
		t.Errorf("+landsat: %v, want %v", got, want)
	}
	if got, want := rankIDs("", docs), []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("empty q: %v, want %v", got, want)
	}
	if got := (Query{}).Rank(nil); len(got) != 0 {
		t.Errorf("no docs: %v", got)
	}
}
