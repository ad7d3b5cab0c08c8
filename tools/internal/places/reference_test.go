package places

import (
	"bufio"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
)

// The resolver is checked against coordinates from another source than the
// gazetteer (testdata/README.md): each query must resolve to the kind and
// country written beside it, and the reference point must lie inside the
// area (or, for a neighbour's capital, outside a country's outline).
func TestReferencePlaces(t *testing.T) {
	f, err := os.Open("testdata/reference.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	kinds := map[string]int{}
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 7 {
			t.Fatalf("line %q: %d columns", sc.Text(), len(c))
		}
		rows++
		query, kind, country, check, ref := c[0], c[1], c[2], c[3], c[6]
		lon, err1 := strconv.ParseFloat(c[4], 64)
		lat, err2 := strconv.ParseFloat(c[5], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("line %q: coordinates", sc.Text())
		}
		kinds[kind+" "+check]++
		m, err := Resolve(query)
		if err != nil {
			t.Errorf("%q: %v", query, err)
			continue
		}
		p := m.Place
		if string(p.Kind) != kind || p.CountryCode != country {
			t.Errorf("%q resolved to %s (%s, %s), want a %s of %s", query, p.Name, p.Kind, p.CountryCode, kind, country)
			continue
		}
		pt := orb.Point{lon, lat}
		inside := planar.MultiPolygonContains(p.Area, pt)
		switch check {
		case "in":
			if !inside {
				// Points on a coast or a border may fall just outside a
				// simplified outline: a few km is the outline's tolerance.
				if d := distanceKm(p.Area, pt); d > 5 {
					t.Errorf("%q (%s, %s): %s [%g, %g] is %.1f km outside the area (bbox %v)", query, p.Name, p.Extent, ref, lon, lat, d, p.BBox)
				}
			}
		case "out":
			if inside {
				t.Errorf("%q (%s): %s [%g, %g], a neighbour's capital, lies inside its outline", query, p.Name, ref, lon, lat)
			}
		default:
			t.Fatalf("line %q: check %q", sc.Text(), check)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 200 {
		t.Errorf("%d reference rows, want at least 200", rows)
	}
	t.Logf("%d rows: %v", rows, kinds)
}

// distanceKm is the distance from pt to the nearest edge of mp, in km
// (equirectangular at pt's latitude: adequate for a few km).
func distanceKm(mp orb.MultiPolygon, pt orb.Point) float64 {
	kx, ky := 111.32*math.Cos(pt[1]*math.Pi/180), 110.57
	best := math.Inf(1)
	for _, p := range mp {
		for _, r := range p {
			for i := 1; i < len(r); i++ {
				ax, ay := (r[i-1][0]-pt[0])*kx, (r[i-1][1]-pt[1])*ky
				bx, by := (r[i][0]-pt[0])*kx, (r[i][1]-pt[1])*ky
				dx, dy := bx-ax, by-ay
				t := 0.0
				if l := dx*dx + dy*dy; l > 0 {
					t = math.Max(0, math.Min(1, -(ax*dx+ay*dy)/l))
				}
				best = math.Min(best, math.Hypot(ax+t*dx, ay+t*dy))
			}
		}
	}
	return best
}

func TestUnknownPlaceSuggests(t *testing.T) {
	for _, q := range []string{"Qwxzvbnmk", "Qqqqxxxxjjj", "Lisbonnnnnnnnn, Texas"} {
		_, err := Resolve(q)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Errorf("%q: err %v, want NotFoundError", q, err)
		}
	}
	_, err := Resolve("Lisbom, Ohio")
	if err != nil {
		t.Errorf("Lisbom, Ohio: %v, want Lisbon, Ohio (one edit)", err)
	}
	_, err = Resolve("Paris, Japan")
	var nf *NotFoundError
	if !errors.As(err, &nf) || len(nf.Suggestions) == 0 || nf.Suggestions[0] != "Paris, Île-de-France, FR" {
		t.Errorf("Paris, Japan: %v, want a NotFoundError suggesting the places named Paris", err)
	}
}

func TestAmbiguousNamesListTheOthers(t *testing.T) {
	m, err := Resolve("Paris")
	if err != nil {
		t.Fatal(err)
	}
	var picks []string
	for _, a := range m.Alternatives {
		picks = append(picks, a.Pick)
	}
	if m.Place.CountryCode != "FR" || !containsString(picks, "Paris, Texas, US") {
		t.Errorf("Paris → %s (%s), alternatives %v", m.Place.Name, m.Place.CountryCode, picks)
	}
	// Every pick resolves to the place it names.
	for _, a := range m.Alternatives {
		got, err := Resolve(a.Pick)
		if err != nil || got.Place.Pick != a.Pick {
			t.Errorf("pick %q resolves to %+v, %v", a.Pick, got, err)
		}
	}
	m, err = Resolve("Georgia")
	if err != nil || m.Place.Kind != KindCountry || len(m.Alternatives) == 0 || m.Alternatives[0].Pick != "Georgia (region), US" {
		t.Errorf("Georgia → %+v, %v", m, err)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestPoints(t *testing.T) {
	for _, c := range []struct {
		q        string
		lon, lat float64
		km       float64
		swapped  bool
	}{
		{"38.72, -9.14", -9.14, 38.72, 1, false},
		{"38.72, -9.14, 5 km", -9.14, 38.72, 5, false},
		{"38.72 -9.14 500 m", -9.14, 38.72, 0.5, false},
		{"-122.4, 37.8", -122.4, 37.8, 1, true},
		{"38.72°N 9.14°W", -9.14, 38.72, 1, false},
		{"-17.8, 179.9, 20 km", 179.9, -17.8, 20, false},
	} {
		m, err := Resolve(c.q)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
			continue
		}
		p := m.Place
		if p.Kind != KindPoint || math.Abs(p.Lon-c.lon) > 1e-9 || math.Abs(p.Lat-c.lat) > 1e-9 || math.Abs(p.RadiusKm-c.km) > 1e-9 {
			t.Errorf("%q → %+v", c.q, p)
		}
		if (len(m.Notes) > 0) != c.swapped {
			t.Errorf("%q: notes %v", c.q, m.Notes)
		}
		if !planar.MultiPolygonContains(p.Area, orb.Point{c.lon, c.lat}) && c.lon < 179 {
			t.Errorf("%q: the area does not hold the point", c.q)
		}
	}
	// A circle across the antimeridian is cut into two parts, its bbox
	// written across it.
	m, _ := Resolve("-17.8, 179.9, 20 km")
	if len(m.Place.Area) != 2 || m.Place.BBox[0] < m.Place.BBox[2] {
		t.Errorf("circle across ±180: %d parts, bbox %v", len(m.Place.Area), m.Place.BBox)
	}
	for _, bad := range []string{"91, 95", "10, 200", "38.7, -9.1, 5", "38.7, -9.1, 900 km", "38N, 9N"} {
		if _, err := Resolve(bad); err == nil {
			t.Errorf("%q resolved", bad)
		}
	}
}
