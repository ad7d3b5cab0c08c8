package mapimage

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// canvas draws antialiased shapes (golang.org/x/image/vector) and text (the
// Go font, golang.org/x/image/font/opentype) on an RGBA image in pixel
// coordinates. Lines are drawn as filled quadrilaterals, one per segment,
// with a small disc at every vertex for round joins: the rasterizer fills
// paths, it does not stroke them. One rasterizer is reused for every shape.
type canvas struct {
	img *image.RGBA
	r   *vector.Rasterizer
}

func newCanvas(w, h int, background color.Color) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	return &canvas{img: img, r: vector.NewRasterizer(0, 0)}
}

type pt struct{ x, y float64 }

// paint fills polygons (pixel coordinates) with c. Polygons add up where
// they overlap; holes must wind the other way (callers orient them). The
// rasterizer covers only the polygons' bounding box, so a small shape costs
// little however large the canvas.
func (cv *canvas) paint(polys [][]pt, c color.Color) {
	b := cv.img.Bounds()
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, poly := range polys {
		for _, p := range poly {
			minX, minY, maxX, maxY = math.Min(minX, p.x), math.Min(minY, p.y), math.Max(maxX, p.x), math.Max(maxY, p.y)
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
		cv.r.MoveTo(float32(poly[0].x-ox), float32(poly[0].y-oy))
		for _, p := range poly[1:] {
			cv.r.LineTo(float32(p.x-ox), float32(p.y-oy))
		}
		cv.r.ClosePath()
	}
	cv.r.Draw(cv.img, box, image.NewUniform(c), image.Point{})
}

// fillRings fills rings with c (see paint).
func (cv *canvas) fillRings(rings [][]pt, c color.Color) { cv.paint(rings, c) }

// strokeLines draws polylines width pixels wide in c.
func (cv *canvas) strokeLines(lines [][]pt, width float64, c color.Color) {
	half := width / 2
	bounds := cv.img.Bounds()
	margin := width + 2
	var polys [][]pt
	for _, line := range lines {
		for i := range line {
			p := line[i]
			if i > 0 {
				q := line[i-1]
				if outside(p, q, bounds, margin) {
					continue
				}
				dx, dy := p.x-q.x, p.y-q.y
				l := math.Hypot(dx, dy)
				if l == 0 {
					continue
				}
				nx, ny := -dy/l*half, dx/l*half
				polys = append(polys, quad(pt{q.x + nx, q.y + ny}, pt{p.x + nx, p.y + ny}, pt{p.x - nx, p.y - ny}, pt{q.x - nx, q.y - ny}))
			}
			if width >= 1.5 && p.x > -margin && p.y > -margin && p.x < float64(bounds.Dx())+margin && p.y < float64(bounds.Dy())+margin {
				polys = append(polys, disc(p, half))
			}
		}
	}
	cv.paint(polys, c)
}

// outside reports whether segment pq lies wholly beyond one side of b.
func outside(p, q pt, b image.Rectangle, m float64) bool {
	return (p.x < -m && q.x < -m) || (p.y < -m && q.y < -m) ||
		(p.x > float64(b.Dx())+m && q.x > float64(b.Dx())+m) || (p.y > float64(b.Dy())+m && q.y > float64(b.Dy())+m)
}

// quad is a quadrilateral always wound the same way, so that overlapping
// pieces of one line add up instead of cancelling.
func quad(a, b, c, d pt) []pt {
	if (b.x-a.x)*(c.y-a.y)-(b.y-a.y)*(c.x-a.x) < 0 {
		a, b, c, d = d, c, b, a
	}
	return []pt{a, b, c, d}
}

// disc is an octagon of radius rad around p.
func disc(p pt, rad float64) []pt {
	out := make([]pt, 8)
	for k := range out {
		a := float64(k) * math.Pi / 4
		out[k] = pt{p.x + rad*math.Cos(a), p.y + rad*math.Sin(a)}
	}
	return out
}

// dot fills a disc of radius rad around p.
func (cv *canvas) dot(p pt, rad float64, c color.Color) { cv.paint([][]pt{disc(p, rad)}, c) }

// rect fills an axis-aligned rectangle, on whole pixels: image/draw does
// that far faster than the rasterizer, and nothing here needs its
// antialiased edges.
func (cv *canvas) rect(x0, y0, x1, y1 float64, c color.Color) {
	r := image.Rect(int(math.Round(x0)), int(math.Round(y0)), int(math.Round(x1)), int(math.Round(y1)))
	draw.Draw(cv.img, r, image.NewUniform(c), image.Point{}, draw.Over)
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

// text draws s with its baseline at (x, y) and returns its advance width.
func (cv *canvas) text(s string, x, y, size float64, c color.Color) float64 {
	var w float64
	withFace(size, func(f font.Face) {
		start := fixed.P(int(math.Round(x)), int(math.Round(y)))
		d := &font.Drawer{Dst: cv.img, Src: image.NewUniform(c), Face: f, Dot: start}
		d.DrawString(s)
		w = float64(d.Dot.X-start.X) / 64
	})
	return w
}

// textWidth measures s at size pixels.
func textWidth(s string, size float64) float64 {
	var w float64
	withFace(size, func(f font.Face) { w = float64(font.MeasureString(f, s)) / 64 })
	return w
}

// haloText draws s over a white box, readable on any background.
func (cv *canvas) haloText(s string, x, y, size float64, c color.Color) {
	w := textWidth(s, size)
	cv.rect(x-2, y-size*0.85, x+w+2, y+size*0.3, color.NRGBA{255, 255, 255, 210})
	cv.text(s, x, y, size, c)
}
