package plot

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

// canvas draws antialiased lines (golang.org/x/image/vector: segments as
// filled quadrilaterals) and text (the Go font) on an RGBA image, as
// tools/internal/mapimage does for maps; that package keeps its canvas
// unexported, and the few primitives here are all the plots need.
type canvas struct {
	img *image.RGBA
	r   *vector.Rasterizer
}

func newCanvas(w, h int, bg color.Color) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(bg), image.Point{}, draw.Src)
	return &canvas{img: img, r: vector.NewRasterizer(w, h)}
}

type pt struct{ x, y float64 }

// fill fills polygons with c (non-zero winding).
func (cv *canvas) fill(polys [][]pt, c color.Color) {
	b := cv.img.Bounds()
	cv.r.Reset(b.Dx(), b.Dy())
	drawn := false
	for _, p := range polys {
		if len(p) < 3 {
			continue
		}
		drawn = true
		cv.r.MoveTo(float32(p[0].x), float32(p[0].y))
		for _, q := range p[1:] {
			cv.r.LineTo(float32(q.x), float32(q.y))
		}
		cv.r.ClosePath()
	}
	if drawn {
		cv.r.Draw(cv.img, b, image.NewUniform(c), image.Point{})
	}
}

// stroke draws polylines width pixels wide.
func (cv *canvas) stroke(lines [][]pt, width float64, c color.Color) {
	half := width / 2
	var polys [][]pt
	for _, l := range lines {
		for i := 1; i < len(l); i++ {
			p, q := l[i-1], l[i]
			dx, dy := q.x-p.x, q.y-p.y
			n := math.Hypot(dx, dy)
			if n == 0 {
				continue
			}
			nx, ny := -dy/n*half, dx/n*half
			quad := []pt{{p.x + nx, p.y + ny}, {q.x + nx, q.y + ny}, {q.x - nx, q.y - ny}, {p.x - nx, p.y - ny}}
			if (quad[1].x-quad[0].x)*(quad[2].y-quad[0].y)-(quad[1].y-quad[0].y)*(quad[2].x-quad[0].x) < 0 {
				quad[0], quad[1], quad[2], quad[3] = quad[3], quad[2], quad[1], quad[0]
			}
			polys = append(polys, quad)
		}
	}
	cv.fill(polys, c)
}

// dot fills a disc.
func (cv *canvas) dot(p pt, rad float64, c color.Color) {
	poly := make([]pt, 12)
	for k := range poly {
		a := float64(k) * math.Pi / 6
		poly[k] = pt{p.x + rad*math.Cos(a), p.y + rad*math.Sin(a)}
	}
	cv.fill([][]pt{poly}, c)
}

// rect fills whole pixels.
func (cv *canvas) rect(x0, y0, x1, y1 float64, c color.Color) {
	r := image.Rect(int(math.Round(x0)), int(math.Round(y0)), int(math.Round(x1)), int(math.Round(y1)))
	draw.Draw(cv.img, r, image.NewUniform(c), image.Point{}, draw.Over)
}

var goFont = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

var (
	faceMu sync.Mutex // a font.Face is not safe for concurrent use
	faces  = map[float64]font.Face{}
)

func withFace(size float64, fn func(font.Face)) {
	faceMu.Lock()
	defer faceMu.Unlock()
	f, ok := faces[size]
	if !ok {
		tt, err := goFont()
		if err != nil {
			return // the embedded font always parses
		}
		if f, err = opentype.NewFace(tt, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull}); err != nil {
			return
		}
		faces[size] = f
	}
	fn(f)
}

// text draws s with its baseline at (x, y); it returns the advance.
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

func textWidth(s string, size float64) float64 {
	var w float64
	withFace(size, func(f font.Face) { w = float64(font.MeasureString(f, s)) / 64 })
	return w
}

// fitText shortens s with "…" until it fits width.
func fitText(s string, width, size float64) string {
	r := []rune(s)
	for len(r) > 1 && textWidth(string(r), size) > width {
		r = append(r[:len(r)-2], '…')
	}
	return string(r)
}
