package geo

import (
	"fmt"
	"image"
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// maxMaskPixels bounds the mask one call may build (a 16384² window; the
// callers read far smaller ones).
const maxMaskPixels = 1 << 28

// Mask reports, for each pixel of win (row by row, win.Dx() per row), whether
// its centre lies inside the AOI: gdal_rasterize's rule without ALL_TOUCHED,
// which is also the set of pixels gdalwarp -cutline keeps. Pass the grid of
// the level read (Level) and a window in its pixels. The AOI is read as
// Window reads it. Each polygon is filled even-odd (holes are out) and the
// polygons are united, so overlapping polygons of a MultiPolygon do not
// cancel out (GDAL fills a MultiPolygon's rings in one even-odd pass; the
// two agree on valid MultiPolygons).
//
// Pixel centres exactly on an edge follow GDAL's scanline rule (see fill).
func (g Grid) Mask(aoi orb.Geometry, win image.Rectangle) ([]bool, error) {
	if win.Empty() {
		return nil, nil
	}
	if n := int64(win.Dx()) * int64(win.Dy()); n > maxMaskPixels {
		return nil, fmt.Errorf("mask window %v is %d pixels; at most %d", win, n, maxMaskPixels)
	}
	polys, err := g.pixelPolygons(aoi)
	if err != nil {
		return nil, err
	}
	mask := make([]bool, win.Dx()*win.Dy())
	for _, p := range polys {
		fill(p, win, mask)
	}
	return mask, nil
}

// edge is a polygon edge in pixel space, from (x1, y1) to (x2, y2) as the
// ring runs; bottom marks a horizontal edge with its ring's inside above it
// (at smaller y).
type edge struct {
	x1, y1, x2, y2 float64
	bottom         bool
}

// fill sets mask for the pixels of win whose centre is inside p (pixel
// space, even-odd over its rings). It follows gdal_rasterize
// (GDALdllImageFilledPolygon, alg/llrasterize.cpp) so that centres exactly
// on an edge fall the same way: on each pixel-centre line y = row+0.5 an
// edge counts when min(y1,y2) <= y < max(y1,y2); between two crossings a
// and b the pixels with a < centre <= b are in (columns floor(a+0.5) …
// floor(b+0.5)-1); and a horizontal edge lying exactly on the line is
// filled on its own when its ring's inside is above it. (GDAL's code fills
// a horizontal edge by its direction; measured with GDAL 3.6 the result
// does not depend on how the rings are wound, and it matches filling the
// bottom edges of each ring, holes included: TestMaskTiesAgreeWithGDAL.)
func fill(p orb.Polygon, win image.Rectangle, mask []bool) {
	var edges []edge
	for _, r := range p {
		// Shoelace sign: > 0 when the ring's inside is on the left of each
		// edge with y taken as pointing up.
		area := 0.0
		for i := range r {
			a, b := r[i], r[(i+1)%len(r)]
			area += a[0]*b[1] - b[0]*a[1]
		}
		for i := range r {
			a, b := r[i], r[(i+1)%len(r)]
			if i == len(r)-1 && a == r[0] {
				continue // the closing vertex repeats the first: no edge
			}
			e := edge{x1: a[0], y1: a[1], x2: b[0], y2: b[1]}
			if a[1] == b[1] {
				// Going towards -x with the inside on the left puts the
				// inside at smaller y.
				e.bottom = (area > 0) == (a[0] > b[0])
			}
			edges = append(edges, e)
		}
	}
	// Sweep the rows with the edges sorted by their top.
	slices.SortFunc(edges, func(a, b edge) int {
		return cmpFloat(math.Min(a.y1, a.y2), math.Min(b.y1, b.y2))
	})
	var active []edge
	var xs []float64
	next := 0
	w := win.Dx()
	for row := win.Min.Y; row < win.Max.Y; row++ {
		dy := float64(row) + 0.5
		for next < len(edges) && math.Min(edges[next].y1, edges[next].y2) <= dy {
			active = append(active, edges[next])
			next++
		}
		xs = xs[:0]
		line := mask[(row-win.Min.Y)*w : (row-win.Min.Y+1)*w]
		keep := active[:0]
		for _, e := range active {
			if math.Max(e.y1, e.y2) < dy {
				continue // entirely above this and every later row
			}
			keep = append(keep, e)
			y1, y2, x1, x2 := e.y1, e.y2, e.x1, e.x2
			switch {
			case y1 == y2:
				if y1 == dy && e.bottom {
					span(line, win, math.Floor(math.Min(x1, x2)+0.5), math.Floor(math.Max(x1, x2)+0.5))
				}
				continue
			case y1 > y2:
				y1, y2, x1, x2 = y2, y1, x2, x1
			}
			if dy < y2 && dy >= y1 {
				xs = append(xs, (dy-y1)*(x2-x1)/(y2-y1)+x1)
			}
		}
		active = keep
		slices.Sort(xs)
		for i := 0; i+1 < len(xs); i += 2 {
			span(line, win, math.Floor(xs[i]+0.5), math.Floor(xs[i+1]+0.5))
		}
	}
}

// span sets the columns [c0, c1) of one mask row (columns of the grid,
// clipped to win).
func span(line []bool, win image.Rectangle, c0, c1 float64) {
	lo := math.Max(c0, float64(win.Min.X))
	hi := math.Min(c1, float64(win.Max.X))
	for c := int(lo); c < int(hi); c++ {
		line[c-win.Min.X] = true
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
