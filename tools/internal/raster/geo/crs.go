// Package geo places raster pixels on the ground: the coordinate reference
// systems imagery catalogs use (geographic, Web Mercator, UTM), the grid of
// a GeoTIFF (its geotransform), the pixel window an area of interest needs,
// and which pixels of that window lie inside it.
//
// GDAL is the reference: transforms agree with PROJ (gdaltransform) to well
// under a millimetre inside a UTM zone, and masks pick the pixels
// gdal_rasterize burns (a pixel is in when its centre is; not ALL_TOUCHED),
// which is also what gdalwarp -cutline keeps.
//
// Areas of interest come in longitude/latitude on WGS 84. NAD83, ETRS89 and
// GDA94 are treated as the same datum as WGS 84: they differ by about a
// metre or two (plate motion since 1984), below the ground size of the
// pixels these tools read, and GDAL's default NAD83→WGS 84 and ETRS89→WGS 84
// transformations are also the null one.
package geo

import (
	"errors"
	"fmt"
	"math"
)

// kind is the projection family a CRS belongs to.
type kind uint8

const (
	geographic kind = iota + 1
	webMercator
	transverseMercator
	polarStereographic
	albersEqualArea
	lambertAzimuthal
)

// CRS is a coordinate reference system this package can transform to and
// from longitude/latitude. The zero CRS is invalid; make one with FromEPSG.
type CRS struct {
	// EPSG is the code the CRS was made from.
	EPSG int
	// Name is EPSG's name for it ("WGS 84 / UTM zone 33N").
	Name string

	kind kind
	tm   tmerc   // transverseMercator only
	ps   pstereo // polarStereographic only
	aea  albers  // albersEqualArea only
	la   laea    // lambertAzimuthal only
}

// ErrUnsupportedCRS is returned for an EPSG code this package cannot
// transform; the message says which codes it can.
var ErrUnsupportedCRS = errors.New("unsupported CRS")

// Supported says which EPSG codes FromEPSG accepts, for error messages.
const Supported = "EPSG:4326, 4269 and 4258 (longitude/latitude), 3857 (Web Mercator), " +
	"32601–32660 and 32701–32760 (WGS 84 / UTM), 26901–26923 (NAD83 / UTM), 25828–25838 (ETRS89 / UTM), " +
	"3031, 3413, 3976, 3995, 32661 and 32761 (polar stereographic), 5070 and 3577 (Albers: US, Australia), 3035 (LAEA Europe)"

// Ellipsoids: semi-major axis and inverse flattening.
const (
	wgs84A, wgs84InvF = 6378137, 298.257223563
	grs80A, grs80InvF = 6378137, 298.257222101
)

// FromEPSG returns the CRS of an EPSG code.
func FromEPSG(code int) (CRS, error) {
	switch {
	case code == 4326:
		return CRS{EPSG: code, Name: "WGS 84", kind: geographic}, nil
	case code == 4269:
		return CRS{EPSG: code, Name: "NAD83", kind: geographic}, nil
	case code == 4258:
		return CRS{EPSG: code, Name: "ETRS89", kind: geographic}, nil
	case code == 3857:
		return CRS{EPSG: code, Name: "WGS 84 / Pseudo-Mercator", kind: webMercator}, nil
	case code >= 32601 && code <= 32660:
		return utm(code, "WGS 84", code-32600, true, wgs84A, wgs84InvF), nil
	case code >= 32701 && code <= 32760:
		return utm(code, "WGS 84", code-32700, false, wgs84A, wgs84InvF), nil
	case code >= 26901 && code <= 26923:
		return utm(code, "NAD83", code-26900, true, grs80A, grs80InvF), nil
	case code >= 25828 && code <= 25838:
		return utm(code, "ETRS89", code-25800, true, grs80A, grs80InvF), nil
	case code == 3031:
		return polar(code, "WGS 84 / Antarctic Polar Stereographic", newPstereoB(wgs84A, 1/wgs84InvF, 0, -71, 0, 0)), nil
	case code == 3413:
		return polar(code, "WGS 84 / NSIDC Sea Ice Polar Stereographic North", newPstereoB(wgs84A, 1/wgs84InvF, -45, 70, 0, 0)), nil
	case code == 3976:
		return polar(code, "WGS 84 / NSIDC Sea Ice Polar Stereographic South", newPstereoB(wgs84A, 1/wgs84InvF, 0, -70, 0, 0)), nil
	case code == 3995:
		return polar(code, "WGS 84 / Arctic Polar Stereographic", newPstereoB(wgs84A, 1/wgs84InvF, 0, 71, 0, 0)), nil
	case code == 32661:
		return polar(code, "WGS 84 / UPS North (E,N)", newPstereoA(wgs84A, 1/wgs84InvF, 0, 0.994, 2000000, 2000000, false)), nil
	case code == 5070:
		return CRS{EPSG: code, Name: "NAD83 / Conus Albers", kind: albersEqualArea,
			aea: newAlbers(grs80A, 1/grs80InvF, 23, -96, 29.5, 45.5, 0, 0)}, nil
	case code == 3577:
		return CRS{EPSG: code, Name: "GDA94 / Australian Albers", kind: albersEqualArea,
			aea: newAlbers(grs80A, 1/grs80InvF, 0, 132, -18, -36, 0, 0)}, nil
	case code == 3035:
		return CRS{EPSG: code, Name: "ETRS89-extended / LAEA Europe", kind: lambertAzimuthal,
			la: newLAEA(grs80A, 1/grs80InvF, 52, 10, 4321000, 3210000)}, nil
	case code == 32761:
		return polar(code, "WGS 84 / UPS South (E,N)", newPstereoA(wgs84A, 1/wgs84InvF, 0, 0.994, 2000000, 2000000, true)), nil
	}
	return CRS{}, fmt.Errorf("%w EPSG:%d; supported: %s", ErrUnsupportedCRS, code, Supported)
}

func utm(code int, datum string, zone int, north bool, a, invF float64) CRS {
	hemi, fn := "N", 0.0
	if !north {
		hemi, fn = "S", 10000000
	}
	return CRS{
		EPSG: code,
		Name: fmt.Sprintf("%s / UTM zone %d%s", datum, zone, hemi),
		kind: transverseMercator,
		tm:   newTmerc(a, 1/invF, float64(6*zone-183), 0.9996, 500000, fn),
	}
}

func polar(code int, name string, p pstereo) CRS {
	return CRS{EPSG: code, Name: name, kind: polarStereographic, ps: p}
}

// Geographic reports whether coordinates are longitude/latitude in degrees.
func (c CRS) Geographic() bool { return c.kind == geographic }

func (c CRS) String() string {
	if c.kind == 0 {
		return "invalid CRS"
	}
	return fmt.Sprintf("EPSG:%d (%s)", c.EPSG, c.Name)
}

// Web Mercator's sphere has WGS 84's semi-major axis.
const mercR = wgs84A

// maxMercLat is where Web Mercator is square (y = x = πR): EPSG's bounds.
const maxMercLat = 85.0511287798066

// ToLonLat converts x, y in c to longitude/latitude in degrees (longitude in
// [-180, 180]).
func (c CRS) ToLonLat(x, y float64) (lon, lat float64, err error) {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return 0, 0, fmt.Errorf("%s: coordinate (%g, %g) is not a number", c, x, y)
	}
	lon, lat, err = c.inverse(x, y)
	if err != nil {
		return 0, 0, err
	}
	return normLon(lon), lat, nil
}

// inverse is ToLonLat without wrapping the longitude: a transverse
// Mercator's longitudes run on from its central meridian, so a grid next to
// the antimeridian gets one continuous longitude range.
func (c CRS) inverse(x, y float64) (lon, lat float64, err error) {
	switch c.kind {
	case geographic:
		if y < -90 || y > 90 {
			return 0, 0, fmt.Errorf("%s: latitude %g is outside [-90, 90]", c, y)
		}
		return x, y, nil
	case webMercator:
		return x / mercR * 180 / math.Pi, math.Atan(math.Sinh(y/mercR)) * 180 / math.Pi, nil
	case transverseMercator:
		lon, lat = c.tm.inverse(x, y)
		return lon, lat, nil
	case polarStereographic:
		lon, lat = c.ps.inverse(x, y)
		return lon, lat, nil
	case albersEqualArea:
		lon, lat = c.aea.inverse(x, y)
		return lon, lat, nil
	case lambertAzimuthal:
		lon, lat = c.la.inverse(x, y)
		return lon, lat, nil
	}
	return 0, 0, errors.New("invalid CRS (use FromEPSG)")
}

// roundTrips reports whether lon, lat (from inverse(x, y)) is a real place
// that projects back to x, y within a centimetre: false for NaNs and for
// transverse Mercator coordinates beyond its domain, which the series map
// to some point without complaint.
func (c CRS) roundTrips(x, y, lon, lat float64) bool {
	if math.IsNaN(lon) || math.IsNaN(lat) || math.IsInf(lon, 0) {
		return false
	}
	if c.kind == geographic || c.kind == webMercator {
		return true
	}
	x2, y2, err := c.forward(lon, lat)
	return err == nil && math.Abs(x2-x) < 0.01 && math.Abs(y2-y) < 0.01
}

// FromLonLat converts longitude/latitude in degrees to x, y in c.
func (c CRS) FromLonLat(lon, lat float64) (x, y float64, err error) {
	if math.IsNaN(lon) || math.IsNaN(lat) || math.IsInf(lon, 0) {
		return 0, 0, fmt.Errorf("%s: coordinate (%g, %g) is not a number", c, lon, lat)
	}
	if c.kind == webMercator {
		lon = normLon(lon) // as PROJ does: x stays within ±πR
	}
	return c.forward(lon, lat)
}

// forward is FromLonLat without wrapping the longitude (Web Mercator's x
// runs on past ±πR, so a polygon across the antimeridian stays one piece).
func (c CRS) forward(lon, lat float64) (x, y float64, err error) {
	if lat < -90 || lat > 90 || math.IsNaN(lat) {
		return 0, 0, fmt.Errorf("%s: latitude %g is outside [-90, 90]", c, lat)
	}
	switch c.kind {
	case geographic:
		return lon, lat, nil
	case webMercator:
		if math.Abs(lat) >= 90 {
			return 0, 0, fmt.Errorf("%s: latitude %g has no Web Mercator coordinate", c, lat)
		}
		phi := lat * math.Pi / 180
		return mercR * lon * math.Pi / 180, mercR * math.Atanh(math.Sin(phi)), nil
	case transverseMercator:
		dlon := normLon(lon - c.tm.lon0)
		if math.Abs(dlon) >= 90 {
			return 0, 0, fmt.Errorf("%s: longitude %g is %g° from the central meridian; transverse Mercator holds less than 90°", c, lon, math.Abs(dlon))
		}
		x, y = c.tm.forward(dlon, lat)
		return x, y, nil
	case polarStereographic:
		x, y, ok := c.ps.forward(lon, lat)
		if !ok {
			return 0, 0, fmt.Errorf("%s: latitude %g is the opposite pole, which polar stereographic cannot hold", c, lat)
		}
		return x, y, nil
	case albersEqualArea:
		x, y = c.aea.forward(normLon(lon-c.aea.lon0), lat)
		return x, y, nil
	case lambertAzimuthal:
		x, y, ok := c.la.forward(normLon(lon-c.la.lon0), lat)
		if !ok {
			return 0, 0, fmt.Errorf("%s: (%g, %g) is opposite the projection's centre", c, lon, lat)
		}
		return x, y, nil
	}
	return 0, 0, errors.New("invalid CRS (use FromEPSG)")
}

// normLon wraps a longitude into [-180, 180].
func normLon(lon float64) float64 {
	if lon >= -180 && lon <= 180 {
		return lon
	}
	lon = math.Mod(lon+180, 360)
	if lon < 0 {
		lon += 360
	}
	return lon - 180
}
