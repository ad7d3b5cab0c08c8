package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestParseGroups(t *testing.T) {
	named := []Preset{{Name: "internal", URL: "https://stac.internal.example/v1"}}
	groups, err := ParseGroups("STAC_MCP_CATALOG_GROUPS", "public=earth-search, Planetary-Computer;\nmine=internal,https://stac.example/v1/,demo", named, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || !slices.Equal(groups[0].Members, []string{"earth-search", "planetary-computer"}) ||
		!slices.Equal(groups[1].Members, []string{"internal", "https://stac.example/v1", "demo"}) {
		t.Errorf("groups %+v", groups)
	}
	for value, want := range map[string]string{
		"public":                                 "not name=catalog,catalog",
		"earth-search=planetary-computer,x":      "already the name of a catalog",
		"internal=earth-search":                  "already the name of a catalog",
		"g=earth-search,nowhere":                 `member "nowhere"`,
		"g=earth-search,earth-search":            "twice",
		"g=earth-search;g=planetary-computer":    "given twice",
		"G!=earth-search":                        "group name",
		"g=earth-search,planetary-computer,cdse": "more than the 2 catalogs",
	} {
		if _, err := ParseGroups("STAC_MCP_CATALOG_GROUPS", value, named, 2); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", value, err, want)
		}
	}
}

// A group is not a catalog: the tools that read one catalog refuse it
// with the tools that take it.
func TestGroupIsRefusedWhereOneCatalogIsExpected(t *testing.T) {
	cats := New(Options{Groups: []Group{{Name: "public", Members: []string{"earth-search", "planetary-computer"}}}})
	defer func() { _ = cats.Close() }()
	_, err := cats.Resolve(t.Context(), "public")
	if err == nil || !strings.Contains(err.Error(), "is a group of catalogs (earth-search, planetary-computer)") || !strings.Contains(err.Error(), "search_items") {
		t.Errorf("Resolve(group): %v", err)
	}
	es, _ := cats.Resolve(t.Context(), "earth-search")
	if g := cats.GroupsOf(es); len(g) != 1 || g[0].Name != "public" {
		t.Errorf("GroupsOf(earth-search) = %+v", g)
	}
}
