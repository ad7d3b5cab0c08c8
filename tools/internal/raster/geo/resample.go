package geo

import (
	"fmt"
	"image"
	"math"
)

// nearEps nudges a source pixel coordinate before its floor is taken: a
// centre on a source pixel edge belongs to the pixel after the edge (GDAL's
// choice too), and the nudge keeps rounding in the inverse geotransform
// (2.9999999999 for 3) from picking the pixel before it.
const nearEps = 1e-10

// NearestIn returns, for each pixel of win in g (row by row), the pixel of
// src whose area holds its centre — nearest-neighbour resampling, GDAL's
// -r near — as column and row indexes, -1, -1 where the centre falls
// outside src. src may be another level of the same file, another band's
// file at another resolution, or another CRS (then each centre goes through
// longitude/latitude exactly; GDAL approximates with an error threshold of
// 0.125 px by default, so an exact edge case may pick a neighbour).
func (g Grid) NearestIn(src Grid, win image.Rectangle) (cols, rows []int, err error) {
	if err := g.Check(); err != nil {
		return nil, nil, err
	}
	if err := src.Check(); err != nil {
		return nil, nil, fmt.Errorf("source %w", err)
	}
	if n := int64(win.Dx()) * int64(win.Dy()); n > maxMaskPixels {
		return nil, nil, fmt.Errorf("window %v is %d pixels; at most %d", win, n, maxMaskPixels)
	}
	inv, _ := src.inverse()
	n := win.Dx() * win.Dy()
	cols, rows = make([]int, n), make([]int, n)
	same := g.CRS.EPSG == src.CRS.EPSG
	k := 0
	for r := win.Min.Y; r < win.Max.Y; r++ {
		for c := win.Min.X; c < win.Max.X; c++ {
			x, y := g.ToCRS(float64(c)+0.5, float64(r)+0.5)
			ok := true
			if !same {
				lon, lat, err := g.CRS.inverse(x, y)
				if err == nil {
					x, y, err = src.CRS.FromLonLat(lon, lat)
				}
				ok = err == nil
			}
			sc := math.Floor(inv[0] + x*inv[1] + y*inv[2] + nearEps)
			sr := math.Floor(inv[3] + x*inv[4] + y*inv[5] + nearEps)
			if !ok || !(sc >= 0 && sr >= 0 && sc < float64(src.Width) && sr < float64(src.Height)) {
				cols[k], rows[k] = -1, -1
			} else {
				cols[k], rows[k] = int(sc), int(sr)
			}
			k++
		}
	}
	return cols, rows, nil
}

// SourceRect bounds the pixels of src that NearestIn maps win's pixels
// to, without a map per pixel: the centres along win's border taken into
// src (an affine map takes a rectangle's extremes to its border, and a
// projection between two CRSs over a window is close enough to one), the
// bound grown by a pixel each side and clipped to src. Empty when no
// border centre falls in src.
func (g Grid) SourceRect(src Grid, win image.Rectangle) (image.Rectangle, error) {
	if err := g.Check(); err != nil {
		return image.Rectangle{}, err
	}
	if err := src.Check(); err != nil {
		return image.Rectangle{}, fmt.Errorf("source %w", err)
	}
	inv, _ := src.inverse()
	same := g.CRS.EPSG == src.CRS.EPSG
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	visit := func(c, r int) {
		x, y := g.ToCRS(float64(c)+0.5, float64(r)+0.5)
		if !same {
			lon, lat, err := g.CRS.inverse(x, y)
			if err != nil {
				return
			}
			if x, y, err = src.CRS.FromLonLat(lon, lat); err != nil {
				return
			}
		}
		sc, sr := inv[0]+x*inv[1]+y*inv[2], inv[3]+x*inv[4]+y*inv[5]
		minX, minY, maxX, maxY = math.Min(minX, sc), math.Min(minY, sr), math.Max(maxX, sc), math.Max(maxY, sr)
	}
	for c := win.Min.X; c < win.Max.X; c++ {
		visit(c, win.Min.Y)
		visit(c, win.Max.Y-1)
	}
	for r := win.Min.Y; r < win.Max.Y; r++ {
		visit(win.Min.X, r)
		visit(win.Max.X-1, r)
	}
	if math.IsInf(minX, 1) {
		return image.Rectangle{}, nil
	}
	rect := image.Rect(int(math.Floor(minX))-1, int(math.Floor(minY))-1, int(math.Floor(maxX))+2, int(math.Floor(maxY))+2)
	return rect.Intersect(src.Bounds()), nil
}
