package tools

import (
	"encoding/json"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// TestQueryablesResolveLocalRefs: a property that only references a
// definition shows the definition's type, range and enum; its own title
// wins; remote references to well-known STAC fields get their type, other
// remote ones stay visible as "$ref URL"; a reference cycle ends.
func TestQueryablesResolveLocalRefs(t *testing.T) {
	t.Parallel()
	doc := `{
	  "$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object",
	  "$defs": {
	    "percent": {"type": "number", "minimum": 0, "maximum": 100, "title": "Percent"},
	    "cloud": {"$ref": "#/$defs/percent", "description": "cloud cover"},
	    "orbit": {"type": "string", "enum": ["ascending", "descending"]},
	    "loop": {"$ref": "#/$defs/loop"}
	  },
	  "definitions": {"a~1b": {"type": "integer"}},
	  "properties": {
	    "eo:cloud_cover": {"$ref": "#/$defs/cloud", "title": "Cloud cover"},
	    "sat:orbit_state": {"$ref": "#/$defs/orbit"},
	    "escaped": {"$ref": "#/definitions/a~01b"},
	    "slashed": {"$ref": "#/definitions/a~1b"},
	    "looping": {"$ref": "#/$defs/loop"},
	    "datetime": {"description": "Datetime", "$ref": "https://schemas.stacspec.org/v1.0.0/item-spec/json-schema/datetime.json#/properties/datetime"},
	    "remote_cloud": {"$ref": "https://stac-extensions.github.io/eo/v1.0.0/schema.json#/definitions/fields/properties/eo:cloud_cover"},
	    "geometry": {"$ref": "https://geojson.org/schema/Feature.json"}
	  }
	}`
	var q stacclient.Queryables
	if err := json.Unmarshal([]byte(doc), &q); err != nil {
		t.Fatal(err)
	}
	got := map[string]QueryableInfo{}
	for _, info := range queryableList(&q) {
		got[info.Name] = info
	}
	cloud := got["eo:cloud_cover"]
	if cloud.Type != "number" || cloud.Minimum == nil || *cloud.Maximum != 100 || cloud.Title != "Cloud cover" || cloud.Description != "cloud cover" {
		t.Errorf("eo:cloud_cover = %+v, want number 0..100 titled Cloud cover, described from the chain", cloud)
	}
	if o := got["sat:orbit_state"]; o.Type != "string" || len(o.Enum) != 2 {
		t.Errorf("sat:orbit_state = %+v, want a string enum", o)
	}
	if got["escaped"].Type != "integer" {
		t.Errorf("escaped = %+v, want the definition named a~1b (~0 is ~ in a JSON pointer)", got["escaped"])
	}
	if got["slashed"].Type != "$ref #/definitions/a~1b" {
		t.Errorf("slashed = %+v, want a ref to a missing definition (a/b) shown as such", got["slashed"])
	}
	if got["looping"].Type != "$ref #/$defs/loop" {
		t.Errorf("looping = %+v, want the cycle to stop at the ref", got["looping"])
	}
	if d := got["datetime"]; d.Type != "string" || d.Format != "date-time" || d.Description != "Datetime" {
		t.Errorf("datetime = %+v, want string date-time from the STAC datetime schema", d)
	}
	if r := got["remote_cloud"]; r.Type != "number" || r.Maximum == nil {
		t.Errorf("remote eo:cloud_cover = %+v, want number 0..100", r)
	}
	if g := got["geometry"]; g.Type != "$ref https://geojson.org/schema/Feature.json" {
		t.Errorf("geometry = %+v, want the remote ref shown", g)
	}
}
