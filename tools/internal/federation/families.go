// Package federation searches several STAC catalogs as one (adr/0035): the
// same product under each catalog's collection ids (families.go), the same
// acquisition recognised across catalogs however each names it
// (identity.go) and the copy worth keeping (usefulness.go), the merged
// order (order.go), the fan-out with each member's outcome and the wait for
// a member slower than the others (engine.go, straggler.go), and the
// scene's readable copy in another catalog (copy.go). It returns facts;
// package tools words them.
package federation

import (
	"slices"
	"strings"
)

// A family is one product as several catalogs publish it, possibly under
// different collection ids: Earth Search's sentinel-2-l2a and
// sentinel-2-c1-l2a, and Planetary Computer's sentinel-2-l2a, are one
// family. Items of one family are compared for duplicates; items of
// different families never are.
type family struct {
	ID    string              // the family's name in notes: its most common collection id
	Title string              // what it is, for notes
	IDs   map[string][]string // by preset name: its collection ids there, preferred first
}

// families is the table in the binary. A preset missing from a family may
// still hold its collection under the same id (checked against the
// catalog, never assumed); ids listed here are taken as present.
var families = []family{
	{ID: "sentinel-2-l2a", Title: "Sentinel-2 Level-2A", IDs: map[string][]string{
		"earth-search":         {"sentinel-2-l2a", "sentinel-2-c1-l2a"},
		"planetary-computer":   {"sentinel-2-l2a"},
		"cdse":                 {"sentinel-2-l2a"},
		"digital-earth-africa": {"s2_l2a"},
	}},
	{ID: "sentinel-2-l1c", Title: "Sentinel-2 Level-1C", IDs: map[string][]string{
		"earth-search": {"sentinel-2-l1c"},
		"cdse":         {"sentinel-2-l1c"},
	}},
	{ID: "landsat-c2-l2", Title: "Landsat Collection 2 Level-2 surface reflectance", IDs: map[string][]string{
		"earth-search":       {"landsat-c2-l2"},
		"planetary-computer": {"landsat-c2-l2"},
		"usgs-landsat":       {"landsat-c2l2-sr"},
	}},
	{ID: "sentinel-1-grd", Title: "Sentinel-1 GRD", IDs: map[string][]string{
		"earth-search":       {"sentinel-1-grd"},
		"planetary-computer": {"sentinel-1-grd"},
		"cdse":               {"sentinel-1-grd"},
	}},
	{ID: "cop-dem-glo-30", Title: "Copernicus DEM GLO-30", IDs: map[string][]string{
		"earth-search":       {"cop-dem-glo-30"},
		"planetary-computer": {"cop-dem-glo-30"},
	}},
	{ID: "cop-dem-glo-90", Title: "Copernicus DEM GLO-90", IDs: map[string][]string{
		"earth-search":       {"cop-dem-glo-90"},
		"planetary-computer": {"cop-dem-glo-90"},
	}},
	{ID: "naip", Title: "NAIP", IDs: map[string][]string{
		"earth-search":       {"naip"},
		"planetary-computer": {"naip"},
	}},
}

// familyOf finds the family a collection id belongs to: the one whose ids
// at preset include it, else any family listing it for some catalog (a
// demo, a mirror or an unlisted catalog using a well-known id).
func familyOf(preset, collection string) *family {
	id := strings.ToLower(collection)
	if preset != "" {
		for i := range families {
			if slices.Contains(families[i].IDs[preset], id) {
				return &families[i]
			}
		}
	}
	for i := range families {
		for _, ids := range families[i].IDs {
			if slices.Contains(ids, id) {
				return &families[i]
			}
		}
	}
	return nil
}

// FamilyID is the product family of a collection of the catalog known as
// preset ("" for a catalog that is not one): the table's family, or the
// collection id itself when the table has none.
func FamilyID(preset, collection string) string {
	if f := familyOf(preset, collection); f != nil {
		return f.ID
	}
	return collection
}

// FamilyTitle is a family's title for notes ("" when the table has none).
func FamilyTitle(familyID string) string {
	for _, f := range families {
		if f.ID == familyID {
			return f.Title
		}
	}
	return ""
}

// Candidates are the collection ids to try at a member for an asked id,
// in order, and whether the first is known to be there (listed in the
// table for that preset). Without a table entry the asked id comes first,
// then the family's ids at other catalogs.
func Candidates(preset, asked string) (ids []string, known bool) {
	f := familyOf("", asked)
	if f == nil {
		return []string{asked}, false
	}
	if preset != "" {
		if listed := f.IDs[preset]; len(listed) > 0 {
			if slices.Contains(listed, asked) {
				return []string{asked}, true
			}
			return slices.Clone(listed), true
		}
	}
	ids = []string{asked}
	presets := make([]string, 0, len(f.IDs))
	for p := range f.IDs {
		presets = append(presets, p)
	}
	slices.Sort(presets)
	for _, p := range presets {
		for _, id := range f.IDs[p] {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids, false
}

// PresetsHolding are the presets the table lists for a family, sorted:
// where a scene of that family may have another copy.
func PresetsHolding(familyID string) []string {
	for _, f := range families {
		if f.ID == familyID {
			out := make([]string, 0, len(f.IDs))
			for p := range f.IDs {
				out = append(out, p)
			}
			slices.Sort(out)
			return out
		}
	}
	return nil
}
