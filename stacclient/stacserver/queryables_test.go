package stacserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestQueryablesDerivedFromData(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/queryables")
	wantStatus(t, r, http.StatusOK)
	if !strings.HasPrefix(r.contentType, mediaSchemaJSON) {
		t.Errorf("content type %q, want %s", r.contentType, mediaSchemaJSON)
	}
	if r.body["$schema"] == nil || r.body["type"] != "object" || r.body["$id"] != ts.URL+"/queryables" {
		t.Errorf("not a JSON Schema document: %s", r.raw)
	}
	props := r.body["properties"].(map[string]any)
	want := map[string][2]string{ // name → type, format
		"eo:cloud_cover": {"integer", ""},
		"gsd":            {"number", ""},
		"platform":       {"string", ""},
		"datetime":       {"string", "date-time"},
		"start_datetime": {"string", "date-time"},
		"id":             {"string", ""},
		"collection":     {"string", ""},
	}
	for name, tf := range want {
		p, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("queryable %q missing", name)
			continue
		}
		if p["type"] != tf[0] {
			t.Errorf("%s type %v, want %s", name, p["type"], tf[0])
		}
		if f, _ := p["format"].(string); f != tf[1] {
			t.Errorf("%s format %q, want %q", name, f, tf[1])
		}
		if p["title"] == nil || p["description"] == nil {
			t.Errorf("%s lacks title/description: %v", name, p)
		}
	}
	if g, _ := props["geometry"].(map[string]any); g["$ref"] == nil {
		t.Errorf("geometry queryable %v", props["geometry"])
	}
	// 25 sentinel + 4 landsat items carry eo:cloud_cover.
	// The count is an annotation; the description is the same for every
	// derived property, so a reader is told it once.
	if n := fmt.Sprint(props["eo:cloud_cover"].(map[string]any)["x-item-count"]); n != "29" {
		t.Errorf("x-item-count %v, want 29 (how many items had the property)", props["eo:cloud_cover"])
	}
	if a, b := props["eo:cloud_cover"].(map[string]any)["description"], props["platform"].(map[string]any)["description"]; a != b || a != "Derived from the values of the 32 items" {
		t.Errorf("descriptions differ per property: %q, %q", a, b)
	}

	c := ts.get(t, "/collections/dem/queryables")
	wantStatus(t, c, http.StatusOK)
	cp := c.body["properties"].(map[string]any)
	if cp["eo:cloud_cover"] != nil || cp["platform"] != nil || cp["start_datetime"] == nil {
		t.Errorf("dem queryables should hold only dem's properties: %v", cp)
	}
	wantStatus(t, ts.get(t, "/collections/nope/queryables"), http.StatusNotFound)
}
