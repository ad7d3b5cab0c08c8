package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// GetQueryablesIn optionally names one collection.
type GetQueryablesIn struct {
	CatalogArg
	CollectionID StringList `json:"collection_id,omitempty" jsonschema:"omit for catalog-wide"`
}

// QueryableInfo is one property a filter or query can use.
type QueryableInfo struct {
	Name        string   `json:"name" jsonschema:"property name to use in filter/query, e.g. eo:cloud_cover"`
	Type        string   `json:"type,omitempty" jsonschema:"JSON type(s), e.g. number, string; local $refs are resolved, a remote one is given as \"$ref URL\""`
	Format      string   `json:"format,omitempty" jsonschema:"format, e.g. date-time"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []any    `json:"enum,omitempty" jsonschema:"allowed values, when the schema lists them"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
}

// GetQueryablesOut lists queryable properties.
type GetQueryablesOut struct {
	CollectionID string          `json:"collection_id,omitempty" jsonschema:"the collection asked about; empty for catalog-wide queryables"`
	Count        int             `json:"count"`
	Queryables   []QueryableInfo `json:"queryables"`
	Notes        []string        `json:"notes"`
}

// GetQueryables is the get_queryables tool.
func GetQueryables() Tool {
	return define(&mcp.Tool{
		Name:  "get_queryables",
		Title: "Queryable properties",
		Description: "The properties filter and query can use, with type, range and allowed values: catalog-wide or for one collection.\n" +
			`Example: {"collection_id":"sentinel-2-l2a"}`,
		Annotations: readOnlyAnnotations("Queryable properties"),
	}, true, getQueryables)
}

func getQueryables(ctx context.Context, c *Call, in GetQueryablesIn) (GetQueryablesOut, string, error) {
	tool := c.Tool
	fail := failWith[GetQueryablesOut]()
	ids, err := in.CollectionID.Strings("collection_id")
	if err != nil {
		return fail(err)
	}
	if len(ids) > 1 {
		return fail(&stacclient.ParamError{Param: "collection_id", Got: strings.Join(ids, ","),
			Reason: fmt.Sprintf("%d collection ids", len(ids)), Accepted: "one collection id (call once per collection), or none for the catalog-wide queryables"})
	}
	id := ""
	if len(ids) == 1 {
		id = ids[0]
	}
	q, err := c.Catalog.Client.Queryables(ctx, id)
	switch {
	case isKind(err, stacclient.KindNotFound) && id != "":
		if _, cerr := c.Catalog.Client.Collection(ctx, id); isKind(cerr, stacclient.KindNotFound) {
			return GetQueryablesOut{}, "", collectionNotFound(ctx, c, tool, id, err)
		}
		return GetQueryablesOut{}, "", actionable(err, "get_queryables: the catalog has no queryables for collection '%s' — call get_queryables without collection_id for the catalog-wide ones, or get_collection for its summaries.", id)
	case isKind(err, stacclient.KindNotFound), isKind(err, stacclient.KindUnsupported):
		return GetQueryablesOut{}, "", actionable(err, "get_queryables: the catalog does not publish queryables (%v) — get_collection's summaries show the properties items carry; query/filter may still work on them.", err)
	case err != nil:
		return fail(err)
	}
	out := GetQueryablesOut{CollectionID: id, Queryables: queryableList(q), Notes: []string{}}
	out.Count = len(out.Queryables)
	if out.Count == 0 {
		out.Notes = append(out.Notes, "the queryables document lists no properties; the catalog may still accept filters on item properties (see get_collection summaries)")
	}
	if q.Extra != nil {
		if raw, ok := q.Extra["additionalProperties"]; ok && strings.TrimSpace(string(raw)) != "false" {
			out.Notes = append(out.Notes, "additionalProperties is allowed: properties not listed here may be queryable too")
		}
	}
	return out, queryablesText(out), nil
}

// queryableList flattens the queryables schema, sorted by name. A
// property that only references a definition ("$ref": "#/$defs/cloud")
// takes its type, format, enum and range from it; its own title and
// description win.
func queryableList(q *stacclient.Queryables) []QueryableInfo {
	var doc any
	if raw, err := json.Marshal(q); err == nil {
		_ = json.Unmarshal(raw, &doc)
	}
	out := []QueryableInfo{}
	for name, raw := range q.Properties {
		info := QueryableInfo{Name: name}
		var schema map[string]any
		if err := json.Unmarshal(raw, &schema); err == nil {
			fillQueryable(&info, resolveRefs(schema, doc))
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// maxRefDepth bounds a chain of local references (and a cycle).
const maxRefDepth = 8

// resolveRefs merges the local definitions schema points to ("#/..." JSON
// pointers into doc) under its own members, following chains up to
// maxRefDepth. A remote reference stays as it is (stac-mcp does not fetch
// schemas), unless it names a well-known STAC field (wellKnownRefs).
func resolveRefs(schema map[string]any, doc any) map[string]any {
	merged := map[string]any{}
	ref := ""
	for depth := 0; depth < maxRefDepth; depth++ {
		for k, v := range schema {
			if _, set := merged[k]; !set && k != "$ref" {
				merged[k] = v
			}
		}
		ref, _ = schema["$ref"].(string)
		if ref == "" {
			return merged
		}
		target, ok := jsonPointer(doc, ref)
		if !ok {
			if known := wellKnownRef(ref); known != nil {
				target, ok = known, true
			}
		}
		if !ok {
			if _, set := merged["$ref"]; !set {
				merged["$ref"] = ref
			}
			return merged
		}
		schema = target
	}
	merged["$ref"] = ref // a chain too long (or a cycle): show where it stopped
	return merged
}

// jsonPointer resolves a local reference "#/a/b" in doc.
func jsonPointer(doc any, ref string) (map[string]any, bool) {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	node := doc
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, isObject := node.(map[string]any)
		if !isObject {
			return nil, false
		}
		if node, ok = m[part]; !ok {
			return nil, false
		}
	}
	target, ok := node.(map[string]any)
	return target, ok
}

// wellKnownRef gives the schema of the STAC fields catalogs most often
// reference remotely (pgstac and stac-fastapi point id, datetime and
// eo:cloud_cover at the STAC and eo schemas), so their type shows without
// fetching anything.
func wellKnownRef(ref string) map[string]any {
	if !strings.HasPrefix(ref, "https://schemas.stacspec.org/") && !strings.HasPrefix(ref, "https://stac-extensions.github.io/") {
		return nil
	}
	switch {
	case strings.HasSuffix(ref, "eo:cloud_cover"):
		return map[string]any{"type": "number", "minimum": 0.0, "maximum": 100.0}
	case strings.HasSuffix(ref, "/properties/datetime"), strings.HasSuffix(ref, "/properties/start_datetime"),
		strings.HasSuffix(ref, "/properties/end_datetime"):
		return map[string]any{"type": "string", "format": "date-time"}
	case strings.HasSuffix(ref, "/properties/id"), strings.HasSuffix(ref, "#/collection"):
		return map[string]any{"type": "string"}
	}
	return nil
}

// fillQueryable copies what a model needs from a (resolved) property schema.
func fillQueryable(info *QueryableInfo, s map[string]any) {
	info.Type = schemaTypeName(s["type"])
	if items, ok := s["items"].(map[string]any); ok && info.Type == "array" {
		info.Type = "array of " + orDash(schemaTypeName(items["type"]))
	}
	if ref, _ := s["$ref"].(string); info.Type == "" && ref != "" {
		info.Type = "$ref " + ref
	}
	info.Format, _ = s["format"].(string)
	info.Title, _ = s["title"].(string)
	info.Description, _ = s["description"].(string)
	info.Enum, _ = s["enum"].([]any)
	info.Minimum, info.Maximum = schemaNumber(s["minimum"]), schemaNumber(s["maximum"])
}

func schemaNumber(v any) *float64 {
	if f, ok := toFloat(v); ok {
		return &f
	}
	return nil
}

// schemaTypeName renders a JSON Schema "type" (a string or a list).
func schemaTypeName(t any) string {
	switch x := t.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "|")
	}
	return ""
}

func queryablesText(out GetQueryablesOut) string {
	var b strings.Builder
	scope := "catalog-wide"
	if out.CollectionID != "" {
		scope = "collection " + out.CollectionID
	}
	fmt.Fprintf(&b, "%d queryable properties (%s):\n", out.Count, scope)
	// A description most properties share (the demo derives every one
	// "from the values in 30 of 30 items") is said once, not 48 times.
	shared, sharedBy := commonDescription(out.Queryables)
	for _, q := range out.Queryables {
		fmt.Fprintf(&b, "- %s", q.Name)
		if q.Type != "" {
			fmt.Fprintf(&b, " (%s", q.Type)
			if q.Format != "" {
				fmt.Fprintf(&b, ", %s", q.Format)
			}
			b.WriteString(")")
		}
		if q.Title != "" && q.Title != q.Description && q.Title != q.Name {
			fmt.Fprintf(&b, " %q", q.Title)
		}
		if q.Description != "" && (sharedBy == 0 || q.Description != shared) {
			fmt.Fprintf(&b, ": %s", q.Description)
		}
		if q.Minimum != nil || q.Maximum != nil {
			fmt.Fprintf(&b, " range %s..%s", numberOrDots(q.Minimum), numberOrDots(q.Maximum))
		}
		if len(q.Enum) > 0 {
			fmt.Fprintf(&b, " values %s", compactJSON(q.Enum))
		}
		b.WriteString("\n")
	}
	if sharedBy > 0 {
		fmt.Fprintf(&b, "The %d properties above without a description here are each described as: %s\n", sharedBy, shared)
	}
	writeLines(&b, "Note: ", out.Notes)
	b.WriteString(`Use these names in search_items filter, e.g. "eo:cloud_cover < 10".`)
	return b.String()
}

// commonDescription is the description at least 3 queryables share, the
// most shared one, and how many share it (0: none is shared that much).
func commonDescription(qs []QueryableInfo) (string, int) {
	counts := map[string]int{}
	best, n := "", 0
	for _, q := range qs {
		if q.Description == "" {
			continue
		}
		counts[q.Description]++
		if c := counts[q.Description]; c > n || (c == n && q.Description < best) {
			best, n = q.Description, c
		}
	}
	if n < 3 {
		return "", 0
	}
	return best, n
}

// numberOrDots writes an optional bound, ".." when open.
func numberOrDots(f *float64) string {
	if f == nil {
		return ".."
	}
	return formatNumber(*f)
}
