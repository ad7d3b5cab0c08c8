package stacserver

import (
	"sort"
	"strings"
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
			c, ok := compareValues(a, b)
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

// alwaysKept are item members the fields extension never removes, so a
// trimmed item is still a valid, linkable Feature.
var alwaysKept = []string{"type", "id", "collection", "links", "stac_version"}

// applyFields returns a copy of doc trimmed by the fields extension: with
// an include list only those paths (plus alwaysKept) remain; excluded paths
// are then removed. Paths are dotted ("properties.eo:cloud_cover").
func applyFields(doc map[string]any, f *fieldsSpec) map[string]any {
	if f == nil || (len(f.Include) == 0 && len(f.Exclude) == 0) {
		return doc
	}
	var out map[string]any
	if len(f.Include) > 0 {
		out = map[string]any{}
		for _, k := range alwaysKept {
			if v, ok := doc[k]; ok {
				out[k] = v
			}
		}
		for _, path := range f.Include {
			copyPath(doc, out, strings.Split(path, "."))
		}
	} else {
		out = shallowCopy(doc)
	}
	for _, path := range f.Exclude {
		if contains(alwaysKept, path) {
			continue
		}
		deletePath(out, strings.Split(path, "."))
	}
	return out
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// copyPath copies src[path] into dst, copying the maps on the way so that
// the stored document is never modified.
func copyPath(src, dst map[string]any, path []string) {
	v, ok := src[path[0]]
	if !ok {
		return
	}
	if len(path) == 1 {
		dst[path[0]] = v
		return
	}
	srcChild, isMap := v.(map[string]any)
	if !isMap {
		return
	}
	// dst may already hold the stored map itself (an earlier include of the
	// parent path), so write into a copy.
	dstChild, _ := dst[path[0]].(map[string]any)
	if dstChild == nil {
		dstChild = map[string]any{}
	} else {
		dstChild = shallowCopy(dstChild)
	}
	dst[path[0]] = dstChild
	copyPath(srcChild, dstChild, path[1:])
}

// deletePath removes m[path], copying maps on the way (m itself is a copy).
func deletePath(m map[string]any, path []string) {
	if len(path) == 1 {
		delete(m, path[0])
		return
	}
	child, ok := m[path[0]].(map[string]any)
	if !ok {
		return
	}
	child = shallowCopy(child)
	m[path[0]] = child
	deletePath(child, path[1:])
}
