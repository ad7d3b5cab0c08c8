package pixel

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// The season fixtures (testdata/season/make.py): a year of two adjacent
// Sentinel-2 tiles, and two tiles across a UTM zone boundary, with the
// mosaics, composites and changes GDAL and numpy make of them.

type seasonTarget struct {
	EPSG          int        `json:"epsg"`
	GT            [6]float64 `json:"gt"`
	Width, Height int
}

type seasonChange struct {
	Both        int     `json:"both"`
	EarlierOnly int     `json:"earlier_only"`
	LaterOnly   int     `json:"later_only"`
	Classes     []int   `json:"classes"`
	Mean        float64 `json:"mean"`
}

type seasonExpected struct {
	Arrays map[string]struct {
		Offset int   `json:"offset"`
		Shape  []int `json:"shape"`
	} `json:"arrays"`
	Year struct {
		Target    seasonTarget `json:"target"`
		AOIPixels int          `json:"aoi_pixels"`
		Dates     []struct {
			Date        string    `json:"date"`
			Items       []string  `json:"items"`
			ClearShares []float64 `json:"clear_shares"`
			Valid       int       `json:"valid"`
			Mean        float64   `json:"mean"`
		} `json:"dates"`
		ChangeWinterSummer seasonChange `json:"change_winter_summer"`
		Change0315to0715   seasonChange `json:"change_0315_0715"`
	} `json:"year"`
	Zone struct {
		Target      seasonTarget `json:"target"`
		AOIPixels   int          `json:"aoi_pixels"`
		ClearShares []float64    `json:"clear_shares"`
	} `json:"zone"`
	blob []float32
}

func (e *seasonExpected) array(t *testing.T, name string) []float64 {
	t.Helper()
	a, ok := e.Arrays[name]
	if !ok {
		t.Fatalf("no expected array %s", name)
	}
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(e.blob[a.Offset+i])
	}
	return out
}

const seasonDir = "testdata/season"

func loadSeason(t *testing.T) *seasonExpected {
	t.Helper()
	var e seasonExpected
	b, err := os.ReadFile(filepath.Join(seasonDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(seasonDir, "expected.bin.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	e.blob = make([]float32, len(raw)/4)
	if err := binary.Read(bytes.NewReader(raw), binary.LittleEndian, e.blob); err != nil {
		t.Fatal(err)
	}
	return &e
}

// seasonItems are the fixtures' items by id, hrefs made absolute.
func seasonItems(t *testing.T) map[string]*stacclient.Item {
	t.Helper()
	dir, err := filepath.Abs(seasonDir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "items.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*stacclient.Item{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var it stacclient.Item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		for k, a := range it.Assets {
			a.Href = filepath.Join(dir, a.Href)
			it.Assets[k] = a
		}
		out[it.ID] = &it
	}
	return out
}

func seasonAOI(t *testing.T, name string) orb.Polygon {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(seasonDir, "aoi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	g, err := geojson.UnmarshalGeometry(m[name])
	if err != nil {
		t.Fatal(err)
	}
	return g.Geometry().(orb.Polygon)
}

func seasonEnv(t *testing.T) *Env {
	t.Helper()
	dir, err := filepath.Abs(seasonDir)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{LocalCatalog: filepath.Join(dir, "catalog.json"), Decode: workbudget.NewPixels(workbudget.DefaultPixels, "TEST", time.Second)}
}

// seasonAcquisitions groups every year item.
func seasonAcquisitions(t *testing.T, items map[string]*stacclient.Item, prefix string) []Acquisition {
	t.Helper()
	var list []*stacclient.Item
	for id, it := range items {
		for _, p := range strings.Split(prefix, "|") {
			if strings.HasPrefix(id, p) {
				list = append(list, it)
			}
		}
	}
	acqs, undated := Acquisitions(list)
	if len(undated) > 0 {
		t.Fatalf("undated items %v", undated)
	}
	return acqs
}

func checkTarget(t *testing.T, got *Target, want seasonTarget) {
	t.Helper()
	g := got.Grid
	if g.CRS.EPSG != want.EPSG || g.Width != want.Width || g.Height != want.Height || g.GeoTransform != want.GT {
		t.Fatalf("target EPSG:%d %v %d×%d, want EPSG:%d %v %d×%d", g.CRS.EPSG, g.GeoTransform, g.Width, g.Height, want.EPSG, want.GT, want.Width, want.Height)
	}
}

// compareLayer compares values with the reference pixel by pixel: the
// same pixels without a value, the others within tol.
func compareLayer(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		gn, wn := math.IsNaN(got[i]), math.IsNaN(want[i])
		if gn != wn || (!gn && math.Abs(got[i]-want[i]) > tol) {
			if bad < 5 {
				t.Errorf("%s: pixel %d is %v, want %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d pixels differ from the reference", what, bad, len(got))
	}
}

// Each date's mosaic of the two tiles agrees with GDAL's warp of each
// tile onto the same grid and numpy's pick of the clearest tile, pixel
// for pixel: the grid, which tile each pixel came from, its NDVI.
func TestMosaicsMatchGDALAndNumpy(t *testing.T) {
	want := loadSeason(t)
	items := seasonItems(t)
	aoi := seasonAOI(t, "year")
	env := seasonEnv(t)
	ndvi, _ := index.Lookup("ndvi")
	all := seasonAcquisitions(t, items, "S2_A_|S2_C_")
	if len(all) != 12 {
		t.Fatalf("%d acquisitions of the year, want 12", len(all))
	}
	first := items["S2_A_20230115"]
	red, _ := FindBand(first, ItemBands(first), "red")
	tg, err := env.PlanTarget(context.Background(), first, []Band{red}, aoi, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkTarget(t, tg, want.Year.Target)
	inside := want.array(t, "year_inside")
	for k, d := range want.Year.Dates {
		acq := all[k]
		if acq.Day.Format(time.DateOnly) != d.Date || strings.Join(acq.IDs(), ",") != strings.Join(d.Items, ",") {
			t.Fatalf("acquisition %d: %s %v, want %s %v", k, acq.Key(), acq.IDs(), d.Date, d.Items)
		}
		m, values, st, err := env.MosaicIndex(context.Background(), MosaicRequest{Items: acq.Items, AOI: aoi, Grid: tg}, ndvi)
		if err != nil {
			t.Fatalf("%s: %v", d.Date, err)
		}
		for i, in := range m.Inside {
			if in != (inside[i] == 1) {
				t.Fatalf("%s: pixel %d inside %v, GDAL's rasterisation says %v", d.Date, i, in, inside[i])
			}
		}
		compareLayer(t, d.Date+" ndvi", values, want.array(t, "year_ndvi_"+d.Date), 1e-6)
		src := want.array(t, "year_source_"+d.Date)
		for i, s := range m.Source {
			if float64(s) != src[i] {
				t.Fatalf("%s: pixel %d from item %d, want %v", d.Date, i, s, src[i])
			}
		}
		for j, share := range d.ClearShares {
			if math.Abs(m.Items[j].ClearShare-share) > 1e-12 {
				t.Fatalf("%s: item %s clear share %v, want %v", d.Date, m.Items[j].Item.ID, m.Items[j].ClearShare, share)
			}
		}
		if st.AOIPixels != want.Year.AOIPixels || st.Valid != d.Valid || math.Abs(st.Mean-d.Mean) > 1e-9 || st.Estimated {
			t.Fatalf("%s: stats %+v, want valid %d of %d mean %v", d.Date, st, d.Valid, want.Year.AOIPixels, d.Mean)
		}
		m.Release()
	}
	if env.Decode.InUse() != 0 {
		t.Fatalf("%d units of the decode budget still held after the mosaics", env.Decode.InUse())
	}
}

// Across a UTM zone boundary the tile of the other zone is resampled onto
// the first tile's lattice by nearest neighbour, as gdalwarp -r near -et 0
// does.
func TestAMosaicAcrossUTMZonesMatchesGDAL(t *testing.T) {
	want := loadSeason(t)
	items := seasonItems(t)
	aoi := seasonAOI(t, "zone")
	env := seasonEnv(t)
	ndvi, _ := index.Lookup("ndvi")
	acqs := seasonAcquisitions(t, items, "S2_zone_")
	if len(acqs) != 1 || len(acqs[0].Items) != 2 {
		t.Fatalf("acquisitions %+v", acqs)
	}
	w := items["S2_zone_W"]
	red, _ := FindBand(w, ItemBands(w), "red")
	tg, err := env.PlanTarget(context.Background(), w, []Band{red}, aoi, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkTarget(t, tg, want.Zone.Target)
	m, values, st, err := env.MosaicIndex(context.Background(), MosaicRequest{Items: acqs[0].Items, AOI: aoi, Grid: tg}, ndvi)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if st.AOIPixels != want.Zone.AOIPixels {
		t.Fatalf("aoi pixels %d, want %d", st.AOIPixels, want.Zone.AOIPixels)
	}
	compareLayer(t, "zone ndvi", values, want.array(t, "zone_ndvi"), 1e-6)
	// The east tile (zone 14N) was resampled; the west one read as it is.
	for _, it := range m.Items {
		resampled := it.Read.Bands[0].ResampledFrom
		if (it.Item.ID == "S2_zone_E") != (resampled == 10) {
			t.Fatalf("%s resampled from %v m", it.Item.ID, resampled)
		}
	}
}

// Composites are numpy's nanmedian of the dates' clear values, and count
// the clear observations per pixel.
func TestCompositesMatchNanmedian(t *testing.T) {
	want := loadSeason(t)
	items := seasonItems(t)
	aoi := seasonAOI(t, "year")
	env := seasonEnv(t)
	ndvi, _ := index.Lookup("ndvi")
	all := seasonAcquisitions(t, items, "S2_A_|S2_C_")
	first := items["S2_A_20230115"]
	red, _ := FindBand(first, ItemBands(first), "red")
	tg, err := env.PlanTarget(context.Background(), first, []Band{red}, aoi, 0)
	if err != nil {
		t.Fatal(err)
	}
	pick := func(months ...string) []Acquisition {
		var out []Acquisition
		for _, a := range all {
			for _, m := range months {
				if strings.HasPrefix(a.Day.Format(time.DateOnly), m) {
					out = append(out, a)
				}
			}
		}
		return out
	}
	indexBands := func(it *stacclient.Item) ([]Band, error) { return IndexBands(it, ndvi) }
	c, err := env.Composite(context.Background(), CompositeRequest{Acquisitions: all, Bands: indexBands, Names: []string{"ndvi"}, Index: &ndvi, AOI: aoi, Grid: tg})
	if err != nil {
		t.Fatal(err)
	}
	compareLayer(t, "ndvi composite of the year", c.Values[0], want.array(t, "year_composite_ndvi_all"), 1e-6)
	counts := want.array(t, "year_composite_count_all")
	for i, n := range c.Count {
		if c.Inside[i] && float64(n) != counts[i] {
			t.Fatalf("pixel %d: %d observations, want %v", i, n, counts[i])
		}
	}
	lo, med, hi := c.ObservationRange()
	if lo < 1 || hi > 12 || med < lo || med > hi {
		t.Fatalf("observations %d/%d/%d", lo, med, hi)
	}
	c.Release()
	summer := pick("2023-06", "2023-07", "2023-08")
	c, err = env.Composite(context.Background(), CompositeRequest{Acquisitions: summer, Bands: func(it *stacclient.Item) ([]Band, error) {
		all := ItemBands(it)
		r, _ := FindBand(it, all, "red")
		n, _ := FindBand(it, all, "nir")
		return []Band{r, n}, nil
	}, Names: []string{"red", "nir"}, AOI: aoi, Grid: tg})
	if err != nil {
		t.Fatal(err)
	}
	compareLayer(t, "red composite of the summer", c.Values[0], want.array(t, "year_composite_red_summer"), 1e-6)
	compareLayer(t, "nir composite of the summer", c.Values[1], want.array(t, "year_composite_nir_summer"), 1e-6)
	c.Release()
	if env.Decode.InUse() != 0 {
		t.Fatalf("%d units of the decode budget still held after the composites", env.Decode.InUse())
	}
}

// The change between two composites, and between two dates, is numpy's
// difference where both sides are clear; pixels clear on one side only
// are counted apart, and the classes count the area's pixels.
func TestChangeMatchesNumpy(t *testing.T) {
	want := loadSeason(t)
	items := seasonItems(t)
	aoi := seasonAOI(t, "year")
	env := seasonEnv(t)
	ndvi, _ := index.Lookup("ndvi")
	all := seasonAcquisitions(t, items, "S2_A_|S2_C_")
	first := items["S2_A_20230115"]
	red, _ := FindBand(first, ItemBands(first), "red")
	tg, err := env.PlanTarget(context.Background(), first, []Band{red}, aoi, 0)
	if err != nil {
		t.Fatal(err)
	}
	indexBands := func(it *stacclient.Item) ([]Band, error) { return IndexBands(it, ndvi) }
	composite := func(from, to int) []float64 {
		c, err := env.Composite(context.Background(), CompositeRequest{Acquisitions: all[from:to], Bands: indexBands, Names: []string{"ndvi"}, Index: &ndvi, AOI: aoi, Grid: tg})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		return c.Values[0]
	}
	mosaic := func(k int) ([]float64, Area) {
		m, values, _, err := env.MosaicIndex(context.Background(), MosaicRequest{Items: all[k].Items, AOI: aoi, Grid: tg}, ndvi)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Release()
		return values, m.Area()
	}
	check := func(what string, c *Change, w seasonChange, ref []float64) {
		t.Helper()
		compareLayer(t, what, c.Values, ref, 1e-6)
		if c.Both != w.Both || c.EarlierOnly != w.EarlierOnly || c.LaterOnly != w.LaterOnly || math.Abs(c.Stats.Mean-w.Mean) > 1e-6 {
			t.Fatalf("%s: both %d earlier only %d later only %d mean %v, want %+v", what, c.Both, c.EarlierOnly, c.LaterOnly, c.Stats.Mean, w)
		}
		for k, cl := range c.Classes {
			if cl.Pixels != w.Classes[k] {
				t.Fatalf("%s: class %d (%s) has %d px, want %d (all %+v want %v)", what, k, cl.Label(), cl.Pixels, w.Classes[k], c.Classes, w.Classes)
			}
		}
		if c.Both+c.EarlierOnly+c.LaterOnly+c.Neither != want.Year.AOIPixels {
			t.Fatalf("%s: the counts do not add up to the area", what)
		}
	}
	thresholds := []float64{-0.2, -0.1, 0.1, 0.2}
	_, area := mosaic(0)
	c, err := Diff(area, "ndvi", composite(0, 3), composite(5, 8), thresholds)
	if err != nil {
		t.Fatal(err)
	}
	check("winter to summer", c, want.Year.ChangeWinterSummer, want.array(t, "year_change_winter_summer"))
	march, _ := mosaic(2)
	july, _ := mosaic(6)
	c, err = Diff(area, "ndvi", march, july, thresholds)
	if err != nil {
		t.Fatal(err)
	}
	check("2023-03-15 to 2023-07-15", c, want.Year.Change0315to0715, want.array(t, "year_change_0315_0715"))
	if c.EarlierOnly == 0 || c.LaterOnly == 0 {
		t.Fatal("the dates' clouds should leave pixels clear on one side only")
	}
}

// A composite charges its stack of observations to the decode budget
// before it reads anything: a budget too small for it refuses at once.
func TestACompositeChargesItsStackFirst(t *testing.T) {
	items := seasonItems(t)
	aoi := seasonAOI(t, "year")
	env := seasonEnv(t)
	ndvi, _ := index.Lookup("ndvi")
	all := seasonAcquisitions(t, items, "S2_A_|S2_C_")
	first := items["S2_A_20230115"]
	red, _ := FindBand(first, ItemBands(first), "red")
	tg, err := env.PlanTarget(context.Background(), first, []Band{red}, aoi, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := tg.Grid.Width * tg.Grid.Height
	env.Decode = workbudget.NewPixels(int64(12*n), "TEST", time.Second) // the stack alone
	_, err = env.Composite(context.Background(), CompositeRequest{Acquisitions: all, Bands: func(it *stacclient.Item) ([]Band, error) { return IndexBands(it, ndvi) },
		Names: []string{"ndvi"}, Index: &ndvi, AOI: aoi, Grid: tg})
	var tl *workbudget.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want the stack refused", err)
	}
	if max := CompositePixels(env.Decode.Size(), 12, 1); max >= n {
		t.Fatalf("CompositePixels %d for a budget that cannot hold %d", max, n)
	}
}

func TestAcquisitionsGroupByCollectionPlatformAndUTCDay(t *testing.T) {
	mk := func(id, coll, platform, dt string) *stacclient.Item {
		props := map[string]any{"datetime": dt}
		if platform != "" {
			props["platform"] = platform
		}
		return &stacclient.Item{ID: id, Collection: coll, Properties: props}
	}
	items := []*stacclient.Item{
		mk("b", "s2", "sentinel-2a", "2024-06-01T10:30:05Z"),
		mk("a", "s2", "Sentinel-2A", "2024-06-01T10:30:01Z"),
		mk("c", "s2", "sentinel-2b", "2024-06-01T10:40:00Z"),
		mk("d", "s2-c1", "sentinel-2a", "2024-06-01T10:30:01Z"),
		mk("e", "s2", "sentinel-2a", "2024-06-02T00:00:00Z"),
		mk("f", "s2", "sentinel-2a", "2024-05-31T23:59:59Z"),
		{ID: "g", Collection: "s2", Properties: map[string]any{}},
	}
	acqs, undated := Acquisitions(items)
	var keys []string
	for _, a := range acqs {
		keys = append(keys, a.Key()+"="+strings.Join(a.IDs(), "+"))
	}
	got := strings.Join(keys, " | ")
	wantKeys := "2024-05-31 sentinel-2a (s2)=f | 2024-06-01 sentinel-2a (s2)=a+b | 2024-06-01 sentinel-2b (s2)=c | " +
		"2024-06-01 sentinel-2a (s2-c1)=d | 2024-06-02 sentinel-2a (s2)=e"
	if got != wantKeys || len(undated) != 1 || undated[0].ID != "g" {
		t.Fatalf("got %s (undated %d)\nwant %s", got, len(undated), wantKeys)
	}
}

// Every prefix of SpreadOrder is spread over the range: the first k
// indexes leave no gap wider than about twice n/k.
func TestSpreadOrderPrefixesAreEvenSamples(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 24, 71, 365} {
		order := SpreadOrder(n)
		seen := map[int]bool{}
		for _, i := range order {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("n=%d: order %v is not a permutation", n, order)
			}
			seen[i] = true
		}
		if len(order) != n {
			t.Fatalf("n=%d: %d indexes", n, len(order))
		}
		for k := 2; k <= n; k++ {
			prefix := append([]int(nil), order[:k]...)
			sortInts(prefix)
			widest := 0
			for j := 1; j < len(prefix); j++ {
				widest = max(widest, prefix[j]-prefix[j-1])
			}
			if limit := 2*((n-1)/(k-1)) + 2; widest > limit {
				t.Fatalf("n=%d, first %d: a gap of %d (at most %d)", n, k, widest, limit)
			}
		}
	}
	if got := EvenSample(71, 5); len(got) != 5 || got[0] != 0 || got[4] != 70 || got[2] != 35 {
		t.Fatalf("EvenSample(71, 5) = %v", got)
	}
}

func sortInts(v []int) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// A mosaic whose item fails to read fails as a whole, naming the item,
// and gives back everything the other items' reads held; an item whose
// raster misses the area gives nothing and is said to.
func TestAMosaicFailsWholeAndGivesBackItsBudget(t *testing.T) {
	items := seasonItems(t)
	aoi := seasonAOI(t, "year")
	env := seasonEnv(t)
	ndvi, _ := index.Lookup("ndvi")
	a, c := items["S2_A_20230115"], items["S2_C_20230115"]
	red, _ := FindBand(a, ItemBands(a), "red")
	tg, err := env.PlanTarget(context.Background(), a, []Band{red}, aoi, 0)
	if err != nil {
		t.Fatal(err)
	}
	broken := *c
	broken.Assets = map[string]stacclient.Asset{}
	for k, v := range c.Assets {
		broken.Assets[k] = v
	}
	nir := broken.Assets["nir"]
	nir.Href = filepath.Join(filepath.Dir(nir.Href), "missing.tif")
	broken.Assets["nir"] = nir
	_, _, _, err = env.MosaicIndex(context.Background(), MosaicRequest{Items: []*stacclient.Item{a, &broken}, AOI: aoi, Grid: tg}, ndvi)
	var pe *Error
	if !errors.As(err, &pe) || pe.Item != "S2_C_20230115" {
		t.Fatalf("err = %v, want the broken item named", err)
	}
	if env.Decode.InUse() != 0 {
		t.Fatalf("%d units still held after a failed mosaic", env.Decode.InUse())
	}
	zone := items["S2_zone_W"]
	m, _, _, err := env.MosaicIndex(context.Background(), MosaicRequest{Items: []*stacclient.Item{a, zone}, AOI: aoi, Grid: tg}, ndvi)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if !m.Items[1].Missed || m.Items[1].Pixels != 0 || m.Items[0].Pixels == 0 {
		t.Fatalf("items %+v", m.Items)
	}
}
