package stacclient

import (
	"encoding/json"
	"testing"
)

func TestSortByForms(t *testing.T) {
	dtDesc := SortField{Field: "properties.datetime", Direction: "desc"}
	idAsc := SortField{Field: "id", Direction: "asc"}
	collAsc := SortField{Field: "collection", Direction: "asc"}
	tests := []goodInput[[]SortField]{
		{"null", nil, nil},
		{"empty string", "", nil},
		{"pystac-client string", "-properties.datetime,+id,collection", []SortField{dtDesc, idAsc, collAsc}},
		{"spaces around terms", " -properties.datetime , +id ", []SortField{dtDesc, idAsc}},
		{"list of strings", []any{"-properties.datetime", "+id"}, []SortField{dtDesc, idAsc}},
		{"list of comma strings", []string{"-properties.datetime,id", "collection"}, []SortField{dtDesc, idAsc, collAsc}},
		{"list of objects", []any{
			map[string]any{"field": "properties.datetime", "direction": "desc"},
			map[string]any{"field": "id", "direction": "asc"},
		}, []SortField{dtDesc, idAsc}},
		{"long direction names, any case", []any{
			map[string]any{"field": "properties.datetime", "direction": "Descending"},
			map[string]any{"field": "id", "direction": "ascending"},
		}, []SortField{dtDesc, idAsc}},
		{"object without direction is asc", []any{map[string]any{"field": "id"}}, []SortField{idAsc}},
		{"JSON string of objects", `[{"field":"properties.datetime","direction":"desc"}]`, []SortField{dtDesc}},
		{"JSON string of one object", `{"field":"id","direction":"asc"}`, []SortField{idAsc}},
		{"JSON string of strings", `["-properties.datetime","id"]`, []SortField{dtDesc, idAsc}},
		{"Go SortFields", []SortField{{Field: "id", Direction: "ascending"}}, []SortField{idAsc}},
		{"raw JSON", json.RawMessage(`["-properties.datetime"]`), []SortField{dtDesc}},
	}
	expectParsed(t, ParseSortBy, tests)
}

func TestSortByErrors(t *testing.T) {
	tests := []badInput{
		{"bad direction", []any{map[string]any{"field": "id", "direction": "up"}}, `direction "up"`},
		{"unknown member", []any{map[string]any{"field": "id", "order": "asc"}}, `unknown member "order"`},
		{"field not a string", []any{map[string]any{"field": 3.0}}, "field must be a string"},
		{"empty field after sign", "-", "empty field name"},
		{"double sign", "--id", "more than one +/- prefix"},
		{"space inside a field", "properties.eo cloud", "contains a space"},
		{"repeated field", "id,-id", `"id" appears more than once`},
		{"number entry", []any{1.0}, "entry 0 is a number"},
		{"broken JSON", `[{"field":`, "does not decode"},
		{"a number", 3.0, "not a sort specification"},
	}
	expectParamErrors(t, "sortby", ParseSortBy, tests, `"-properties.datetime,+id,collection"`)
}

func TestFieldsForms(t *testing.T) {
	tests := []goodInput[*Fields]{
		{"null", nil, nil},
		{"empty string", "", nil},
		{"prefix string", "id,-links,+properties.eo:cloud_cover", &Fields{Include: []string{"id", "properties.eo:cloud_cover"}, Exclude: []string{"links"}}},
		{"only excludes", "-assets,-links", &Fields{Exclude: []string{"assets", "links"}}},
		{"list", []any{"id", "-links"}, &Fields{Include: []string{"id"}, Exclude: []string{"links"}}},
		{"Go list", []string{"id", "-links"}, &Fields{Include: []string{"id"}, Exclude: []string{"links"}}},
		{"object", map[string]any{"include": []any{"id"}, "exclude": []any{"links"}}, &Fields{Include: []string{"id"}, Exclude: []string{"links"}}},
		{"object with comma strings", map[string]any{"include": "id,bbox"}, &Fields{Include: []string{"id", "bbox"}}},
		{"JSON string object", `{"include":["id"],"exclude":["links"]}`, &Fields{Include: []string{"id"}, Exclude: []string{"links"}}},
		{"JSON string list", `["id","-links"]`, &Fields{Include: []string{"id"}, Exclude: []string{"links"}}},
		{"empty object", map[string]any{}, nil},
		{"Go Fields", &Fields{Include: []string{"id"}}, &Fields{Include: []string{"id"}}},
		{"empty Go Fields", &Fields{}, nil},
	}
	expectParsed(t, ParseFields, tests)
}

func TestFieldsErrors(t *testing.T) {
	tests := []badInput{
		{"unknown member", map[string]any{"includes": []any{"id"}}, `unknown member "includes"`},
		{"both included and excluded", "id,-id", `"id" is both included and excluded`},
		{"number entry", []any{"id", 2.0}, "entry 1 is a number"},
		{"sign inside object list", map[string]any{"exclude": []any{"-links"}}, "more than one +/- prefix"},
		{"include not a list", map[string]any{"include": 1.0}, "include:"},
		{"a boolean", true, "not a fields specification"},
	}
	expectParamErrors(t, "fields", ParseFields, tests, `{"include": [...], "exclude": [...]}`)
}
