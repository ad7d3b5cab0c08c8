package stacclient

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConvertFilterFor(t *testing.T) {
	const (
		filterClass = "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter"
		jsonClass   = "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json"
		textClass   = "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text"
	)
	caps := func(classes ...string) *Capabilities { return DetectCapabilities(classes, nil) }
	text := func(s string) json.RawMessage { raw, _ := json.Marshal(s); return raw }
	for _, c := range []struct {
		name       string
		p          SearchParams
		caps       *Capabilities
		wantLang   string
		wantFilter string
		wantNote   string
		wantErr    string
	}{
		{"text to json", SearchParams{Filter: text("eo:cloud_cover < 10"), FilterLang: FilterLangCQL2Text}, caps(filterClass, jsonClass),
			FilterLangCQL2JSON, `{"args":[{"property":"eo:cloud_cover"},10],"op":"<"}`, "converted from cql2-text to cql2-json", ""},
		{"json to text", SearchParams{Filter: json.RawMessage(`{"op":"<","args":[{"property":"eo:cloud_cover"},10]}`)}, caps(filterClass, textClass),
			FilterLangCQL2Text, `"(\"eo:cloud_cover\" < 10)"`, "converted from cql2-json to cql2-text", ""},
		{"both declared: as given", SearchParams{Filter: text("a = 1"), FilterLang: FilterLangCQL2Text}, caps(filterClass, textClass, jsonClass),
			FilterLangCQL2Text, `"a = 1"`, "", ""},
		{"neither declared: as given", SearchParams{Filter: text("a = 1"), FilterLang: FilterLangCQL2Text}, caps(filterClass),
			FilterLangCQL2Text, `"a = 1"`, "", ""},
		{"no filter class: as given", SearchParams{Filter: text("a = 1"), FilterLang: FilterLangCQL2Text}, caps(jsonClass),
			FilterLangCQL2Text, `"a = 1"`, "", ""},
		{"text that does not parse", SearchParams{Filter: text("a = "), FilterLang: FilterLangCQL2Text}, caps(filterClass, jsonClass),
			FilterLangCQL2Text, `"a = "`, "", "ends where an operand was expected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, note, err := c.p.ConvertFilterFor(c.caps)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("err %v, want %q", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got.effectiveFilterLang() != c.wantLang || string(got.Filter) != c.wantFilter {
				t.Errorf("filter %s (%s), want %s (%s)", got.Filter, got.effectiveFilterLang(), c.wantFilter, c.wantLang)
			}
			if (c.wantNote == "") != (note == "") || !strings.Contains(note, c.wantNote) {
				t.Errorf("note %q, want %q", note, c.wantNote)
			}
		})
	}
}
