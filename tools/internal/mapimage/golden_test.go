package mapimage_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/golden"
	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/picture/picturetest"
)

// Golden maps: demo footprints drawn as map_items draws them
// (golden.MapCases), compared pixel by pixel with a tolerance
// (picturetest.CompareGolden); go generate ./... writes testdata.
// MAP_PREVIEW_DIR=dir also saves each render there, to look at.
func TestRenderMatchesGoldenMaps(t *testing.T) {
	for _, c := range golden.MapCases() {
		t.Run(c.Name, func(t *testing.T) {
			m, data, err := c.Render()
			if err != nil {
				t.Fatal(err)
			}
			if dir := os.Getenv("MAP_PREVIEW_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, c.Name+".png"), data, 0o644)
			}
			t.Logf("%s: %dx%d, %d bytes, scale %s, extent %v", c.Name, m.Image.Bounds().Dx(), m.Image.Bounds().Dy(), len(data), m.ScaleBar, m.Extent)
			picturetest.CompareGolden(t, filepath.Join("..", "..", "..", filepath.FromSlash(c.Golden())), data, golden.MapTolerance)
		})
	}
}

// demoTiles are the demo's Sentinel-2 tiles over Ceará.
func demoTiles(t testing.TB) []stacclient.Item {
	t.Helper()
	items, err := golden.DemoFootprints("S2B_24M", "sentinel-2-l2a")
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func TestRenderIsDeterministicAndRejectsNothing(t *testing.T) {
	spec, err := golden.MapSpec(demoTiles(t), []float64{-40.5, -5.3, -37.5, -3.5}, true)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mapimage.Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := mapimage.Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Image.Pix) != string(b.Image.Pix) {
		t.Error("two renders of the same spec differ")
	}
	if _, err := mapimage.Render(mapimage.Spec{}); err == nil {
		t.Error("an empty spec rendered")
	}
}

// BenchmarkRender100Footprints is the map benchmark: 100
// footprints (the demo's Sentinel-2 tiles repeated on a grid) with an AOI.
func BenchmarkRender100Footprints(b *testing.B) {
	base := demoTiles(b)
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
	spec, err := golden.MapSpec(items, []float64{-40.5, -12, -30, -3.5}, true)
	if err != nil {
		b.Fatal(err)
	}
	var png []byte
	for b.Loop() {
		m, err := mapimage.Render(spec)
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
