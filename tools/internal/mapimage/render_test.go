package mapimage

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/picture/picturetest"
)

// demoFootprints reads demo catalog items of the given collections whose
// id starts with prefix, sorted by datetime then id.
func demoFootprints(t testing.TB, prefix string, collections ...string) []stacclient.Item {
	t.Helper()
	var items []stacclient.Item
	for _, c := range collections {
		paths, err := fs.Glob(demo.FS, path.Join(c, "items", "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			raw, err := fs.ReadFile(demo.FS, p)
			if err != nil {
				t.Fatal(err)
			}
			var it stacclient.Item
			if err := json.Unmarshal(raw, &it); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(it.ID, prefix) {
				items = append(items, it)
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, _ := items[i].Datetime()
		b, _ := items[j].Datetime()
		if !a.Equal(b) {
			return a.Before(b)
		}
		return items[i].ID < items[j].ID
	})
	return items
}

// specOf builds a spec the way map_items does: footprints placed in one
// frame, coloured by cloud cover or by date rank.
func specOf(t testing.TB, items []stacclient.Item, aoi []float64, byCloud bool) Spec {
	t.Helper()
	var shapes []footprint.Shape
	for _, it := range items {
		s, err := footprint.Parse(it.Geometry, it.BBox)
		if err != nil {
			t.Fatal(err)
		}
		shapes = append(shapes, s)
	}
	var frame footprint.Frame
	var area footprint.Shape
	if aoi != nil {
		var err error
		if area, err = footprint.FromBBox(aoi); err != nil {
			t.Fatal(err)
		}
		frame = footprint.FrameAround(area)
	} else {
		frame = footprint.FrameFor(shapes)
	}
	spec := Spec{Title: fmt.Sprintf("%d items", len(items))}
	if aoi != nil {
		spec.AOI = frame.Place(area).Polygons
	}
	for i, it := range items {
		tcol := float64(i) / float64(max(1, len(items)-1))
		if byCloud {
			cc, _ := it.PropertyFloat("eo:cloud_cover")
			tcol = cc / 100
		}
		ramp := DateRamp
		if byCloud {
			ramp = CloudRamp
		}
		spec.Footprints = append(spec.Footprints, Footprint{Polygons: frame.Place(shapes[i]).Polygons, Color: ramp.At(tcol), Label: fmt.Sprint(i + 1)})
	}
	if byCloud {
		spec.Legend = &Legend{Title: "cloud cover", Ramp: CloudRamp, Low: "0%", High: "100%"}
	} else {
		spec.Legend = &Legend{Title: "date", Ramp: DateRamp, Low: "oldest", High: "newest"}
	}
	return spec
}

func TestRenderMatchesGoldenMaps(t *testing.T) {
	cases := []struct {
		name    string
		items   []stacclient.Item
		aoi     []float64
		byCloud bool
	}{
		{"sentinel2-ceara-cloud", demoFootprints(t, "S2B_24M", "sentinel-2-l2a"), []float64{-40.5, -5.3, -37.5, -3.5}, true},
		{"naip-vermont-date", demoFootprints(t, "m_4", "naip"), []float64{-73.3, 43.9, -73.0, 44.1}, false},
		{"bering-sea", demoFootprints(t, "", "sentinel2_l1c"), nil, false},
		{"whole-demo", demoFootprints(t, "", "sentinel-2-l2a", "sentinel-1-grd", "landsat-8-l1", "cop-dem-glo-30", "sentinel2_l1c"), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Render(specOf(t, c.items, c.aoi, c.byCloud))
			if err != nil {
				t.Fatal(err)
			}
			data, err := picture.EncodePNG(m.Image)
			if err != nil {
				t.Fatal(err)
			}
			if dir := os.Getenv("MAP_PREVIEW_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, c.name+".png"), data, 0o644)
			}
			t.Logf("%s: %dx%d, %d bytes, scale %s, extent %v", c.name, m.Image.Bounds().Dx(), m.Image.Bounds().Dy(), len(data), m.ScaleBar, m.Extent)
			picturetest.CompareGolden(t, filepath.Join("testdata", c.name+".png"), data, 1.0)
		})
	}
}

func TestBasemapDecodes(t *testing.T) {
	w, err := Basemap()
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Land) < 100 || len(w.Coast) < 100 || len(w.Borders) < 200 {
		t.Fatalf("basemap has %d land polygons, %d coast lines, %d borders: too few for Natural Earth 110m", len(w.Land), len(w.Coast), len(w.Borders))
	}
	// Longitudes are continuous: no edge jumps across the map.
	for _, l := range append(append([]orb.LineString{}, w.Coast...), w.Borders...) {
		for i := 1; i < len(l); i++ {
			if d := l[i][0] - l[i-1][0]; d > 180 || d < -180 {
				t.Fatalf("an edge jumps %.1f° of longitude", d)
			}
		}
	}
	// Antarctica is closed along the South Pole, and no coast runs along it.
	var south *orb.Polygon
	for i, p := range w.Land {
		if p.Bound().Min[1] == -90 {
			south = &w.Land[i]
		}
	}
	if south == nil || (*south).Bound().Max[0]-(*south).Bound().Min[0] < 359 {
		t.Fatalf("no land polygon closed at 90°S spanning all longitudes (Antarctica)")
	}
	for _, l := range w.Coast {
		for _, q := range l {
			if q[1] < -85.7 {
				t.Fatalf("a coastline reaches %.2f°S: the polar closing edge was drawn as coast", -q[1])
			}
		}
	}
}

func TestRenderIsDeterministicAndRejectsNothing(t *testing.T) {
	spec := specOf(t, demoFootprints(t, "S2B_24M", "sentinel-2-l2a"), []float64{-40.5, -5.3, -37.5, -3.5}, true)
	a, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Image.Pix) != string(b.Image.Pix) {
		t.Error("two renders of the same spec differ")
	}
	if _, err := Render(Spec{}); err == nil {
		t.Error("an empty spec rendered")
	}
}

func TestNiceDistanceAndDegrees(t *testing.T) {
	for km, want := range map[float64]string{0.37: "200 m", 3.9: "2 km", 48: "20 km", 51: "50 km", 730: "500 km"} {
		if _, got := niceDistance(km); got != want {
			t.Errorf("niceDistance(%g) = %q, want %q", km, got, want)
		}
	}
	for _, c := range []struct {
		v        float64
		pos, neg string
		step     float64
		want     string
	}{{-73.25, "E", "W", 0.05, "73.25°W"}, {190, "E", "W", 5, "170°W"}, {180, "E", "W", 10, "180°"}, {-4.5, "N", "S", 0.5, "4.5°S"}, {0, "N", "S", 1, "0°"}} {
		if got := degrees(c.v, c.pos, c.neg, c.step); got != c.want {
			t.Errorf("degrees(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}

// BenchmarkRender100Footprints is the map benchmark: 100
// footprints (the demo's Sentinel-2 tiles repeated on a grid) with an AOI.
func BenchmarkRender100Footprints(b *testing.B) {
	base := demoFootprints(b, "S2B_24M", "sentinel-2-l2a")
	var items []stacclient.Item
	for i := 0; len(items) < 100; i++ {
		it := base[i%len(base)]
		shift := float64(i/len(base)) * 0.5 // march the tiles south-east
		s, _ := footprint.Parse(it.Geometry, it.BBox)
		var moved orb.MultiPolygon
		for _, p := range s.Polygons {
			q := orb.Polygon{}
			for _, r := range p {
				nr := orb.Ring{}
				for _, pt := range r {
					nr = append(nr, orb.Point{pt[0] + shift, pt[1] - shift})
				}
				q = append(q, nr)
			}
			moved = append(moved, q)
		}
		raw, _ := json.Marshal(map[string]any{"type": "MultiPolygon", "coordinates": moved})
		it.Geometry = raw
		it.ID = fmt.Sprintf("%s-%d", it.ID, i)
		items = append(items, it)
	}
	spec := specOf(b, items, []float64{-40.5, -12, -30, -3.5}, true)
	var png []byte
	for b.Loop() {
		m, err := Render(spec)
		if err != nil {
			b.Fatal(err)
		}
		if png, err = picture.EncodePNG(m.Image); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(spec.Footprints)), "footprints")
	b.ReportMetric(float64(len(png)), "png-bytes")
}
