package geo

import "math"

// tmerc is an ellipsoidal transverse Mercator projection computed with
// Krüger's series to sixth order in the third flattening n, as in
// C. F. F. Karney, "Transverse Mercator with an accuracy of a few
// nanometers", J. Geodesy 85 (2011) — the algorithm behind PROJ's default
// tmerc/utm (etmerc, Poder/Engsager), so UTM coordinates agree with GDAL's
// to nanometres inside a zone and stay sub-millimetre far outside it.
//
// It is implemented here rather than taken from a library: the pure-Go one
// the issue names (github.com/wroge/wgs84 v1.1.7) uses Snyder's USGS series
// and, measured against gdaltransform, is 0.18 m off 3° from the central
// meridian and 1.4 m off at 6°, and its inverse is off by 7 m and more (it
// raises to the power 3/2 in integer arithmetic, which is 1); bindings to
// PROJ itself (github.com/twpayne/go-proj) need cgo, which the static
// builds for five platforms rule out. The other projections here (stere.go,
// equalarea.go) are written the same way, from EPSG guidance note 7-2.
type tmerc struct {
	lon0, k0, fe, fn float64 // central meridian (degrees), scale, false easting/northing
	e                float64 // eccentricity
	a                float64 // rectifying radius A (scaled by k0 at use)
	alpha, beta      [6]float64
}

func newTmerc(a, f, lon0, k0, fe, fn float64) tmerc {
	n := f / (2 - f)
	n2 := n * n
	n3, n4, n5, n6 := n2*n, n2*n2, n2*n2*n, n2*n2*n2
	return tmerc{
		lon0: lon0, k0: k0, fe: fe, fn: fn,
		e: math.Sqrt(f * (2 - f)),
		a: a / (1 + n) * (1 + n2/4 + n4/64 + n6/256),
		alpha: [6]float64{
			n/2 - 2*n2/3 + 5*n3/16 + 41*n4/180 - 127*n5/288 + 7891*n6/37800,
			13*n2/48 - 3*n3/5 + 557*n4/1440 + 281*n5/630 - 1983433*n6/1935360,
			61*n3/240 - 103*n4/140 + 15061*n5/26880 + 167603*n6/181440,
			49561*n4/161280 - 179*n5/168 + 6601661*n6/7257600,
			34729*n5/80640 - 3418889*n6/1995840,
			212378941 * n6 / 319334400,
		},
		beta: [6]float64{
			n/2 - 2*n2/3 + 37*n3/96 - n4/360 - 81*n5/512 + 96199*n6/604800,
			n2/48 + n3/15 - 437*n4/1440 + 46*n5/105 - 1118711*n6/3870720,
			17*n3/480 - 37*n4/840 - 209*n5/4480 + 5569*n6/90720,
			4397*n4/161280 - 11*n5/504 - 830251*n6/7257600,
			4583*n5/161280 - 108847*n6/3991680,
			20648693 * n6 / 638668800,
		},
	}
}

// forward projects a longitude relative to the central meridian (|dlon| <
// 90) and a latitude, in degrees.
func (t *tmerc) forward(dlon, lat float64) (x, y float64) {
	lam := dlon * math.Pi / 180
	var tau float64
	switch lat {
	case 90:
		tau = math.Inf(1)
	case -90:
		tau = math.Inf(-1)
	default:
		tau = math.Tan(lat * math.Pi / 180)
	}
	tauP := t.conformalTau(tau)
	sl, cl := math.Sincos(lam)
	xiP := math.Atan2(tauP, cl)
	etaP := math.Asinh(sl / math.Hypot(tauP, cl))
	if math.IsInf(tau, 0) {
		xiP, etaP = math.Copysign(math.Pi/2, tau), 0
	}
	xi, eta := xiP, etaP
	for j, a := range t.alpha {
		k := 2 * float64(j+1)
		s, c := math.Sincos(k * xiP)
		xi += a * s * math.Cosh(k*etaP)
		eta += a * c * math.Sinh(k*etaP)
	}
	return t.fe + t.k0*t.a*eta, t.fn + t.k0*t.a*xi
}

// inverse returns the longitude (continuous from the central meridian, not
// wrapped) and latitude of x, y, in degrees.
func (t *tmerc) inverse(x, y float64) (lon, lat float64) {
	xi := (y - t.fn) / (t.k0 * t.a)
	eta := (x - t.fe) / (t.k0 * t.a)
	xiP, etaP := xi, eta
	for j, b := range t.beta {
		k := 2 * float64(j+1)
		s, c := math.Sincos(k * xi)
		xiP -= b * s * math.Cosh(k*eta)
		etaP -= b * c * math.Sinh(k*eta)
	}
	sxi, cxi := math.Sincos(xiP)
	she := math.Sinh(etaP)
	tauP := sxi / math.Hypot(she, cxi)
	lam := math.Atan2(she, cxi)
	tau := t.tauFromConformal(tauP)
	return t.lon0 + lam*180/math.Pi, math.Atan(tau) * 180 / math.Pi
}

// conformalTau is tan χ of the conformal latitude χ for τ = tan φ
// (Karney 2011, eqs. 7–9).
func (t *tmerc) conformalTau(tau float64) float64 {
	if math.IsInf(tau, 0) {
		return tau
	}
	sig := math.Sinh(t.e * math.Atanh(t.e*tau/math.Hypot(1, tau)))
	return tau*math.Hypot(1, sig) - sig*math.Hypot(1, tau)
}

// tauFromConformal inverts conformalTau by Newton's method (Karney 2011,
// eqs. 19–21); it converges in two or three steps.
func (t *tmerc) tauFromConformal(tauP float64) float64 {
	e2m := 1 - t.e*t.e
	tau := tauP / e2m
	tol := math.Sqrt(2.220446049250313e-16) * 0.1 * math.Max(1, math.Abs(tauP))
	for range 8 {
		tp := t.conformalTau(tau)
		d := (tauP - tp) * (1 + e2m*tau*tau) / (e2m * math.Hypot(1, tau) * math.Hypot(1, tp))
		tau += d
		if math.Abs(d) < tol {
			break
		}
	}
	return tau
}
