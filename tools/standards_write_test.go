package tools

import (
	"fmt"
	"strings"
	"testing"
)

// TestCreateItemByTheSTACSchemas: the documents issue 23 found written
// by create_item although stac-node-validator (with the official STAC
// schemas) refuses them are refused now, naming the member, and nothing
// is sent; its false rejects are written; warnings reach the notes.
func TestCreateItemByTheSTACSchemas(t *testing.T) {
	wc := newWritableCatalog(t, nil)
	cs := writeSession(t, wc.URL, sqliteWrites(t, t.TempDir()), nil)
	props := func(it map[string]any) map[string]any { return it["properties"].(map[string]any) }
	n := 0
	create := func(edit func(map[string]any)) (map[string]any, map[string]any) {
		n++
		it := itemArg(t, fmt.Sprintf("std-%d", n), 2)
		edit(it)
		return it, map[string]any{"collection_id": "survey", "item": it, "idempotency_key": fmt.Sprintf("k-std-%d", n)}
	}
	for _, c := range []struct {
		name, member string
		edit         func(map[string]any)
	}{
		{"gsd -1", "properties.gsd", func(it map[string]any) { props(it)["gsd"] = -1 }},
		{"cloud cover 150", "properties.eo:cloud_cover", func(it map[string]any) {
			it["stac_extensions"] = []any{"https://stac-extensions.github.io/eo/v1.0.0/schema.json"}
			props(it)["eo:cloud_cover"] = 150
		}},
		{"+01:00 datetime", "properties.datetime", func(it map[string]any) { props(it)["datetime"] = "2024-06-01T11:00:00+01:00" }},
		{"instruments as a string", "properties.instruments", func(it map[string]any) { props(it)["instruments"] = "msi" }},
		{"3-position ring", "geometry.coordinates[0]", func(it map[string]any) {
			it["geometry"] = map[string]any{"type": "Polygon", "coordinates": []any{[]any{[]any{2, 40}, []any{3, 40}, []any{2, 40}}}}
			it["bbox"] = []any{2, 40, 3, 40}
		}},
		{"stac_version 2.0.0", "stac_version", func(it map[string]any) { it["stac_version"] = "2.0.0" }},
	} {
		_, args := create(c.edit)
		text := callErr(t, cs, "create_item", args)
		if !strings.Contains(text, c.member) || !strings.Contains(text, "Nothing was sent") {
			t.Errorf("%s: error text does not name %s: %s", c.name, c.member, text)
		}
	}
	if wc.applied.Load() != 0 {
		t.Fatalf("%d refused documents applied", wc.applied.Load())
	}
	for _, c := range []struct {
		name, note string
		edit       func(map[string]any)
	}{
		{"leap second", "", func(it map[string]any) { props(it)["datetime"] = "2016-12-31T23:59:60Z" }},
		{"empty polygon", "geometry: is an empty Polygon", func(it map[string]any) {
			it["geometry"] = map[string]any{"type": "Polygon", "coordinates": []any{}}
		}},
		{"bbox not containing the geometry", "bbox: [50,50,51,51] does not contain", func(it map[string]any) { it["bbox"] = []any{50, 50, 51, 51} }},
		{"extension without an embedded schema", "not validated: https://example.com/ext/v1.0.0/schema.json", func(it map[string]any) {
			it["stac_extensions"] = []any{"https://example.com/ext/v1.0.0/schema.json"}
		}},
	} {
		_, args := create(c.edit)
		out := structured[WriteOut](t, callOK(t, cs, "create_item", args))
		if out.Status != "created" {
			t.Errorf("%s: %+v", c.name, out)
		}
		if c.note != "" && !strings.Contains(strings.Join(out.Notes, "\n"), c.note) {
			t.Errorf("%s: notes %q lack %q", c.name, out.Notes, c.note)
		}
	}
}
