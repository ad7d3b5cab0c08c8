// Package stacdoc checks STAC Item, Collection and Catalog documents before
// they are written. A document is validated by the official STAC JSON
// Schemas (the core schema of its stac_version and the schema of each
// extension it declares in stac_extensions), embedded in the binary so
// that nothing is fetched (schemas/README.md lists them), and by the rules
// the schemas cannot say: times that are RFC 3339 (leap seconds and a
// lowercase t/z allowed, a comma decimal refused) and in UTC, as the STAC
// specification requires; coordinates within longitude/latitude range;
// ids that can name a path segment; the collection member that goes with
// a rel=collection link. Errors name the member at fault. Some findings
// are warnings, not errors: a bbox that does not contain the geometry
// (published examples have such bboxes), an empty geometry, and a schema
// that is not embedded ("not validated: <url>": an unknown extension, a
// STAC version without embedded schemas), which is never passed silently.
//
// The STAC API client checks what it sends and the in-process STAC API
// what it receives, with this one set of rules, so a bad document gets
// the same clear error either way and nothing is written.
//
// Documents are generic JSON objects (map[string]any), as decoded by
// encoding/json with or without UseNumber.
package stacdoc

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// Problem is one thing wrong with a document.
type Problem struct {
	Path    string `json:"path"` // the member, e.g. "properties.datetime"
	Message string `json:"message"`
}

// Error lists every problem of one document, so that all of them can be
// fixed at once.
type Error struct {
	Kind     string    // "Item" or "Collection"
	ID       string    // the document's id, when it has one
	Problems []Problem // never empty
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("not a valid STAC " + e.Kind)
	if e.ID != "" {
		fmt.Fprintf(&b, " (id %q)", e.ID)
	}
	b.WriteString(": ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Path != "" {
			b.WriteString(p.Path + ": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// checker collects problems and warnings.
type checker struct{ problems, warnings []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) warn(path, format string, args ...any) {
	c.warnings = append(c.warnings, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// MaxIDLength bounds an id (it becomes a URL path segment and a file name).
const MaxIDLength = 256

// IDProblem says what makes id unusable as an item or collection id, or ""
// when it is fine: empty, surrounding spaces, longer than MaxIDLength
// bytes, "." or "..", or containing '/', '\\' or a control character
// (each would change the meaning of the URL path or file name it becomes).
func IDProblem(id string) string {
	switch {
	case id == "":
		return "is empty"
	case strings.TrimSpace(id) != id:
		return "has leading or trailing spaces"
	case len(id) > MaxIDLength:
		return fmt.Sprintf("is %d bytes long, at most %d", len(id), MaxIDLength)
	case id == "." || id == "..":
		return "is a relative path name"
	case strings.ContainsAny(id, `/\`):
		return `contains '/' or '\', which would split it into path segments`
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return "contains a control character"
	}
	return ""
}

func (c *checker) id(doc map[string]any) {
	v, ok := doc["id"]
	if !ok {
		c.add("id", "missing (a string)")
		return
	}
	id, ok := v.(string)
	if !ok {
		c.add("id", "is %s, want a string", describe(v))
		return
	}
	if p := IDProblem(id); p != "" {
		c.add("id", "%q %s", id, p)
	}
}

func (c *checker) common(doc map[string]any) {
	switch v, ok := doc["stac_version"].(string); {
	case !ok || strings.TrimSpace(v) == "":
		c.add("stac_version", "is %s, want a version string such as \"1.0.0\"", describeMember(doc, "stac_version"))
	case !knownVersions[v]:
		c.add("stac_version", "%q is not a STAC version this server writes: use \"1.0.0\" or \"1.1.0\"", v)
	}
	c.id(doc)
	if v, ok := doc["stac_extensions"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			c.add("stac_extensions", "is %s, want a list of schema URLs", describe(v))
		}
		for i, e := range list {
			if _, ok := e.(string); !ok {
				c.add(fmt.Sprintf("stac_extensions[%d]", i), "is %s, want a schema URL string", describe(e))
			}
		}
	}
	c.links(doc)
}

func (c *checker) links(doc map[string]any) {
	v, ok := doc["links"]
	if !ok {
		c.add("links", "missing (a list of link objects; [] when there are none)")
		return
	}
	list, ok := v.([]any)
	if !ok {
		c.add("links", "is %s, want a list of link objects", describe(v))
		return
	}
	for i, l := range list {
		m, ok := l.(map[string]any)
		path := fmt.Sprintf("links[%d]", i)
		if !ok {
			c.add(path, "is %s, want an object with rel and href", describe(l))
			continue
		}
		for _, k := range []string{"rel", "href"} {
			if s, _ := m[k].(string); s == "" {
				c.add(path+"."+k, "is %s, want a non-empty string", describeMember(m, k))
			}
		}
	}
}

func (c *checker) assets(doc map[string]any, required bool) {
	v, ok := doc["assets"]
	if !ok {
		if required {
			c.add("assets", "missing (an object of assets by key; {} when there are none)")
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.add("assets", "is %s, want an object of assets by key", describe(v))
		return
	}
	for key, a := range m {
		path := "assets." + key
		asset, ok := a.(map[string]any)
		if !ok {
			c.add(path, "is %s, want an asset object with an href", describe(a))
			continue
		}
		if s, _ := asset["href"].(string); s == "" {
			c.add(path+".href", "is %s, want the asset's URL", describeMember(asset, "href"))
		}
	}
}

// CheckItem checks a STAC Item document before it is written: the
// errors of ValidateItem, as an *Error (nil when there are none).
func CheckItem(doc map[string]any) error { return ValidateItem(doc).Err() }

// CheckCollection checks a STAC Collection document before it is written.
func CheckCollection(doc map[string]any) error { return ValidateCollection(doc).Err() }

// ValidateItem checks an Item as it is written through a STAC API (or a
// local catalog): by the rules of this package and the official schemas
// (ValidateDocument), after adding the rel=collection link that the
// catalog serves with an item naming its collection (catalogs manage the
// links; the schema requires the link and the member together).
func ValidateItem(doc map[string]any) *Result {
	return validate(withCollectionLink(doc), "Feature")
}

// ValidateCollection checks a Collection as it is written.
func ValidateCollection(doc map[string]any) *Result { return validate(doc, "Collection") }

// ValidateDocument checks a STAC Item, Collection or Catalog (by its
// type) as a published file: the official JSON Schema of its stac_version
// and of each extension it declares in stac_extensions, then the rules
// that the schemas cannot say (see the package comment).
func ValidateDocument(doc map[string]any) *Result { return validate(doc, "") }

func (c *checker) item(doc map[string]any) {
	if v, ok := doc["collection"]; ok && v != nil {
		if _, isString := v.(string); !isString {
			c.add("collection", "is %s, want the collection id", describe(v))
		}
	}
	c.collectionLink(doc)
	c.assets(doc, true)
	props, ok := doc["properties"].(map[string]any)
	if !ok {
		c.add("properties", "is %s, want an object with at least datetime", describeMember(doc, "properties"))
	} else {
		c.itemTime(props)
	}
	geomValue, hasGeometry := doc["geometry"]
	bboxValue, hasBBox := doc["bbox"]
	switch {
	case !hasGeometry:
		c.add("geometry", "missing (a GeoJSON geometry, or null for an item without a location)")
	case geomValue == nil:
		if hasBBox && bboxValue != nil {
			c.add("bbox", "must be absent when geometry is null")
		}
	default:
		geom := c.geometry(geomValue)
		if !hasBBox || bboxValue == nil {
			c.add("bbox", "missing; an item with a geometry needs its bbox [west,south,east,north]")
			break
		}
		box := c.bbox("bbox", bboxValue)
		if geom != nil && box != nil {
			c.bboxContains(box, geom)
		}
	}
}

// collectionLink: the item spec makes the collection member required
// when a link has rel=collection and forbids it otherwise.
func (c *checker) collectionLink(doc map[string]any) {
	_, hasMember := doc["collection"]
	if hasCollectionLink(doc) {
		if !hasMember {
			c.add("collection", "missing, but links has a rel=collection link: set collection to that collection's id")
		}
		return
	}
	if hasMember {
		c.add("collection", "is set but links has no rel=collection link: the item spec requires the link with the member (add {\"rel\":\"collection\",\"href\":...} or remove collection)")
	}
}

func hasCollectionLink(doc map[string]any) bool {
	links, _ := doc["links"].([]any)
	for _, l := range links {
		if m, ok := l.(map[string]any); ok && m["rel"] == "collection" {
			return true
		}
	}
	return false
}

// withCollectionLink returns doc with a rel=collection link when it names
// a collection and has none: the link a catalog serves the item with.
func withCollectionLink(doc map[string]any) map[string]any {
	id, ok := doc["collection"].(string)
	if !ok || hasCollectionLink(doc) {
		return doc
	}
	links, ok := doc["links"].([]any)
	if !ok {
		return doc // missing or not a list: reported as such
	}
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	out["links"] = append(append([]any{}, links...), map[string]any{
		"rel": "collection", "href": "../" + url.PathEscape(id) + "/collection.json", "type": "application/json",
	})
	return out
}

func (c *checker) collection(doc map[string]any) {
	for _, k := range []string{"description", "license"} {
		if s, _ := doc[k].(string); strings.TrimSpace(s) == "" {
			hint := "a non-empty string"
			if k == "license" {
				hint = `an SPDX id such as "CC-BY-4.0", "various" or "other"`
			}
			c.add(k, "is %s, want %s", describeMember(doc, k), hint)
		}
	}
	c.assets(doc, false)
	extent, ok := doc["extent"].(map[string]any)
	if !ok {
		c.add("extent", "is %s, want {\"spatial\":{\"bbox\":[[w,s,e,n]]},\"temporal\":{\"interval\":[[start,end]]}}", describeMember(doc, "extent"))
		return
	}
	spatial, _ := extent["spatial"].(map[string]any)
	boxes, ok := spatial["bbox"].([]any)
	if !ok || len(boxes) == 0 {
		c.add("extent.spatial.bbox", "is %s, want a list of at least one bbox [[west,south,east,north]]", describeMember(spatial, "bbox"))
	}
	for i, b := range boxes {
		c.bbox(fmt.Sprintf("extent.spatial.bbox[%d]", i), b)
	}
	temporal, _ := extent["temporal"].(map[string]any)
	intervals, ok := temporal["interval"].([]any)
	if !ok || len(intervals) == 0 {
		c.add("extent.temporal.interval", "is %s, want a list of at least one [start, end] (RFC 3339 strings, null for open ends)", describeMember(temporal, "interval"))
	}
	for i, iv := range intervals {
		path := fmt.Sprintf("extent.temporal.interval[%d]", i)
		pair, ok := iv.([]any)
		if !ok || len(pair) != 2 {
			c.add(path, "is %s, want [start, end]", describe(iv))
			continue
		}
		start := c.optionalTime(path+"[0]", pair[0])
		end := c.optionalTime(path+"[1]", pair[1])
		if start != nil && end != nil && start.After(*end) {
			c.add(path, "starts after it ends")
		}
	}
}

func (c *checker) itemTime(props map[string]any) {
	v, ok := props["datetime"]
	if !ok {
		c.add("properties.datetime", "missing (an RFC 3339 string such as \"2024-06-01T10:00:00Z\", or null with start_datetime and end_datetime)")
		return
	}
	if v != nil {
		c.time("properties.datetime", v)
	}
	start, hasStart := props["start_datetime"]
	end, hasEnd := props["end_datetime"]
	if v == nil && (!hasStart || !hasEnd || start == nil || end == nil) {
		c.add("properties.datetime", "is null, so start_datetime and end_datetime are required")
	}
	var s, e *time.Time
	if hasStart && start != nil {
		s = c.time("properties.start_datetime", start)
	}
	if hasEnd && end != nil {
		e = c.time("properties.end_datetime", end)
	}
	if s != nil && e != nil && s.After(*e) {
		c.add("properties.start_datetime", "is after end_datetime")
	}
}

func (c *checker) time(path string, v any) *time.Time {
	s, ok := v.(string)
	if !ok {
		c.add(path, "is %s, want an RFC 3339 string such as \"2024-06-01T10:00:00Z\"", describe(v))
		return nil
	}
	t, err := ParseTime(s)
	if err != nil {
		c.add(path, "%q is not RFC 3339: %v (want e.g. \"2024-06-01T10:00:00Z\")", s, err)
		return nil
	}
	// STAC: "datetime … must be in UTC" (common metadata; the 1.0.0
	// schemas hold every time to the pattern (\+00:00|Z)$).
	if !strings.HasSuffix(s, "Z") && !strings.HasSuffix(s, "+00:00") {
		c.add(path, "%q is not in UTC: STAC times must end in \"Z\" (or \"+00:00\"), e.g. %q", s, t.UTC().Format(time.RFC3339Nano))
	}
	return &t
}

func (c *checker) optionalTime(path string, v any) *time.Time {
	if v == nil {
		return nil
	}
	return c.time(path, v)
}

func (c *checker) geometry(v any) orb.Geometry {
	raw, err := json.Marshal(v)
	if err != nil {
		c.add("geometry", "cannot be encoded: %v", err)
		return nil
	}
	g, err := geojson.UnmarshalGeometry(raw)
	if err != nil {
		c.add("geometry", "is not a GeoJSON geometry: %v", err)
		return nil
	}
	geom := g.Geometry()
	if geom == nil {
		c.add("geometry", "has no coordinates")
		return nil
	}
	if empty(geom) {
		// GeoJSON (RFC 7946 §3.1) allows empty coordinates; the schemas do
		// too. Such an item has no location to search by.
		c.warn("geometry", "is an empty %s: the item has no location and no search by area finds it (use null for an item without a location)", geom.GeoJSONType())
		return nil
	}
	b := geom.Bound()
	if !lonOK(b.Min.Lon()) || !lonOK(b.Max.Lon()) || !latOK(b.Min.Lat()) || !latOK(b.Max.Lat()) {
		c.add("geometry", "has coordinates outside longitude [-180,180] or latitude [-90,90] (GeoJSON is [longitude, latitude])")
		return nil
	}
	return geom
}

// box is a bbox's horizontal part.
type box struct{ west, south, east, north float64 }

func (c *checker) bbox(path string, v any) *box {
	list, ok := v.([]any)
	if !ok || (len(list) != 4 && len(list) != 6) {
		c.add(path, "is %s, want [west,south,east,north] (or 6 numbers with heights)", describe(v))
		return nil
	}
	nums := make([]float64, len(list))
	for i, x := range list {
		f, ok := number(x)
		if !ok {
			c.add(fmt.Sprintf("%s[%d]", path, i), "is %s, want a number", describe(x))
			return nil
		}
		nums[i] = f
	}
	b := box{nums[0], nums[1], nums[2], nums[3]}
	if len(nums) == 6 {
		b = box{nums[0], nums[1], nums[3], nums[4]}
	}
	switch {
	case !lonOK(b.west) || !lonOK(b.east):
		c.add(path, "has a longitude outside [-180,180]")
	case !latOK(b.south) || !latOK(b.north):
		c.add(path, "has a latitude outside [-90,90] (is the order west,south,east,north?)")
	case b.south > b.north:
		c.add(path, "south %v is greater than north %v (is the order west,south,east,north?)", b.south, b.north)
	default:
		return &b
	}
	return nil
}

// bboxTolerance absorbs rounding in published bboxes (about 10 cm).
const bboxTolerance = 1e-6

// rangeTolerance lets edge pixels of global grids pass (Copernicus DEM
// tiles reach -180.0014) while a swapped latitude and longitude still fails.
const rangeTolerance = 0.01

func lonOK(v float64) bool { return v >= -180-rangeTolerance && v <= 180+rangeTolerance }
func latOK(v float64) bool { return v >= -90-rangeTolerance && v <= 90+rangeTolerance }

// bboxContains checks that the geometry lies inside the bbox; a bbox with
// west > east crosses the antimeridian.
func (c *checker) bboxContains(b *box, g orb.Geometry) {
	gb := g.Bound()
	inLat := gb.Min.Lat() >= b.south-bboxTolerance && gb.Max.Lat() <= b.north+bboxTolerance
	var inLon bool
	if b.west <= b.east {
		inLon = gb.Min.Lon() >= b.west-bboxTolerance && gb.Max.Lon() <= b.east+bboxTolerance
	} else {
		inLon = true
		forEachPoint(g, func(p orb.Point) {
			if p.Lon() < b.west-bboxTolerance && p.Lon() > b.east+bboxTolerance {
				inLon = false
			}
		})
	}
	if !inLat || !inLon {
		// A warning: published examples (the projection and sat extensions')
		// have such bboxes, and the schemas accept them.
		c.warn("bbox", "[%v,%v,%v,%v] does not contain the geometry, whose extent is [%v,%v,%v,%v]; the bbox must be the geometry's bounding box",
			b.west, b.south, b.east, b.north, gb.Min.Lon(), gb.Min.Lat(), gb.Max.Lon(), gb.Max.Lat())
	}
}

// empty: a geometry without a single position.
func empty(g orb.Geometry) bool {
	n := 0
	forEachPoint(g, func(orb.Point) { n++ })
	return n == 0
}

func forEachPoint(g orb.Geometry, f func(orb.Point)) {
	switch g := g.(type) {
	case orb.Point:
		f(g)
	case orb.MultiPoint:
		for _, p := range g {
			f(p)
		}
	case orb.LineString:
		for _, p := range g {
			f(p)
		}
	case orb.MultiLineString:
		for _, l := range g {
			forEachPoint(l, f)
		}
	case orb.Ring:
		for _, p := range g {
			f(p)
		}
	case orb.Polygon:
		for _, r := range g {
			forEachPoint(r, f)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			forEachPoint(p, f)
		}
	case orb.Collection:
		for _, x := range g {
			forEachPoint(x, f)
		}
	}
}

// number reads a JSON number decoded as float64 or json.Number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func describeMember(m map[string]any, key string) string {
	v, ok := m[key]
	if !ok {
		return "missing"
	}
	return describe(v)
}

// describe names a JSON value's type (and a short string's value) without
// echoing large content.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("a string of %d bytes", len(x))
		}
		return fmt.Sprintf("%q", x)
	case bool:
		return fmt.Sprintf("%v", x)
	case float64, json.Number:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return fmt.Sprintf("a list of %d", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// MergePatch returns doc with patch applied as a JSON merge patch (RFC
// 7386), the PATCH format of the Transaction extensions: members set to
// null are removed, objects merge recursively, anything else replaces.
// doc is not modified.
func MergePatch(doc, patch map[string]any) map[string]any {
	out := make(map[string]any, len(doc)+len(patch))
	for k, v := range doc {
		out[k] = v
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			base, _ := out[k].(map[string]any)
			out[k] = MergePatch(base, pv)
		default:
			out[k] = v
		}
	}
	return out
}
