// Package mapimage draws footprint maps: item footprints over a light
// basemap of land, coastlines and country borders (Natural Earth 1:110m,
// embedded), with the area of interest outlined, a graticule, a colour
// legend, a scale bar and, for small extents, a locator inset beside the
// legend (outside the map, so it never covers a footprint) naming the
// country the map lies in, and the names of a few populated places. Places
// and country come from the offline gazetteer (package places: GeoNames
// cities, Natural Earth 1:10m outlines), the same data the place search
// uses; a build without it names places from Natural Earth 1:110m's 243,
// embedded here. Output is an RGBA image; drawing is deterministic (same
// spec, same pixels).
//
// The projection is equirectangular with longitudes scaled by the cosine
// of the map's middle latitude: shapes look right at the scale of a search,
// and lon/lat maps to pixels with one multiplication.
package mapimage

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/clip"

	"github.com/stacmcp/stac-mcp/tools/internal/canvas"
)

// Footprint is one item drawn on the map.
type Footprint struct {
	Polygons orb.MultiPolygon // lon/lat, longitudes continuous (see footprint.Frame)
	Color    color.NRGBA      // fill (drawn translucent) and, darker, outline
	Label    string           // drawn at the footprint's centre; "" for none
}

// Spec is what to draw.
type Spec struct {
	Footprints []Footprint      // in drawing order: later ones on top
	AOI        orb.MultiPolygon // outlined in red; nil for none
	Title      string
	Legend     *Legend // colour bar in the footer; nil for none
}

// Legend is the footer's colour bar.
type Legend struct {
	Title     string // e.g. "cloud cover"
	Ramp      Ramp
	Low, High string // labels at the ends
}

// Map is a rendered map.
type Map struct {
	Image  *image.RGBA
	Extent orb.Bound // lon/lat shown, in the footprints' frame
	// ScaleBar is the length the scale bar stands for, e.g. "20 km".
	ScaleBar string
	// KmPerPixel is the ground distance of one pixel east–west at the
	// middle latitude.
	KmPerPixel float64
	// Frame is the map area on the image (between header and footer).
	Frame image.Rectangle
	// Locator is where the locator inset was drawn (in the footer, outside
	// Frame); empty when the map is wide enough not to need one.
	Locator image.Rectangle
	// Country is the country the map's centre lies in, named on the
	// locator; "" at sea, without a locator, or without the gazetteer.
	Country string
	// Places are the populated places named on the map ("Name 230 km NW"
	// for the nearest one when none is inside the frame).
	Places []string
	// PlacesErr says why the places were named from a smaller set, or not
	// at all (the gazetteer could not be loaded); nil when they come from
	// the gazetteer. The map is complete either way: the caller logs it.
	PlacesErr error
}

// Layout.
const (
	Width        = 800
	headerHeight = 28
	footerHeight = 46
	// The locator inset sits at the footer's right, which grows to hold it.
	locatorW, locatorH = 150, 75
	footerWithLocator  = locatorH + 16
	minMapHeight       = 300
	maxMapHeight       = 560
)

// fillAlpha is the footprints' opacity over the basemap.
const fillAlpha = 0x8c

// Colours of the basemap and overlays.
var (
	ocean      = color.NRGBA{0xdf, 0xea, 0xf3, 0xff}
	land       = color.NRGBA{0xf3, 0xf0, 0xe8, 0xff}
	coastline  = color.NRGBA{0x7d, 0x93, 0xab, 0xff}
	borderLine = color.NRGBA{0xb5, 0xa9, 0x9a, 0xff}
	gridLine   = color.NRGBA{0x9a, 0xaa, 0xbb, 0x50}
	aoiLine    = color.NRGBA{0xd7, 0x30, 0x1f, 0xff}
	ink        = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	faintInk   = color.NRGBA{0x55, 0x5f, 0x6a, 0xff}
	paper      = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// projection maps lon/lat to pixels of the map area.
type projection struct {
	ext       orb.Bound
	pxPerDegY float64
	pxPerDegX float64
	top       float64 // y of the map area's top edge on the canvas
	w, h      float64
}

func (p projection) point(q orb.Point) pt {
	return pt{X: (q[0] - p.ext.Min[0]) * p.pxPerDegX, Y: p.top + (p.ext.Max[1]-q[1])*p.pxPerDegY}
}

// Render draws spec. It fails only if the basemap cannot be decoded (a
// build defect, caught by the tests) or there is nothing to draw.
func Render(spec Spec) (*Map, error) {
	w, err := Basemap()
	if err != nil {
		return nil, err
	}
	ext, ok := extentOf(spec)
	if !ok {
		return nil, fmt.Errorf("nothing to draw: no footprint and no area of interest")
	}
	proj := fit(ext)
	// The locator goes below the map, not over it: in a corner it covered
	// footprints, and footprints padded by 6 % reach every corner.
	locator := math.Max(proj.ext.Max[0]-proj.ext.Min[0], proj.ext.Max[1]-proj.ext.Min[1]) < 40
	footerH := footerHeight
	if locator {
		footerH = footerWithLocator
	}
	cv := canvas.New(Width, int(proj.top+proj.h)+footerH, paper)
	cv.Rect(0, proj.top, proj.w, proj.top+proj.h, ocean)

	drawBasemap(cv, proj, w)
	drawGraticule(cv, proj, false)
	// Fills: each footprint painted opaque on a layer, later ones over
	// earlier ones, then the layer laid over the basemap at one opacity, so
	// every point shows the colour of the top footprint there (the caller
	// draws the clearest, or newest, last): a colour on the legend.
	// Translucent fills laid one over another blended into colours on no
	// legend, and 50 overlapping Landsat scenes into one grey.
	layer := canvas.New(cv.Img.Bounds().Dx(), cv.Img.Bounds().Dy(), color.Transparent)
	for _, f := range spec.Footprints {
		layer.Fill(rings(proj, f.Polygons), withAlpha(f.Color, 0xff))
	}
	draw.DrawMask(cv.Img, cv.Img.Bounds(), layer.Img, image.Point{}, image.NewUniform(color.Alpha{A: fillAlpha}), image.Point{}, draw.Over)
	for _, f := range spec.Footprints {
		cv.Stroke(outlines(proj, f.Polygons), 1.2, darker(f.Color))
		// A footprint a few pixels across would vanish on a continental
		// map: mark it with a dot.
		if tiny(proj, f.Polygons) {
			c := proj.point(f.Polygons.Bound().Center())
			cv.Dot(c, 4, darker(f.Color))
			cv.Dot(c, 3, f.Color)
		}
	}
	if len(spec.AOI) > 0 {
		cv.Stroke(outlines(proj, spec.AOI), 4, color.NRGBA{255, 255, 255, 200})
		cv.Stroke(outlines(proj, spec.AOI), 2.2, aoiLine)
	}
	labels := drawLabels(cv, proj, spec.Footprints)
	var places []string
	var found framePlaces
	var placesErr error
	placesSource := ""
	if locator {
		// Local and regional maps get place names; a continental map shows
		// where it is by its coasts.
		var named []placeLabel
		found, placesErr = findPlaces(proj)
		named, placesSource = drawPlaces(cv, proj, found, labels)
		for _, l := range named {
			places = append(places, l.text)
		}
	}
	drawGraticule(cv, proj, true)
	cv.Rect(0, 0, proj.w, proj.top, paper)
	cv.Text(canvas.FitText(spec.Title, proj.w-16, 14), 8, 19, 14, ink)
	m := &Map{Image: cv.Img, Extent: proj.ext, KmPerPixel: kmPerDegLon(proj.ext.Center()[1]) / proj.pxPerDegX,
		Frame: image.Rect(0, int(proj.top), int(proj.w), int(proj.top+proj.h)), Places: places, PlacesErr: placesErr}
	textRight := proj.w - 8
	if locator {
		textRight = proj.w - locatorW - 24
	}
	m.ScaleBar = drawFooter(cv, proj, spec.Legend, m.KmPerPixel, float64(footerH), textRight, placesSource)
	if locator {
		m.Locator, m.Country = drawLocator(cv, proj, w, found)
	}
	return m, nil
}

// extentOf bounds the footprints and the area of interest, padded by 6 %
// (at least about 200 m) so nothing touches the frame.
func extentOf(spec Spec) (orb.Bound, bool) {
	var b orb.Bound
	found := false
	add := func(mp orb.MultiPolygon) {
		if len(mp) == 0 {
			return
		}
		if !found {
			b, found = mp.Bound(), true
			return
		}
		b = b.Union(mp.Bound())
	}
	for _, f := range spec.Footprints {
		add(f.Polygons)
	}
	add(spec.AOI)
	if !found {
		return b, false
	}
	padX := math.Max((b.Max[0]-b.Min[0])*0.06, 0.002)
	padY := math.Max((b.Max[1]-b.Min[1])*0.06, 0.002)
	b.Min[0], b.Max[0] = b.Min[0]-padX, b.Max[0]+padX
	b.Min[1], b.Max[1] = math.Max(b.Min[1]-padY, -90), math.Min(b.Max[1]+padY, 90)
	return b, true
}

// fit chooses the map area's height for the extent's shape (between
// minMapHeight and maxMapHeight at the fixed width) and widens the extent
// in the other direction to fill it exactly.
func fit(ext orb.Bound) projection {
	midLat := (ext.Min[1] + ext.Max[1]) / 2
	kx := math.Max(math.Cos(midLat*math.Pi/180), 0.15) // x stretch: a degree of longitude is shorter away from the equator
	wDeg, hDeg := ext.Max[0]-ext.Min[0], ext.Max[1]-ext.Min[1]
	h := math.Min(math.Max(Width*hDeg/(wDeg*kx), minMapHeight), maxMapHeight)
	h = math.Round(h)
	// Pixels per degree of latitude, so that the extent fits both ways.
	s := math.Min(Width/(wDeg*kx), h/hDeg)
	needW, needH := Width/(s*kx), h/s
	cx, cy := ext.Center()[0], ext.Center()[1]
	ext.Min[0], ext.Max[0] = cx-needW/2, cx+needW/2
	ext.Min[1], ext.Max[1] = cy-needH/2, cy+needH/2
	if ext.Max[1] > 90 { // keep the poles on the map's edge, not past it
		ext.Min[1], ext.Max[1] = ext.Min[1]-(ext.Max[1]-90), 90
	}
	if ext.Min[1] < -90 {
		ext.Max[1], ext.Min[1] = ext.Max[1]+(-90-ext.Min[1]), -90
	}
	return projection{ext: ext, pxPerDegY: s, pxPerDegX: s * kx, top: headerHeight, w: Width, h: h}
}

func kmPerDegLon(lat float64) float64 { return 111.32 * math.Cos(lat*math.Pi/180) }

// rings projects polygons, orienting holes against their exterior so the
// rasterizer leaves them empty.
func rings(p projection, mp orb.MultiPolygon) [][]pt {
	var out [][]pt
	for _, poly := range mp {
		for i, r := range poly {
			ring := r
			if i > 0 && r.Orientation() == poly[0].Orientation() {
				ring = r.Clone()
				ring.Reverse()
			}
			pts := make([]pt, len(ring))
			for j, q := range ring {
				pts[j] = p.point(q)
			}
			out = append(out, pts)
		}
	}
	return out
}

func outlines(p projection, mp orb.MultiPolygon) [][]pt {
	var out [][]pt
	for _, poly := range mp {
		for _, r := range poly {
			pts := make([]pt, len(r))
			for j, q := range r {
				pts[j] = p.point(q)
			}
			out = append(out, pts)
		}
	}
	return out
}

// turns are the whole turns of longitude at which basemap shapes are tried,
// so that a map reaching past ±180 shows the land on the other side.
var turns = []float64{-360, 0, 360}

func shiftBound(b orb.Bound, dx float64) orb.Bound {
	return orb.Bound{Min: orb.Point{b.Min[0] + dx, b.Min[1]}, Max: orb.Point{b.Max[0] + dx, b.Max[1]}}
}

func drawBasemap(cv *canvas.Canvas, p projection, w *World) {
	// Clip to a little more than the extent first (orb/clip): zoomed in,
	// a continent's far vertices would sit millions of pixels away, beyond
	// the rasterizer's float32 precision.
	view := p.ext.Pad(0.02 * math.Max(p.ext.Max[0]-p.ext.Min[0], p.ext.Max[1]-p.ext.Min[1]))
	var landRings [][]pt
	var coast, borders [][]pt
	for _, dx := range turns {
		for _, poly := range w.Land {
			if shiftBound(poly.Bound(), dx).Intersects(view) {
				landRings = append(landRings, rings(p, clip.MultiPolygon(view, orb.MultiPolygon{shiftPolygon(poly, dx)}))...)
			}
		}
		for _, l := range w.Coast {
			coast = append(coast, clippedLine(p, view, l, dx)...)
		}
		for _, l := range w.Borders {
			borders = append(borders, clippedLine(p, view, l, dx)...)
		}
	}
	cv.Fill(landRings, land)
	cv.Stroke(borders, 0.8, borderLine)
	cv.Stroke(coast, 1.0, coastline)
}

// clippedLine shifts l by dx, clips it to view and projects the pieces.
func clippedLine(p projection, view orb.Bound, l orb.LineString, dx float64) [][]pt {
	if !shiftBound(l.Bound(), dx).Intersects(view) {
		return nil
	}
	moved := make(orb.LineString, len(l))
	for i, q := range l {
		moved[i] = orb.Point{q[0] + dx, q[1]}
	}
	var out [][]pt
	for _, piece := range clip.LineString(view, moved) {
		pts := make([]pt, len(piece))
		for i, q := range piece {
			pts[i] = p.point(q)
		}
		out = append(out, pts)
	}
	return out
}

func shiftPolygon(poly orb.Polygon, dx float64) orb.Polygon {
	out := make(orb.Polygon, len(poly))
	for i, r := range poly {
		nr := make(orb.Ring, len(r))
		for j, q := range r {
			nr[j] = orb.Point{q[0] + dx, q[1]}
		}
		out[i] = nr
	}
	return out
}

// gridStep is a round graticule interval giving a few lines across span.
func gridStep(span float64) float64 {
	for _, s := range []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 45, 90} {
		if span/s <= 7 {
			return s
		}
	}
	return 90
}

// drawGraticule draws the lines (labels=false) or their labels along the
// map's left and bottom edges (labels=true).
func drawGraticule(cv *canvas.Canvas, p projection, labels bool) {
	step := gridStep(math.Max(p.ext.Max[0]-p.ext.Min[0], p.ext.Max[1]-p.ext.Min[1]))
	var lines [][]pt
	bottom := p.top + p.h
	for lon := math.Ceil(p.ext.Min[0]/step) * step; lon <= p.ext.Max[0]; lon += step {
		x := (lon - p.ext.Min[0]) * p.pxPerDegX
		if labels {
			cv.HaloText(degrees(lon, "E", "W", step), x+3, bottom-5, 10, faintInk)
			continue
		}
		lines = append(lines, []pt{{X: x, Y: p.top}, {X: x, Y: bottom}})
	}
	for lat := math.Ceil(p.ext.Min[1]/step) * step; lat <= p.ext.Max[1]; lat += step {
		y := p.top + (p.ext.Max[1]-lat)*p.pxPerDegY
		if labels {
			if y > p.top+12 && y < bottom-18 {
				cv.HaloText(degrees(lat, "N", "S", step), 4, y-3, 10, faintInk)
			}
			continue
		}
		lines = append(lines, []pt{{X: 0, Y: y}, {X: p.w, Y: y}})
	}
	if !labels {
		// One line at a time: each is a thin box, where all together would
		// make the rasterizer sweep the whole map.
		for _, l := range lines {
			cv.Stroke([][]pt{l}, 1, gridLine)
		}
	}
}

// degrees writes a coordinate with as many decimals as the step needs and
// a hemisphere letter; longitudes are brought back to [-180, 180].
func degrees(v float64, pos, neg string, step float64) string {
	if pos == "E" {
		v = math.Mod(v+540, 360) - 180
		if math.Abs(v+180) < 1e-9 {
			v = 180
		}
	}
	decimals := 0
	for s := step; s < 1-1e-9 && decimals < 4; s *= 10 {
		decimals++
	}
	hemi := pos
	if v < 0 {
		hemi = neg
	}
	if math.Abs(v) < 1e-9 || math.Abs(math.Abs(v)-180) < 1e-9 {
		hemi = ""
	}
	return strconv.FormatFloat(math.Abs(v), 'f', decimals, 64) + "°" + hemi
}

// tiny reports footprints under 5 pixels both ways, drawn as a dot.
func tiny(p projection, mp orb.MultiPolygon) bool {
	b := mp.Bound()
	return len(mp) > 0 && (b.Max[0]-b.Min[0])*p.pxPerDegX < 5 && (b.Max[1]-b.Min[1])*p.pxPerDegY < 5
}

// drawLabels writes each footprint's label at its centre; labels falling
// within a few pixels of each other (the same tile on several dates) are
// joined into one, shortened when long. It returns the labels' boxes.
func drawLabels(cv *canvas.Canvas, p projection, fps []Footprint) []image.Rectangle {
	type spot struct {
		at     pt
		labels []string
	}
	var spots []*spot
	for _, f := range fps {
		if f.Label == "" || len(f.Polygons) == 0 {
			continue
		}
		c := p.point(f.Polygons.Bound().Center())
		if tiny(p, f.Polygons) {
			c.X += 6 // beside the dot, not on it
		}
		c.Y = math.Min(math.Max(c.Y, p.top+14), p.top+p.h-6) // keep labels of polar footprints on the map
		var found *spot
		for _, s := range spots {
			if math.Hypot(s.at.X-c.X, s.at.Y-c.Y) < 14 {
				found = s
				break
			}
		}
		if found == nil {
			found = &spot{at: c}
			spots = append(spots, found)
		}
		found.labels = append(found.labels, f.Label)
	}
	var placed []image.Rectangle
	for _, s := range spots {
		text := strings.Join(s.labels, ",")
		if len(s.labels) > 4 {
			text = strings.Join(s.labels[:3], ",") + fmt.Sprintf(",+%d", len(s.labels)-3)
		}
		w := canvas.TextWidth(text, 11)
		x, y := s.at.X-w/2, s.at.Y+4
		step := 14.0
		if y > p.top+p.h-50 {
			step = -14 // near the bottom edge, stack upwards
		}
		// Step past labels already drawn, a few times at most.
		for try := 0; try < 4; try++ {
			box := image.Rect(int(x)-2, int(y-10), int(x+w)+2, int(y+3))
			clash := false
			for _, b := range placed {
				clash = clash || b.Overlaps(box)
			}
			if !clash {
				break
			}
			y += step
		}
		placed = append(placed, image.Rect(int(x)-2, int(y-10), int(x+w)+2, int(y+3)))
		cv.HaloText(text, x, y, 11, ink)
	}
	return placed
}

// Locator colours: land, and the country the map lies in.
var (
	locatorLand    = color.NRGBA{0xc9, 0xc2, 0xb3, 0xff}
	locatorCountry = color.NRGBA{0x9c, 0x8f, 0x78, 0xff}
)

// ringsInFrame projects the polygons that reach the inset's world frame,
// each shifted by the turns that bring it in (the frame is centred on the
// map, so it spans past ±180).
func ringsInFrame(world projection, polys orb.MultiPolygon) [][]pt {
	var out [][]pt
	for _, dx := range turns {
		for _, poly := range polys {
			if shiftBound(poly.Bound(), dx).Intersects(world.ext) {
				out = append(out, rings(world, orb.MultiPolygon{shiftPolygon(poly, dx)})...)
			}
		}
	}
	return out
}

// drawLocator draws a small world map at the footer's right with the
// map's extent marked, for maps too zoomed in to show where they are, and
// returns where it drew it and the country named on it. The land is the
// basemap's 1:110m; the country the map lies in is the gazetteer's (the
// one the place search and the place labels use), shaded darker and named:
// the one holding the map's centre, or, with the centre at sea (an
// estuary, a coast), the country of the frame's first place. Only that
// one outline is decoded: the whole world at 1:10m would cost a hundred
// times the vertices for a picture 150 pixels wide, where 1:110m and
// 1:10m differ by less than a pixel.
func drawLocator(cv *canvas.Canvas, p projection, w *World, fp framePlaces) (image.Rectangle, string) {
	const iw, ih = locatorW, locatorH
	inset := canvas.New(iw, ih, ocean)
	center := p.ext.Center()
	world := projection{ext: orb.Bound{Min: orb.Point{center[0] - 180, -90}, Max: orb.Point{center[0] + 180, 90}},
		pxPerDegX: iw / 360.0, pxPerDegY: ih / 180.0, w: iw, h: ih}
	inset.Fill(ringsInFrame(world, w.Land), locatorLand)
	// The country: none at sea, nor when the gazetteer cannot be loaded
	// (Map.PlacesErr says why, for the caller to log).
	country := ""
	c, ok, err := gazetteer.countryAt(center[0], center[1])
	if err == nil && !ok && len(fp.inside) > 0 && fp.source == gazetteerSource {
		// A coastal city may lie just outside its country's simplified
		// outline: its country code says which country it is.
		c, ok, err = gazetteer.countryByCode(fp.inside[0].Country)
	}
	if err == nil && ok {
		inset.Fill(ringsInFrame(world, c.Area), locatorCountry)
		country = c.Name
	}
	// Mark the extent; at least a few pixels, so a tiny extent still shows.
	a, b := world.point(orb.Point{p.ext.Min[0], p.ext.Max[1]}), world.point(orb.Point{p.ext.Max[0], p.ext.Min[1]})
	cx, cy := (a.X+b.X)/2, (a.Y+b.Y)/2
	hw, hh := math.Max((b.X-a.X)/2, 3), math.Max((b.Y-a.Y)/2, 3)
	inset.Stroke([][]pt{{{X: cx - hw, Y: cy - hh}, {X: cx + hw, Y: cy - hh}, {X: cx + hw, Y: cy + hh}, {X: cx - hw, Y: cy + hh}, {X: cx - hw, Y: cy - hh}}}, 1.6, aoiLine)
	if name := canvas.FitText(country, iw-10, locatorTextSize); name != "" && canvas.CanDraw(name, locatorTextSize) {
		// Centred at the top or the bottom, whichever the mark is not in:
		// the mark is at most 40° of latitude tall, under a quarter of
		// the inset.
		y := float64(ih) - 4
		if cy > ih/2 {
			y = locatorTextSize + 2
		}
		inset.HaloText(name, (iw-canvas.TextWidth(name, locatorTextSize))/2, y, locatorTextSize, ink)
	}
	x0, y0 := int(p.w)-iw-8, int(p.top+p.h)+8
	cv.Rect(float64(x0-1), float64(y0-1), float64(x0+iw+1), float64(y0+ih+1), faintInk)
	r := image.Rect(x0, y0, x0+iw, y0+ih)
	draw.Draw(cv.Img, r, inset.Img, image.Point{}, draw.Src)
	return r.Inset(-1), country
}

const locatorTextSize = 10

// drawFooter draws the legend, the scale bar and the extent; it returns
// the scale bar's label.
// Its text stays left of textRight (the locator sits beyond it).
// placesSource is the attribution of the places named ("" for none).
func drawFooter(cv *canvas.Canvas, p projection, legend *Legend, kmPerPixel, height, textRight float64, placesSource string) string {
	top := p.top + p.h
	cv.Rect(0, top, p.w, top+height, paper)
	x := 8.0
	if legend != nil {
		x += cv.Text(legend.Title, x, top+18, 11, ink) + 8
		x += cv.Text(legend.Low, x, top+18, 11, faintInk) + 4
		const barW, barH = 120.0, 10.0
		for i := 0; i < int(barW); i++ {
			cv.Rect(x+float64(i), top+9, x+float64(i)+1, top+9+barH, withAlpha(legend.Ramp.At(float64(i)/(barW-1)), 0xcc))
		}
		x += barW + 4
		x += cv.Text(legend.High, x, top+18, 11, faintInk) + 16
	}
	// Scale bar: a round distance near a sixth of the map's width.
	km, label := niceDistance(kmPerPixel * p.w / 6)
	barPx := km / kmPerPixel
	cv.Stroke([][]pt{{{X: x, Y: top + 10}, {X: x, Y: top + 16}, {X: x + barPx, Y: top + 16}, {X: x + barPx, Y: top + 10}}}, 1.5, ink)
	cv.Text(label, x+barPx+6, top+18, 11, ink)
	ext := fmt.Sprintf("lon %s … %s, lat %s … %s", trimCoord(normLon(p.ext.Min[0])), trimCoord(normLon(p.ext.Max[0])),
		trimCoord(p.ext.Min[1]), trimCoord(p.ext.Max[1]))
	cv.Text(canvas.FitText(ext+"  ·  basemap: Natural Earth 1:110m (public domain)", textRight-8, 10), 8, top+37, 10, faintInk)
	if placesSource != "" {
		// A line of its own: with the extent's it would be cut short, and
		// the GeoNames licence asks for the attribution.
		cv.Text(canvas.FitText("places: "+placesSource, textRight-8, 10), 8, top+52, 10, faintInk)
	}
	return label
}

func normLon(v float64) float64 {
	v = math.Mod(v+540, 360) - 180
	return v
}

func trimCoord(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }

// niceDistance rounds km down to 1, 2 or 5 times a power of ten.
func niceDistance(km float64) (float64, string) {
	if km <= 0 || math.IsNaN(km) || math.IsInf(km, 0) {
		return 1, "1 km"
	}
	p := math.Pow(10, math.Floor(math.Log10(km)))
	n := p
	for _, m := range []float64{5, 2, 1} {
		if m*p <= km {
			n = m * p
			break
		}
	}
	if n < 1 {
		return n, strconv.FormatFloat(n*1000, 'f', -1, 64) + " m"
	}
	return n, strconv.FormatFloat(n, 'f', -1, 64) + " km"
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

func darker(c color.NRGBA) color.NRGBA {
	return color.NRGBA{uint8(float64(c.R) * 0.6), uint8(float64(c.G) * 0.6), uint8(float64(c.B) * 0.6), 0xff}
}
