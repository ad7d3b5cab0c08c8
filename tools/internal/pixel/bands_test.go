package pixel

import "testing"

// A band asked for by its sensor designation is found in either catalog's
// layout: the Planetary Computer keys assets B08, Earth Search names them
// nir (and Landsat's OLI_B5 nir08).
func TestFindBandBySensorDesignation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		item, ask, wantAsset string
	}{
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "B08", "nir"},
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "b8", "nir"},
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "B04", "red"},
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "B8A", "nir08"},
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "B06", "rededge2"},
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "B12", "swir22"},
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "nir", "nir"},
		{"planetary-computer-S2A_MSIL2A_20190101T000001_R116_T60VUK_20201007T214652.json", "B08", "B08"},
		{"planetary-computer-S2A_MSIL2A_20190101T000001_R116_T60VUK_20201007T214652.json", "nir", "B08"},
		{"earth-search-LC08_L2SP_033032_20231008_02_T1.json", "B5", "nir08"},
		{"earth-search-LC08_L2SP_033032_20231008_02_T1.json", "SR_B4", "red"},
		{"earth-search-LC08_L2SP_033032_20231008_02_T1.json", "OLI_B2", "blue"},
	}
	for _, c := range cases {
		item := loadItem(t, c.item, nil)
		b, ok := FindBand(item, ItemBands(item), c.ask)
		if !ok || b.AssetKey != c.wantAsset {
			t.Errorf("%s: %s found %v, asset %q; want asset %q", c.item, c.ask, ok, b.AssetKey, c.wantAsset)
		}
	}
	// A designation of another sensor finds nothing (B10 is Landsat's
	// thermal band, which a Sentinel-2 item lacks; B09 of Landsat 8 does
	// not exist).
	for _, c := range []struct{ item, ask string }{
		{"earth-search-S2A_13TDE_20231008_0_L2A.json", "B10"},
		{"earth-search-LC08_L2SP_033032_20231008_02_T1.json", "B9"},
	} {
		item := loadItem(t, c.item, nil)
		if b, ok := FindBand(item, ItemBands(item), c.ask); ok {
			t.Errorf("%s: %s found asset %q, want none", c.item, c.ask, b.AssetKey)
		}
	}
}
