package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/peterstace/simplefeatures/geom"

	"github.com/stacmcp/stac-mcp/stacclient/cql2"
)

// Filters are CQL2 (OGC 21-065), text or JSON, evaluated by package cql2
// with the standard's three-valued logic: an item is returned only when
// the filter is TRUE for it. Queryables: "id", "collection", "geometry"
// (the item's geometry), "datetime" (or, for an item with only
// start_datetime/end_datetime, that interval), and any item property, with
// or without a "properties." prefix.
const cql2Accepted = "CQL2 text (filter-lang=cql2-text, the GET default) such as \"eo:cloud_cover < 10 AND platform = 'sentinel-2a'\", " +
	"or a CQL2-JSON object (filter-lang=cql2-json, the POST default) such as {\"op\": \"<\", \"args\": [{\"property\": \"eo:cloud_cover\"}, 10]}; operators: " +
	cql2.Operators

// cql2Classes are the CQL2 conformance classes package cql2 implements
// (DefaultConformance declares them).
var cql2Classes = []string{
	"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
	"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
	"http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
	"http://www.opengis.net/spec/cql2/1.0/conf/case-insensitive-comparison",
	"http://www.opengis.net/spec/cql2/1.0/conf/accent-insensitive-comparison",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions-plus",
	"http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/temporal-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/array-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/property-property",
	"http://www.opengis.net/spec/cql2/1.0/conf/arithmetic",
}

// parseFilterText turns a cql2-text filter into its JSON form.
func parseFilterText(s string) (any, error) {
	expr, err := cql2.ParseText(s)
	if err != nil {
		return nil, badParam("filter", s, cql2Accepted, err.Error())
	}
	return expr, nil
}

func compileCQL2(filter any) (predicate, error) {
	f, err := cql2.Compile(filter)
	if err != nil {
		raw, _ := json.Marshal(filter)
		return nil, badParam("filter", string(raw), cql2Accepted, err.Error())
	}
	return func(it *storedItem) bool { return f.Match(itemRecord{it}) }, nil
}

// itemRecord presents a stored item to the CQL2 evaluator.
type itemRecord struct{ it *storedItem }

func (r itemRecord) Property(name string) (any, bool) {
	switch name {
	case "geometry":
		// The item's own geometry, not properties.geometry: IS NULL on
		// "geometry" asks whether the item has a footprint.
		g, ok := r.it.doc["geometry"]
		return g, ok && g != nil
	case "datetime":
		props, _ := r.it.doc["properties"].(map[string]any)
		if v := props["datetime"]; v != nil {
			return v, true
		}
		if r.it.hasTime {
			// datetime null with start_datetime/end_datetime: the item's
			// extent, for the temporal functions.
			return cql2.Interval{Start: r.it.start, End: r.it.end}, true
		}
		return nil, false
	}
	return itemValue(r.it, name)
}

// Bounds gives the evaluator the envelope of the item's geometry, known
// since the item was loaded, so that most items far from a spatial
// filter's geometry are decided without decoding theirs.
func (r itemRecord) Bounds(name string) (geom.Envelope, bool) {
	if name != "geometry" || r.it.shape == nil {
		return geom.Envelope{}, false
	}
	b := r.it.shape.bound
	return geom.NewEnvelope(geom.XY{X: b.Min[0], Y: b.Min[1]}, geom.XY{X: b.Max[0], Y: b.Max[1]}), true
}

// compactJSON renders v for error messages, trimmed to 200 bytes.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<" readable in messages about CQL2 operators
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// filterLang checks a filter-lang value.
func filterLang(s string) error {
	switch strings.ToLower(s) {
	case "", "cql2-json", "cql2-text":
		return nil
	}
	return badParam("filter-lang", s, `"cql2-text" or "cql2-json"`, "unknown filter language")
}
