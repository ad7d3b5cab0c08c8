package geo

import "math"

// pstereo is the ellipsoidal polar stereographic projection (EPSG guidance
// note 7-2, methods 9810 variant A and 9829 variant B; Snyder 1987 §21),
// north or south. Only the pole's hemisphere can be projected.
type pstereo struct {
	lon0, fe, fn float64 // central meridian (degrees), false easting/northing
	south        bool
	e            float64
	scale        float64 // ρ = scale·t
}

// newPstereoA is variant A: scale k0 at the pole (UPS).
func newPstereoA(a, f, lon0, k0, fe, fn float64, south bool) pstereo {
	e := math.Sqrt(f * (2 - f))
	return pstereo{lon0: lon0, fe: fe, fn: fn, south: south, e: e,
		scale: 2 * a * k0 / math.Sqrt(math.Pow(1+e, 1+e)*math.Pow(1-e, 1-e))}
}

// newPstereoB is variant B: true scale on the parallel latTS.
func newPstereoB(a, f, lon0, latTS, fe, fn float64) pstereo {
	e := math.Sqrt(f * (2 - f))
	p := pstereo{lon0: lon0, fe: fe, fn: fn, south: latTS < 0, e: e}
	phi := math.Abs(latTS) * math.Pi / 180
	s := math.Sin(phi)
	mc := math.Cos(phi) / math.Sqrt(1-e*e*s*s)
	p.scale = a * mc / p.t(phi)
	return p
}

// t is Snyder's t(φ) for the north pole's aspect.
func (p *pstereo) t(phi float64) float64 {
	s := p.e * math.Sin(phi)
	return math.Tan(math.Pi/4-phi/2) / math.Pow((1-s)/(1+s), p.e/2)
}

// forward projects a longitude and latitude in degrees; ok is false at and
// past the opposite pole's hemisphere's far end (the opposite pole).
func (p *pstereo) forward(lon, lat float64) (x, y float64, ok bool) {
	if p.south {
		lat = -lat
	}
	if lat <= -90 {
		return 0, 0, false
	}
	rho := p.scale * p.t(lat*math.Pi/180)
	s, c := math.Sincos((lon - p.lon0) * math.Pi / 180)
	if p.south {
		return p.fe + rho*s, p.fn + rho*c, true
	}
	return p.fe + rho*s, p.fn - rho*c, true
}

// inverse returns the longitude (within 180° of the central meridian, not
// wrapped) and latitude of x, y, in degrees.
func (p *pstereo) inverse(x, y float64) (lon, lat float64) {
	dx, dy := x-p.fe, y-p.fn
	t := math.Hypot(dx, dy) / p.scale
	phi := math.Pi/2 - 2*math.Atan(t)
	for range 20 {
		s := p.e * math.Sin(phi)
		next := math.Pi/2 - 2*math.Atan(t*math.Pow((1-s)/(1+s), p.e/2))
		if math.Abs(next-phi) < 1e-15 {
			phi = next
			break
		}
		phi = next
	}
	var lam float64
	if p.south {
		lam = math.Atan2(dx, dy)
		phi = -phi
	} else {
		lam = math.Atan2(dx, -dy)
	}
	return p.lon0 + lam*180/math.Pi, phi * 180 / math.Pi
}
