package geo

import "math"

// Equal-area projections used by national and continental imagery grids
// (EPSG guidance note 7-2: Albers 9822, Lambert azimuthal 9820; Snyder 1987
// §14 and §24), ellipsoidal. Both go through the authalic quantity q(φ);
// latitude is recovered from q by Newton's iteration (Snyder eq. 3-16), not
// by a truncated series, so it stays exact to rounding.

// authalic holds an ellipsoid's eccentricity for q(φ).
type authalic struct{ e float64 }

// q is Snyder's q(φ) (eq. 3-12).
func (a authalic) q(phi float64) float64 {
	e := a.e
	s := math.Sin(phi)
	return (1 - e*e) * (s/(1-e*e*s*s) - 1/(2*e)*math.Log((1-e*s)/(1+e*s)))
}

// phi inverts q (eq. 3-16), from the spherical guess asin(q/2).
func (a authalic) phi(q float64) float64 {
	e := a.e
	qp := a.q(math.Pi / 2)
	if math.Abs(q) >= qp {
		return math.Copysign(math.Pi/2, q)
	}
	phi := math.Asin(q / 2)
	for range 20 {
		s, c := math.Sincos(phi)
		w := 1 - e*e*s*s
		d := w * w / (2 * c) * (q/(1-e*e) - s/w + 1/(2*e)*math.Log((1-e*s)/(1+e*s)))
		phi += d
		if math.Abs(d) < 1e-15 {
			break
		}
	}
	return phi
}

// albers is Albers equal-area conic.
type albers struct {
	authalic
	a, lon0, fe, fn float64
	n, c, rho0      float64
}

func newAlbers(a, f, lat0, lon0, lat1, lat2, fe, fn float64) albers {
	p := albers{authalic: authalic{math.Sqrt(f * (2 - f))}, a: a, lon0: lon0, fe: fe, fn: fn}
	m := func(phi float64) float64 {
		s, c := math.Sincos(phi)
		return c / math.Sqrt(1-p.e*p.e*s*s)
	}
	r := math.Pi / 180
	m1, m2 := m(lat1*r), m(lat2*r)
	q1, q2 := p.q(lat1*r), p.q(lat2*r)
	p.n = (m1*m1 - m2*m2) / (q2 - q1)
	p.c = m1*m1 + p.n*q1
	p.rho0 = a * math.Sqrt(p.c-p.n*p.q(lat0*r)) / p.n
	return p
}

func (p *albers) forward(dlon, lat float64) (x, y float64) {
	rho := p.a * math.Sqrt(p.c-p.n*p.q(lat*math.Pi/180)) / p.n
	s, c := math.Sincos(p.n * dlon * math.Pi / 180)
	return p.fe + rho*s, p.fn + p.rho0 - rho*c
}

func (p *albers) inverse(x, y float64) (lon, lat float64) {
	dx, dy := x-p.fe, p.rho0-(y-p.fn)
	if p.n < 0 {
		dx, dy = -dx, -dy
	}
	rho := math.Hypot(dx, dy)
	theta := math.Atan2(dx, dy)
	q := (p.c - rho*rho*p.n*p.n/(p.a*p.a)) / p.n
	return p.lon0 + theta/p.n*180/math.Pi, p.phi(q) * 180 / math.Pi
}

// laea is Lambert azimuthal equal-area, oblique aspect (not at a pole).
type laea struct {
	authalic
	lon0, fe, fn float64
	qp, rq, d    float64
	sinB0, cosB0 float64
}

func newLAEA(a, f, lat0, lon0, fe, fn float64) laea {
	p := laea{authalic: authalic{math.Sqrt(f * (2 - f))}, lon0: lon0, fe: fe, fn: fn}
	phi0 := lat0 * math.Pi / 180
	p.qp = p.q(math.Pi / 2)
	b0 := math.Asin(p.q(phi0) / p.qp)
	p.sinB0, p.cosB0 = math.Sincos(b0)
	p.rq = a * math.Sqrt(p.qp/2)
	s, c := math.Sincos(phi0)
	p.d = a * (c / math.Sqrt(1-p.e*p.e*s*s)) / (p.rq * p.cosB0)
	return p
}

// forward projects; ok is false at the antipode of the centre, which has
// no single image.
func (p *laea) forward(dlon, lat float64) (x, y float64, ok bool) {
	sb := p.q(lat*math.Pi/180) / p.qp
	cb := math.Sqrt(max(0, 1-sb*sb))
	sl, cl := math.Sincos(dlon * math.Pi / 180)
	den := 1 + p.sinB0*sb + p.cosB0*cb*cl
	if den <= 1e-12 {
		return 0, 0, false
	}
	b := p.rq * math.Sqrt(2/den)
	return p.fe + b*p.d*cb*sl, p.fn + b/p.d*(p.cosB0*sb-p.sinB0*cb*cl), true
}

func (p *laea) inverse(x, y float64) (lon, lat float64) {
	dx, dy := (x-p.fe)/p.d, p.d*(y-p.fn)
	rho := math.Hypot(dx, dy)
	if rho == 0 {
		return p.lon0, p.phi(p.qp*p.sinB0) * 180 / math.Pi
	}
	ce := 2 * math.Asin(math.Min(1, rho/(2*p.rq)))
	sc, cc := math.Sincos(ce)
	sb := cc*p.sinB0 + dy*sc*p.cosB0/rho
	lam := math.Atan2(dx*sc, rho*p.cosB0*cc-dy*p.sinB0*sc)
	return p.lon0 + lam*180/math.Pi, p.phi(p.qp*sb) * 180 / math.Pi
}
