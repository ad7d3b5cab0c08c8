package plot_test

import (
	"bytes"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"testing"

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
