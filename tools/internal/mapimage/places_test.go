package mapimage

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/tools/internal/canvas"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

func box(w, s, e, n float64) orb.MultiPolygon {
	return orb.MultiPolygon{{{{w, s}, {e, s}, {e, n}, {w, n}, {w, s}}}}
}

// preview saves a render when MAP_PREVIEW_DIR is set, to look at.
func preview(t *testing.T, m *Map) {
	if dir := os.Getenv("MAP_PREVIEW_DIR"); dir != "" {
		data, err := picture.EncodePNG(m.Image)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(dir, t.Name()+".png"), data, 0o644)
	}
}

// The locator inset sat in the map's top-right corner,
// over whatever footprint was there. Footprints padded by 6 % reach every
// corner, so it now sits in the footer, outside the map.
func TestLocatorNeverCoversFootprints(t *testing.T) {
	red := color.NRGBA{0xe0, 0x10, 0x10, 0xff}
	// One footprint over most of the map, the top-right corner included.
	m, err := Render(Spec{Footprints: []Footprint{{Polygons: box(3.0, 51.8, 6.5, 52.6), Color: red}}})
	if err != nil {
		t.Fatal(err)
	}
	preview(t, m)
	// The inset's land colour is its own: none of it may be on the map.
	insetLand := color.RGBA{0xc9, 0xc2, 0xb3, 0xff}
	frame := image.Rect(0, headerHeight, Width, m.Image.Bounds().Dy()-footerHeight)
	if !m.Frame.Empty() {
		frame = m.Frame
	}
	covered := 0
	for y := frame.Min.Y; y < frame.Max.Y; y++ {
		for x := frame.Min.X; x < frame.Max.X; x++ {
			if m.Image.RGBAAt(x, y) == insetLand {
				covered++
			}
		}
	}
	if covered > 0 {
		t.Errorf("%d pixels of the locator inset's land are on the map, over the footprint", covered)
	}
	if m.Locator.Empty() || m.Locator.Overlaps(m.Frame) || !m.Locator.In(m.Image.Bounds()) {
		t.Errorf("locator at %v, map frame %v, image %v: want it on the image, outside the frame", m.Locator, m.Frame, m.Image.Bounds())
	}
}

// The locator names and shades the country the map lies in: the one
// holding its centre, or, with the centre at sea, its first place's; none
// in mid-ocean.
func TestLocatorNamesTheCountry(t *testing.T) {
	blue := color.NRGBA{0x30, 0x70, 0xc0, 0xff}
	for _, c := range []struct {
		bbox [4]float64
		iso  string
		// A large country shows shaded; a small one is a pixel or two,
		// under the extent's mark: its name says it.
		large bool
	}{
		{[4]float64{-39.3, -4.4, -38.3, -3.5}, "BR", true},
		{[4]float64{-9.6, 38.3, -8.4, 39.2}, "PT", false}, // the centre in the Tagus estuary
		{[4]float64{170, -20, 185, -10}, "FJ", false},     // across the antimeridian, the centre at sea
		{[4]float64{-150.3, 10.0, -150.0, 10.2}, "", false},
	} {
		m, err := Render(Spec{Footprints: []Footprint{{Polygons: box(c.bbox[0], c.bbox[1], c.bbox[2], c.bbox[3]), Color: blue}}})
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if c.iso != "" {
			p, ok, err := places.CountryByCode(c.iso)
			if err != nil || !ok {
				t.Fatalf("%s: %v", c.iso, err)
			}
			want = p.Name
		}
		if m.Country != want {
			t.Errorf("map of %v: locator names %q, want %q", c.bbox, m.Country, want)
		}
		shaded := 0
		for y := m.Locator.Min.Y; y < m.Locator.Max.Y; y++ {
			for x := m.Locator.Min.X; x < m.Locator.Max.X; x++ {
				if m.Image.RGBAAt(x, y) == color.RGBA(locatorCountry) {
					shaded++
				}
			}
		}
		if (shaded > 0) != c.large {
			t.Errorf("map of %v: %d pixels of the locator shaded as its country %q", c.bbox, shaded, want)
		}
	}
}

// At city scale the map was beige and nameless. Places
// inside the frame are named, never on a footprint number; with none
// inside, the nearest is named at the edge with distance and direction.
func TestPlacesNameTheFrame(t *testing.T) {
	blue := color.NRGBA{0x30, 0x70, 0xc0, 0xff}
	// Footprints over the Randstad; the first is centred on Amsterdam, so
	// its number sits where Amsterdam's dot would.
	spec := Spec{Footprints: []Footprint{
		{Polygons: box(4.65, 52.22, 5.15, 52.52), Color: blue, Label: "1"},
		{Polygons: box(4.0, 51.8, 4.6, 52.2), Color: blue, Label: "2"},
	}}
	m, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	preview(t, m)
	if !slices.Contains(m.Places, "The Hague") {
		t.Errorf("places named %q, want The Hague among them", m.Places)
	}

	// The same drawing steps, to compare the boxes.
	proj := fit(mustExtent(t, spec))
	cv := canvas.New(Width, int(proj.top+proj.h)+footerWithLocator, paper)
	labels := drawLabels(cv, proj, spec.Footprints)
	fp, _ := findPlaces(proj)
	placed, _ := drawPlaces(cv, proj, fp, slices.Clone(labels))
	if len(placed) == 0 {
		t.Fatal("no place named")
	}
	for i, p := range placed {
		for _, b := range p.boxes {
			for _, l := range labels {
				if b.Overlaps(l) {
					t.Errorf("place %q at %v covers a footprint number at %v", p.text, b, l)
				}
			}
			for _, q := range placed[i+1:] {
				for _, c := range q.boxes {
					if b.Overlaps(c) {
						t.Errorf("places %q and %q overlap", p.text, q.text)
					}
				}
			}
			if !b.In(image.Rect(0, int(proj.top), Width, int(proj.top+proj.h))) {
				t.Errorf("place %q at %v is outside the map", p.text, b)
			}
		}
	}

	// Off Portugal's coast no city is inside: the nearest town of 100,000
	// people is named at the edge, with its distance and direction from
	// the map's centre, not the nearer coastal village.
	m, err = Render(Spec{Footprints: []Footprint{{Polygons: box(-11.3, 38.9, -11.0, 39.1), Color: blue, Label: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	preview(t, m)
	c := m.Extent.Center()
	near, km, err := places.NearestCity(c[0], c[1], edgeLabelMinPopulation)
	if err != nil {
		t.Fatal(err)
	}
	village, villageKm, err := places.NearestCity(c[0], c[1], 0)
	if err != nil {
		t.Fatal(err)
	}
	if village.Population >= edgeLabelMinPopulation || villageKm >= km {
		t.Fatalf("the nearest place is %s (%d people, %.0f km): the case wants a nearer small one", village.Name, village.Population, villageKm)
	}
	if want := []string{fmt.Sprintf("%s %s E", labelName(near.Name), roundKm(km))}; !slices.Equal(m.Places, want) {
		t.Errorf("places %q, want %q (not %s %s)", m.Places, want, village.Name, roundKm(villageKm))
	}
	// Mid-Pacific: the nearest place is too far to help; the locator says where.
	m, err = Render(Spec{Footprints: []Footprint{{Polygons: box(-150.3, 10.0, -150.0, 10.2), Color: blue}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Places) != 0 {
		t.Errorf("places %q in the mid-Pacific, want none", m.Places)
	}
}

// A map of one Sentinel-2 tile (about 100 km) named no town inside it:
// the 243 places of Natural Earth 1:110m are world cities. The gazetteer's
// cities name the towns in the frame, each at its gazetteer position.
func TestPlacesNameTheTownsOfATile(t *testing.T) {
	world, err := Places()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][4]float64{
		"Lisbon":    {-9.6, 38.3, -8.4, 39.2},
		"Fortaleza": {-39.3, -4.4, -38.3, -3.5}, // a tile of the Ceará coast
	} {
		t.Run(name, func(t *testing.T) {
			blue := color.NRGBA{0x30, 0x70, 0xc0, 0xff}
			m, err := Render(Spec{Footprints: []Footprint{{Polygons: box(b[0], b[1], b[2], b[3]), Color: blue, Label: "1"}}})
			if err != nil {
				t.Fatal(err)
			}
			preview(t, m)
			if m.PlacesErr != nil {
				t.Errorf("PlacesErr %v with the gazetteer there", m.PlacesErr)
			}
			inFrame, err := places.CitiesIn(m.Extent.Min[0], m.Extent.Min[1], m.Extent.Max[0], m.Extent.Max[1], 1000)
			if err != nil {
				t.Fatal(err)
			}
			notWorld := 0
			for _, named := range m.Places {
				i := slices.IndexFunc(inFrame, func(l places.Landmark) bool { return labelName(l.Name) == named })
				if i < 0 {
					t.Errorf("%q is no gazetteer city inside the frame %v", named, m.Extent)
					continue
				}
				if l := inFrame[i]; !m.Extent.Contains(orb.Point{l.Lon, l.Lat}) {
					t.Errorf("%q at %g, %g is outside the frame %v", named, l.Lon, l.Lat, m.Extent)
				}
				if !slices.ContainsFunc(world, func(p Place) bool { return p.Name == named }) {
					notWorld++
				}
			}
			if len(m.Places) < 4 || notWorld < 3 {
				t.Errorf("places named %q: want at least 4, 3 of them towns the 1:110m places lack", m.Places)
			}
		})
	}
}

// A build whose gazetteer is missing (places_beside, without its file)
// still names places, from the 1:110m set, and says so; with no source at
// all the map is drawn without names.
func TestPlacesFallBackWithoutTheGazetteer(t *testing.T) {
	saved, savedSources := gazetteer, placeSources
	t.Cleanup(func() { gazetteer, placeSources = saved, savedSources })
	missing := errors.New("the gazetteer is missing")
	gazetteer.citiesIn = func(float64, float64, float64, float64, int) ([]places.Landmark, error) { return nil, missing }
	gazetteer.nearestCity = func(float64, float64, int64) (places.Landmark, float64, error) { return places.Landmark{}, 0, missing }
	gazetteer.countryAt = func(float64, float64) (places.Place, bool, error) { return places.Place{}, false, missing }
	gazetteer.countryByCode = func(string) (places.Place, bool, error) { return places.Place{}, false, missing }

	blue := color.NRGBA{0x30, 0x70, 0xc0, 0xff}
	// Lake Champlain: no place of the 1:110m set inside; Ottawa is nearest.
	spec := Spec{Footprints: []Footprint{{Polygons: box(-73.3, 43.9, -73.0, 44.1), Color: blue, Label: "1"}}}
	m, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	preview(t, m)
	if want := []string{"Ottawa 260 km NW"}; !slices.Equal(m.Places, want) {
		t.Errorf("places %q, want %q", m.Places, want)
	}
	if !errors.Is(m.PlacesErr, missing) {
		t.Errorf("PlacesErr %v, want the gazetteer's failure for the caller to log", m.PlacesErr)
	}
	if m.Country != "" || m.Locator.Empty() {
		t.Errorf("locator at %v naming %q, want one naming no country", m.Locator, m.Country)
	}
	proj := fit(mustExtent(t, spec))
	cv := canvas.New(Width, int(proj.top+proj.h)+footerWithLocator, paper)
	fp, _ := findPlaces(proj)
	if _, source := drawPlaces(cv, proj, fp, nil); !strings.Contains(source, "Natural Earth") {
		t.Errorf("places from %q, want Natural Earth named", source)
	}
	// Lisbon, the one place of the 1:110m set in its tile.
	m, err = Render(Spec{Footprints: []Footprint{{Polygons: box(-9.6, 38.3, -8.4, 39.2), Color: blue, Label: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Lisbon"}; !slices.Equal(m.Places, want) {
		t.Errorf("places %q, want %q", m.Places, want)
	}

	placeSources = placeSources[:1]
	m, err = Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Places) != 0 {
		t.Errorf("places %q with no source", m.Places)
	}
}

func mustExtent(t *testing.T, spec Spec) orb.Bound {
	t.Helper()
	ext, ok := extentOf(spec)
	if !ok {
		t.Fatal("no extent")
	}
	return ext
}

func TestEmbeddedPlacesParse(t *testing.T) {
	ps, err := Places()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 243 || ps[0].Name != "Tokyo" || ps[0].ScaleRank != 0 {
		t.Errorf("%d places, first %+v", len(ps), ps[0])
	}
	for _, bad := range []string{"", "name\tcountry\tlon\tlat\tscalerank\tpop_max\nX\tY\t200\t0\t1\t2\n", "oops\n"} {
		if _, err := parsePlaces([]byte(bad)); err == nil {
			t.Errorf("parsePlaces(%q) accepted", bad)
		}
	}
}

func TestCompassAndDistanceWords(t *testing.T) {
	for b, want := range map[float64]string{0: "N", 22: "N", 23: "NE", 314: "NW", 338: "N", 180: "S", 250: "W"} {
		if got := compass(b); got != want {
			t.Errorf("compass(%v) = %s, want %s", b, got, want)
		}
	}
	for km, want := range map[float64]string{85.4: "85 km", 234: "230 km", 1638: "1,640 km"} {
		if got := roundKm(km); got != want {
			t.Errorf("roundKm(%v) = %s, want %s", km, got, want)
		}
	}
}

// Translucent fills laid over one another blended into
// colours on no legend. Where footprints overlap, the top one's colour
// shows, as where it lies alone.
func TestOverlapsShowTheTopFootprintsColour(t *testing.T) {
	red, blue := color.NRGBA{0xe0, 0x10, 0x10, 0xff}, color.NRGBA{0x10, 0x30, 0xe0, 0xff}
	// Mid-Atlantic, all ocean: the same basemap under every point.
	m, err := Render(Spec{Footprints: []Footprint{
		{Polygons: box(-30, 10, -28, 12), Color: red},
		{Polygons: box(-29, 10, -27, 12), Color: blue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	preview(t, m)
	at := func(lon, lat float64) color.RGBA {
		p := fit(m.Extent) // the extent Render used fills the map exactly
		q := p.point(orb.Point{lon, lat})
		return m.Image.RGBAAt(int(q.X), int(q.Y))
	}
	// Points away from the graticule (every 0.5°) and the outlines.
	alone, overlap := at(-27.3, 11.3), at(-28.7, 11.3)
	d := func(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }
	if d(alone.R, overlap.R) > 6 || d(alone.G, overlap.G) > 6 || d(alone.B, overlap.B) > 6 {
		t.Errorf("blue over red shows %v, blue alone %v: the overlap is a colour on no legend", overlap, alone)
	}
}
