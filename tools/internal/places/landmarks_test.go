package places

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// CitiesIn and NearestCity give what a plain scan of every city gives:
// the frame's cities, capitals then the most populous first, and the city
// at the least great-circle distance.
func TestLandmarksMatchAScanOfEveryCity(t *testing.T) {
	ix, err := load()
	if err != nil {
		t.Fatal(err)
	}
	cities := ix.data.Cities
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		lon, lat := rnd.Float64()*360-180, rnd.Float64()*160-80
		span := math.Pow(10, rnd.Float64()*2-1) // 0.1° to 10°
		w, s, e, n := lon-span, lat-span/2, lon+span, lat+span/2
		got, err := CitiesIn(w, s, e, n, 8)
		if err != nil {
			t.Fatal(err)
		}
		var want []City
		for _, c := range cities {
			for _, dx := range []float64{-360, 0, 360} {
				if c.Lat >= s && c.Lat <= n && c.Lon+dx >= w && c.Lon+dx <= e {
					want = append(want, c)
					break
				}
			}
		}
		sort.SliceStable(want, func(i, j int) bool {
			if want[i].Capital != want[j].Capital {
				return want[i].Capital
			}
			return want[i].Population > want[j].Population
		})
		if len(got) != min(len(want), 8) {
			t.Fatalf("frame %.2f %.2f %.2f %.2f: %d cities, a scan finds %d", w, s, e, n, len(got), len(want))
		}
		for i, l := range got {
			if l.Population != want[i].Population || l.Capital != want[i].Capital {
				t.Errorf("frame %.2f %.2f %.2f %.2f: city %d is %s (%d), a scan ranks %s (%d) there", w, s, e, n, i, l.Name, l.Population, want[i].Name, want[i].Population)
			}
			if l.Lon < w || l.Lon > e || l.Lat < s || l.Lat > n {
				t.Errorf("%s at %g, %g is outside the frame %.2f %.2f %.2f %.2f", l.Name, l.Lon, l.Lat, w, s, e, n)
			}
		}

		for _, minPop := range []int64{0, 100_000} {
			near, km, err := NearestCity(lon, lat, minPop)
			if err != nil {
				t.Fatal(err)
			}
			if !near.Capital && near.Population < minPop {
				t.Errorf("nearest to %g, %g of at least %d people: %s has %d", lon, lat, minPop, near.Name, near.Population)
			}
			best := math.Inf(1)
			for _, c := range cities {
				if c.Capital || c.Population >= minPop {
					best = math.Min(best, GreatCircleKm(lat, lon, c.Lat, c.Lon))
				}
			}
			if math.Abs(km-best) > 0.01 {
				t.Errorf("nearest to %g, %g of at least %d people: %s at %.3f km, a scan finds one at %.3f km", lon, lat, minPop, near.Name, km, best)
			}
		}
	}
}

// A frame across the antimeridian finds Suva whether written past 180°
// (either way) or wrapped, with its longitude in the frame's terms.
func TestCitiesInAcrossTheAntimeridian(t *testing.T) {
	m, err := Resolve("Suva")
	if err != nil {
		t.Fatal(err)
	}
	suva := m.Place
	for _, f := range [][4]float64{{177, -19, 183, -17}, {-183, -19, -177, -17}, {177, -19, -177, -17}} {
		got, err := CitiesIn(f[0], f[1], f[2], f[3], 5)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(got, func(l Landmark) bool { return l.Name == suva.Name })
		if i < 0 {
			t.Errorf("frame %v: %v, no %s", f, got, suva.Name)
			continue
		}
		east := f[2]
		if f[0] > east {
			east += 360
		}
		if l := got[i]; l.Lon < f[0] || l.Lon > east || math.Abs(math.Mod(l.Lon-suva.Lon+720, 360)) > 1e-9 {
			t.Errorf("frame %v: %s at lon %g (stored %g)", f, l.Name, l.Lon, suva.Lon)
		}
	}
}

// The country at a point is the one whose outline holds it; none at sea.
func TestCountryAt(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		iso      string
	}{{-9.14, 38.72, "PT"}, {-39.0, -4.5, "BR"}, {-73.15, 44.0, "US"}, {-73.4 + 360, 44.0, "US"}, {-30, 10, ""}} {
		p, ok, err := CountryAt(c.lon, c.lat)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (c.iso != "") || p.CountryCode != c.iso {
			t.Errorf("CountryAt(%g, %g) = %q (%v), want %q", c.lon, c.lat, p.CountryCode, ok, c.iso)
		}
		if ok && len(p.Area) == 0 {
			t.Errorf("CountryAt(%g, %g): %s without an outline", c.lon, c.lat, p.Name)
		}
	}
}

// A city's country code names its country, the one a map of the city lies
// in when its centre is at sea.
func TestCountryByCode(t *testing.T) {
	for code, want := range map[string]string{"FJ": "Fiji", "PT": "Portugal", "": "", "ZZ": ""} {
		p, ok, err := CountryByCode(code)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (want != "") || p.Name != want || (ok && len(p.Area) == 0) {
			t.Errorf("CountryByCode(%q) = %q (%v, %d polygons), want %q", code, p.Name, ok, len(p.Area), want)
		}
	}
}

func BenchmarkCitiesIn(b *testing.B) {
	if _, err := CitiesIn(0, 0, 1, 1, 1); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		// A sparse frame (the whole scan) and the nearest city.
		_, _ = CitiesIn(-150.3, 10.0, -150.0, 10.2, 40)
		_, _, _ = NearestCity(-150.15, 10.1, 0)
	}
}
