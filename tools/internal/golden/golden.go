// Package golden lists the images the visual tools' machinery renders from
// fixed inputs and pins in the repository: picture.Make's output for each
// test image (tools/internal/picture/testdata/golden) and mapimage.Render's
// maps of demo footprints (tools/internal/mapimage/testdata), and
// raster/plot's pictures of a synthetic scene (plot.go). The
// packages' tests render each one and compare it with the committed file
// within its tolerance (picturetest.CompareGolden); tools/internal/gen
// (go generate) writes a file when it is missing or beyond that tolerance.
package golden

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/mapimage"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
)

// File is one pinned image.
type File struct {
	Path      string  // from the repository root, slash-separated
	Tolerance float64 // the mean absolute difference per channel, in 8-bit levels, the tests accept
	Render    func() ([]byte, error)
}

// Files are every pinned image; root is the repository's root (the
// picture tests' inputs are read from it).
func Files(root string) []File {
	var files []File
	for _, c := range PictureCases() {
		files = append(files, File{Path: c.Golden(), Tolerance: PictureTolerance, Render: func() ([]byte, error) {
			p, err := c.Make(root)
			if err != nil {
				return nil, err
			}
			return p.Data, nil
		}})
	}
	for _, c := range MapCases() {
		files = append(files, File{Path: c.Golden(), Tolerance: MapTolerance, Render: func() ([]byte, error) {
			_, data, err := c.Render()
			return data, err
		}})
	}
	for _, c := range PlotCases() {
		files = append(files, File{Path: c.Golden(), Tolerance: MapTolerance, Render: func() ([]byte, error) {
			_, data, err := c.Encode()
			return data, err
		}})
	}
	return files
}

// Tolerances: encoders and resamplers may change a little between Go
// releases (and anti-aliasing between platforms); what a viewer sees must
// not.
const (
	PictureTolerance = 2.0
	MapTolerance     = 1.0
)

// PictureCase is one test image through picture.Make, with what Make must
// report about it.
type PictureCase struct {
	In       string // the test image, in tools/internal/picture/testdata
	MaxBytes int    // Options.MaxBytes; 0: the default budget
	// What Make must report: the output's MIME type and size, the source's
	// format and size.
	MIME, Format              string
	Width, Height             int
	SourceWidth, SourceHeight int
}

// PictureCases are the golden pictures.
func PictureCases() []PictureCase {
	return []PictureCase{
		{"scene.jpg", 0, picture.MIMEJPEG, "jpeg", 512, 384, 640, 480},
		{"tile-nodata.png", 0, picture.MIMEPNG, "png", 300, 300, 300, 300}, // transparency kept: PNG
		{"scene.webp", 0, picture.MIMEJPEG, "webp", 320, 240, 320, 240},
		{"scene.tif", 0, picture.MIMEJPEG, "tiff", 200, 150, 200, 150},
		{"gray16.tif", 0, picture.MIMEJPEG, "tiff", 120, 90, 120, 90},
		// A budget the PNG cannot meet: JPEG over white instead.
		{"tile-nodata.png", 20_000, picture.MIMEJPEG, "png", 300, 300, 300, 300},
	}
}

const pictureDir = "tools/internal/picture/testdata"

// Make runs picture.Make on the case's test image.
func (c PictureCase) Make(root string) (*picture.Picture, error) {
	in, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(pictureDir), c.In))
	if err != nil {
		return nil, err
	}
	return picture.Make(in, picture.Options{MaxBytes: c.MaxBytes})
}

// Golden is the pinned output's path: testdata/golden/<input><.jpg|.png>.
func (c PictureCase) Golden() string {
	ext := ".jpg"
	if c.MIME == picture.MIMEPNG {
		ext = ".png"
	}
	return pictureDir + "/golden/" + c.In + ext
}

// MapCase is one map of demo footprints, drawn as map_items does.
type MapCase struct {
	Name        string
	Prefix      string   // of the item ids drawn
	Collections []string // demo collections the items are read from
	AOI         []float64
	ByCloud     bool // colour by cloud cover, else by date
}

// MapCases are the golden maps.
func MapCases() []MapCase {
	return []MapCase{
		{"sentinel2-ceara-cloud", "S2B_24M", []string{"sentinel-2-l2a"}, []float64{-40.5, -5.3, -37.5, -3.5}, true},
		{"naip-vermont-date", "m_4", []string{"naip"}, []float64{-73.3, 43.9, -73.0, 44.1}, false},
		{"bering-sea", "", []string{"sentinel2_l1c"}, nil, false},
		{"whole-demo", "", []string{"sentinel-2-l2a", "sentinel-1-grd", "landsat-8-l1", "cop-dem-glo-30", "sentinel2_l1c"}, nil, false},
	}
}

// Golden is the pinned map's path.
func (c MapCase) Golden() string { return "tools/internal/mapimage/testdata/" + c.Name + ".png" }

// Render draws the case's map and encodes it as PNG.
func (c MapCase) Render() (*mapimage.Map, []byte, error) {
	items, err := DemoFootprints(c.Prefix, c.Collections...)
	if err != nil {
		return nil, nil, err
	}
	spec, err := MapSpec(items, c.AOI, c.ByCloud)
	if err != nil {
		return nil, nil, err
	}
	m, err := mapimage.Render(spec)
	if err != nil {
		return nil, nil, err
	}
	data, err := picture.EncodePNG(m.Image)
	return m, data, err
}

// DemoFootprints reads demo catalog items of the given collections whose
// id starts with prefix, sorted by datetime then id.
func DemoFootprints(prefix string, collections ...string) ([]stacclient.Item, error) {
	var items []stacclient.Item
	for _, c := range collections {
		paths, err := fs.Glob(demo.FS, path.Join(c, "items", "*.json"))
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			raw, err := fs.ReadFile(demo.FS, p)
			if err != nil {
				return nil, err
			}
			var it stacclient.Item
			if err := json.Unmarshal(raw, &it); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
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
	return items, nil
}

// MapSpec builds a spec the way map_items does: footprints placed in one
// frame, coloured by cloud cover or by date rank.
func MapSpec(items []stacclient.Item, aoi []float64, byCloud bool) (mapimage.Spec, error) {
	var shapes []footprint.Shape
	for _, it := range items {
		s, err := footprint.Parse(it.Geometry, it.BBox)
		if err != nil {
			return mapimage.Spec{}, fmt.Errorf("%s: %w", it.ID, err)
		}
		shapes = append(shapes, s)
	}
	var frame footprint.Frame
	var area footprint.Shape
	if aoi != nil {
		var err error
		if area, err = footprint.FromBBox(aoi); err != nil {
			return mapimage.Spec{}, err
		}
		frame = footprint.FrameAround(area)
	} else {
		frame = footprint.FrameFor(shapes)
	}
	spec := mapimage.Spec{Title: fmt.Sprintf("%d items", len(items))}
	if aoi != nil {
		spec.AOI = frame.Place(area).Polygons
	}
	for i, it := range items {
		tcol := float64(i) / float64(max(1, len(items)-1))
		if byCloud {
			cc, _ := it.PropertyFloat("eo:cloud_cover")
			tcol = cc / 100
		}
		ramp := mapimage.DateRamp
		if byCloud {
			ramp = mapimage.CloudRamp
		}
		spec.Footprints = append(spec.Footprints, mapimage.Footprint{Polygons: frame.Place(shapes[i]).Polygons, Color: ramp.At(tcol), Label: fmt.Sprint(i + 1)})
	}
	if byCloud {
		spec.Legend = &mapimage.Legend{Title: "cloud cover", Ramp: mapimage.CloudRamp, Low: "0%", High: "100%"}
	} else {
		spec.Legend = &mapimage.Legend{Title: "date", Ramp: mapimage.DateRamp, Low: "oldest", High: "newest"}
	}
	return spec, nil
}
