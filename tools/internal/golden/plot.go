package golden

import (
	"math"
	"time"

	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
)

// PlotCase is one picture of the pixel tools' drawing (raster/plot) from a
// synthetic scene: fields, a river, a cloud and its shadow, an area of
// interest shaped like a parcel.
type PlotCase struct {
	Name   string
	Render func() (*plot.Picture, error)
}

// Golden is the pinned picture's path.
func (c PlotCase) Golden() string { return "tools/internal/raster/plot/testdata/" + c.Name + ".png" }

// Encode renders the case as PNG.
func (c PlotCase) Encode() (*plot.Picture, []byte, error) {
	p, err := c.Render()
	if err != nil {
		return nil, nil, err
	}
	data, err := picture.EncodePNG(p.Image)
	return p, data, err
}

// PlotCases are the golden plots.
func PlotCases() []PlotCase {
	return []PlotCase{
		{"ndvi-map", func() (*plot.Picture, error) {
			s := SyntheticScene()
			ix, err := index.Lookup("ndvi")
			if err != nil {
				return nil, err
			}
			v, err := ix.Compute([][]float64{s.NIR, s.Red}, s.Clear)
			if err != nil {
				return nil, err
			}
			return plot.IndexMap(v, s.Frame("NDVI · synthetic scene · 2025-07-31"), plot.RampNamed(ix.Ramp), ix.Low, ix.High, "NDVI")
		}},
		{"false-colour", func() (*plot.Picture, error) {
			s := SyntheticScene()
			st := plot.Stretch{Low: 0.02, High: 0.5}
			return plot.Composite(s.NIR, s.Red, s.Green, [3]plot.Stretch{st, st, st}, s.Frame("false colour nir-red-green · synthetic scene"),
				"R nir, G red, B green · 2–98 % stretch")
		}},
		{"ndvi-series", func() (*plot.Picture, error) {
			var pts []plot.Point
			t0 := time.Date(2025, 1, 5, 10, 0, 0, 0, time.UTC)
			for k := range 12 {
				v := 0.35 + 0.3*math.Sin(float64(k)/11*math.Pi)
				pts = append(pts, plot.Point{Time: t0.AddDate(0, 0, 30*k), Value: v, Low: v - 0.2, High: v + 0.15})
			}
			return plot.Chart(plot.Series{Title: "NDVI mean over the area · 12 clear items", YLabel: "NDVI (bars: 2nd–98th percentile)", Points: pts})
		}},
	}
}

// Scene is a synthetic area of 96×64 pixels of 10 m.
type Scene struct {
	W, H                  int
	Blue, Green, Red, NIR []float64
	Clear, Inside         []bool
	Outline               [][][2]float64
}

// Frame is the scene's plot frame.
func (s Scene) Frame(title string) plot.Frame {
	return plot.Frame{Title: title, Width: s.W, Height: s.H, Inside: s.Inside, Outline: s.Outline, PixelMetres: 10}
}

// SyntheticScene draws fields (dense and sparse vegetation in stripes), a
// river crossing them, bare soil in one corner and a cloud over the
// middle; the area is a pentagon.
func SyntheticScene() Scene {
	const w, h = 96, 64
	s := Scene{W: w, H: h}
	n := w * h
	s.Blue, s.Green, s.Red, s.NIR = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	s.Clear, s.Inside = make([]bool, n), make([]bool, n)
	poly := [][2]float64{{6, 4}, {88, 8}, {92, 56}, {40, 60}, {4, 40}}
	s.Outline = [][][2]float64{poly}
	for j := range h {
		for i := range w {
			k := j*w + i
			x, y := float64(i)+0.5, float64(j)+0.5
			blue, green, red, nir := 0.04, 0.08, 0.05, 0.40 // dense vegetation
			if (i/12)%2 == 1 {
				blue, green, red, nir = 0.06, 0.09, 0.10, 0.25 // sparse
			}
			if i+j < 30 {
				blue, green, red, nir = 0.12, 0.16, 0.22, 0.28 // bare soil
			}
			if math.Abs(y-(20+0.3*x)) < 3 {
				blue, green, red, nir = 0.06, 0.07, 0.04, 0.02 // river
			}
			s.Blue[k], s.Green[k], s.Red[k], s.NIR[k] = blue, green, red, nir
			s.Clear[k] = math.Hypot(x-60, y-30) > 8 // the cloud, masked
			s.Inside[k] = inPolygon(x, y, poly)
		}
	}
	return s
}

func inPolygon(x, y float64, poly [][2]float64) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a[1] > y) != (b[1] > y) && x < (b[0]-a[0])*(y-a[1])/(b[1]-a[1])+a[0] {
			in = !in
		}
	}
	return in
}
