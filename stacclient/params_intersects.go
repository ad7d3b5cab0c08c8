package stacclient

import (
	"encoding/json"
	"fmt"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

const intersectsAccepted = `a GeoJSON geometry object (Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, GeometryCollection) or a Feature holding one, as an object or a JSON string; positions [lon,lat] or [lon,lat,z] with lon -180..180 and lat -90..90; polygon rings closed with at least 4 positions`

// positionDepth is how deeply each geometry type nests its positions:
// 0 = coordinates is one position, 1 = a list of positions, and so on.
var positionDepth = map[string]int{
	"Point": 0, "MultiPoint": 1, "LineString": 1,
	"MultiLineString": 2, "Polygon": 2, "MultiPolygon": 3,
}

// ParseIntersects accepts a GeoJSON geometry (object or JSON string) or a
// Feature (its geometry is taken) and validates it. Go callers may also pass
// an orb.Geometry or *geojson.Geometry. The result is compact
// JSON with sorted keys, numbers exactly as given.
func ParseIntersects(v any) (json.RawMessage, error) {
	bad := paramErrorFor("intersects", v, intersectsAccepted)
	in, err := readLoose(v, jsonAlwaysText, bad)
	if err != nil || !in.present {
		return nil, err
	}
	// Decoded JSON text goes straight to the checks below rather than round
	// again, so that a JSON list or null is reported as JSON.
	decoded := in.value
	if !in.decoded {
		switch x := in.value.(type) {
		case map[string]any:
			encoded, err := json.Marshal(x)
			if err != nil {
				return nil, bad("cannot be encoded as JSON: " + err.Error())
			}
			if decoded, err = decodeLooseJSON(encoded); err != nil {
				return nil, bad("cannot be encoded as JSON: " + err.Error())
			}
		case *geojson.Geometry:
			if x == nil {
				return nil, nil
			}
			encoded, err := x.MarshalJSON()
			if err != nil {
				return nil, bad("cannot be encoded as GeoJSON: " + err.Error())
			}
			return ParseIntersects(json.RawMessage(encoded))
		case orb.Geometry:
			return ParseIntersects(geojson.NewGeometry(x))
		default:
			if decoded, ok := asDecodedJSON(v); ok {
				return ParseIntersects(decoded)
			}
			return nil, bad("a " + jsonTypeName(v) + " is not a GeoJSON object")
		}
	}
	geometry, ok := decoded.(map[string]any)
	if !ok {
		return nil, bad("a JSON " + jsonTypeName(decoded) + " is not a GeoJSON object")
	}
	if geometry["type"] == "Feature" {
		inner, isObject := geometry["geometry"].(map[string]any)
		if !isObject {
			return nil, bad("the Feature has no geometry object")
		}
		geometry = inner
	}
	if reason := geometryProblem(geometry, "geometry"); reason != "" {
		return nil, bad(reason)
	}
	encoded, err := marshalWithoutHTMLEscape(geometry)
	if err != nil {
		return nil, bad("cannot be re-encoded: " + err.Error())
	}
	return encoded, nil
}

// geometryProblem says what is wrong with a decoded GeoJSON geometry, or ""
// when it is valid. where names the geometry in messages.
func geometryProblem(geometry map[string]any, where string) string {
	kind, _ := geometry["type"].(string)
	if kind == "GeometryCollection" {
		members, ok := geometry["geometries"].([]any)
		if !ok || len(members) == 0 {
			return where + ": a GeometryCollection needs a non-empty geometries list"
		}
		for i, member := range members {
			obj, isObject := member.(map[string]any)
			if !isObject {
				return fmt.Sprintf("%s.geometries[%d] is a %s, not a geometry object", where, i, jsonTypeName(member))
			}
			if reason := geometryProblem(obj, fmt.Sprintf("%s.geometries[%d]", where, i)); reason != "" {
				return reason
			}
		}
		return ""
	}
	depth, known := positionDepth[kind]
	if !known {
		return fmt.Sprintf("%s: type %s is not a GeoJSON geometry type", where, describeReceived(geometry["type"]))
	}
	if reason := positionsProblem(geometry["coordinates"], depth, where+".coordinates"); reason != "" {
		return reason
	}
	encoded, err := json.Marshal(geometry)
	if err != nil {
		return where + ": cannot be encoded: " + err.Error()
	}
	parsed, err := geojson.UnmarshalGeometry(encoded)
	if err != nil {
		return fmt.Sprintf("%s: not a valid %s: %v", where, kind, err)
	}
	return shapeProblem(parsed.Geometry(), where)
}

// positionsProblem walks the coordinates, checking the nesting and that each
// position is 2 or 3 finite numbers with lon/lat in range. orb decodes
// positions into [2]float64 and would silently drop a bad third or
// missing second number, so the arity is checked here.
func positionsProblem(coords any, depth int, where string) string {
	list, ok := coords.([]any)
	if !ok {
		return fmt.Sprintf("%s is a %s, not a list", where, jsonTypeName(coords))
	}
	if depth > 0 {
		if len(list) == 0 {
			return where + " is empty"
		}
		for i, inner := range list {
			if reason := positionsProblem(inner, depth-1, fmt.Sprintf("%s[%d]", where, i)); reason != "" {
				return reason
			}
		}
		return ""
	}
	if len(list) != 2 && len(list) != 3 {
		return fmt.Sprintf("%s has %d numbers; a position is [lon,lat] or [lon,lat,z]", where, len(list))
	}
	var position [3]float64
	for i, n := range list {
		f, isNumber := numberFromLoose(n)
		if !isNumber {
			return fmt.Sprintf("%s[%d] is %s, not a finite number", where, i, describeReceived(n))
		}
		position[i] = f
	}
	if position[0] < -180 || position[0] > 180 {
		return fmt.Sprintf("%s longitude %s is outside -180..180", where, formatCoordinate(position[0]))
	}
	if position[1] < -90 || position[1] > 90 {
		return fmt.Sprintf("%s latitude %s is outside -90..90 (positions are [lon,lat])", where, formatCoordinate(position[1]))
	}
	return ""
}

// shapeProblem checks what GeoJSON requires beyond nesting: line strings
// with at least 2 positions, polygon rings closed with at least 4.
func shapeProblem(g orb.Geometry, where string) string {
	switch shape := g.(type) {
	case orb.LineString:
		if len(shape) < 2 {
			return fmt.Sprintf("%s: a LineString needs at least 2 positions, got %d", where, len(shape))
		}
	case orb.MultiLineString:
		for i, line := range shape {
			if reason := shapeProblem(line, fmt.Sprintf("%s line %d", where, i)); reason != "" {
				return reason
			}
		}
	case orb.Polygon:
		for i, ring := range shape {
			if len(ring) < 4 {
				return fmt.Sprintf("%s ring %d has %d positions; a ring needs at least 4 with the last equal to the first", where, i, len(ring))
			}
			if !ring.Closed() {
				return fmt.Sprintf("%s ring %d is not closed: its last position must equal its first", where, i)
			}
		}
	case orb.MultiPolygon:
		for i, polygon := range shape {
			if reason := shapeProblem(polygon, fmt.Sprintf("%s polygon %d", where, i)); reason != "" {
				return reason
			}
		}
	}
	return ""
}
