package tools

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// fullItemTextRaw writes an item's text from its JSON, without the map
// fullItemText reads: for every demo and recorded item, and for items made
// to hit the cases where a decoding differs from the bytes (escapes,
// repeated names, numbers written another way, members of the wrong type),
// it must write the same bytes as fullItemText of the decoding.
func TestFullItemTextRawIsFullItemText(t *testing.T) {
	t.Parallel()
	items := map[string][]byte{}
	for key, raw := range recordedItems(t) {
		items["recorded "+key[0]+"/"+key[1]] = raw
	}
	catalog := demoServer(t, stacserver.Options{})
	for _, c := range demoCollections(t) {
		for _, id := range demoItemIDs(t, c) {
			items["demo "+c+"/"+id] = fetchBytes(t, catalog+"/collections/"+c+"/items/"+id)
		}
	}
	for name, raw := range items {
		if !sameItemText(t, raw, true) {
			t.Errorf("%s: text differs", name)
		}
	}
	for name, raw := range rawTextCases {
		if !sameItemText(t, []byte(raw), true) {
			t.Errorf("%s: text differs", name)
		}
	}
}

// rawTextCases are items whose JSON and decoding differ in every way the
// text can see.
var rawTextCases = map[string]string{
	"escapes and unicode": `{"type":"Feature","stac_version":"1.0.0","id":"x\u00e9","geometry":{"type":"Point","coordinates":[1.50,-0.0]},
		"properties":{"datetime":"2024-01-01T00:00:00Z","t\u0069tle":"a \"quoted\" \/ slash\ttab","html":"<a&b>","ls":"x\u2028y","é":"ü","ctl":"\u0001\b\f"},
		"assets":{"b":{"href":"https://x/b.tif?a=1&b=2","type":"image/tiff","roles":["data",7,"x\"y"],"title":"\u00e9"},"a":{"href":"s3://x/a"},"c":5,"d":{"href":7,"roles":"data","type":3}},
		"links":[{"rel":"self","href":"https://x/self","title":"T","type":"application/json"},7,{"rel":3}],"extra":{"z":1,"a":[true,false,null]}}`,
	"numbers": `{"type":"Feature","id":"n","geometry":null,"properties":{"a":1.0,"b":1e2,"c":1E-7,"d":123456789012345678,"e":-0,"f":0.000001,
		"g":1e21,"h":999999999999999,"i":-12.5e-3,"j":[1.10,2e+0],"k":12345678901234567890123,"l":0.1}}`,
	"repeated names": `{"type":"Feature","id":"d","id":"e","properties":{"a":1,"a":{"x":2},"b":[1]},"assets":{"a":{"href":"1"},"a":{"href":"2","k":1,"k":2}},"links":[]}`,
	"wrong types":    `{"type":7,"stac_version":null,"id":"w","geometry":[1],"properties":[1,2],"assets":"none","links":{"rel":"self"},"stac_extensions":"x"}`,
	"empty":          `{}`,
	"spacing":        "{ \"type\" : \"Feature\" ,\n \"id\" : \"s\" , \"properties\" : { \"a\" : [ 1 , { \"b\" : \"c\" } ] } ,\r\n\t\"assets\" : { } , \"links\" : [ ] , \"stac_extensions\" : [ \"e\" ] }",
}

// sameItemText compares fullItemTextRaw with fullItemText of the
// decoding; wantRaw says the raw route must take the item (not give it
// back to the decoding route).
func sameItemText(t *testing.T, raw []byte, wantRaw bool) bool {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%.80s: %v", raw, err)
	}
	var s ItemSummary
	var it stacclient.Item
	if json.Unmarshal(raw, &it) == nil {
		s = summarizeItem(&it)
	}
	want := fullItemText(m, s)
	got, names, ok := fullItemTextRaw(raw, s)
	if !ok {
		if wantRaw {
			t.Errorf("fullItemTextRaw gave %.80s back", raw)
		}
		return true
	}
	if got != want {
		t.Logf("got  %s\nwant %s", got, want)
		return false
	}
	if !slices.Equal(names, sortedKeys(m)) {
		t.Logf("names %q, want %q", names, sortedKeys(m))
		return false
	}
	return true
}

// A number outside float64's range cannot be decoded: the raw route gives
// the item back rather than write it another way.
func TestFullItemTextRawGivesBackWhatItCannotWrite(t *testing.T) {
	if _, _, ok := fullItemTextRaw([]byte(`{"id":"x","properties":{"big":1e400}}`), ItemSummary{}); ok {
		t.Error("a number out of range was written")
	}
	if _, _, ok := fullItemTextRaw([]byte(`[1]`), ItemSummary{}); ok {
		t.Error("an array was written as an item")
	}
}

func FuzzFullItemTextRaw(f *testing.F) {
	for _, c := range rawTextCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) != nil || m == nil {
			return
		}
		got, _, ok := fullItemTextRaw([]byte(raw), ItemSummary{})
		if !ok {
			return
		}
		if want := fullItemText(m, ItemSummary{}); got != want {
			t.Errorf("%q:\n got %q\nwant %q", raw, got, want)
		}
	})
}

// The JSON of a number and of a string: encoding/json's own.
func TestRawTextWritesNumbersAndStringsAsEncodingJSON(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, math.MaxFloat64,
		math.SmallestNonzeroFloat64, 1.0 / 3, -2.5e-300, 5e-324}
	for _, f := range floats {
		want, _ := json.Marshal(f)
		if got := appendJSONFloat(nil, f); string(got) != string(want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
	strs := []string{"", "plain", `"\`, "\x00\x01\x1f\x7f", "\b\f\n\r\t", "<&>", "é ü 日本", "\u2028\u2029", "bad \xff\xfe utf8", "\xe2\x80"}
	for _, s := range strs {
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got := appendJSONString(nil, []byte(s)); string(got) != strings.TrimSuffix(buf.String(), "\n") {
			t.Errorf("%q: got %s, want %s", s, got, buf.String())
		}
	}
}

// get_item checks an item sent as the catalog's bytes as an object of its
// members' names, their values left out: the same check only while the
// schema constrains nothing below the item's members.
func TestGetItemSchemaLeavesItemMembersFree(t *testing.T) {
	item := GetItem().Def.OutputSchema.(*jsonschema.Schema).Properties["item"]
	free := &jsonschema.Schema{Description: item.AdditionalProperties.Description}
	if item.Type != "object" || len(item.Properties) > 0 || len(item.PatternProperties) > 0 || len(item.Required) > 0 ||
		item.PropertyNames != nil || item.MinProperties != nil || item.MaxProperties != nil ||
		!jsonEqual(t, item.AdditionalProperties, free) {
		t.Errorf("the item's schema constrains its members; decodedForCheck must decode them: %+v", item)
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(ja) == string(jb)
}

// BenchmarkItemText is get_item's text of the overhead benchmark's item
// (a Sentinel-2 item of the demo, 40 KB) the two ways: decoded into a map
// and written from it (fullItemText, the route signed items take), and
// written from the bytes (fullItemTextRaw).
//
//	go test -run '^$' -bench ItemText ./tools/
func BenchmarkItemText(b *testing.B) {
	catalog := demoServer(b, stacserver.Options{})
	raw := fetchBytes(b, catalog+"/collections/sentinel-2-l2a/items/S2B_24MUA_20250731_0_L2A")
	var it stacclient.Item
	if err := json.Unmarshal(raw, &it); err != nil {
		b.Fatal(err)
	}
	s := summarizeItem(&it)
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
			_ = fullItemText(m, s)
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := fullItemTextRaw(raw, s); !ok {
				b.Fatal("not written")
			}
		}
	})
}
