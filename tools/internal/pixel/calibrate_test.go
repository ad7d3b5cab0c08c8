package pixel

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// The calibration conventions of the real catalogs, each laid out as the
// catalog lays it out: a real Item of the catalog (testdata/items), its
// band assets pointed at GDAL-written COGs holding the same reflectances
// in that catalog's numbers (testdata/conventions/make.py), and the
// properties each convention turns on. The reference is numpy's NDVI of
// the reflectances written (expected.json).

type expected struct {
	ClearPixels               int                `json:"clear_pixels"`
	NDVIMean                  float64            `json:"ndvi_mean"`
	NDVIVegetation            float64            `json:"ndvi_vegetation"`
	BandMeans                 map[string]float64 `json:"band_means"`
	NDVIMeanOffsetOnHarmonsed float64            `json:"ndvi_mean_offset_on_harmonised"`
	NDVIMeanRawUnshifted      float64            `json:"ndvi_mean_raw_unshifted"`
}

func loadExpected(t *testing.T) expected {
	t.Helper()
	b, err := os.ReadFile("testdata/conventions/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// loadItem reads a real Item and points the named assets at files of
// testdata/conventions (absolute paths: the env reads them as a local
// catalog's files).
func loadItem(t *testing.T, name string, files map[string]string) *stacclient.Item {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "items", name))
	if err != nil {
		t.Fatal(err)
	}
	var item stacclient.Item
	if err := json.Unmarshal(b, &item); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "conventions"))
	if err != nil {
		t.Fatal(err)
	}
	for key, file := range files {
		a, ok := item.Assets[key]
		if !ok {
			t.Fatalf("%s has no asset %s", name, key)
		}
		a.Href = filepath.Join(dir, file)
		item.Assets[key] = a
	}
	return &item
}

func localEnv(t *testing.T) *Env {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "conventions"))
	if err != nil {
		t.Fatal(err)
	}
	return &Env{LocalCatalog: filepath.Join(dir, "catalog.json")}
}

// squareAOI is the scene's square 1 m inside its edges (every pixel
// centre inside, nothing outside the raster), widened east by extra
// metres.
func squareAOI(t *testing.T, extra float64) orb.Polygon {
	t.Helper()
	crs, err := geo.FromEPSG(32613)
	if err != nil {
		t.Fatal(err)
	}
	var ring orb.Ring
	for _, c := range [][2]float64{{478001, 4437681}, {478319 + extra, 4437681}, {478319 + extra, 4437999}, {478001, 4437999}, {478001, 4437681}} {
		lon, lat, err := crs.ToLonLat(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, orb.Point{lon, lat})
	}
	return orb.Polygon{ring}
}

func setProps(item *stacclient.Item, props map[string]any) {
	for k, v := range props {
		if v == nil {
			delete(item.Properties, k)
			continue
		}
		item.Properties[k] = v
	}
}

func stripRasterBands(item *stacclient.Item) {
	for k, a := range item.Assets {
		delete(a.Extra, "raster:bands")
		item.Assets[k] = a
	}
}

var (
	esS2      = "earth-search-S2A_13TDE_20231008_0_L2A.json"
	pcS2      = "planetary-computer-S2A_MSIL2A_20190101T000001_R116_T60VUK_20201007T214652.json"
	esLandsat = "earth-search-LC08_L2SP_033032_20231008_02_T1.json"
)

func esFiles(prefix string) map[string]string {
	return map[string]string{"blue": prefix + "B02.tif", "green": prefix + "B03.tif", "red": prefix + "B04.tif", "nir": prefix + "B08.tif", "scl": "SCL.tif"}
}

func pcFiles(prefix string) map[string]string {
	return map[string]string{"B02": prefix + "B02.tif", "B03": prefix + "B03.tif", "B04": prefix + "B04.tif", "B08": prefix + "B08.tif", "SCL": "SCL.tif"}
}

func TestCalibrationConventionsGiveTheRightNDVI(t *testing.T) {
	want := loadExpected(t)
	ndvi, err := index.Lookup("ndvi")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		item  func(t *testing.T) *stacclient.Item
		check func(t *testing.T, c Calibration)
	}{
		{"earth-search harmonised, flag true, raster:bands offset -0.1", func(t *testing.T) *stacclient.Item {
			return loadItem(t, esS2, esFiles("H_"))
		}, func(t *testing.T, c Calibration) {
			if c.Overridden || c.Guessed || c.Suspect || c.Used.Offset != 0 || !strings.Contains(c.Evidence, "boa_offset_applied true") {
				t.Errorf("%+v", c)
			}
		}},
		{"earth-search mis-tagged: flag false, baseline 04.00, numbers harmonised", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, esS2, esFiles("H_"))
			setProps(it, map[string]any{"earthsearch:boa_offset_applied": false, "s2:processing_baseline": "04.00", "datetime": "2022-10-23T14:10:00Z"})
			return it
		}, func(t *testing.T, c Calibration) {
			if !c.Overridden || c.Used.Offset != 0 || c.Metadata.Offset != -0.1 || c.Other == nil || c.Other.IndexMean == nil ||
				math.Abs(*c.Other.IndexMean-want.NDVIMeanOffsetOnHarmonsed) > 1e-3 {
				t.Errorf("%+v other %+v", c, c.Other)
			}
		}},
		{"earth-search mis-tagged in 2025: flag false, baseline 05.11", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, esS2, esFiles("H_"))
			setProps(it, map[string]any{"earthsearch:boa_offset_applied": false, "s2:processing_baseline": "05.11", "datetime": "2025-08-08T18:50:00Z"})
			return it
		}, func(t *testing.T, c Calibration) {
			if !c.Overridden || c.Used.Offset != 0 {
				t.Errorf("%+v", c)
			}
		}},
		{"earth-search collection 1: raw numbers, offset -0.1, no flag", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, esS2, esFiles("R_"))
			it.Collection = "sentinel-2-c1-l2a"
			setProps(it, map[string]any{"earthsearch:boa_offset_applied": nil, "s2:processing_baseline": "05.10"})
			return it
		}, func(t *testing.T, c Calibration) {
			if c.Overridden || c.Suspect || c.Used.Offset != -0.1 {
				t.Errorf("%+v", c)
			}
		}},
		{"planetary computer baseline 05.10: raw numbers, no raster:bands", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, pcS2, pcFiles("R_"))
			setProps(it, map[string]any{"s2:processing_baseline": "05.10", "datetime": "2023-08-03T17:52:49Z"})
			return it
		}, func(t *testing.T, c Calibration) {
			if c.Overridden || c.Suspect || c.Guessed || c.Used.Offset != -0.1 || c.Used.Scale != 0.0001 || !strings.Contains(c.Evidence, "s2:processing_baseline 05.10") {
				t.Errorf("%+v", c)
			}
		}},
		{"planetary computer baseline 02.12 (2019): no offset, no raster:bands", func(t *testing.T) *stacclient.Item {
			return loadItem(t, pcS2, pcFiles("H_"))
		}, func(t *testing.T, c Calibration) {
			if c.Overridden || c.Suspect || c.Used.Offset != 0 || c.Used.Scale != 0.0001 {
				t.Errorf("%+v", c)
			}
		}},
		{"sentinel-2 without any metadata, raw numbers, sensed 2023", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, pcS2, pcFiles("R_"))
			setProps(it, map[string]any{"s2:processing_baseline": nil, "datetime": "2023-08-03T17:52:49Z"})
			return it
		}, func(t *testing.T, c Calibration) {
			if !c.Guessed || c.Used.Offset != -0.1 || c.Other == nil || c.Other.IndexMean == nil || math.Abs(*c.Other.IndexMean-want.NDVIMeanRawUnshifted) > 1e-3 {
				t.Errorf("%+v other %+v", c, c.Other)
			}
		}},
		{"sentinel-2 without any metadata, harmonised numbers, sensed 2023", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, pcS2, pcFiles("H_"))
			setProps(it, map[string]any{"s2:processing_baseline": nil, "datetime": "2023-08-03T17:52:49Z"})
			return it
		}, func(t *testing.T, c Calibration) {
			if c.Used.Offset != 0 || c.Suspect {
				t.Errorf("%+v", c)
			}
		}},
		{"landsat collection 2 level-2 with raster:bands", func(t *testing.T) *stacclient.Item {
			return loadItem(t, esLandsat, map[string]string{"red": "L_B04.tif", "nir08": "L_B08.tif", "qa_pixel": "L_QA_PIXEL.tif"})
		}, func(t *testing.T, c Calibration) {
			if c.Convention != "landsat-c2-l2" || c.Overridden || c.Suspect {
				t.Errorf("%+v", c)
			}
		}},
		{"landsat collection 2 level-2 without raster:bands", func(t *testing.T) *stacclient.Item {
			it := loadItem(t, esLandsat, map[string]string{"red": "L_B04.tif", "nir08": "L_B08.tif", "qa_pixel": "L_QA_PIXEL.tif"})
			stripRasterBands(it)
			return it
		}, func(t *testing.T, c Calibration) {
			if c.Convention != "landsat-c2-l2" || c.Suspect || !strings.Contains(c.Evidence, "product definition") {
				t.Errorf("%+v", c)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			item := tc.item(t)
			env := localEnv(t)
			p, _, st, err := env.IndexOver(context.Background(), Request{Item: item, AOI: squareAOI(t, 0)}, ndvi)
			if err != nil {
				t.Fatal(err)
			}
			if st.Valid != want.ClearPixels || math.Abs(st.Mean-want.NDVIMean) > 1e-3 {
				t.Errorf("NDVI mean %.5f over %d px, want %.5f over %d (numpy)", st.Mean, st.Valid, want.NDVIMean, want.ClearPixels)
			}
			if st.Max > 1 || st.Min < -1 {
				t.Errorf("NDVI range %v..%v", st.Min, st.Max)
			}
			tc.check(t, p.Calibration)
		})
	}
}

// A band measured alone (aoi_statistics of red) tells harmonised numbers
// from raw ones by the reflectances it would make negative.
func TestCalibrationOfABandAloneOverridesAMisTag(t *testing.T) {
	want := loadExpected(t)
	item := loadItem(t, esS2, esFiles("H_"))
	setProps(item, map[string]any{"earthsearch:boa_offset_applied": false, "s2:processing_baseline": "04.00"})
	all := ItemBands(item)
	red, ok := FindBand(item, all, "red")
	if !ok {
		t.Fatal("no red band")
	}
	p, err := localEnv(t).Read(context.Background(), Request{Item: item, Bands: []Band{red}, Mask: true, AOI: squareAOI(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stats("red", p.Values[0], p.Valid[0])
	if !p.Calibration.Overridden || math.Abs(st.Mean-want.BandMeans["B04"]) > 1e-4 {
		t.Fatalf("red mean %v (want %v), calibration %+v", st.Mean, want.BandMeans["B04"], p.Calibration)
	}
	if o := p.Calibration.Other; o == nil || len(o.BandMeans) != 1 || math.Abs(o.BandMeans[0].Mean-(want.BandMeans["B04"]-0.1)) > 1e-4 {
		t.Fatalf("other reading %+v", p.Calibration.Other)
	}
}

// A reading no convention rescues is reported suspect, not silently used.
func TestCalibrationSaysWhenNoReadingIsPlausible(t *testing.T) {
	item := loadItem(t, esS2, esFiles("H_"))
	item.Collection = "some-reflectance-product"
	setProps(item, map[string]any{"earthsearch:boa_offset_applied": nil, "s2:processing_baseline": nil, "s2:product_type": nil, "platform": "unknown"})
	for k, a := range item.Assets {
		var rb []map[string]any
		if json.Unmarshal(a.Extra["raster:bands"], &rb) == nil && len(rb) > 0 && rb[0]["offset"] != nil {
			rb[0]["offset"] = -0.5
			a.Extra["raster:bands"], _ = json.Marshal(rb)
			item.Assets[k] = a
		}
	}
	if b := item.Assets["red"].Bands(); len(b) != 1 || b[0].Offset == nil || *b[0].Offset != -0.5 {
		t.Fatalf("the test's raster:bands edit did not take: %+v", b)
	}
	ndvi, _ := index.Lookup("ndvi")
	p, _, _, err := localEnv(t).IndexOver(context.Background(), Request{Item: item, AOI: squareAOI(t, 0)}, ndvi)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Calibration; !c.Suspect || c.Convention != "" || c.Checks[0].ImpossibleShare() < 0.5 {
		t.Fatalf("%+v", c)
	}
}
