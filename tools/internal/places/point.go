package places

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// DefaultPointKm is the radius of the area round a point given without one.
const DefaultPointKm = 1

// MaxPointKm is the largest radius a point query may ask for.
const MaxPointKm = 500

// pointPattern reads "38.72, -9.14", "38.72 -9.14", "38.72°N 9.14°W",
// each optionally followed by a radius: ", 5 km", " 500 m", " 3 mi".
var pointPattern = regexp.MustCompile(`(?i)^\s*` +
	`([+-]?\d+(?:\.\d+)?)\s*°?\s*([nsew])?\s*[,;\s]\s*` +
	`([+-]?\d+(?:\.\d+)?)\s*°?\s*([nsew])?` +
	`(?:\s*[,;\s]\s*(?:r(?:adius)?\s*[=:]?\s*)?(\d+(?:\.\d+)?)\s*(km|m|mi)?)?\s*$`)

// resolvePoint reads q as a point; ok is false when q is not one (a place
// name), and err says why a point was refused.
func resolvePoint(q string) (*Match, bool, error) {
	g := pointPattern.FindStringSubmatch(q)
	if g == nil {
		return nil, false, nil
	}
	a, _ := strconv.ParseFloat(g[1], 64)
	b, _ := strconv.ParseFloat(g[3], 64)
	ha, hb := strings.ToLower(g[2]), strings.ToLower(g[4])
	bad := func(reason string) (*Match, bool, error) {
		return nil, true, &NotFoundError{Query: q, Reason: reason}
	}
	var lat, lon float64
	var notes []string
	switch {
	case ha != "" || hb != "":
		// Hemisphere letters say which is which.
		latFirst := ha == "n" || ha == "s" || hb == "e" || hb == "w"
		lonFirst := ha == "e" || ha == "w" || hb == "n" || hb == "s"
		if latFirst == lonFirst {
			return bad("the hemisphere letters contradict each other: use N/S for the latitude and E/W for the longitude")
		}
		if latFirst {
			lat, lon = sign(a, ha, "s"), sign(b, hb, "w")
		} else {
			lon, lat = sign(a, ha, "w"), sign(b, hb, "s")
		}
	case math.Abs(a) > 90 && math.Abs(b) <= 90:
		lon, lat = a, b
		notes = append(notes, fmt.Sprintf("read as lon, lat (%g is not a latitude)", a))
	default:
		lat, lon = a, b
	}
	if math.Abs(lat) > 90 || math.Abs(lon) > 180 {
		return bad(fmt.Sprintf("latitude %g or longitude %g out of range: a point is \"lat, lon\" in degrees", lat, lon))
	}
	km := float64(DefaultPointKm)
	extent := fmt.Sprintf("radius %g km (the default; add e.g. \", 5 km\" for another)", km)
	if g[5] != "" {
		km, _ = strconv.ParseFloat(g[5], 64)
		switch strings.ToLower(g[6]) {
		case "m":
			km /= 1000
		case "mi":
			km *= 1.609344
		case "km":
		default:
			return bad("the radius needs a unit: km, m or mi")
		}
		if km <= 0 || km > MaxPointKm {
			return bad(fmt.Sprintf("radius %g km: a point's radius is more than 0 and at most %d km", km, MaxPointKm))
		}
		extent = fmt.Sprintf("radius %g km", round4(km))
	}
	circle, err := Circle(lon, lat, km)
	if err != nil {
		return nil, true, err
	}
	p := Place{Name: fmt.Sprintf("%g, %g", round4(lat), round4(lon)), Kind: KindPoint, Lon: lon, Lat: lat,
		BBox: bboxOf(circle), Area: circle, Source: "the coordinates given (lat, lon)", Extent: extent, RadiusKm: round4(km)}
	p.Pick = p.Name
	return &Match{Query: q, Place: p, Notes: notes}, true, nil
}

func sign(v float64, hemisphere, negative string) float64 {
	if hemisphere == negative {
		return -math.Abs(v)
	}
	return v
}
