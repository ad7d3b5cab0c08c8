package stacserver

import (
	"sort"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// sortItems orders items by the sortby fields; items lacking a field sort
// after those that have it, and ties keep the default order.
func sortItems(items []*storedItem, by []sortField) {
	if len(by) == 0 {
		return
	}
	sort.SliceStable(items, func(i, j int) bool {
		for _, f := range by {
			a, okA := itemValue(items[i], f.Field)
			b, okB := itemValue(items[j], f.Field)
			okA, okB = okA && a != nil, okB && b != nil
			switch {
			case okA && !okB:
				return true
			case !okA && okB:
				return false
			case !okA && !okB:
				continue
			}
			c, ok := compareSortValues(a, b)
			if !ok || c == 0 {
				continue
			}
			if f.Direction == "desc" {
				return c > 0
			}
			return c < 0
		}
		return false
	})
}

// compareSortValues orders two values of a sortby field: two RFC 3339
// strings (datetime, created, any temporal property) as instants, so
// "…00.5Z" sorts after "…00Z" and "+02:00" offsets take their place;
// anything else as compareValues does.
func compareSortValues(a, b any) (int, bool) {
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			ta, errA := stacdoc.ParseTime(sa)
			tb, errB := stacdoc.ParseTime(sb)
			if errA == nil && errB == nil {
				return ta.Compare(tb), true
			}
		}
	}
	return compareValues(a, b)
}

// defaultFields is the fields extension's default set (v1.0.0, rule 1):
// what "fields": {} or "?fields=" returns, a valid STAC Item.
var defaultFields = []string{"type", "stac_version", "id", "geometry", "bbox", "links", "assets", "properties.datetime"}

// alwaysKept are the simple members kept whatever the request says (the
// extension allows it: "implementations may choose to always include
// simple string fields like id and type"), so every trimmed answer is
// still a Feature that names its item.
var alwaysKept = []string{"type", "id", "collection"}

// applyFields returns a copy of doc trimmed by the fields extension,
// v1.0.0 ("Include/Exclude Semantics"): no include and no exclude is the
// default set; an include list is the fields returned; an exclude list
// subtracts from the whole item when a POST body had no include member
// and from the default set otherwise; the most specific path decides
// (an excluded parent keeps an included child alone; an included parent
// loses an excluded child), and a path both included and excluded is
// included. Paths are dotted ("properties.eo:cloud_cover"); the stored
// document is never modified.
func applyFields(doc map[string]any, f *fieldsSpec) map[string]any {
	if f == nil {
		return doc
	}
	include := map[string]bool{}
	exclude := map[string]bool{}
	for _, p := range f.Exclude {
		exclude[p] = true
	}
	switch {
	case len(f.Include) > 0:
		for _, p := range f.Include {
			include[p] = true
			delete(exclude, p) // rule 6: both → included
		}
	case f.IncludeMissing:
		include[""] = true // the whole item
	default:
		for _, p := range defaultFields {
			if !exclude[p] {
				include[p] = true
			}
		}
		if props, _ := doc["properties"].(map[string]any); props != nil && props["datetime"] == nil && !exclude["properties.datetime"] {
			// rule 1: with a null datetime, the range instead
			include["properties.start_datetime"] = true
			include["properties.end_datetime"] = true
		}
	}
	for _, k := range alwaysKept {
		include[k] = true
		delete(exclude, k)
	}
	sel := fieldSelection{include: include, exclude: exclude}
	out, _ := sel.pick(doc, "")
	m, _ := out.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

type fieldSelection struct{ include, exclude map[string]bool }

// rule is the most specific include or exclude at path or above it
// ("" is the whole item): found, and whether it includes.
func (s fieldSelection) rule(path string) (found, included bool) {
	for p := path; ; {
		if s.include[p] {
			return true, true
		}
		if s.exclude[p] {
			return true, false
		}
		if p == "" {
			return false, false
		}
		if i := strings.LastIndexByte(p, '.'); i >= 0 {
			p = p[:i]
		} else {
			p = ""
		}
	}
}

// below: some include or exclude names a path inside path.
func (s fieldSelection) below(path string) bool {
	prefix := path + "."
	if path == "" {
		prefix = ""
	}
	for _, set := range []map[string]bool{s.include, s.exclude} {
		for p := range set {
			if p != path && strings.HasPrefix(p, prefix) {
				return true
			}
		}
	}
	return false
}

// pick returns what of v (at path) the selection keeps, copying maps it
// trims.
func (s fieldSelection) pick(v any, path string) (any, bool) {
	found, included := s.rule(path)
	m, isMap := v.(map[string]any)
	if !isMap || !s.below(path) {
		return v, found && included
	}
	out := map[string]any{}
	for k, child := range m {
		childPath := k
		if path != "" {
			childPath = path + "." + k
		}
		if cv, keep := s.pick(child, childPath); keep {
			out[k] = cv
		}
	}
	if found && included {
		return out, true
	}
	return out, len(out) > 0
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
