// Package places resolves a place name, or a "lat, lon" point, to an area
// on the ground, offline: countries and first-level regions to their
// Natural Earth 1:10m outlines, cities to a city-sized area, points to a
// small circle. It returns facts (what was found, from which source, what
// else the name could mean); the tools word them. The maps ask it too
// (landmarks.go): the cities inside a frame, the nearest city, the
// country at a point.
//
// The gazetteer is embedded (data/README.md) and loaded on the first
// lookup.
package places

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// Kind is what sort of place a name resolved to.
type Kind string

// The kinds, in the order a name's meanings are ranked when nothing else
// decides: a country before a region before a city.
const (
	KindCountry Kind = "country"
	KindRegion  Kind = "region"
	KindCity    Kind = "city"
	KindPoint   Kind = "point"
)

// Place is one place, as an area.
type Place struct {
	Name        string
	Kind        Kind
	Country     string // the country's name; "" for a point
	CountryCode string // ISO 3166-1 alpha-2, "" when none
	Region      string // a city's first-level division
	Population  int64  // cities: GeoNames' figure
	// Lon, Lat is a city's or a point's position.
	Lon, Lat float64
	// BBox is [west, south, east, north]; west > east when the area
	// crosses the antimeridian.
	BBox [4]float64
	// Area is the outline: longitudes within [-180, 180], cut at the
	// antimeridian (RFC 7946 §3.1.9).
	Area orb.MultiPolygon
	// Source says where the area comes from ("Natural Earth 1:10m
	// admin-0 outline"), Extent how it was made ("simplified to ±550 m",
	// "radius 16 km from a population of 2,400,000").
	Source, Extent string
	RadiusKm       float64
	// Left names far parts of a country left out of its outline.
	Left string
	// Pick is a query that resolves to this place alone.
	Pick string
}

// Match is what a query resolved to.
type Match struct {
	Query string
	Place Place
	// Matched is the name that matched when it is not Place.Name (an
	// alternate name, or the name a misspelling was read as).
	Matched string
	// Fuzzy is true when the query matched no name exactly and was read
	// as the closest name within a few edits.
	Fuzzy bool
	// Alternatives are other places the name means (without Area), the
	// most important first; More counts those not listed.
	Alternatives []Place
	More         int
	Notes        []string
}

// NotFoundError is a query that matched no place.
type NotFoundError struct {
	Query       string
	Reason      string
	Suggestions []string // the closest names, as written
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no place named %q", e.Query)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(quoteAll(e.Suggestions), " or ") + "?"
	}
	return msg
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// maxAlternatives is how many other meanings a match lists.
const maxAlternatives = 5

// Resolve reads a query: "lat, lon" (or "lon, lat" where only that reading
// is possible) with an optional radius, or a place name, optionally
// followed by qualifiers after commas (a country, a region, or a kind:
// "Paris, Texas", "Georgia, country", "São Paulo (region)").
func Resolve(query string) (*Match, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, &NotFoundError{Query: query, Reason: "empty"}
	}
	if utf8.RuneCountInString(q) > 200 {
		return nil, &NotFoundError{Query: q[:min(len(q), 200)] + "…", Reason: "longer than any place name (200 characters at most)"}
	}
	if m, ok, err := resolvePoint(q); ok {
		return m, err
	}
	ix, err := load()
	if err != nil {
		return nil, err
	}
	return ix.resolve(q)
}

// Complete returns up to n place names starting with prefix (accents and
// case ignored), the most important places first.
func Complete(prefix string, n int) []string {
	ix, err := load()
	if err != nil || n <= 0 {
		return nil
	}
	p := Fold(prefix)
	if p == "" {
		return nil
	}
	return ix.prefix(p, n, func(r ref, name string) float64 {
		// Other names (translations, old names) after the names places
		// go by: "lis" completes to Lisbon before an Alexandria in Corsican.
		w := ix.importance(r)
		switch {
		case Fold(name) == Fold(ix.namesOf(r)[0]):
		case r.kind == KindCountry && ix.englishName(r, name):
		case r.kind == KindCountry:
			w = 1 // a country's name in another language: after the places
		default:
			w /= 100
		}
		return w
	})
}

// englishName reports whether name is among a country's first names
// (the converter puts the English ones first, before other languages',
// which are told apart by their letters).
func (ix *index) englishName(r ref, name string) bool {
	c := ix.data.Countries[r.index]
	for _, a := range c.Alt[:min(len(c.Alt), 4)] {
		if a == name {
			_, ascii := foldASCII(a)
			return ascii
		}
	}
	return false
}

// query is a parsed place query.
type query struct {
	name       string // folded
	kind       Kind   // "" for any
	qualifiers []string
}

// kindWords are the words that ask for one kind of place.
var kindWords = map[string]Kind{
	"country": KindCountry, "nation": KindCountry,
	"region": KindRegion, "state": KindRegion, "province": KindRegion, "prefecture": KindRegion,
	"county": KindRegion, "territory": KindRegion, "oblast": KindRegion, "department": KindRegion,
	"city": KindCity, "town": KindCity, "municipality": KindCity,
}

func parseQuery(q string) query {
	parts := strings.Split(q, ",")
	var out query
	first := strings.TrimSpace(parts[0])
	// "São Paulo (region)": a kind in parentheses.
	if i := strings.LastIndex(first, "("); i > 0 && strings.HasSuffix(first, ")") {
		if k, ok := kindWords[Fold(first[i+1:len(first)-1])]; ok {
			out.kind = k
			first = strings.TrimSpace(first[:i])
		}
	}
	out.name = Fold(first)
	for _, p := range parts[1:] {
		f := Fold(p)
		if f == "" {
			continue
		}
		if k, ok := kindWords[f]; ok {
			out.kind = k
			continue
		}
		out.qualifiers = append(out.qualifiers, f)
	}
	return out
}

func (ix *index) resolve(raw string) (*Match, error) {
	q := parseQuery(raw)
	if q.name == "" {
		return nil, &NotFoundError{Query: raw, Reason: "no name before the first comma"}
	}
	cands := ix.filter(ix.exact(q.name), q)
	fuzzy := false
	if len(cands) == 0 && len(q.qualifiers) > 0 {
		// A name with a comma of its own ("Bonaire, Sint Eustatius and Saba").
		if whole := ix.filter(ix.exact(Fold(raw)), query{kind: q.kind}); len(whole) > 0 {
			cands, q = whole, query{name: Fold(raw), kind: q.kind}
		}
	}
	if len(cands) == 0 {
		within, closest := ix.near(q.name, maxEdits(q.name), 3)
		for _, s := range within {
			cands = append(cands, ix.filter(ix.refsOfDistinct(s.id), q)...)
			if len(cands) > 0 {
				fuzzy = true
				break // the closest name that fits the qualifiers
			}
		}
		if len(cands) == 0 {
			return nil, ix.notFound(raw, q, within, closest)
		}
	}
	ix.rank(cands)
	best := cands[0]
	place, err := ix.place(best, true)
	if err != nil {
		return nil, err
	}
	m := &Match{Query: raw, Place: place, Fuzzy: fuzzy}
	if matched := ix.matchedName(best, q.name); matched != "" && Fold(matched) != Fold(place.Name) {
		m.Matched = matched
	}
	for _, c := range cands[1:] {
		if len(m.Alternatives) == maxAlternatives {
			m.More = len(cands) - 1 - maxAlternatives
			break
		}
		alt, err := ix.place(c, false)
		if err == nil {
			m.Alternatives = append(m.Alternatives, alt)
		}
	}
	if fuzzy {
		m.Notes = append(m.Notes, fmt.Sprintf("no place is named %q: read as %q, the closest name", strings.TrimSpace(strings.Split(raw, ",")[0]), ix.matchedName(best, "")))
	}
	return m, nil
}

// maxEdits is how many edits a misspelling may be from a name and still
// resolve: one for short names, two from 6 letters, three from 13.
func maxEdits(name string) int {
	switch n := utf8.RuneCountInString(name); {
	case n <= 3:
		return 0
	case n <= 5:
		return 1
	case n <= 12:
		return 2
	default:
		return 3
	}
}

// notFound builds the error for a query that matched nothing: the closest
// names, or why the qualifiers ruled the name's places out.
func (ix *index) notFound(raw string, q query, within, closest []scored) error {
	e := &NotFoundError{Query: raw}
	if named := ix.exact(q.name); len(named) > 0 {
		// The name exists; the qualifiers ruled it out.
		ix.rank(named)
		e.Reason = "none of the places of that name matches " + strings.Join(append(q.qualifiers, string(q.kind)), ", ")
		for _, r := range named[:min(len(named), 3)] {
			if p, err := ix.place(r, false); err == nil {
				e.Suggestions = append(e.Suggestions, p.Pick)
			}
		}
		return e
	}
	for _, s := range append(within, closest...) {
		if s.dist > maxEdits(q.name)+2 || 2*s.dist > utf8.RuneCountInString(q.name) {
			continue // too far to be what was meant
		}
		refs := ix.refsOfDistinct(s.id)
		ix.rank(refs)
		name := ix.matchedName(refs[0], ix.distinct(s.id))
		if !slices.Contains(e.Suggestions, name) {
			e.Suggestions = append(e.Suggestions, name)
		}
		if len(e.Suggestions) == 3 {
			break
		}
	}
	return e
}

// matchedName is the name of r, as written, whose fold is key ("" for
// its first name matching nothing: the primary name).
func (ix *index) matchedName(r ref, key string) string {
	names := ix.namesOf(r)
	for _, n := range names {
		if key != "" && Fold(n) == key {
			return n
		}
	}
	return names[0]
}

func (ix *index) namesOf(r ref) []string {
	switch r.kind {
	case KindCountry:
		c := ix.data.Countries[r.index]
		return append([]string{c.Name}, c.Alt...)
	case KindRegion:
		g := ix.data.Regions[r.index]
		return append([]string{g.Name}, g.Alt...)
	default:
		c := ix.data.Cities[r.index]
		return append([]string{c.Name}, c.Alt...)
	}
}

// filter keeps the places of the kind asked for that match every
// qualifier: a qualifier names the place's country (name, other name or
// ISO code) or its region.
func (ix *index) filter(refs []ref, q query) []ref {
	var out []ref
	for _, r := range refs {
		if q.kind != "" && r.kind != q.kind {
			continue
		}
		ok := true
		for _, qual := range q.qualifiers {
			if !ix.qualifies(r, qual) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func (ix *index) qualifies(r ref, qual string) bool {
	country, region := -1, -1
	var admin1 string
	switch r.kind {
	case KindCountry:
		return false // a country has nothing above it
	case KindRegion:
		country = ix.data.Regions[r.index].Country
	case KindCity:
		c := ix.data.Cities[r.index]
		country, region, admin1 = c.Country, c.Region, c.Admin1
	}
	if country >= 0 && slices.Contains(ix.countryKeys[qual], country) {
		return true
	}
	if admin1 != "" && Fold(admin1) == qual {
		return true
	}
	if region >= 0 {
		for _, n := range ix.namesOf(ref{KindRegion, int32(region)}) {
			if Fold(n) == qual {
				return true
			}
		}
	}
	return false
}

// importance ranks the places a name means: countries first, then by
// people (a region's are the embedded cities inside it).
func (ix *index) importance(r ref) float64 {
	switch r.kind {
	case KindCountry:
		return 1e12
	case KindRegion:
		return float64(ix.data.Regions[r.index].Population)
	default:
		c := ix.data.Cities[r.index]
		p := float64(c.Population)
		if c.Capital {
			p *= 2
		}
		return p
	}
}

// rank orders a name's places, the most likely meaning first: a country;
// then a city over the region of the same name it lies in (São Paulo, New
// York, Berlin: the name usually means the city); then by importance.
func (ix *index) rank(refs []ref) {
	score := make(map[ref]float64, len(refs))
	for _, r := range refs {
		score[r] = ix.importance(r)
	}
	for _, r := range refs {
		if r.kind != KindCity {
			continue
		}
		c := ix.data.Cities[r.index]
		for _, reg := range refs {
			// Only a city whose own name is the region's: Fortaleza, also
			// once called Ceará, does not outrank the state of Ceará.
			if reg.kind != KindRegion || score[r] > score[reg] || !ix.sameName(c.Name, reg) || !ix.holds(reg, c) {
				continue
			}
			score[r] = score[reg] * 1.01
		}
	}
	sort.SliceStable(refs, func(i, j int) bool {
		if score[refs[i]] != score[refs[j]] {
			return score[refs[i]] > score[refs[j]]
		}
		if refs[i].kind != refs[j].kind {
			return refs[i].kind < refs[j].kind
		}
		return refs[i].index < refs[j].index
	})
}

// sameName reports whether name is one of r's names.
func (ix *index) sameName(name string, r ref) bool {
	f := Fold(name)
	for _, n := range ix.namesOf(r) {
		if Fold(n) == f {
			return true
		}
	}
	return false
}

// holds reports whether region r holds city c: its own region, or a
// region grouping several (Valencia, the community, holds Valencia in the
// province of Valencia).
func (ix *index) holds(r ref, c City) bool {
	if c.Region == int(r.index) {
		return true
	}
	g := ix.data.Regions[r.index]
	if g.Country != c.Country || g.Outline < 0 {
		return false
	}
	mp, err := ix.data.Outlines[g.Outline].geometry()
	return err == nil && planar.MultiPolygonContains(mp, orb.Point{c.Lon, c.Lat})
}

// errNoOutline is a place stored without an outline (never, for the
// embedded data: the converter gives every country and region one).
var errNoOutline = errors.New("places: no outline")

// place makes the Place of r; withArea decodes its outline.
func (ix *index) place(r ref, withArea bool) (Place, error) {
	d := ix.data
	switch r.kind {
	case KindCountry:
		c := d.Countries[r.index]
		p := Place{Name: c.Name, Kind: KindCountry, Country: c.Name, CountryCode: c.ISO2, Left: c.Left,
			Pick: c.Name + " (country)"}
		return p, ix.outline(&p, c.Outline, "Natural Earth 1:10m admin-0 outline", withArea)
	case KindRegion:
		g := d.Regions[r.index]
		c := d.Countries[g.Country]
		p := Place{Name: g.Name, Kind: KindRegion, Country: c.Name, CountryCode: c.ISO2,
			Pick: g.Name + " (region), " + countryPick(c)}
		return p, ix.outline(&p, g.Outline, "Natural Earth 1:10m admin-1 outline", withArea)
	default:
		c := d.Cities[r.index]
		p := Place{Name: c.Name, Kind: KindCity, CountryCode: c.CountryISO, Region: c.Admin1, Population: c.Population,
			Lon: c.Lon, Lat: c.Lat}
		pick := []string{c.Name}
		if c.Admin1 != "" && Fold(c.Admin1) != Fold(c.Name) {
			pick = append(pick, c.Admin1)
		}
		if c.Country >= 0 {
			p.Country = d.Countries[c.Country].Name
			pick = append(pick, countryPick(d.Countries[c.Country]))
		} else if c.CountryISO != "" {
			pick = append(pick, c.CountryISO)
		}
		p.Pick = strings.Join(pick, ", ")
		if len(pick) == 2 && c.Admin1 != "" {
			p.Pick = c.Name + " (city), " + pick[1] // the region of the same name
		}
		return p, ix.cityArea(&p, c, withArea)
	}
}

func countryPick(c Country) string {
	if c.ISO2 != "" {
		return c.ISO2
	}
	return c.Name
}

func (ix *index) outline(p *Place, i int, source string, withArea bool) error {
	if i < 0 {
		return errNoOutline
	}
	o := &ix.data.Outlines[i]
	p.Source = source
	p.Extent = fmt.Sprintf("simplified to ±%s", metres(o.ToleranceM))
	p.BBox = o.BBox
	if withArea {
		mp, err := o.geometry()
		if err != nil {
			return err
		}
		p.Area = mp
	}
	return nil
}

func metres(m int) string {
	if m >= 1000 {
		return fmt.Sprintf("%.1f km", float64(m)/1000)
	}
	return fmt.Sprintf("%d m", m)
}

// A city's area is the outline of the region of the same name it lies in
// when that region is city-sized (Berlin, Vienna, Brussels), else a circle
// whose radius grows with the population: the area of the city at about
// 3,000 people per km², between minCityKm and maxCityKm.
const (
	peoplePerKm2 = 3000
	minCityKm    = 2
	maxCityKm    = 30
	// cityRegionKm2 is the largest region taken as a city's own outline,
	// and cityRegionDeg the widest (Tokyo's prefecture reaches islands
	// 1,000 km away).
	cityRegionKm2 = 2000
	cityRegionDeg = 2
)

// CityRadiusKm is the radius of the circle taken for a city of pop people.
func CityRadiusKm(pop int64) float64 {
	r := math.Sqrt(float64(pop) / peoplePerKm2 / math.Pi)
	return math.Round(min(max(r, minCityKm), maxCityKm)*10) / 10
}

func (ix *index) cityArea(p *Place, c City, withArea bool) error {
	if c.Region >= 0 {
		g := ix.data.Regions[c.Region]
		if ix.sameName(c.Name, ref{KindRegion, int32(c.Region)}) && g.Outline >= 0 {
			o := &ix.data.Outlines[g.Outline]
			b := o.BBox
			if b[2]-b[0] <= cityRegionDeg && b[2] >= b[0] && b[3]-b[1] <= cityRegionDeg {
				mp, err := o.geometry()
				if err != nil {
					return err
				}
				if areaKm2(mp) <= cityRegionKm2 {
					p.Source = "Natural Earth 1:10m admin-1 outline of " + g.Name + ", GeoNames point (CC BY 4.0)"
					p.Extent = fmt.Sprintf("the city's own region, simplified to ±%s", metres(o.ToleranceM))
					p.BBox = b
					if withArea {
						p.Area = mp
					}
					return nil
				}
			}
		}
	}
	r := CityRadiusKm(c.Population)
	p.RadiusKm = r
	p.Source = "GeoNames point (CC BY 4.0)"
	p.Extent = fmt.Sprintf("radius %g km from a population of %s", r, thousands(c.Population))
	if c.Population == 0 {
		p.Extent = fmt.Sprintf("radius %g km (no population recorded)", r)
	}
	circle, err := Circle(c.Lon, c.Lat, r)
	if err != nil {
		return err
	}
	p.BBox = bboxOf(circle)
	if withArea {
		p.Area = circle
	}
	return nil
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func areaKm2(mp orb.MultiPolygon) float64 {
	total := 0.0
	for _, p := range mp {
		lat := p.Bound().Center()[1] * math.Pi / 180
		total += math.Abs(planar.Area(p)) * 111.32 * 110.57 * math.Cos(lat)
	}
	return total
}

// Circle is a 48-sided polygon of radius km round lon, lat, cut at the
// antimeridian when it crosses it; near a pole it is clamped to ±89.9°.
func Circle(lon, lat, km float64) (orb.MultiPolygon, error) {
	const sides = 48
	ring := make(orb.Ring, 0, sides+1)
	dlat := km / 110.574
	cos := math.Max(math.Cos(lat*math.Pi/180), 0.01)
	dlon := km / (111.320 * cos)
	for i := range sides {
		a := 2 * math.Pi * float64(i) / sides
		y := min(max(lat+dlat*math.Sin(a), -89.9), 89.9)
		ring = append(ring, orb.Point{lon + min(dlon, 179)*math.Cos(a), y})
	}
	ring = append(ring, ring[0])
	shape, err := footprint.FromGeometry(orb.Polygon{ring})
	if err != nil {
		return nil, err
	}
	mp, _, err := shape.SplitAtAntimeridian()
	return mp, err
}

// bboxOf is the smallest [west, south, east, north] holding mp, whose
// longitudes lie within [-180, 180]: across the antimeridian (west > east)
// when that is narrower, as for Fiji, Russia or the United States.
func bboxOf(mp orb.MultiPolygon) [4]float64 {
	var lons []float64
	s, n := 90.0, -90.0
	for _, p := range mp {
		b := p.Bound()
		lons = append(lons, b.Min[0], b.Max[0])
		s, n = math.Min(s, b.Min[1]), math.Max(n, b.Max[1])
	}
	if len(lons) == 0 {
		return [4]float64{}
	}
	// The parts' longitude spans; the widest gap between them (round
	// the globe) is where the bbox is open.
	type span struct{ w, e float64 }
	var spans []span
	for _, p := range mp {
		b := p.Bound()
		spans = append(spans, span{b.Min[0], b.Max[0]})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].w < spans[j].w })
	var merged []span
	for _, sp := range spans {
		if len(merged) > 0 && sp.w <= merged[len(merged)-1].e {
			merged[len(merged)-1].e = math.Max(merged[len(merged)-1].e, sp.e)
			continue
		}
		merged = append(merged, sp)
	}
	w, e := merged[0].w, merged[len(merged)-1].e
	gap := (w + 360) - e // the gap across the antimeridian
	for i := 1; i < len(merged); i++ {
		if g := merged[i].w - merged[i-1].e; g > gap {
			gap, w, e = g, merged[i].w, merged[i-1].e
		}
	}
	return [4]float64{round4(w), round4(s), round4(e), round4(n)}
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
