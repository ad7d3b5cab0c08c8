package stacclient

import (
	"encoding/json"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

func TestParamIntersectsForms(t *testing.T) {
	polygon := `{"coordinates":[[[-10,40],[5,40],[5,50],[-10,50],[-10,40]]],"type":"Polygon"}`
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, ""},
		{"empty string", " ", ""},
		{"JSON string polygon, compacted with sorted keys", `{ "type": "Polygon", "coordinates": [[[-10,40],[5,40],[5,50],[-10,50],[-10,40]]] }`, polygon},
		{"decoded object", map[string]any{"type": "Polygon", "coordinates": []any{[]any{
			[]any{-10.0, 40.0}, []any{5.0, 40.0}, []any{5.0, 50.0}, []any{-10.0, 50.0}, []any{-10.0, 40.0}}}}, polygon},
		{"Feature: geometry taken", `{"type":"Feature","properties":{"name":"x"},"geometry":{"type":"Point","coordinates":[1.5,2]}}`,
			`{"coordinates":[1.5,2],"type":"Point"}`},
		{"3D position kept", `{"type":"Point","coordinates":[1,2,300]}`, `{"coordinates":[1,2,300],"type":"Point"}`},
		{"MultiPoint", `{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}`, `{"coordinates":[[1,2],[3,4]],"type":"MultiPoint"}`},
		{"LineString", `{"type":"LineString","coordinates":[[1,2],[3,4]]}`, `{"coordinates":[[1,2],[3,4]],"type":"LineString"}`},
		{"MultiLineString", `{"type":"MultiLineString","coordinates":[[[1,2],[3,4]]]}`, `{"coordinates":[[[1,2],[3,4]]],"type":"MultiLineString"}`},
		{"MultiPolygon", `{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]}`, `{"coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]],"type":"MultiPolygon"}`},
		{"GeometryCollection", `{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2]}]}`,
			`{"geometries":[{"coordinates":[1,2],"type":"Point"}],"type":"GeometryCollection"}`},
		{"raw JSON", json.RawMessage(`{"type":"Point","coordinates":[180,-90]}`), `{"coordinates":[180,-90],"type":"Point"}`},
		{"orb geometry", orb.Ring{{0, 0}, {1, 0}, {1, 1}, {0, 0}}, `{"coordinates":[[[0,0],[1,0],[1,1],[0,0]]],"type":"Polygon"}`},
		{"geojson geometry", geojson.NewGeometry(orb.Point{3, 4}), `{"coordinates":[3,4],"type":"Point"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIntersects(tt.in)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParamIntersectsErrors(t *testing.T) {
	tests := []badInput{
		{"unclosed ring", `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}`, "ring 0 is not closed"},
		{"ring too short", `{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}`, "ring 0 has 3 positions"},
		{"line too short", `{"type":"LineString","coordinates":[[0,0]]}`, "at least 2 positions"},
		{"latitude out of range", `{"type":"Point","coordinates":[10,95]}`, "latitude 95 is outside -90..90"},
		{"longitude out of range", `{"type":"Point","coordinates":[190,5]}`, "longitude 190 is outside -180..180"},
		{"one-number position", `{"type":"Point","coordinates":[1]}`, "has 1 numbers"},
		{"four-number position", `{"type":"Point","coordinates":[1,2,3,4]}`, "has 4 numbers"},
		{"wrong nesting", `{"type":"Polygon","coordinates":[[0,0],[1,1]]}`, "is a number, not a list"},
		{"missing coordinates", `{"type":"Point"}`, "coordinates is a null"},
		{"empty polygon", `{"type":"Polygon","coordinates":[]}`, "coordinates is empty"},
		{"unknown type", `{"type":"Circle","coordinates":[0,0]}`, `type Circle is not a GeoJSON geometry type`},
		{"FeatureCollection", `{"type":"FeatureCollection","features":[]}`, "not a GeoJSON geometry type"},
		{"Feature without geometry", `{"type":"Feature","geometry":null}`, "no geometry object"},
		{"empty GeometryCollection", `{"type":"GeometryCollection","geometries":[]}`, "non-empty geometries"},
		{"bad member of a collection", `{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[0,99]}]}`, "geometry.geometries[0].coordinates latitude 99"},
		{"string coordinate", `{"type":"Point","coordinates":["1",2]}`, "not a finite number"},
		{"not JSON", `POLYGON((0 0,1 0,1 1,0 0))`, "not valid JSON"},
		{"JSON list", `[1,2]`, "not a GeoJSON object"},
		{"a number", 4.0, "not a GeoJSON object"},
		{"orb point out of range", orb.Point{200, 0}, "longitude 200"},
	}
	expectParamErrors(t, "intersects", ParseIntersects, tests)
}
