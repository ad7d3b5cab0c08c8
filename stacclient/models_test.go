package stacclient

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordedBodies returns the JSON response bodies of every 200 recording.
func recordedBodies(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "recordings", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	out := make(map[string][]byte)
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var f replayFixture
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if f.Status == 200 && f.BodyFormat == "json" {
			out[file] = f.Body
		}
	}
	return out
}

// recordedItems returns every item in the recordings (search pages and
// single static items), as raw JSON.
func recordedItems(t testing.TB) []json.RawMessage {
	t.Helper()
	var items []json.RawMessage
	for _, body := range recordedBodies(t) {
		var probe struct {
			Type     string            `json:"type"`
			Features []json.RawMessage `json:"features"`
		}
		if err := json.Unmarshal(body, &probe); err != nil {
			continue
		}
		if probe.Type == "Feature" {
			items = append(items, body)
		}
		items = append(items, probe.Features...)
	}
	return items
}

func TestModelsRoundTripEveryRecordedDocument(t *testing.T) {
	checked := 0
	for file, body := range recordedBodies(t) {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(body, &probe); err != nil {
			continue
		}
		var doc any
		switch {
		case probe["features"] != nil:
			doc = &ItemCollection{}
		case probe["collections"] != nil:
			doc = &CollectionList{}
		case probe["conformsTo"] != nil && probe["links"] == nil:
			continue // a bare /conformance document has no model
		case strings.Contains(string(probe["type"]), "Feature"):
			doc = &Item{}
		case strings.Contains(string(probe["type"]), "Collection"):
			doc = &Collection{}
		case probe["properties"] != nil && probe["links"] == nil:
			doc = &Queryables{}
		default:
			doc = &Catalog{}
		}
		if err := json.Unmarshal(body, doc); err != nil {
			t.Errorf("%s: decode as %T: %v", file, doc, err)
			continue
		}
		written, err := json.Marshal(doc)
		if err != nil {
			t.Errorf("%s: encode: %v", file, err)
			continue
		}
		if !sameJSON(t, body, written) {
			t.Errorf("%s: %T did not round-trip", file, doc)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("only %d documents checked", checked)
	}
}

func TestItemRoundTripKeepsUnknownsEmptiesAndNumbers(t *testing.T) {
	in := `{"type":"Feature","stac_version":"1.0.0","stac_extensions":[],"id":"x","title":"",
	  "geometry":null,"bbox":[-180,-90.5,180,90],
	  "properties":{"datetime":"2020-01-02T03:04:05.123Z","eo:cloud_cover":12.50,"big":123456789012345678901234567890,
	     "tiny":1e-400,"nested":{"n":1.0}},
	  "assets":{"B01":{"href":"s3://b/1.tif","file:size":1024,"raster:bands":[{"nodata":0}],"roles":[]}},
	  "links":[{"rel":"self","href":"https://x/items/x","vendor:flag":true}],
	  "vendor:top":{"a":[1,2,3]}}`
	var it Item
	if err := json.Unmarshal([]byte(in), &it); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, []byte(in), out) {
		t.Errorf("round trip changed the item:\n in  %s\n out %s", in, out)
	}
	for _, literal := range []string{`"eo:cloud_cover":12.50`, `123456789012345678901234567890`, `1e-400`, `"n":1.0`, `"stac_extensions":[]`, `"title":""`, `"geometry":null`, `"roles":[]`} {
		if !bytes.Contains(out, []byte(literal)) {
			t.Errorf("output lost %s: %s", literal, out)
		}
	}
	if _, ok := it.Extra["vendor:top"]; !ok {
		t.Errorf("unknown member not in Extra: %v", it.Extra)
	}
	if string(it.Assets["B01"].Extra["file:size"]) != "1024" || string(it.Links[0].Extra["vendor:flag"]) != "true" {
		t.Errorf("nested unknowns not kept: asset %v link %v", it.Assets["B01"].Extra, it.Links[0].Extra)
	}
	if cc, ok := it.PropertyFloat("eo:cloud_cover"); !ok || cc != 12.5 {
		t.Errorf("PropertyFloat = %v, %v", cc, ok)
	}
	if _, ok := it.PropertyFloat("datetime"); ok {
		t.Error("PropertyFloat accepted a string")
	}
	if dt, ok := it.Datetime(); !ok || dt.Nanosecond() != 123000000 {
		t.Errorf("Datetime = %v, %v", dt, ok)
	}

	// Absent members stay absent.
	var bare Item
	if err := json.Unmarshal([]byte(`{"id":"y"}`), &bare); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(bare); string(out) != `{"id":"y"}` {
		t.Errorf("bare item written as %s", out)
	}

	// A typed field set later wins over the kept empty value.
	it.StacExtensions = []string{"https://stac-extensions.github.io/eo/v1.1.0/schema.json"}
	out, _ = json.Marshal(it)
	if !bytes.Contains(out, []byte(`"stac_extensions":["https://stac-extensions.github.io/eo/v1.1.0/schema.json"]`)) || bytes.Count(out, []byte(`"stac_extensions"`)) != 1 {
		t.Errorf("typed value did not win: %s", out)
	}
}

func TestItemCollectionMatchedAndNextLink(t *testing.T) {
	var ic ItemCollection
	if err := json.Unmarshal([]byte(`{"type":"FeatureCollection","features":[],"context":{"limit":10,"matched":7,"returned":0},
		"links":[{"rel":"prev","href":"p"},{"rel":"next","href":"n1"},{"rel":"next","href":"n2"}]}`), &ic); err != nil {
		t.Fatal(err)
	}
	if n, ok := ic.Matched(); !ok || n != 7 {
		t.Errorf("Matched from context = %d, %v", n, ok)
	}
	if l := ic.nextLink(); l == nil || l.Href != "n1" || l.LinkMethod() != "GET" {
		t.Errorf("NextLink = %+v, want the first next link", l)
	}
	var none ItemCollection
	_ = json.Unmarshal([]byte(`{"features":[]}`), &none)
	if _, ok := none.Matched(); ok {
		t.Error("Matched reported a count the server did not give")
	}
}

func TestDecodeRejectsWrongTypes(t *testing.T) {
	var it Item
	if err := json.Unmarshal([]byte(`{"id":"x","bbox":"1,2,3,4"}`), &it); err == nil {
		t.Error("a string bbox decoded without error")
	}
	if err := json.Unmarshal([]byte(`[1]`), &it); err == nil {
		t.Error("an array decoded as an item")
	}
}

func TestDirectUnmarshalRejectsMalformedStructure(t *testing.T) {
	for _, bad := range []string{`{"id":`, `{"id":"x"} trailing`, `{"id" "x"}`, `{"id":"x",}`, `{"assets":{"a":{"href":"x"} "b":1}}`, `{"id":tru}`, `"just a string"`} {
		var it Item
		if err := it.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted malformed JSON: %+v", bad, it)
		}
	}
	var it Item
	if err := it.UnmarshalJSON([]byte(` {"id":"x","links":[ ]} `)); err != nil || it.ID != "x" || it.Links == nil {
		t.Errorf("valid input with spaces: %v %+v", err, it)
	}
}

// Counts are read loosely: 12.0 and "12" are 12; a negative, fractional or
// non-numeric count is left out (its text kept for the round trip and for
// UnusableMatched) instead of failing the page (a non-integer
// numberMatched failed the whole search while -5 was accepted).
func TestCountsAreReadLoosely(t *testing.T) {
	cases := []struct {
		member   string
		matched  int
		ok       bool
		unusable string
	}{
		{`"numberMatched":12`, 12, true, ""},
		{`"numberMatched":12.0`, 12, true, ""},
		{`"numberMatched":1.2e1`, 12, true, ""},
		{`"numberMatched":" 12 "`, 12, true, ""},
		{`"numberMatched":-5`, 0, false, "numberMatched -5"},
		{`"numberMatched":12.5`, 0, false, "numberMatched 12.5"},
		{`"numberMatched":"many"`, 0, false, `numberMatched "many"`},
		{`"numberMatched":{"n":1}`, 0, false, `numberMatched {"n":1}`},
		{`"numberMatched":1e300`, 0, false, "numberMatched 1e300"},
		{`"numberMatched":null`, 0, false, ""},
		{`"numberMatched":-5,"context":{"matched":7,"returned":0}`, 7, true, ""},
		{`"context":{"matched":"x","returned":0}`, 0, false, `context.matched "x"`},
	}
	for _, c := range cases {
		raw := `{"type":"FeatureCollection","features":[],` + c.member + `}`
		var ic ItemCollection
		if err := json.Unmarshal([]byte(raw), &ic); err != nil {
			t.Errorf("%s: %v, want the page decoded", c.member, err)
			continue
		}
		if n, ok := ic.Matched(); n != c.matched || ok != c.ok || ic.UnusableMatched() != c.unusable {
			t.Errorf("%s: Matched %d, %v, unusable %q; want %d, %v, %q", c.member, n, ok, ic.UnusableMatched(), c.matched, c.ok, c.unusable)
		}
		// An ignored count is written back as it came.
		if out, err := json.Marshal(ic); c.unusable != "" && (err != nil || !strings.Contains(string(out), `"`+strings.Replace(strings.TrimPrefix(c.unusable, "context."), " ", `":`, 1))) {
			t.Errorf("%s: written back as %s (%v)", c.member, out, err)
		}
	}
	var ic ItemCollection
	if err := json.Unmarshal([]byte(`{"features":[],"numberMatched":tru}`), &ic); err == nil {
		t.Error("malformed JSON in a count was accepted")
	}
}
