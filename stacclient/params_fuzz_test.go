package stacclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzParseSearch feeds every parameter as the strings an LLM client may
// send. Invariants: no panic; a rejection is a *ParamError; an accepted
// search encodes to a JSON body that parses back to the same SearchParams,
// is already in normal form, and has a query string that parses.
func FuzzParseSearch(f *testing.F) {
	type seed struct{ collections, ids, bbox, intersects, datetime, query, filter, filterLang, sortby, fields, limit string }
	seeds := []seed{
		{},
		{collections: "sentinel-2-l2a,landsat-c2-l2", bbox: "-10,40,5,50", datetime: "2023-06", limit: "10"},
		{collections: `["a","b"]`, ids: "x, y ,z", datetime: "2023-06-10T12:00:00+02:00/..", sortby: "-properties.datetime,+id"},
		{bbox: "[170,-10,-170,10]", query: "eo:cloud_cover<10", fields: "id,-links"},
		{bbox: "0,0,0,1,1,100", datetime: "../..", query: `{"eo:cloud_cover":{"lt":10.50},"platform":{"in":["a","b"]}}`},
		{intersects: `{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}`, filter: "eo:cloud_cover < 10"},
		{intersects: `{"type":"Feature","geometry":{"type":"Point","coordinates":[1e1,-2.5,3]},"properties":{}}`, filter: `{"op":"<","args":[{"property":"eo:cloud_cover"},1E1]}`, filterLang: "cql2-json"},
		{sortby: `[{"field":"id","direction":"descending"}]`, fields: `{"include":["id"],"exclude":["assets"]}`, limit: "10000"},
		{datetime: "2017-06/2017-07", query: `["gsd>=10","gsd<=30.0","platform=sentinel-2a"]`},
		{datetime: "9999-12-31T23:30:00-01:00"},
		{datetime: "2023-02-30", bbox: "1,2,3"},
		{bbox: "0,0,1,1", intersects: `{"type":"Point","coordinates":[0,0]}`},
		{filter: `{"op":"=","args":[{"property":"id"},"<&>"]}`, sortby: "id,-id"},
		{ids: "\"quoted\",a b", fields: "+a,-b,+c", limit: "0"},
		{intersects: `{"type":"GeometryCollection","geometries":[{"type":"LineString","coordinates":[[0,0],[1,1]]}]}`},
	}
	for _, s := range seeds {
		f.Add(s.collections, s.ids, s.bbox, s.intersects, s.datetime, s.query, s.filter, s.filterLang, s.sortby, s.fields, s.limit)
	}
	f.Fuzz(func(t *testing.T, collections, ids, bbox, intersects, datetime, query, filter, filterLang, sortby, fields, limit string) {
		for _, s := range []string{collections, ids, bbox, intersects, datetime, query, filter, filterLang, sortby, fields, limit} {
			if !utf8.ValidString(s) {
				// JSON (hence MCP) input is always valid UTF-8; invalid bytes
				// would be replaced by U+FFFD on the wire and not round-trip.
				t.Skip()
			}
		}
		raw := RawSearch{
			Collections: collections, IDs: ids, BBox: bbox, Intersects: intersects, Datetime: datetime,
			Query: query, Filter: filter, FilterLang: filterLang, SortBy: sortby, Fields: fields, Limit: limit,
		}
		params, err := ParseSearch(raw)
		if err != nil {
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param == "" || pe.Accepted == "" {
				t.Fatalf("rejection is not a complete *ParamError: %#v", err)
			}
			return
		}
		body := params.PostBody()
		if body == nil || !json.Valid(body) {
			t.Fatalf("PostBody is not valid JSON: %q", body)
		}
		again, err := ParseSearch(rawSearchFromBody(t, body))
		if err != nil {
			t.Fatalf("re-parsing the POST body %s failed: %v", body, err)
		}
		if !reflect.DeepEqual(again, params) {
			t.Fatalf("round trip changed the search\n first  %#v\n again  %#v\n body   %s", params, again, body)
		}
		normalized, err := params.Normalized()
		if err != nil || !reflect.DeepEqual(normalized, params) {
			t.Fatalf("accepted params are not in normal form: %v\n %#v\n %#v", err, params, normalized)
		}
		if !bytes.Equal(again.PostBody(), body) {
			t.Fatalf("PostBody is not stable: %s vs %s", again.PostBody(), body)
		}
		if _, err := url.ParseQuery(params.QueryString()); err != nil {
			t.Fatalf("QueryString %q does not parse: %v", params.QueryString(), err)
		}
	})
}

// rawSearchFromBody turns a POST body back into loose input, the way a tool
// would receive it as decoded JSON.
func rawSearchFromBody(t *testing.T, body []byte) RawSearch {
	t.Helper()
	decoded, err := decodeLooseJSON(body)
	if err != nil {
		t.Fatalf("PostBody does not decode: %v", err)
	}
	m := decoded.(map[string]any)
	lang, _ := m["filter-lang"].(string)
	return RawSearch{
		Collections: m["collections"], IDs: m["ids"], BBox: m["bbox"], Intersects: m["intersects"],
		Datetime: m["datetime"], Query: m["query"], Filter: m["filter"], FilterLang: lang,
		SortBy: m["sortby"], Fields: m["fields"], Limit: m["limit"],
	}
}
