package tools

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

func TestStringListForms(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string][]string{
		`["a","b"]`:       {"a", "b"},
		`"[\"a\",\"b\"]"`: {"a", "b"},
		`"a, b"`:          {"a", "b"},
		`null`:            nil,
		``:                nil,
	} {
		got, err := StringList(raw).Strings("collections")
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v, %v; want %v", raw, got, err, want)
		}
	}
	_, err := StringList(`[1,2]`).Strings("collections")
	var pe *stacclient.ParamError
	if !errors.As(err, &pe) || pe.Param != "collections" {
		t.Errorf("[1,2]: err %v, want a ParamError naming collections", err)
	}
}

func TestIntArg(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{``: 7, `null`: 7, `5`: 5, `"12"`: 12, `" "`: 7} {
		got, err := IntArg(raw).Int("max_items", 7, 1, 50, "")
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", raw, got, err, want)
		}
	}
	for raw, reason := range map[string]string{`0`: "out of range", `51`: "out of range", `2.5`: "fractional", `"ten"`: "not a whole number", `true`: "not a number"} {
		_, err := IntArg(raw).Int("max_items", 7, 1, 50, "")
		var pe *stacclient.ParamError
		if !errors.As(err, &pe) || pe.Param != "max_items" || !strings.Contains(pe.Reason, reason) || !strings.Contains(pe.Accepted, "1 to 50") {
			t.Errorf("%s: err %#v, want max_items %q with the accepted range", raw, err, reason)
		}
	}
}

func TestLooseArgumentsRoundTripThroughJSON(t *testing.T) {
	t.Parallel()
	var in SearchItemsIn
	const args = `{"collections":"[\"a\"]","bbox":[1,2,3,4],"query":{"gsd":{"lt":10}},"max_items":"3"}`
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		t.Fatal(err)
	}
	p, err := in.params()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Collections, []string{"a"}) || !slices.Equal(p.BBox, []float64{1, 2, 3, 4}) || p.Query == nil {
		t.Errorf("params = %+v", p)
	}
	out, err := json.Marshal(in)
	if err != nil || !strings.Contains(string(out), `"bbox":[1,2,3,4]`) {
		t.Errorf("re-encoded %s, %v", out, err)
	}
}

func TestArgTypeSchemasAdmitStrings(t *testing.T) {
	t.Parallel()
	s := mustInputSchema[SearchItemsIn]("search_items")
	for _, name := range []string{"collections", "ids", "bbox", "intersects", "query", "filter", "sortby", "fields", "limit", "max_items"} {
		p := s.Properties[name]
		if p == nil || !slices.Contains(p.Types, "string") {
			t.Errorf("%s schema %+v does not admit a string", name, p)
		}
	}
	// Their forms are explained once, in the server instructions, not in
	// each tool's schema (tools/list is context spent before any work).
	instructions := Instructions(Inventory())
	for _, name := range []string{"collections", "ids", "bbox", "intersects", "aoi", "datetime", "query", "filter", "filter_lang", "sortby", "fields", "limit", "max_items", "cursor", "catalog_url"} {
		if !strings.Contains(instructions, "`"+name+"`") {
			t.Errorf("the instructions do not explain %s", name)
		}
	}
	// aoi is explained with the tools that take it, found by their aliases.
	if want := "- `aoi` (`estimate_data_size`, `map_items`, `check_coverage`)"; !strings.Contains(instructions, want) {
		t.Errorf("the instructions do not name the tools that take aoi (%q):\n%s", want, instructions)
	}
}
