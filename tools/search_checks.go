package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Nothing ignored in silence: a search that names a
// collection the catalog does not have, queries a property that is not
// queryable, or sorts by a field no item carries is answered by most
// catalogs as if the name were not there (the other collections' items,
// nothing at all, the catalog's own order). These checks say so, with the
// closest real names. They cost requests only on such a miss: the
// collections no returned item belongs to, and the queryables once a
// queried or sorted field is in no returned item (or nothing matched).

// maxCollectionChecks bounds the collections looked up after a search.
const maxCollectionChecks = 5

// maxQueryablesListed bounds the queryable names a note lists.
const maxQueryablesListed = 12

// seenInItems is what the returned items showed: their collections and
// property names.
type seenInItems struct {
	collections map[string]bool
	properties  map[string]bool
}

func (s *seenInItems) add(it *stacclient.Item) {
	if s.collections == nil {
		s.collections, s.properties = map[string]bool{}, map[string]bool{}
	}
	s.collections[it.Collection] = true
	for k := range it.Properties {
		s.properties[k] = true
	}
}

// unknownListedCollections warns about each asked collection that none of
// the returned items belongs to and that the catalog does not have; a
// single unknown collection that emptied the search is emptySearchNotes'.
func unknownListedCollections(ctx context.Context, c *Call, p stacclient.SearchParams, seen seenInItems, returned int) []string {
	if returned == 0 || len(p.Collections) == 0 {
		return nil
	}
	var warnings []string
	checked := 0
	for _, id := range p.Collections {
		if seen.collections[id] || checked == maxCollectionChecks {
			continue
		}
		checked++
		if _, err := c.Catalog.Client.Collection(ctx, id); isKind(err, stacclient.KindNotFound) {
			warnings = append(warnings, missingCollectionNote(ctx, c, id)+"; the items returned come from the other collections")
		}
	}
	return warnings
}

// ignoredSearchArgs is what search_items says about names the catalog
// ignored, for the other tools that search and read the items (map_items,
// check_coverage, estimate_data_size): warnings for listed collections the
// catalog does not have and for query and sortby fields that are not
// there; and, when nothing was returned, emptySearchNotes' reasons, without
// the advice to relax a threshold that a non-queryable field made moot.
func ignoredSearchArgs(ctx context.Context, c *Call, p stacclient.SearchParams, items []stacclient.Item) (warnings, emptyNotes []string) {
	var seen seenInItems
	for i := range items {
		seen.add(&items[i])
	}
	return ignoredSearchArgsSeen(ctx, c, p, seen, len(items))
}

// ignoredSearchArgsSeen is ignoredSearchArgs for a tool that reads the
// items page by page: seen holds what the returned items showed.
func ignoredSearchArgsSeen(ctx context.Context, c *Call, p stacclient.SearchParams, seen seenInItems, returned int) (warnings, emptyNotes []string) {
	warnings = unknownListedCollections(ctx, c, p, seen, returned)
	fieldWarnings, replacesRelax := ignoredFieldNotes(ctx, c, p, seen, returned)
	warnings = append(warnings, fieldWarnings...)
	if returned == 0 {
		emptyNotes = emptySearchNotes(ctx, c, p, false)
		if replacesRelax {
			emptyNotes = slices.DeleteFunc(emptyNotes, func(n string) bool { return strings.HasPrefix(n, "relax query/filter") })
		}
	}
	return warnings, emptyNotes
}

// fieldName is a query or sortby field as items' properties name it.
func fieldName(field string) string {
	return strings.TrimPrefix(field, "properties.")
}

// topLevelFields are sortby fields that are not item properties.
var topLevelFields = []string{"id", "collection", "geometry", "bbox", "type", "links", "assets"}

// ignoredFieldNotes checks the fields query and sortby name against what
// the items returned carry and, for those no item has (or all of them when
// nothing matched), against the catalog's queryables: a field that is not
// queryable gets a note naming the queryables and the closest one. The
// returned notes for query replace emptySearchNotes' advice to relax the
// threshold (replacesRelax), which would send the model the wrong way.
func ignoredFieldNotes(ctx context.Context, c *Call, p stacclient.SearchParams, seen seenInItems, returned int) (warnings []string, replacesRelax bool) {
	type use struct{ arg, field string }
	var uses []use
	queried := make([]string, 0, len(p.Query))
	for f := range p.Query {
		queried = append(queried, f)
	}
	slices.Sort(queried)
	for _, f := range queried {
		uses = append(uses, use{"query", f})
	}
	for _, s := range p.SortBy {
		if !slices.Contains(topLevelFields, s.Field) {
			uses = append(uses, use{"sortby", s.Field})
		}
	}
	var suspect []use
	for _, u := range uses {
		if returned == 0 || !seen.properties[fieldName(u.field)] {
			suspect = append(suspect, u)
		}
	}
	if len(suspect) == 0 {
		return nil, false
	}
	collection := ""
	if len(p.Collections) == 1 {
		collection = p.Collections[0]
	}
	names, scope, ok := queryableNames(ctx, c, collection)
	for _, u := range suspect {
		name := fieldName(u.field)
		if ok && slices.Contains(names, name) {
			continue // queryable: an empty answer is the threshold's, an absent one the items'
		}
		if !ok && returned == 0 {
			continue // nothing to tell the field from an empty area
		}
		var why []string
		if returned > 0 {
			why = append(why, "none of the returned items has")
		}
		if ok {
			why = append(why, "is not among the queryables of "+scope)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s names %q, which %s", u.arg, u.field, strings.Join(why, " and which "))
		if ok {
			if close := closestFields(name, names); len(close) > 0 {
				fmt.Fprintf(&b, " (did you mean %s?)", strings.Join(close, " or "))
			}
		}
		switch u.arg {
		case "sortby":
			b.WriteString(": the catalog most likely ignored it and returned its own order")
		case "query":
			if returned > 0 {
				b.WriteString(": the catalog most likely ignored that condition")
			} else {
				b.WriteString(": that, not the threshold, is likely what emptied the search")
				replacesRelax = true
			}
		}
		if ok {
			fmt.Fprintf(&b, ". Queryables: %s", listNames(names))
		} else {
			b.WriteString(". get_queryables lists the property names")
		}
		warnings = append(warnings, b.String())
	}
	return warnings, replacesRelax
}

// closestFields are the property names closest to name: as collection ids
// are matched (closestIDs), else by the letters and digits alone, so that
// "cloudcover" finds eo:cloud_cover.
func closestFields(name string, names []string) []string {
	if close := closestIDs(name, names); len(close) > 0 {
		return close
	}
	bare := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, strings.ToLower(s))
	}
	want := bare(name)
	var out []string
	for _, n := range names {
		if b := bare(n); len(want) >= 4 && (strings.HasSuffix(b, want) || b == want) {
			out = append(out, n)
		}
	}
	return out[:min(len(out), maxSuggestions)]
}

// queryableNames are the catalog's (or collection's) queryable property
// names and which they are; ok is false when it publishes none or they
// could not be read.
func queryableNames(ctx context.Context, c *Call, collection string) (names []string, scope string, ok bool) {
	scope = "this catalog"
	q, err := c.Catalog.Client.Queryables(ctx, collection)
	if err == nil && collection != "" {
		scope = "collection '" + collection + "'"
	}
	if err != nil && collection != "" {
		q, err = c.Catalog.Client.Queryables(ctx, "")
	}
	if err != nil || q == nil || len(q.Properties) == 0 {
		return nil, "", false
	}
	names = make([]string, 0, len(q.Properties))
	for name := range q.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, scope, true
}

// listNames lists at most maxQueryablesListed names, then how many more.
func listNames(names []string) string {
	if len(names) <= maxQueryablesListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more (get_queryables lists them)", strings.Join(names[:maxQueryablesListed], ", "), len(names)-maxQueryablesListed)
}
