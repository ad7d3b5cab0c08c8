package pixel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// makeItem is an Item with one asset per entry: href (a file of dir),
// and its band JSON (eo:bands, raster:bands) as given.
func makeItem(t *testing.T, id, collection, dir string, assets map[string]string) *stacclient.Item {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	am := map[string]any{}
	for key, spec := range assets {
		var a map[string]any
		if err := json.Unmarshal([]byte(spec), &a); err != nil {
			t.Fatalf("asset %s: %v", key, err)
		}
		a["href"] = filepath.Join(abs, a["href"].(string))
		a["type"] = "image/tiff; application=geotiff"
		am[key] = a
	}
	doc, _ := json.Marshal(map[string]any{"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": collection,
		"geometry": nil, "properties": map[string]any{"datetime": "2024-01-01T00:00:00Z"}, "links": []any{}, "assets": am})
	var item stacclient.Item
	if err := json.Unmarshal(doc, &item); err != nil {
		t.Fatal(err)
	}
	return &item
}

// The item's nodata replaces the file's: ND.tif's file says nodata 0,
// but its 0s are data when the catalog's raster:bands says nodata 65535.
func TestTheItemsNodataReplacesTheFiles(t *testing.T) {
	for _, tc := range []struct {
		name, rasterBands string
		valid             int
		from              string
	}{
		{"raster:bands nodata 65535", `,"raster:bands":[{"nodata":65535,"data_type":"uint16"}]`, 1024, "raster:bands"},
		{"no raster:bands: the file's nodata 0", ``, 1024 - 256, "the file's GDAL_NODATA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item := makeItem(t, "nd", "dem", "testdata/conventions", map[string]string{
				"data": `{"href":"ND.tif","eo:bands":[{"name":"height"}]` + tc.rasterBands + `}`})
			b, ok := FindBand(item, ItemBands(item), "data")
			if !ok {
				t.Fatal("no data band")
			}
			p, err := localEnv(t).Read(context.Background(), Request{Item: item, Bands: []Band{b}, AOI: squareAOI(t, 0)})
			if err != nil {
				t.Fatal(err)
			}
			st := p.Stats("data", p.Values[0], p.Valid[0])
			if st.Valid != tc.valid || p.Bands[0].NoDataFrom != tc.from {
				t.Fatalf("valid %d (want %d), nodata from %q (want %q)", st.Valid, tc.valid, p.Bands[0].NoDataFrom, tc.from)
			}
		})
	}
}

// An alpha band is validity: on rasterio's RGBA.uint16.tif the pixels
// where alpha is 0 have no value in any band, as GDAL's mask says; the
// means over the rest are GDAL's.
func TestAnAlphaBandMasksEveryBand(t *testing.T) {
	gdaltest.Need(t, "gdal_translate")
	dir := filepath.Join("..", "raster", "cog", "testdata", "rasterio")
	path := filepath.Join(dir, "RGBA.uint16.tif")
	item := makeItem(t, "rgba", "aerial", dir, map[string]string{
		"image": `{"href":"RGBA.uint16.tif","eo:bands":[{"name":"b","common_name":"blue"},{"name":"g","common_name":"green"},{"name":"r","common_name":"red"},{"name":"a"}]}`})
	env := &Env{LocalCatalog: mustAbs(t, filepath.Join(dir, "catalog.json"))}
	bands := ItemBands(item)
	red, ok := FindBand(item, bands, "red")
	if !ok || red.Index != 2 {
		t.Fatalf("red %+v", red)
	}
	// The whole raster, 1 m inside its edges.
	const w, h = 634, 411
	x0, y0, dx, dy := 733268.982660089386627, 4078301.243621778674424, 1.379983722201250, -1.379342872273276
	crs, err := geo.FromEPSG(32612)
	if err != nil {
		t.Fatal(err)
	}
	var ring orb.Ring
	for _, c := range [][2]float64{{x0 + 0.5, y0 + h*dy + 0.5}, {x0 + w*dx - 0.5, y0 + h*dy + 0.5}, {x0 + w*dx - 0.5, y0 - 0.5}, {x0 + 0.5, y0 - 0.5}, {x0 + 0.5, y0 + h*dy + 0.5}} {
		lon, lat, err := crs.ToLonLat(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, orb.Point{lon, lat})
	}
	p, err := env.Read(context.Background(), Request{Item: item, Bands: []Band{red}, AOI: orb.Polygon{ring}})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stats("red", p.Values[0], p.Valid[0])
	tmp := t.TempDir()
	read := func(args ...string) []byte {
		out := filepath.Join(tmp, fmt.Sprintf("%d.bin", len(args)))
		if msg, err := exec.Command("gdal_translate", append(append([]string{"-q", "-of", "ENVI"}, args...), path, out)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mask := read("-b", "mask")
	values := read("-b", "3")
	sum, n := 0.0, 0
	for i := range w * h {
		if mask[i] != 0 {
			sum += float64(uint16(values[2*i]) | uint16(values[2*i+1])<<8)
			n++
		}
	}
	if st.Pixels != w*h || st.Valid != n || math.Abs(st.Mean-sum/float64(n)) > 1e-6 {
		t.Fatalf("red: %d of %d valid, mean %.4f; GDAL's mask keeps %d of %d, mean %.4f", st.Valid, st.Pixels, st.Mean, n, w*h, sum/float64(n))
	}
	if st.ValidShare > 0.8 {
		t.Fatalf("valid_share %v: the alpha band's transparent pixels were counted", st.ValidShare)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An area reaching past the raster counts the part outside: an item
// covering half the area shows at most half of it valid, and the series'
// clear-share rule sees that.
func TestValidShareIsOfTheWholeArea(t *testing.T) {
	item := loadItem(t, esS2, esFiles("H_"))
	env := localEnv(t)
	red, _ := FindBand(item, ItemBands(item), "red")
	inside, err := env.Read(context.Background(), Request{Item: item, Bands: []Band{red}, Mask: true, AOI: squareAOI(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	in := inside.Stats("red", inside.Values[0], inside.Valid[0])
	if in.Estimated || in.AOIPixels != 1024 {
		t.Fatalf("inside: %+v", in)
	}
	// The same square widened east by its own width: half of it lies
	// outside the raster.
	aoi := squareAOI(t, 320)
	fp, err := footprintKm2(aoi)
	if err != nil {
		t.Fatal(err)
	}
	half, err := env.Read(context.Background(), Request{Item: item, Bands: []Band{red}, Mask: true, AOI: aoi, AOIKm2: fp})
	if err != nil {
		t.Fatal(err)
	}
	st := half.Stats("red", half.Values[0], half.Valid[0])
	if !st.Estimated || st.Valid != in.Valid || math.Abs(float64(st.AOIPixels)-2048) > 20 || math.Abs(st.ValidShare-in.ValidShare/2) > 0.01 {
		t.Fatalf("half outside: %+v (inside alone: valid %d share %v)", st, in.Valid, in.ValidShare)
	}
	if st.NoValue < 1000 {
		t.Fatalf("no_value %d: the part outside the raster is not counted", st.NoValue)
	}
}

// The pixels a read needs are charged to the decode budget before they
// are allocated: a budget smaller than the read refuses it at once.
func TestReadsAreChargedToTheDecodeBudget(t *testing.T) {
	item := loadItem(t, esS2, esFiles("H_"))
	env := localEnv(t)
	red, _ := FindBand(item, ItemBands(item), "red")
	env.Decode = workbudget.NewPixels(1000, "TEST_BUDGET", 0)
	_, err := env.Read(context.Background(), Request{Item: item, Bands: []Band{red}, Mask: true, AOI: squareAOI(t, 0)})
	var tooLarge *workbudget.TooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("err = %v, want a TooLargeError", err)
	}
	env.Decode = workbudget.NewPixels(1<<20, "TEST_BUDGET", 0)
	if _, err := env.Read(context.Background(), Request{Item: item, Bands: []Band{red}, Mask: true, AOI: squareAOI(t, 0)}); err != nil {
		t.Fatal(err)
	}
	if env.Decode.InUse() != 0 {
		t.Fatalf("%d units still held after the read", env.Decode.InUse())
	}
}

func footprintKm2(g orb.Geometry) (float64, error) {
	s, err := footprint.FromGeometry(g)
	if err != nil {
		return 0, err
	}
	a, err := footprint.NewArea(s)
	if err != nil {
		return 0, err
	}
	return a.Km2(), nil
}

// A band far finer than the grid is not read at full resolution: its
// source window is held to a small multiple of the grid's pixels, from a
// coarser overview when the file has one, else the read is refused
// before anything is allocated for it.
func TestAMuchFinerBandIsReadCoarserOrRefused(t *testing.T) {
	red := func(item *stacclient.Item) Band {
		b, _ := FindBand(item, ItemBands(item), "red")
		return b
	}
	files := esFiles("H_")
	files["scl"] = "SCL_FINE.tif"
	item := loadItem(t, esS2, files)
	_, err := localEnv(t).Read(context.Background(), Request{Item: item, Bands: []Band{red(item)}, Mask: true, AOI: squareAOI(t, 0)})
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != ErrTooFine || pe.Asset != "scl" {
		t.Fatalf("err = %v, want the scl asset refused as too fine", err)
	}
	files["scl"] = "SCL_FINE_OVR.tif"
	item = loadItem(t, esS2, files)
	p, err := localEnv(t).Read(context.Background(), Request{Item: item, Bands: []Band{red(item)}, Mask: true, AOI: squareAOI(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// The 1 m overview would be 320×320 px for a 32×32 px grid; the 16 m
	// one is read.
	if p.Mask == nil || p.Mask.ResampledFrom != 16 || p.Mask.Considered != 1024 {
		t.Fatalf("mask %+v", p.Mask)
	}
}

// A read's range requests, header reads included, are bounded: past the
// bound nothing more is sent and the error says which bound.
func TestAReadsRequestsAreBounded(t *testing.T) {
	item := loadItem(t, esS2, esFiles("H_"))
	env := localEnv(t)
	env.ReadRequests = 2 // three files, each read whole by its header request
	red, _ := FindBand(item, ItemBands(item), "red")
	nir, _ := FindBand(item, ItemBands(item), "nir")
	_, err := env.Read(context.Background(), Request{Item: item, Bands: []Band{red, nir}, Mask: true, AOI: squareAOI(t, 0)})
	var le *cog.LimitError
	if !errors.As(err, &le) || le.Limit != "RequestBudget" || le.Max != 2 {
		t.Fatalf("err = %v, want the read's request budget of 2 refusing it", err)
	}
}
