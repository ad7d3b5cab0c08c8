package places

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
)

// Landmark is a city a map can name: where it is and how many live there.
type Landmark struct {
	Name        string
	CountryCode string // ISO 3166-1 alpha-2, "" when none
	Lon, Lat    float64
	Population  int64
	Capital     bool // a national capital
}

// landmarkIndex holds the cities in the order a map names them, as compact
// arrays a scan runs through without touching the cities' names: a
// position (frames) and a unit vector (the nearest): 24 bytes a city, 1.6 MB
// for the 64,814 embedded cities, beside the 30 MB of the loaded gazetteer.
type landmarkIndex struct {
	city     []int32 // index in Data.Cities
	lon, lat []float32
	xyz      [][3]float32
}

var (
	landmarksOnce sync.Once
	landmarks     *landmarkIndex
	landmarksErr  error
)

// loadLandmarks builds the index once, on the first map that asks.
func loadLandmarks() (*landmarkIndex, *Data, error) {
	ix, err := load()
	if err != nil {
		return nil, nil, err
	}
	landmarksOnce.Do(func() { landmarks, landmarksErr = newLandmarkIndex(ix.data) })
	return landmarks, ix.data, landmarksErr
}

// newLandmarkIndex orders the cities national capitals first (a map of a
// region names its capital before a bigger city), then by population, then
// by name and place in the data (the same order on every build).
func newLandmarkIndex(d *Data) (*landmarkIndex, error) {
	if len(d.Cities) == 0 {
		return nil, errors.New("places: no cities")
	}
	order := make([]int32, len(d.Cities))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &d.Cities[i], &d.Cities[j]
		if a.Capital != b.Capital {
			if a.Capital {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Population, a.Population); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	lx := &landmarkIndex{city: order, lon: make([]float32, len(order)), lat: make([]float32, len(order)), xyz: make([][3]float32, len(order))}
	for k, i := range order {
		c := &d.Cities[i]
		lx.lon[k], lx.lat[k] = float32(c.Lon), float32(c.Lat)
		lx.xyz[k] = unitVector(c.Lon, c.Lat)
	}
	return lx, nil
}

func unitVector(lon, lat float64) [3]float32 {
	λ, φ := lon*math.Pi/180, lat*math.Pi/180
	return [3]float32{float32(math.Cos(φ) * math.Cos(λ)), float32(math.Cos(φ) * math.Sin(λ)), float32(math.Sin(φ))}
}

func landmarkOf(d *Data, i int32) Landmark {
	c := &d.Cities[i]
	return Landmark{Name: c.Name, CountryCode: c.CountryISO, Lon: c.Lon, Lat: c.Lat, Population: c.Population, Capital: c.Capital}
}

// CitiesIn returns up to n cities inside the frame, national capitals
// first, then the most populous. Longitudes may run past ±180 (a frame
// drawn across the antimeridian, west < east) or wrap (west > east); a
// city's Lon is given in the frame's longitudes, a turn away from the
// stored one when that is where the frame shows it. It fails only when the
// gazetteer cannot be loaded.
func CitiesIn(west, south, east, north float64, n int) ([]Landmark, error) {
	lx, d, err := loadLandmarks()
	if err != nil {
		return nil, err
	}
	if west > east {
		east += 360
	}
	turns := [...]float64{0, -360, 360}
	var out []Landmark
	for k := range lx.city {
		if len(out) >= n {
			break
		}
		lat := float64(lx.lat[k])
		if lat < south || lat > north {
			continue
		}
		for _, dx := range turns {
			if lon := float64(lx.lon[k]) + dx; lon >= west && lon <= east {
				l := landmarkOf(d, lx.city[k])
				l.Lon += dx
				out = append(out, l)
				break
			}
		}
	}
	return out, nil
}

// NearestCity returns the city nearest to lon, lat on the sphere among
// the national capitals and the cities of at least minPopulation people
// (0: every city), and its great-circle distance in kilometres. It fails
// only when the gazetteer cannot be loaded.
func NearestCity(lon, lat float64, minPopulation int64) (Landmark, float64, error) {
	lx, d, err := loadLandmarks()
	if err != nil {
		return Landmark{}, 0, err
	}
	// The smallest chord is the shortest arc; differences of unit vectors
	// keep float32 exact to about a metre, where a dot product's cosine
	// would blur a few kilometres.
	p := unitVector(lon, lat)
	best, bestChord := 0, float32(math.Inf(1))
	for k, q := range lx.xyz {
		// The index runs capitals first, then by population: past the
		// first smaller city every one is smaller.
		if c := &d.Cities[lx.city[k]]; !c.Capital && c.Population < minPopulation {
			break
		}
		dx, dy, dz := q[0]-p[0], q[1]-p[1], q[2]-p[2]
		if c := dx*dx + dy*dy + dz*dz; c < bestChord {
			best, bestChord = k, c
		}
	}
	l := landmarkOf(d, lx.city[best])
	return l, GreatCircleKm(lat, lon, l.Lat, l.Lon), nil
}

// earthRadiusKm is the mean radius of the WGS 84 ellipsoid.
const earthRadiusKm = 6371.0088

// GreatCircleKm is the distance between two points on the sphere of the
// Earth's mean radius, in kilometres.
func GreatCircleKm(lat1, lon1, lat2, lon2 float64) float64 {
	φ1, φ2 := lat1*math.Pi/180, lat2*math.Pi/180
	dφ, dλ := φ2-φ1, (lon2-lon1)*math.Pi/180
	a := math.Sin(dφ/2)*math.Sin(dφ/2) + math.Cos(φ1)*math.Cos(φ2)*math.Sin(dλ/2)*math.Sin(dλ/2)
	return 2 * earthRadiusKm * math.Asin(math.Min(1, math.Sqrt(a)))
}

// CountryAt returns the country whose outline holds lon, lat (any
// longitude: it is brought into [-180, 180]), with its outline in Area;
// ok is false at sea, and in the far parts a country's outline leaves out
// (Country.Left). It fails only when the gazetteer cannot be loaded.
func CountryAt(lon, lat float64) (p Place, ok bool, err error) {
	ix, err := load()
	if err != nil {
		return Place{}, false, err
	}
	lon = math.Mod(lon+540, 360) - 180
	pt := orb.Point{lon, lat}
	for i, c := range ix.data.Countries {
		if c.Outline < 0 || !bboxHolds(ix.data.Outlines[c.Outline].BBox, lon, lat) {
			continue
		}
		mp, err := ix.data.Outlines[c.Outline].geometry()
		if err != nil || !planar.MultiPolygonContains(mp, pt) {
			continue
		}
		p, err := ix.place(ref{KindCountry, int32(i)}, false)
		if err != nil {
			continue
		}
		p.Area = mp
		return p, true, nil
	}
	return Place{}, false, nil
}

// CountryByCode returns the country of an ISO 3166-1 alpha-2 code (a
// Landmark's CountryCode), with its outline in Area; ok is false for a code
// no country has. It fails only when the gazetteer cannot be loaded.
func CountryByCode(iso2 string) (p Place, ok bool, err error) {
	ix, err := load()
	if err != nil || iso2 == "" {
		return Place{}, false, err
	}
	for _, i := range ix.countryKeys[Fold(iso2)] {
		if ix.data.Countries[i].ISO2 != iso2 {
			continue
		}
		if p, err := ix.place(ref{KindCountry, int32(i)}, true); err == nil {
			return p, true, nil
		}
	}
	return Place{}, false, nil
}

// bboxHolds reports whether [west, south, east, north] (west > east across
// the antimeridian) holds the point.
func bboxHolds(b [4]float64, lon, lat float64) bool {
	if lat < b[1] || lat > b[3] {
		return false
	}
	if b[0] <= b[2] {
		return lon >= b[0] && lon <= b[2]
	}
	return lon >= b[0] || lon <= b[2]
}
