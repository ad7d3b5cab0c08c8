package plot_test

import (
	"bytes"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/tools/internal/golden"
	"github.com/stacmcp/stac-mcp/tools/internal/picture/picturetest"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/plot"
)

// Golden plots of a synthetic scene (golden.PlotCases), compared with a
// tolerance; go generate ./... writes testdata. PLOT_PREVIEW_DIR=dir also
// saves each render there, to look at.
func TestPlotsMatchGolden(t *testing.T) {
	t.Parallel()
	for _, c := range golden.PlotCases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			p, data, err := c.Encode()
			if err != nil {
				t.Fatal(err)
			}
			_, again, err := c.Encode()
			if err != nil || !bytes.Equal(data, again) {
				t.Fatalf("drawing is not deterministic (err %v)", err)
			}
			if dir := os.Getenv("PLOT_PREVIEW_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, c.Name+".png"), data, 0o644)
			}
			t.Logf("%s: %v, %d bytes, scale bar %q", c.Name, p.Image.Bounds(), len(data), p.ScaleBar)
			picturetest.CompareGolden(t, filepath.Join("..", "..", "..", "..", filepath.FromSlash(c.Golden())), data, golden.MapTolerance)
		})
	}
}

func TestIndexMapColoursEachPixel(t *testing.T) {
	t.Parallel()
	// 2×1 raster: a low value, then no value.
	p, err := plot.IndexMap([]float64{-0.2, math.NaN()}, plot.Frame{Width: 2, Height: 1, PixelMetres: 10}, plot.Vegetation, -0.2, 0.9, "NDVI")
	if err != nil {
		t.Fatal(err)
	}
	if p.DisplayScale != 180 { // 2 px scaled up to 360 on the long side
		t.Fatalf("scale %v", p.DisplayScale)
	}
	b := p.Image.Bounds()
	left := p.Image.RGBAAt(b.Dx()/2-90, 26+90)
	right := p.Image.RGBAAt(b.Dx()/2+90, 26+90)
	if want := plot.Vegetation.At(0); left != color.RGBA(want) {
		t.Fatalf("left pixel %v, want %v", left, want)
	}
	if right != color.RGBA(plot.Masked) {
		t.Fatalf("right pixel %v, want the masked grey", right)
	}
	if p.ScaleBar != "5 m" { // 10 m per raster px, 180 screen px each: a quarter width (120 px) is 6.7 m
		t.Fatalf("scale bar %q", p.ScaleBar)
	}
	if _, err := plot.IndexMap([]float64{1}, plot.Frame{Width: 2, Height: 1}, plot.Grey, 0, 1, ""); err == nil {
		t.Fatal("a short raster was drawn")
	}
}

func TestChartRefusesEmptySeries(t *testing.T) {
	t.Parallel()
	if _, err := plot.Chart(plot.Series{}); err == nil {
		t.Fatal("empty series drawn")
	}
	if _, err := plot.Chart(plot.Series{Points: []plot.Point{{Value: math.NaN(), Low: math.NaN(), High: math.NaN()}}}); err == nil {
		t.Fatal("series without values drawn")
	}
}

// A year's chart: skipped and failed dates are marked along the axis in
// their colours, a span without acquisitions is shaded, and an index's
// axis stays within −1..1 whatever its bars reach: a value of 1 sits on
// the top of the plot, where without the clip the bars' 1.5 would be.
func TestChartMarksSkippedAndFailedDatesAndShadesGaps(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	var pts []plot.Point
	for d := 0; d < 365; d += 5 {
		if d > 150 && d < 220 {
			continue // the gap
		}
		v := 0.4 + 0.3*math.Sin(float64(d)/58)
		if d == 100 {
			v = 1
		}
		pts = append(pts, plot.Point{Time: day(d), Value: v, Low: -1.4, High: 1.5})
	}
	s := plot.Series{Title: "NDVI", YLabel: "ndvi", Points: pts, Clip: true, YMin: -1, YMax: 1,
		Marks: []plot.Mark{{Time: day(12)}, {Time: day(101), Failed: true}}, Gaps: []plot.Gap{{From: day(150), To: day(220)}}}
	count := func(p *plot.Picture, c color.NRGBA, maxY int) int {
		n := 0
		b := p.Image.Bounds()
		for y := b.Min.Y; y < min(b.Max.Y, maxY); y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if r, g, bl, _ := p.Image.At(x, y).RGBA(); uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
					n++
				}
			}
		}
		return n
	}
	p, err := plot.Chart(s)
	if err != nil {
		t.Fatal(err)
	}
	if count(p, color.NRGBA{0xd7, 0x30, 0x1f, 0xff}, 1000) == 0 || count(p, color.NRGBA{0x88, 0x88, 0x88, 0xff}, 1000) == 0 {
		t.Error("the failed (red) or skipped (grey) mark is not drawn")
	}
	if count(p, color.NRGBA{0xee, 0xee, 0xee, 0xff}, 1000) < 1000 {
		t.Error("the gap is not shaded")
	}
	line := color.NRGBA{0x1a, 0x98, 0x50, 0xff}
	if count(p, line, 40) == 0 {
		t.Error("clipped to −1..1, the value 1 is not drawn at the top of the plot")
	}
	s.Clip = false
	unclipped, err := plot.Chart(s)
	if err != nil {
		t.Fatal(err)
	}
	if count(unclipped, line, 40) != 0 {
		t.Error("without the clip the bars' 1.5 should set the top of the axis")
	}
	if _, err := plot.Chart(plot.Series{Marks: s.Marks}); err != nil {
		t.Fatalf("a chart of marks alone: %v", err)
	}
}
