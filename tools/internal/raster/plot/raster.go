// Package plot draws what the pixel tools measure: an index over an area
// as a colour map with a colour bar, the area's outline and a scale bar; a
// true- or false-colour composite with a percentile stretch; and a time
// series chart. Drawing is deterministic: the same input gives the same
// pixels.
package plot

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"

	"github.com/stacmcp/stac-mcp/tools/internal/canvas"
	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
)

// Ramp is a colour scale (mapimage's, so the maps and plots share one).
type Ramp = mapimage.Ramp

// Colour maps of the indices.
var (
	// Vegetation runs brown (bare, water) → yellow → green (dense
	// vegetation), after ColorBrewer's RdYlGn.
	Vegetation = Ramp{{0xa5, 0x00, 0x26, 0xff}, {0xf4, 0x6d, 0x43, 0xff}, {0xfe, 0xe0, 0x8b, 0xff}, {0xa6, 0xd9, 0x6a, 0xff}, {0x1a, 0x98, 0x50, 0xff}, {0x00, 0x68, 0x37, 0xff}}
	// Water runs brown (dry) → white → blue (open water), after BrBG.
	Water = Ramp{{0x8c, 0x51, 0x0a, 0xff}, {0xd8, 0xb3, 0x65, 0xff}, {0xf5, 0xf5, 0xf5, 0xff}, {0x6b, 0xae, 0xd6, 0xff}, {0x08, 0x30, 0x6b, 0xff}}
	// Built runs green (vegetated) → white → purple (built-up), after PRGn reversed.
	Built = Ramp{{0x1b, 0x78, 0x37, 0xff}, {0xa6, 0xdb, 0xa0, 0xff}, {0xf7, 0xf7, 0xf7, 0xff}, {0xc2, 0xa5, 0xcf, 0xff}, {0x76, 0x2a, 0x83, 0xff}}
	// Diverging runs brown (a decrease) → white (no change) → teal (an
	// increase), after ColorBrewer's BrBG: for a difference centred on 0.
	Diverging = Ramp{{0x8c, 0x51, 0x0a, 0xff}, {0xd8, 0xb3, 0x65, 0xff}, {0xf5, 0xf5, 0xf5, 0xff}, {0x5a, 0xb4, 0xac, 0xff}, {0x01, 0x66, 0x5e, 0xff}}
	// Grey is for a single band.
	Grey = Ramp{{0, 0, 0, 0xff}, {0xff, 0xff, 0xff, 0xff}}
)

// RampNamed is the ramp an index names (index.Index.Ramp); Grey for an
// unknown name.
func RampNamed(name string) Ramp {
	switch name {
	case "vegetation":
		return Vegetation
	case "water":
		return Water
	case "built":
		return Built
	case "diverging":
		return Diverging
	}
	return Grey
}

// Colours of the frame.
var (
	paper     = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	ink       = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	faintInk  = color.NRGBA{0x55, 0x5f, 0x6a, 0xff}
	outsideBg = color.NRGBA{0xf2, 0xf2, 0xf2, 0xff} // in the window, outside the area
	// Masked is drawn where the area has no value (nodata, cloud…).
	Masked  = color.NRGBA{0xb0, 0xb0, 0xb0, 0xff}
	aoiLine = color.NRGBA{0xd7, 0x30, 0x1f, 0xff}
)

// Frame is what every raster picture shares.
type Frame struct {
	Title string
	// Width and Height are the raster's size in pixels; the values and
	// Inside are row-major over it.
	Width, Height int
	// Inside says which pixels are in the area (nil: all); outside ones
	// are drawn pale, whatever their value.
	Inside []bool
	// Outline is the area's rings in raster pixel coordinates (x right,
	// y down; pixel (i, j) spans [i, i+1) × [j, j+1)).
	Outline [][][2]float64
	// PixelMetres is the ground size of one raster pixel; 0 draws no
	// scale bar.
	PixelMetres float64
}

// Layout.
const (
	maxSide      = 640 // the raster is scaled to fit this square
	minSide      = 360 // and up to at least this on its long side
	minWidth     = 480 // room for the footer
	headerHeight = 26
	footerHeight = 54
	margin       = 10
)

// Picture is a drawn raster and what it shows.
type Picture struct {
	Image *image.RGBA
	// ScaleBar is the distance the scale bar stands for ("" when none).
	ScaleBar string
	// DisplayScale is screen pixels per raster pixel.
	DisplayScale float64
}

// layout places the raster: the scale and the canvas size.
func layout(f Frame) (scale float64, w, h int, err error) {
	if f.Width <= 0 || f.Height <= 0 {
		return 0, 0, 0, fmt.Errorf("nothing to draw: the raster is %d×%d", f.Width, f.Height)
	}
	long := float64(max(f.Width, f.Height))
	scale = math.Min(maxSide/long, math.Max(1, minSide/long))
	if long*scale > maxSide {
		scale = maxSide / long
	}
	rw := int(math.Round(float64(f.Width) * scale))
	rh := int(math.Round(float64(f.Height) * scale))
	return scale, max(rw+2*margin, minWidth), headerHeight + rh + footerHeight, nil
}

// draw paints colour(i) for each raster pixel i, then the outline, title
// and scale bar; footer draws the rest of the footer right of the scale
// bar, from x.
func drawRaster(f Frame, colour func(i int) color.NRGBA, footer func(cv *canvas.Canvas, x, y float64)) (*Picture, error) {
	scale, w, h, err := layout(f)
	if err != nil {
		return nil, err
	}
	cv := canvas.New(w, h, paper)
	rw := int(math.Round(float64(f.Width) * scale))
	rh := int(math.Round(float64(f.Height) * scale))
	x0 := (w - rw) / 2
	y0 := headerHeight
	// Nearest neighbour: each screen pixel shows the raster pixel under
	// its centre, so a pixel's value is never blended with its neighbour.
	for sy := 0; sy < rh; sy++ {
		j := min(int((float64(sy)+0.5)/scale), f.Height-1)
		for sx := 0; sx < rw; sx++ {
			i := min(int((float64(sx)+0.5)/scale), f.Width-1)
			k := j*f.Width + i
			c := outsideBg
			if f.Inside == nil || f.Inside[k] {
				c = colour(k)
			}
			cv.Img.SetRGBA(x0+sx, y0+sy, color.RGBA(c))
		}
	}
	// The outline is drawn on its own layer the raster's size, then laid
	// over the raster: an area larger than the item's raster would
	// otherwise run over the title and the footer.
	var lines [][]pt
	for _, ring := range f.Outline {
		var l []pt
		for _, p := range ring {
			l = append(l, pt{X: p[0] * scale, Y: p[1] * scale})
		}
		if len(l) > 1 && l[0] != l[len(l)-1] {
			l = append(l, l[0])
		}
		lines = append(lines, l)
	}
	layer := canvas.New(rw, rh, color.Transparent)
	layer.Stroke(lines, 2, aoiLine)
	draw.Draw(cv.Img, image.Rect(x0, y0, x0+rw, y0+rh), layer.Img, image.Point{}, draw.Over)
	cv.Text(canvas.FitText(f.Title, float64(w-2*margin), 13), margin, 18, 13, ink)
	pic := &Picture{Image: cv.Img, DisplayScale: scale}
	fy := float64(y0 + rh)
	x := float64(margin)
	if f.PixelMetres > 0 {
		pic.ScaleBar, x = drawScaleBar(cv, x, fy+16, f.PixelMetres/scale, float64(w)/4)
		x += 24
	}
	if footer != nil {
		footer(cv, x, fy)
	}
	return pic, nil
}

// drawScaleBar draws a bar of a round distance at most maxPx long;
// metresPerPx is the ground size of one screen pixel. It returns the label
// and the x after the bar.
func drawScaleBar(cv *canvas.Canvas, x, y, metresPerPx, maxPx float64) (string, float64) {
	d, label := niceDistance(metresPerPx * maxPx)
	px := d / metresPerPx
	cv.Rect(x, y, x+px, y+3, ink)
	cv.Rect(x, y-4, x+1.5, y+7, ink)
	cv.Rect(x+px-1.5, y-4, x+px, y+7, ink)
	cv.Text(label, x, y+20, 11, ink)
	return label, x + math.Max(px, canvas.TextWidth(label, 11))
}

// niceDistance is the largest 1-2-5 distance (metres) not above m.
func niceDistance(m float64) (float64, string) {
	if m <= 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return 1, "1 m"
	}
	p := math.Pow(10, math.Floor(math.Log10(m)))
	d := p
	for _, k := range []float64{5, 2, 1} {
		if k*p <= m {
			d = k * p
			break
		}
	}
	if d >= 1000 {
		return d, fmt.Sprintf("%g km", d/1000)
	}
	return d, fmt.Sprintf("%g m", d)
}

// IndexMap draws values (NaN: no value, drawn grey) on ramp from low to
// high, with a colour bar titled legend.
func IndexMap(values []float64, f Frame, ramp Ramp, low, high float64, legend string) (*Picture, error) {
	if len(values) != f.Width*f.Height {
		return nil, fmt.Errorf("%d values for a %d×%d raster", len(values), f.Width, f.Height)
	}
	colour := func(i int) color.NRGBA {
		v := values[i]
		if math.IsNaN(v) {
			return Masked
		}
		return ramp.At((v - low) / (high - low))
	}
	return drawRaster(f, colour, func(cv *canvas.Canvas, x, y float64) {
		w := float64(cv.Img.Bounds().Dx())
		barW := math.Min(260, w-x-margin-60)
		if barW < 60 {
			return
		}
		for k := 0; k < int(barW); k++ {
			cv.Rect(x+float64(k), y+10, x+float64(k)+1, y+22, ramp.At(float64(k)/barW))
		}
		cv.Text(trimNum(low), x, y+36, 11, ink)
		hl := trimNum(high)
		cv.Text(hl, x+barW-canvas.TextWidth(hl, 11), y+36, 11, ink)
		cv.Text(canvas.FitText(legend, barW-2*canvas.TextWidth(hl, 11)-8, 11), x+canvas.TextWidth(trimNum(low), 11)+8, y+36, 11, faintInk)
		cv.Rect(x+barW+12, y+10, x+barW+24, y+22, Masked)
		cv.Text("no value", x+barW+28, y+21, 11, faintInk)
	})
}

// Stretch maps [Low, High] to 0..255.
type Stretch struct{ Low, High float64 }

func (s Stretch) byte(v float64) uint8 {
	if s.High <= s.Low {
		return 128
	}
	t := (v - s.Low) / (s.High - s.Low) * 255
	return uint8(math.Round(math.Min(math.Max(t, 0), 255)))
}

// Composite draws three bands as red, green and blue, each stretched; a
// pixel with any band NaN is drawn grey.
func Composite(r, g, b []float64, stretch [3]Stretch, f Frame, legend string) (*Picture, error) {
	n := f.Width * f.Height
	if len(r) != n || len(g) != n || len(b) != n {
		return nil, fmt.Errorf("bands of %d, %d, %d values for a %d×%d raster", len(r), len(g), len(b), f.Width, f.Height)
	}
	colour := func(i int) color.NRGBA {
		if math.IsNaN(r[i]) || math.IsNaN(g[i]) || math.IsNaN(b[i]) {
			return Masked
		}
		return color.NRGBA{stretch[0].byte(r[i]), stretch[1].byte(g[i]), stretch[2].byte(b[i]), 0xff}
	}
	return drawRaster(f, colour, func(cv *canvas.Canvas, x, y float64) {
		w := float64(cv.Img.Bounds().Dx())
		cv.Text(canvas.FitText(legend, w-x-margin, 11), x, y+21, 11, faintInk)
		cv.Rect(x, y+30, x+12, y+42, Masked)
		cv.Text("no value", x+16, y+41, 11, faintInk)
	})
}

// trimNum formats a legend number: at most 3 decimals, no trailing zeros.
func trimNum(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
