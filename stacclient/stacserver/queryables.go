package stacserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"
)

// handleQueryables serves /queryables and /collections/{id}/queryables as a
// JSON Schema derived from the stored items: every property name found,
// with its type (and format for timestamps) guessed from the values.
func (s *Server) handleQueryables(w http.ResponseWriter, r *http.Request) {
	cid := r.PathValue("collectionId")
	var collections []string
	title := "Queryables for all collections"
	if cid != "" {
		if _, ok := s.knownCollection(w, cid); !ok {
			return
		}
		collections = []string{cid}
		title = fmt.Sprintf("Queryables for collection %q", cid)
	}
	items := s.store().allItems(collections)
	props := map[string]any{
		"id":         map[string]any{"title": "Item ID", "description": "The item's id", "type": "string"},
		"collection": map[string]any{"title": "Collection ID", "description": "The id of the item's collection", "type": "string"},
		"geometry": map[string]any{"title": "Item geometry", "description": "The item's footprint (use s_intersects)",
			"$ref": "https://geojson.org/schema/Geometry.json"},
	}
	for name, schema := range deriveSchemas(items) {
		props[name] = schema
	}
	writeJSON(w, http.StatusOK, mediaSchemaJSON, map[string]any{
		"$schema":              "https://json-schema.org/draft/2019-09/schema",
		"$id":                  baseURL(r) + r.URL.Path,
		"type":                 "object",
		"title":                title,
		"properties":           props,
		"additionalProperties": true,
	})
}

// deriveSchemas guesses a JSON Schema for every item property.
func deriveSchemas(items []*storedItem) map[string]any {
	type stats struct {
		count   int
		kinds   map[string]bool
		allTS   bool // every string value is an RFC 3339 timestamp
		allDate bool // every string value is a date YYYY-MM-DD
	}
	seen := map[string]*stats{}
	for _, it := range items {
		props, _ := it.doc["properties"].(map[string]any)
		for name, v := range props {
			if v == nil {
				continue
			}
			st := seen[name]
			if st == nil {
				st = &stats{kinds: map[string]bool{}, allTS: true, allDate: true}
				seen[name] = st
			}
			st.count++
			kind := jsonKind(v)
			st.kinds[kind] = true
			if kind == "string" {
				if _, err := time.Parse(time.RFC3339Nano, v.(string)); err != nil {
					st.allTS = false
				}
				if _, err := time.Parse(time.DateOnly, v.(string)); err != nil {
					st.allDate = false
				}
			}
		}
	}
	out := map[string]any{}
	for name, st := range seen {
		kinds := slices.Sorted(maps.Keys(st.kinds))
		if len(kinds) == 2 && st.kinds["integer"] && st.kinds["number"] {
			kinds = []string{"number"}
		}
		// One description for every derived property of the answer (not
		// "in N of M items" with N per property): a reader is told how the
		// schema was made once, not 48 times in near-identical sentences.
		// How many items carry the property stays machine-readable in an
		// annotation keyword (JSON Schema ignores unknown keywords).
		schema := map[string]any{
			"title":        name,
			"description":  fmt.Sprintf("Derived from the values of the %d items", len(items)),
			"x-item-count": st.count,
		}
		if len(kinds) == 1 {
			schema["type"] = kinds[0]
		} else {
			schema["type"] = kinds
		}
		if len(kinds) == 1 && kinds[0] == "string" && st.allTS {
			schema["format"] = "date-time"
		}
		if len(kinds) == 1 && kinds[0] == "string" && st.allDate {
			// A CQL2 Date queryable: compare it with DATE('…').
			schema["format"] = "date"
		}
		out[name] = schema
	}
	return out
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}
