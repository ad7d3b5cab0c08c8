package geo

import (
	"math"
	"testing"

	"github.com/paulmach/orb"
)

// BenchmarkMask10km: the benchmark area, a 10 km × 10 km AOI on a
// 10 m UTM grid (about 1000 × 1000 pixels), as a 64-gon.
func BenchmarkMask10km(b *testing.B) {
	utm, err := FromEPSG(32633)
	if err != nil {
		b.Fatal(err)
	}
	g := Grid{CRS: utm, GeoTransform: [6]float64{495000, 10, 0, 5005000, 0, -10}, Width: 1100, Height: 1100}
	lon, lat, _ := g.PixelToLonLat(550, 550)
	var r orb.Ring
	for i := range 64 {
		a := 2 * math.Pi * float64(i) / 64
		r = append(r, orb.Point{lon + 0.064*math.Cos(a), lat + 0.045*math.Sin(a)})
	}
	aoi := orb.Polygon{append(r, r[0])}
	win, _, err := g.Window(aoi)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Mask(aoi, win); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(win.Dx()*win.Dy()), "px")
}
