package stacclient

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

const bboxAccepted = `4 numbers [west,south,east,north] or 6 [west,south,minz,east,north,maxz], as a list (numbers or numeric strings) or "w,s,e,n"; longitudes -180..180, latitudes -90..90 with south <= north; west > east means the box crosses the antimeridian`

// ParseBBox accepts 4 or 6 numbers as a list (of numbers, or of numeric
// strings), a JSON-encoded list or "w,s,e,n".
// West greater than east is allowed: the box crosses the antimeridian.
func ParseBBox(v any) ([]float64, error) {
	bad := paramErrorFor("bbox", v, bboxAccepted)
	in, err := readLoose(v, jsonContainerText, bad)
	switch {
	case err != nil || !in.present:
		return nil, err
	case in.decoded:
		if _, fromText := v.(string); fromText {
			if _, isList := in.value.([]any); !isList {
				return nil, bad("a JSON " + jsonTypeName(in.value) + " is not a list of numbers")
			}
		}
		return ParseBBox(in.value)
	}
	var numbers []float64
	switch x := in.value.(type) {
	case string:
		for i, part := range strings.Split(x, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
			if err != nil || !isFinite(f) {
				return nil, bad(fmt.Sprintf("entry %d %q is not a number", i, strings.TrimSpace(part)))
			}
			numbers = append(numbers, f)
		}
	case []float64:
		numbers = append([]float64(nil), x...)
	case []int:
		for _, n := range x {
			numbers = append(numbers, float64(n))
		}
	case []any:
		for i, e := range x {
			f, ok := numberFromLoose(e)
			if text, isText := e.(string); isText {
				// ["-105.3", "39.9", ...]: numbers a client quoted.
				parsed, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
				f, ok = parsed, err == nil && isFinite(parsed)
			}
			if !ok {
				return nil, bad(fmt.Sprintf("entry %d is %s, not a finite number", i, describeReceived(e)))
			}
			numbers = append(numbers, f)
		}
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseBBox(decoded)
		}
		return nil, bad("a " + jsonTypeName(v) + " is not a list of numbers")
	}
	if len(numbers) == 0 {
		return nil, nil
	}
	if reason := bboxProblem(numbers); reason != "" {
		return nil, bad(reason)
	}
	return numbers, nil
}

// bboxProblem says what is wrong with a bbox, or "" when it is valid.
func bboxProblem(b []float64) string {
	if len(b) != 4 && len(b) != 6 {
		return fmt.Sprintf("%d numbers", len(b))
	}
	for i, f := range b {
		if !isFinite(f) {
			return fmt.Sprintf("entry %d is not a finite number", i)
		}
	}
	west, south, east, north := b[0], b[1], b[2], b[3]
	if len(b) == 6 {
		west, south, east, north = b[0], b[1], b[3], b[4]
		if b[2] > b[5] {
			return fmt.Sprintf("minz %s is above maxz %s", formatCoordinate(b[2]), formatCoordinate(b[5]))
		}
	}
	for _, c := range []struct {
		name  string
		value float64
		limit float64
	}{{"west", west, 180}, {"east", east, 180}, {"south", south, 90}, {"north", north, 90}} {
		if c.value < -c.limit || c.value > c.limit {
			return fmt.Sprintf("%s %s is outside -%s..%s", c.name, formatCoordinate(c.value), formatCoordinate(c.limit), formatCoordinate(c.limit))
		}
	}
	if south > north {
		return fmt.Sprintf("south %s is greater than north %s (the order is west,south,east,north)", formatCoordinate(south), formatCoordinate(north))
	}
	return ""
}

// BBoxWarning returns a caution for a valid bbox that is most likely a
// mistake, or "". West greater than east is read as a box crossing the
// antimeridian; when that box would span more than 180° of longitude, the
// caller almost always swapped west and east (a model writing the corners in
// the wrong order), and the search would silently cover nearly the globe.
func BBoxWarning(b []float64) string {
	if bboxProblem(b) != "" {
		return ""
	}
	ei := 2
	if len(b) == 6 {
		ei = 3
	}
	west, east := b[0], b[ei]
	if west <= east {
		return ""
	}
	width := east + 360 - west
	if width <= 180 {
		return ""
	}
	swapped := append([]float64(nil), b...)
	swapped[0], swapped[ei] = east, west
	return fmt.Sprintf("bbox west %s is greater than east %s, so it was read as a box crossing the antimeridian, %s° of longitude wide; "+
		"if you meant the %s° between %s and %s, swap west and east: [%s]",
		formatCoordinate(west), formatCoordinate(east), formatCoordinate(roundTo(width, 6)),
		formatCoordinate(roundTo(west-east, 6)), formatCoordinate(east), formatCoordinate(west), strings.Join(formatCoordinates(swapped), ","))
}

// roundTo rounds f to n decimals, so that 359.8 is not printed as
// 359.79999999999995.
func roundTo(f float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(f*p) / p
}
