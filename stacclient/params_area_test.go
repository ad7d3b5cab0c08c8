package stacclient

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseAreaForms(t *testing.T) {
	square := `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}`
	sorted := `{"coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]],"type":"Polygon"}` // as ParseIntersects writes it
	for _, c := range []struct {
		name       string
		in         any
		bbox       []float64
		intersects string
	}{
		{"absent", nil, nil, ""},
		{"bbox list", []any{1.0, 2.0, 3.0, 4.0}, []float64{1, 2, 3, 4}, ""},
		{"bbox of numeric strings", []any{"1", "2", "3", "4"}, []float64{1, 2, 3, 4}, ""},
		{"bbox comma string", "1,2,3,4", []float64{1, 2, 3, 4}, ""},
		{"bbox JSON string", "[1,2,3,4]", []float64{1, 2, 3, 4}, ""},
		{"Go bbox", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, ""},
		{"geometry object", decodeForTest(t, square), nil, sorted},
		{"geometry JSON string", square, nil, sorted},
		{"raw geometry", json.RawMessage(square), nil, sorted},
		{"Feature", decodeForTest(t, `{"type":"Feature","properties":{},"geometry":`+square+`}`), nil, sorted},
	} {
		t.Run(c.name, func(t *testing.T) {
			bbox, intersects, err := ParseArea("aoi", c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(bbox, c.bbox) || string(intersects) != c.intersects {
				t.Errorf("ParseArea(%#v) = %v, %s; want %v, %s", c.in, bbox, intersects, c.bbox, c.intersects)
			}
		})
	}
}

func TestParseAreaErrorsNameTheArgument(t *testing.T) {
	tests := []badInput{
		{"3 numbers", []any{1.0, 2.0, 3.0}, "3 numbers"},
		{"not a geometry", map[string]any{"type": "Circle"}, "not a GeoJSON geometry type"},
		{"a number", 5.0, "neither a bbox nor a GeoJSON object"},
		{"broken JSON", `{"type":`, "does not decode"},
	}
	expectParamErrors(t, "aoi", func(v any) (any, error) {
		b, g, err := ParseArea("aoi", v)
		return []any{b, g}, err
	}, tests)
}

func decodeForTest(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
