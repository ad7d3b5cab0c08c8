package geo

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// Grid is a raster's pixel grid on the ground: its CRS, its geotransform
// and its size in pixels.
type Grid struct {
	CRS CRS
	// GeoTransform maps pixel (col, row) — (0, 0) the top-left corner of the
	// top-left pixel — to CRS coordinates, in GDAL's order:
	// X = gt[0] + col*gt[1] + row*gt[2], Y = gt[3] + col*gt[4] + row*gt[5].
	GeoTransform  [6]float64
	Width, Height int
}

// Check reports why g cannot place pixels: an invalid CRS, no pixels, or a
// geotransform that is not invertible.
func (g Grid) Check() error {
	if g.CRS.kind == 0 {
		return errors.New("grid has no CRS (use FromEPSG)")
	}
	if g.Width <= 0 || g.Height <= 0 {
		return fmt.Errorf("grid is %d×%d pixels", g.Width, g.Height)
	}
	if _, ok := g.inverse(); !ok {
		return fmt.Errorf("grid geotransform %v is not invertible", g.GeoTransform)
	}
	return nil
}

// Level returns the grid of an overview of g that is w×h pixels: the same
// extent, pixels scaled by Width/w and Height/h (what GDAL does for
// overviews, whose sizes are rounded up from the full resolution).
func (g Grid) Level(w, h int) Grid {
	sx, sy := float64(g.Width)/float64(w), float64(g.Height)/float64(h)
	gt := g.GeoTransform
	return Grid{CRS: g.CRS, Width: w, Height: h, GeoTransform: [6]float64{
		gt[0], gt[1] * sx, gt[2] * sy,
		gt[3], gt[4] * sx, gt[5] * sy,
	}}
}

// Bounds is the grid's rectangle of pixels.
func (g Grid) Bounds() image.Rectangle { return image.Rect(0, 0, g.Width, g.Height) }

// ToCRS returns the CRS coordinates of a point in pixel space (col, row
// may be fractional: col+0.5, row+0.5 is a pixel's centre).
func (g Grid) ToCRS(col, row float64) (x, y float64) {
	gt := &g.GeoTransform
	return gt[0] + col*gt[1] + row*gt[2], gt[3] + col*gt[4] + row*gt[5]
}

// PixelToLonLat returns the longitude/latitude of a point in pixel space
// (col+0.5, row+0.5 is a pixel's centre).
func (g Grid) PixelToLonLat(col, row float64) (lon, lat float64, err error) {
	return g.CRS.ToLonLat(g.ToCRS(col, row))
}

// LonLatToPixel returns where a longitude/latitude falls in pixel space
// (fractional; the pixel is the floor of each). Longitudes are taken as
// given (wrapped into the projection's range), so a geographic grid in
// 0…360 wants its own longitudes.
func (g Grid) LonLatToPixel(lon, lat float64) (col, row float64, err error) {
	inv, ok := g.inverse()
	if !ok {
		return 0, 0, fmt.Errorf("grid geotransform %v is not invertible", g.GeoTransform)
	}
	x, y, err := g.CRS.FromLonLat(lon, lat)
	if err != nil {
		return 0, 0, err
	}
	return inv[0] + x*inv[1] + y*inv[2], inv[3] + x*inv[4] + y*inv[5], nil
}

// inverse is the inverse geotransform, computed as GDAL's
// GDALInvGeoTransform does, so that points land on the same side of a pixel
// centre as in gdal_rasterize.
func (g Grid) inverse() ([6]float64, bool) {
	gt := g.GeoTransform
	if gt[2] == 0 && gt[4] == 0 && gt[1] != 0 && gt[5] != 0 {
		return [6]float64{-gt[0] / gt[1], 1 / gt[1], 0, -gt[3] / gt[5], 0, 1 / gt[5]}, true
	}
	det := gt[1]*gt[5] - gt[2]*gt[4]
	magnitude := math.Max(math.Max(math.Abs(gt[1]), math.Abs(gt[2])), math.Max(math.Abs(gt[4]), math.Abs(gt[5])))
	if math.Abs(det) <= 1e-10*magnitude*magnitude || math.IsNaN(det) {
		return [6]float64{}, false
	}
	inv := 1 / det
	return [6]float64{
		(gt[2]*gt[3] - gt[0]*gt[5]) * inv, gt[5] * inv, -gt[2] * inv,
		(-gt[1]*gt[3] + gt[0]*gt[4]) * inv, -gt[4] * inv, gt[1] * inv,
	}, true
}

// PixelSize is the approximate size on the ground of the pixel at the
// centre of the grid, in metres along its columns and its rows, measured on
// the WGS 84 ellipsoid (so a geographic or Web Mercator grid gets metres
// too). It is 0, 0 when the centre cannot be placed.
func (g Grid) PixelSize() (xMetres, yMetres float64) {
	cx, cy := float64(g.Width)/2, float64(g.Height)/2
	lon0, lat0, err0 := g.CRS.inverse(g.ToCRS(cx, cy))
	lon1, lat1, err1 := g.CRS.inverse(g.ToCRS(cx+1, cy))
	lon2, lat2, err2 := g.CRS.inverse(g.ToCRS(cx, cy+1))
	if err0 != nil || err1 != nil || err2 != nil {
		return 0, 0
	}
	return groundDistance(lon0, lat0, lon1, lat1), groundDistance(lon0, lat0, lon2, lat2)
}

// groundDistance is the distance between two nearby points on the WGS 84
// ellipsoid, from the radii of curvature at their mid-latitude: exact
// enough over a pixel (relative error of the order of the squared
// separation over the Earth's radius).
func groundDistance(lon0, lat0, lon1, lat1 float64) float64 {
	const e2 = (2 - 1/wgs84InvF) / wgs84InvF
	phi := (lat0 + lat1) / 2 * math.Pi / 180
	s := math.Sin(phi)
	w := math.Sqrt(1 - e2*s*s)
	meridian := wgs84A * (1 - e2) / (w * w * w) // M
	prime := wgs84A / w                         // N
	dphi := (lat1 - lat0) * math.Pi / 180
	dlam := normLon(lon1-lon0) * math.Pi / 180
	return math.Hypot(meridian*dphi, prime*math.Cos(phi)*dlam)
}
