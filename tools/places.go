package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// Place names in area arguments. Every area argument (bbox, intersects,
// aoi) also takes a place name or a "lat, lon" point as a JSON string:
// resolvePlaceArgs reads it before the handler runs and writes the area
// into the argument in the form the handler already reads (a GeoJSON
// MultiPolygon, or a bbox where only a bbox is accepted), so the tools'
// own parsing is unchanged; the place itself is reported once, by adapt,
// in the result's place field and the first line of its text.

// PlaceOut is the place an area argument named, as resolved.
type PlaceOut struct {
	Param        string    `json:"param" jsonschema:"the argument that named it"`
	Query        string    `json:"query"`
	Name         string    `json:"name"`
	Kind         string    `json:"kind" jsonschema:"country, region, city or point"`
	Country      string    `json:"country,omitempty"`
	BBox         []float64 `json:"bbox" jsonschema:"[west,south,east,north]; west > east across the antimeridian"`
	Source       string    `json:"source" jsonschema:"where the area comes from and how it was made"`
	Alternatives []string  `json:"alternatives" jsonschema:"other places of that name: pass one as written to choose it"`
	Notes        []string  `json:"notes" jsonschema:"misspelling read, parts left out, how the query was read"`
}

// PlaceResult is embedded in the output of every tool with an area
// argument: the place, when one was named.
type PlaceResult struct {
	Place *PlaceOut `json:"place,omitempty" jsonschema:"the place an area argument named, as resolved"`
}

func (p *PlaceResult) setPlace(x *PlaceOut) { p.Place = x }

// placeSetter is implemented (through PlaceResult) by the outputs that
// report a place.
type placeSetter interface{ setPlace(*PlaceOut) }

// placeAccepted is the accepted forms named when a place is refused.
const placeAccepted = `a place name ("Lisbon", "Paris, Texas", "Ceará", "Netherlands"), "lat, lon" with an optional radius ("38.72, -9.14, 5 km"), ` +
	"or the argument's usual numbers or GeoJSON"

var (
	bboxArgType    = reflect.TypeFor[BBoxArg]()
	geoJSONArgType = reflect.TypeFor[GeoJSONArg]()
	areaArgType    = reflect.TypeFor[AreaArg]()
)

// resolvePlaceArgs finds, in the tool input in points to, the area
// arguments given as a place, resolves each, and rewrites it as an area.
// It returns the place (nil when none was named).
func resolvePlaceArgs(in any) (*PlaceOut, error) {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, nil
	}
	var found *PlaceOut
	var walk func(s reflect.Value) error
	walk = func(s reflect.Value) error {
		t := s.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), s.Field(i)
			if f.Anonymous && fv.Kind() == reflect.Struct {
				if err := walk(fv); err != nil {
					return err
				}
				continue
			}
			if f.Type != bboxArgType && f.Type != geoJSONArgType && f.Type != areaArgType {
				continue
			}
			param := strings.Split(f.Tag.Get("json"), ",")[0]
			query, ok := placeQuery(fv.Bytes())
			if !ok {
				continue
			}
			if found != nil {
				return &stacclient.ParamError{Param: param, Got: query, Reason: fmt.Sprintf("%s already names a place (%q)", found.Param, found.Query),
					Accepted: "one area argument"}
			}
			m, err := places.Resolve(query)
			if err != nil {
				return placeError(param, query, err)
			}
			out, geometry, err := placeOut(param, m)
			if err != nil {
				return err
			}
			found = out
			switch {
			case f.Type != bboxArgType:
				fv.SetBytes(geometry)
			case sibling(s, "intersects").IsValid() && len(sibling(s, "intersects").Bytes()) == 0:
				// A search's bbox: the outline goes in intersects, so the
				// catalog matches the shape, not its box.
				fv.SetBytes(nil)
				sibling(s, "intersects").SetBytes(geometry)
				out.Notes = append(out.Notes, "searched by its outline (sent as intersects)")
			default:
				b, _ := json.Marshal(out.BBox)
				fv.SetBytes(b)
				if m.Place.Kind != places.KindPoint {
					out.Notes = append(out.Notes, "searched by its bbox (this argument takes a bbox only)")
				}
			}
		}
		return nil
	}
	return found, walk(v.Elem())
}

// sibling is the loose-argument field of s whose JSON name is name.
func sibling(s reflect.Value, name string) reflect.Value {
	t := s.Type()
	for i := range t.NumField() {
		if strings.Split(t.Field(i).Tag.Get("json"), ",")[0] == name && t.Field(i).Type == geoJSONArgType {
			return s.Field(i)
		}
	}
	return reflect.Value{}
}

// placeQuery returns the text of an area argument given as a place: a JSON
// string that is not one of the argument's other forms (a JSON array or
// object in a string, or 4 or 6 comma-separated numbers: a bbox).
func placeQuery(raw []byte) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	t := strings.TrimSpace(s)
	if t == "" || strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		return "", false
	}
	fields := strings.Split(t, ",")
	if len(fields) == 4 || len(fields) == 6 {
		numbers := true
		for _, f := range fields {
			if _, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err != nil {
				numbers = false
				break
			}
		}
		if numbers {
			return "", false // a bbox
		}
	}
	return t, true
}

// placeError words a place that could not be resolved as an argument error.
func placeError(param, query string, err error) error {
	var nf *places.NotFoundError
	if errors.As(err, &nf) {
		reason := "no place of that name"
		if nf.Reason != "" {
			reason = nf.Reason
		}
		if len(nf.Suggestions) > 0 {
			quoted := make([]string, len(nf.Suggestions))
			for i, s := range nf.Suggestions {
				quoted[i] = strconv.Quote(s)
			}
			reason += " (did you mean " + strings.Join(quoted, " or ") + "?)"
		}
		return &stacclient.ParamError{Param: param, Got: trimText(query, 120), Reason: reason, Accepted: placeAccepted}
	}
	return err
}

// placeOut is the reported place and its area as GeoJSON.
func placeOut(param string, m *places.Match) (*PlaceOut, json.RawMessage, error) {
	p := m.Place
	out := &PlaceOut{Param: param, Query: m.Query, Name: p.Name, Kind: string(p.Kind), Country: p.Country,
		BBox: p.BBox[:], Source: p.Source + ", " + p.Extent, Alternatives: []string{}, Notes: []string{}}
	if p.Kind == places.KindCity && p.Region != "" {
		out.Country = p.Region + ", " + p.Country
	}
	for _, a := range m.Alternatives {
		out.Alternatives = append(out.Alternatives, a.Pick)
	}
	if m.More > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d more places of that name: add a region or country after a comma to choose", m.More))
	}
	if m.Matched != "" && !m.Fuzzy {
		out.Notes = append(out.Notes, fmt.Sprintf("matched its name %q", m.Matched))
	}
	out.Notes = append(out.Notes, m.Notes...)
	if p.Left != "" {
		out.Notes = append(out.Notes, "far parts left out of the outline: "+p.Left+" (name one to search it)")
	}
	b, err := geojson.NewGeometry(p.Area).MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	return out, b, nil
}

// placeText is the line the text of a result starts with when an area
// argument named a place: what was searched, and what else the name means.
func placeText(p *PlaceOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Place (%s %q): %s (%s", p.Param, p.Query, p.Name, p.Kind)
	if p.Country != "" && p.Country != p.Name {
		b.WriteString(", " + p.Country)
	}
	fmt.Fprintf(&b, "; %s; bbox %s).", p.Source, formatBBox(p.BBox))
	if len(p.Alternatives) > 0 {
		fmt.Fprintf(&b, " Also: %s; pass one as written to choose it.", strings.Join(p.Alternatives, "; "))
	}
	if len(p.Notes) > 0 {
		b.WriteString(" Notes: " + strings.Join(p.Notes, "; ") + ".")
	}
	return b.String()
}
