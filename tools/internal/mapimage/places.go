package mapimage

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/tools/internal/canvas"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// places110m is Natural Earth's 1:110m populated places, converted from the
// npm package globe.gl 2.46.2 (basemap/README.md: source, format, licences).
//
//go:embed basemap/places-110m.tsv
var places110m []byte

// Place is a populated place of the embedded gazetteer.
type Place struct {
	Name, Country string
	Lon, Lat      float64
	ScaleRank     int // 0 the most important
	PopMax        int64
}

var (
	placesOnce sync.Once
	placeList  []Place
	placesErr  error
)

// Places parses the embedded places once and returns them, most important
// first (the file's order); the slice is shared and must not be modified.
func Places() ([]Place, error) {
	placesOnce.Do(func() { placeList, placesErr = parsePlaces(places110m) })
	return placeList, placesErr
}

func parsePlaces(data []byte) ([]Place, error) {
	var out []Place
	sc := bufio.NewScanner(bytes.NewReader(data))
	header := false
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) < 6 {
			return nil, fmt.Errorf("places-110m.tsv line %d: %d columns, want 6", line, len(f))
		}
		if !header {
			header = true
			if f[0] != "name" || f[2] != "lon" || f[3] != "lat" {
				return nil, fmt.Errorf("places-110m.tsv line %d: header %q", line, text)
			}
			continue
		}
		lon, err1 := strconv.ParseFloat(f[2], 64)
		lat, err2 := strconv.ParseFloat(f[3], 64)
		rank, err3 := strconv.Atoi(f[4])
		pop, err4 := strconv.ParseInt(f[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || math.Abs(lat) > 90 || math.Abs(lon) > 180 {
			return nil, fmt.Errorf("places-110m.tsv line %d: bad numbers in %q", line, text)
		}
		out = append(out, Place{Name: f[0], Country: f[1], Lon: lon, Lat: lat, ScaleRank: rank, PopMax: pop})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("places-110m.tsv: no places")
	}
	return out, nil
}

const (
	maxPlaceLabels = 6
	placeTextSize  = 11
	// Past this distance the nearest place says little the locator inset
	// does not: no edge label.
	maxNearestKm = 800
)

var (
	placeInk = color.NRGBA{0x4a, 0x3b, 0x2c, 0xff}
	placeDot = color.NRGBA{0x33, 0x2a, 0x22, 0xff}
)

// maxPlaceCandidates is how many of a frame's places are tried for a
// label: more than are named, since some labels clash with others.
const maxPlaceCandidates = 40

// framePlaces are the places a map may name: those inside the frame, the
// most important first, with longitudes in the frame's; when there are
// none, the one nearest the map's centre and its distance.
type framePlaces struct {
	inside    []Place
	nearest   *Place
	nearestKm float64
	source    string // the attribution written in the footer
}

// placeSources are where place names come from, tried in order: the
// gazetteer's cities (GeoNames, tens of thousands: a map of one satellite
// tile names the towns in it), then the 243 places of Natural Earth 1:110m
// embedded here, for a build whose gazetteer file is missing (built with
// places_beside and run without it): a map is never refused for its names.
var placeSources = []func(p projection) (framePlaces, error){gazetteerPlaces, placesOf110m}

// gazetteer is what the maps ask of package places; a variable so that a
// test can take the gazetteer away.
var gazetteer = struct {
	citiesIn      func(west, south, east, north float64, n int) ([]places.Landmark, error)
	nearestCity   func(lon, lat float64, minPopulation int64) (places.Landmark, float64, error)
	countryAt     func(lon, lat float64) (places.Place, bool, error)
	countryByCode func(iso2 string) (places.Place, bool, error)
}{places.CitiesIn, places.NearestCity, places.CountryAt, places.CountryByCode}

// edgeLabelMinPopulation is the size of town the edge label names first.
const edgeLabelMinPopulation = 100_000

// gazetteerSource is the attribution the GeoNames licence (CC BY 4.0) asks
// for.
const gazetteerSource = "GeoNames (CC BY 4.0)"

func gazetteerPlaces(p projection) (framePlaces, error) {
	cities, err := gazetteer.citiesIn(p.ext.Min[0], p.ext.Min[1], p.ext.Max[0], p.ext.Max[1], maxPlaceCandidates)
	if err != nil {
		return framePlaces{}, err
	}
	fp := framePlaces{source: gazetteerSource}
	for _, c := range cities {
		fp.inside = append(fp.inside, Place{Name: labelName(c.Name), Country: c.CountryCode, Lon: c.Lon, Lat: c.Lat, PopMax: c.Population})
	}
	if len(fp.inside) > 0 {
		return fp, nil
	}
	// Off the frame, a town people know orients better than the nearest
	// hamlet ("Lisbon 180 km E", not a village of 2,000 on the coast);
	// where no such town is within reach, the nearest city of any size.
	center := p.ext.Center()
	c, km, err := gazetteer.nearestCity(center[0], center[1], edgeLabelMinPopulation)
	if err == nil && km > maxNearestKm {
		c, km, err = gazetteer.nearestCity(center[0], center[1], 0)
	}
	if err != nil {
		return framePlaces{}, err
	}
	fp.nearest = &Place{Name: labelName(c.Name), Country: c.CountryCode, Lon: c.Lon, Lat: c.Lat, PopMax: c.Population}
	fp.nearestKm = km
	return fp, nil
}

// labelName is a gazetteer name as a map writes it: without the
// parenthesis GeoNames adds to tell places of one name apart
// ("Middlebury (village)"), which the map's position already does.
func labelName(name string) string {
	if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, ")") {
		return name[:i]
	}
	return name
}

func placesOf110m(p projection) (framePlaces, error) {
	list, err := Places()
	if err != nil {
		return framePlaces{}, err
	}
	fp := framePlaces{source: "Natural Earth 1:110m (public domain)"}
	for _, pl := range list {
		if len(fp.inside) == maxPlaceCandidates {
			break
		}
		if q, ok := placeInFrame(p, pl); ok {
			pl.Lon = q[0]
			fp.inside = append(fp.inside, pl)
		}
	}
	if len(fp.inside) > 0 {
		return fp, nil
	}
	center := p.ext.Center()
	for i, pl := range list {
		if d := places.GreatCircleKm(center[1], center[0], pl.Lat, pl.Lon); fp.nearest == nil || d < fp.nearestKm {
			fp.nearest, fp.nearestKm = &list[i], d
		}
	}
	return fp, nil
}

// findPlaces asks each source in turn and returns the first answer, with
// the failures of the sources before it (nil when the first answered), for
// the caller to log. With none left (a build defect, caught by the tests),
// it finds nothing: the map is still useful without names.
func findPlaces(p projection) (framePlaces, error) {
	var failed []error
	for _, src := range placeSources {
		fp, err := src(p)
		if err == nil {
			return fp, errors.Join(failed...)
		}
		failed = append(failed, err)
	}
	return framePlaces{}, errors.Join(failed...)
}

// drawPlaces names a few populated places for orientation on maps zoomed
// in past the locator threshold: the most important places inside the
// frame, each with a dot and a label beside it where the label (and dot)
// clash with no footprint number, no other place and no graticule label;
// when no place is inside the frame, the nearest is named at the frame's
// edge with its distance and direction, with an arrow pointing to it. It
// returns the labels and the places' attribution ("" when none is named).
func drawPlaces(cv *canvas.Canvas, p projection, fp framePlaces, avoid []image.Rectangle) ([]placeLabel, string) {
	// Labels stay clear of the graticule labels (left and bottom strips)
	// and the frame.
	inner := image.Rect(48, int(p.top)+6, int(p.w)-6, int(p.top+p.h)-18)
	free := func(r image.Rectangle) bool {
		if !r.In(inner) {
			return false
		}
		for _, a := range avoid {
			if a.Overlaps(r) {
				return false
			}
		}
		return true
	}
	var names []placeLabel
	for _, pl := range fp.inside {
		if len(names) == maxPlaceLabels {
			break
		}
		if !canvas.CanDraw(pl.Name, placeTextSize) {
			continue // a name in a script the map's font lacks
		}
		c := p.point(orb.Point{pl.Lon, pl.Lat})
		dot := image.Rect(int(c.X)-4, int(c.Y)-4, int(c.X)+5, int(c.Y)+5)
		if !free(dot) {
			continue
		}
		w := canvas.TextWidth(pl.Name, placeTextSize)
		// Right, left, above, below the dot: the first that is free.
		for _, at := range []pt{{X: c.X + 6, Y: c.Y + 4}, {X: c.X - 6 - w, Y: c.Y + 4}, {X: c.X - w/2, Y: c.Y - 7}, {X: c.X - w/2, Y: c.Y + 16}} {
			box := labelBox(at, w)
			if !free(box) {
				continue
			}
			cv.Dot(c, 3.5, paper)
			cv.Dot(c, 2.2, placeDot)
			cv.HaloText(pl.Name, at.X, at.Y, placeTextSize, placeInk)
			avoid = append(avoid, dot, box)
			names = append(names, placeLabel{pl.Name, []image.Rectangle{dot, box}})
			break
		}
	}
	if len(fp.inside) > 0 || fp.nearest == nil || fp.nearestKm > maxNearestKm || !canvas.CanDraw(fp.nearest.Name, placeTextSize) {
		if len(names) == 0 {
			return nil, ""
		}
		return names, fp.source
	}
	if l, ok := drawNearestPlace(cv, p, *fp.nearest, fp.nearestKm, free); ok {
		return append(names, l), fp.source
	}
	return names, ""
}

// placeLabel is a name written on the map and the boxes it took (its
// label's, its dot's).
type placeLabel struct {
	text  string
	boxes []image.Rectangle
}

// labelBox is the halo box of a label of width w with its baseline at at.
func labelBox(at pt, w float64) image.Rectangle {
	return image.Rect(int(at.X)-3, int(at.Y-placeTextSize*0.85)-1, int(at.X+w)+3, int(at.Y+placeTextSize*0.3)+1)
}

// placeInFrame is the place in the map's longitude frame (maps past ±180
// show it a turn away) when it is inside the extent.
func placeInFrame(p projection, pl Place) (orb.Point, bool) {
	for _, dx := range turns {
		q := orb.Point{pl.Lon + dx, pl.Lat}
		if p.ext.Contains(q) {
			return q, true
		}
	}
	return orb.Point{}, false
}

// drawNearestPlace writes "Name 230 km NW" inside the frame's edge, in the
// direction of pl, the place nearest the map's centre, km away, after an
// arrow pointing there.
func drawNearestPlace(cv *canvas.Canvas, p projection, pl Place, km float64, free func(image.Rectangle) bool) (placeLabel, bool) {
	center := p.ext.Center()
	bearing := initialBearing(center[1], center[0], pl.Lat, pl.Lon)
	text := fmt.Sprintf("%s %s %s", pl.Name, roundKm(km), compass(bearing))
	const arrowW = 14.0 // the arrow before the text
	w := canvas.TextWidth(text, placeTextSize) + arrowW
	// From the centre along the bearing (north up, east right) to the
	// inner frame, then the label's box inside that point.
	dx, dy := math.Sin(bearing*math.Pi/180), -math.Cos(bearing*math.Pi/180)
	cx, cy := p.w/2, p.top+p.h/2
	left, right := 52.0, p.w-10-w
	top, bottom := p.top+20, p.top+p.h-24
	t := math.Inf(1)
	if dx > 1e-9 {
		t = math.Min(t, (right+w-cx)/dx)
	} else if dx < -1e-9 {
		t = math.Min(t, (left-cx)/dx)
	}
	if dy > 1e-9 {
		t = math.Min(t, (bottom-cy)/dy)
	} else if dy < -1e-9 {
		t = math.Min(t, (top-cy)/dy)
	}
	x := math.Min(math.Max(cx+t*dx-w/2, left), right)
	y := math.Min(math.Max(cy+t*dy+4, top), bottom)
	// Slide along the edge past footprint numbers, a few steps each way.
	horizontal := math.Abs(dy) >= math.Abs(dx)*p.h/p.w
	for i := 0; i < 13; i++ {
		off := float64((i+1)/2) * 16
		if i%2 == 1 {
			off = -off
		}
		at := pt{X: x, Y: y}
		if horizontal {
			at.X = math.Min(math.Max(x+off*2, left), right)
		} else {
			at.Y = math.Min(math.Max(y+off, top), bottom)
		}
		if box := labelBox(at, w); free(box) {
			cv.Rect(float64(box.Min.X), float64(box.Min.Y), float64(box.Max.X), float64(box.Max.Y), color.NRGBA{255, 255, 255, 210})
			// An arrow: a shaft and a head, pointing along the bearing.
			c := pt{X: at.X + 5, Y: at.Y - 4}
			cv.Stroke([][]pt{{{X: c.X - 5*dx, Y: c.Y - 5*dy}, {X: c.X + 2*dx, Y: c.Y + 2*dy}}}, 1.6, placeInk)
			cv.Fill([][]pt{{
				{X: c.X + 6*dx, Y: c.Y + 6*dy},
				{X: c.X + 0.5*dx - 3.5*dy, Y: c.Y + 0.5*dy + 3.5*dx},
				{X: c.X + 0.5*dx + 3.5*dy, Y: c.Y + 0.5*dy - 3.5*dx},
			}}, placeInk)
			cv.Text(text, at.X+arrowW, at.Y, placeTextSize, placeInk)
			return placeLabel{text, []image.Rectangle{box}}, true
		}
	}
	return placeLabel{}, false
}

// roundKm writes a distance to 1 km under 100 km, else to 10 km, with
// thousands separated: "85 km", "230 km", "1,640 km".
func roundKm(km float64) string {
	n := int64(math.Round(km))
	if km >= 100 {
		n = int64(math.Round(km/10)) * 10
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s + " km"
}

// compass is the eight-point direction of a bearing in degrees.
func compass(bearing float64) string {
	dirs := []string{"N", "NE", "E", "SE", "S", "SW", "W", "NW"}
	return dirs[int(math.Mod(bearing+22.5+720, 360)/45)%8]
}

// initialBearing is the direction from the first point to the second, in
// degrees clockwise from north.
func initialBearing(lat1, lon1, lat2, lon2 float64) float64 {
	φ1, φ2 := lat1*math.Pi/180, lat2*math.Pi/180
	dλ := (lon2 - lon1) * math.Pi / 180
	y := math.Sin(dλ) * math.Cos(φ2)
	x := math.Cos(φ1)*math.Sin(φ2) - math.Sin(φ1)*math.Cos(φ2)*math.Cos(dλ)
	return math.Mod(math.Atan2(y, x)*180/math.Pi+360, 360)
}
