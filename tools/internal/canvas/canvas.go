// Package canvas is the one drawing surface for the server's pictures: the
// maps of tools/internal/mapimage and the raster plots and charts of
// tools/internal/raster/plot. Both draw the same few things (filled
// polygons, lines, dots, boxes and Go-font text) on an RGBA image; it exists
// so that there is one implementation of them, with one set of fixes (the
// bounding-box and off-canvas culling, the round joins, the font face
// cache), instead of two that drift apart.
//
// Shapes are antialiased by golang.org/x/image/vector; text uses the Go
// font through golang.org/x/image/font/opentype. All coordinates are pixels.
package canvas

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"sort"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// Canvas draws antialiased shapes and text on Img. Lines are drawn as
// filled quadrilaterals, one per segment, with a small disc at every vertex
// for round joins: the rasterizer fills paths, it does not stroke them. One
// rasterizer is reused for every shape, so a Canvas is not safe for
// concurrent use.
type Canvas struct {
	Img *image.RGBA
	r   *vector.Rasterizer
}

// New returns a w×h canvas filled with background.
func New(w, h int, background color.Color) *Canvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	return &Canvas{Img: img, r: vector.NewRasterizer(0, 0)}
}

// Pt is a point in pixel coordinates.
type Pt struct{ X, Y float64 }

// Fill fills polygons with c. Polygons add up where they overlap (non-zero
// winding); holes must wind the other way (callers orient them). Polygons of
// fewer than three points are skipped. The rasterizer covers only the
// polygons' bounding box, so a small shape costs little however large the
// canvas.
func (cv *Canvas) Fill(polys [][]Pt, c color.Color) {
	b := cv.Img.Bounds()
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, poly := range polys {
		for _, p := range poly {
			minX, minY, maxX, maxY = math.Min(minX, p.X), math.Min(minY, p.Y), math.Max(maxX, p.X), math.Max(maxY, p.Y)
		}
	}
	box := image.Rect(int(math.Floor(minX)), int(math.Floor(minY)), int(math.Ceil(maxX))+1, int(math.Ceil(maxY))+1).Intersect(b)
	if box.Empty() {
		return
	}
	cv.r.Reset(box.Dx(), box.Dy())
	ox, oy := float64(box.Min.X), float64(box.Min.Y)
	for _, poly := range polys {
		if len(poly) < 3 {
			continue
		}
		cv.r.MoveTo(float32(poly[0].X-ox), float32(poly[0].Y-oy))
		for _, p := range poly[1:] {
			cv.r.LineTo(float32(p.X-ox), float32(p.Y-oy))
		}
		cv.r.ClosePath()
	}
	cv.r.Draw(cv.Img, box, image.NewUniform(c), image.Point{})
}

// Stroke draws polylines width pixels wide in c, with round joins and caps
// when width is 1.5 or more. Segments wholly off the canvas are skipped.
func (cv *Canvas) Stroke(lines [][]Pt, width float64, c color.Color) {
	half := width / 2
	bounds := cv.Img.Bounds()
	margin := width + 2
	var polys [][]Pt
	for _, line := range lines {
		for i := range line {
			p := line[i]
			if i > 0 {
				q := line[i-1]
				if outside(p, q, bounds, margin) {
					continue
				}
				dx, dy := p.X-q.X, p.Y-q.Y
				l := math.Hypot(dx, dy)
				if l == 0 {
					continue
				}
				nx, ny := -dy/l*half, dx/l*half
				polys = append(polys, quad(Pt{q.X + nx, q.Y + ny}, Pt{p.X + nx, p.Y + ny}, Pt{p.X - nx, p.Y - ny}, Pt{q.X - nx, q.Y - ny}))
			}
			if width >= 1.5 && p.X > -margin && p.Y > -margin && p.X < float64(bounds.Dx())+margin && p.Y < float64(bounds.Dy())+margin {
				polys = append(polys, disc(p, half))
			}
		}
	}
	cv.Fill(polys, c)
}

// outside reports whether segment pq lies wholly beyond one side of b.
func outside(p, q Pt, b image.Rectangle, m float64) bool {
	return (p.X < -m && q.X < -m) || (p.Y < -m && q.Y < -m) ||
		(p.X > float64(b.Dx())+m && q.X > float64(b.Dx())+m) || (p.Y > float64(b.Dy())+m && q.Y > float64(b.Dy())+m)
}

// quad is a quadrilateral always wound the same way, so that overlapping
// pieces of one line add up instead of cancelling.
func quad(a, b, c, d Pt) []Pt {
	if (b.X-a.X)*(c.Y-a.Y)-(b.Y-a.Y)*(c.X-a.X) < 0 {
		a, b, c, d = d, c, b, a
	}
	return []Pt{a, b, c, d}
}

// disc is an octagon of radius rad around p.
func disc(p Pt, rad float64) []Pt {
	out := make([]Pt, 8)
	for k := range out {
		a := float64(k) * math.Pi / 4
		out[k] = Pt{p.X + rad*math.Cos(a), p.Y + rad*math.Sin(a)}
	}
	return out
}

// Dot fills a disc (an octagon) of radius rad around p.
func (cv *Canvas) Dot(p Pt, rad float64, c color.Color) { cv.Fill([][]Pt{disc(p, rad)}, c) }

// Rect fills an axis-aligned rectangle, on whole pixels: image/draw does
// that far faster than the rasterizer, and nothing drawn needs its
// antialiased edges.
func (cv *Canvas) Rect(x0, y0, x1, y1 float64, c color.Color) {
	r := image.Rect(int(math.Round(x0)), int(math.Round(y0)), int(math.Round(x1)), int(math.Round(y1)))
	draw.Draw(cv.Img, r, image.NewUniform(c), image.Point{}, draw.Over)
}

// goFont is the Go font (golang.org/x/image/font/gofont, BSD-3-Clause,
// like Go itself), parsed once.
var goFont = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

var (
	faceMu sync.Mutex // a font.Face is not safe for concurrent use
	faces  = map[float64]font.Face{}
)

// withFace runs fn with the Go font at size pixels, under the face lock.
func withFace(size float64, fn func(font.Face)) {
	faceMu.Lock()
	defer faceMu.Unlock()
	f, ok := faces[size]
	if !ok {
		tt, err := goFont()
		if err != nil {
			return // the embedded font always parses; without it, no text
		}
		if f, err = opentype.NewFace(tt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull}); err != nil {
			return
		}
		faces[size] = f
	}
	fn(f)
}

// Text draws s with its baseline at (x, y) and returns its advance width.
func (cv *Canvas) Text(s string, x, y, size float64, c color.Color) float64 {
	var w float64
	withFace(size, func(f font.Face) {
		start := fixed.P(int(math.Round(x)), int(math.Round(y)))
		d := &font.Drawer{Dst: cv.Img, Src: image.NewUniform(c), Face: f, Dot: start}
		d.DrawString(s)
		w = float64(d.Dot.X-start.X) / 64
	})
	return w
}

// TextWidth measures s at size pixels.
func TextWidth(s string, size float64) float64 {
	var w float64
	withFace(size, func(f font.Face) { w = float64(font.MeasureString(f, s)) / 64 })
	return w
}

// CanDraw reports whether the font has a glyph for every letter of s: a
// name in a script it lacks would be drawn as boxes.
func CanDraw(s string, size float64) bool {
	ok := true
	withFace(size, func(f font.Face) {
		for _, r := range s {
			if _, has := f.GlyphAdvance(r); !has {
				ok = false
				return
			}
		}
	})
	return ok
}

// HaloText draws s over a white box, readable on any background.
func (cv *Canvas) HaloText(s string, x, y, size float64, c color.Color) {
	w := TextWidth(s, size)
	cv.Rect(x-2, y-size*0.85, x+w+2, y+size*0.3, color.NRGBA{255, 255, 255, 210})
	cv.Text(s, x, y, size, c)
}

// FitText shortens s with an ellipsis to fit width pixels at size: s itself
// if it fits, else its longest prefix that fits with "…" after it, else ""
// (not even the ellipsis fits).
func FitText(s string, width, size float64) string {
	if TextWidth(s, size) <= width {
		return s
	}
	r := []rune(s)
	i := sort.Search(len(r), func(i int) bool { return TextWidth(string(r[:i])+"…", size) > width })
	if i == 0 {
		return ""
	}
	return string(r[:i-1]) + "…"
}
