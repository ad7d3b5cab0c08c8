package pixel

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
)

// Band is one band of an item the engine can read: an asset, a band of
// its file, and what the item says about it.
type Band struct {
	AssetKey string
	// Index is the band's 0-based position in the asset's file.
	Index      int
	CommonName string
	Name       string          // eo:bands name (B04), "" when none
	Item       stacclient.Band // what the item says (calibration included)
}

// Label is how texts name the band: "red (asset red)" or "nir (asset
// B08, band 2)".
func (b Band) Label() string {
	name := b.CommonName
	if name == "" {
		name = b.AssetKey
	}
	s := name + " (asset " + b.AssetKey
	if b.Index > 0 {
		s += fmt.Sprintf(", band %d", b.Index+1)
	}
	return s + ")"
}

// Title is the band's short name: its common name, else its asset key.
func (b Band) Title() string {
	if b.CommonName != "" {
		return b.CommonName
	}
	return b.AssetKey
}

// ItemBands lists the item's bands that the item describes (eo:bands,
// STAC 1.1 bands), in asset key order.
func ItemBands(item *stacclient.Item) []Band {
	keys := make([]string, 0, len(item.Assets))
	for k := range item.Assets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Band
	for _, key := range keys {
		for _, b := range item.Assets[key].Bands() {
			if b.CommonName == "" && b.Name == "" {
				continue // raster:bands alone: calibration, no band identity
			}
			out = append(out, Band{AssetKey: key, Index: b.Index, CommonName: b.CommonName, Name: b.Name, Item: b})
		}
	}
	return out
}

// FindBand finds the band filling one of names (preferred first): by eo
// common name, then by asset key (Earth Search's "red", the Planetary
// Computer's "B04", a DEM's "data"), then by band name (B04). An asset
// found by key is its file's first band.
func FindBand(item *stacclient.Item, bands []Band, names ...string) (Band, bool) {
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		for _, b := range bands {
			if b.CommonName == n {
				return b, true
			}
		}
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		for key, a := range item.Assets {
			if !strings.EqualFold(key, n) || !IsGeoTIFF(a) {
				continue
			}
			for _, b := range bands {
				if b.AssetKey == key && b.Index == 0 {
					return b, true
				}
			}
			out := Band{AssetKey: key}
			if ab := a.Bands(); len(ab) > 0 {
				out.Item = ab[0]
			}
			return out, true
		}
	}
	for _, n := range names {
		for _, b := range bands {
			if b.Name != "" && strings.EqualFold(b.Name, strings.TrimSpace(n)) {
				return b, true
			}
		}
	}
	// A sensor's band designation (B08, SR_B5) where the catalog names
	// the band only by its common name, as Earth Search does: the same
	// question asked of either catalog finds the same band.
	for _, n := range names {
		if want := designatedBand(item, n); want != "" {
			for _, b := range bands {
				if b.CommonName == want || b.Name == want {
					return b, true
				}
			}
		}
	}
	return Band{}, false
}

// Band designations of the sensors whose catalogs differ in naming, by
// common name (STAC eo extension names; Sentinel-2's red-edge bands,
// which share one, by Earth Search's band names).
var (
	sentinel2Bands = map[string]string{"B01": "coastal", "B02": "blue", "B03": "green", "B04": "red", "B05": "rededge1",
		"B06": "rededge2", "B07": "rededge3", "B08": "nir", "B8A": "nir08", "B09": "nir09", "B11": "swir16", "B12": "swir22"}
	landsatOLIBands = map[string]string{"B1": "coastal", "B2": "blue", "B3": "green", "B4": "red", "B5": "nir08",
		"B6": "swir16", "B7": "swir22"}
	landsatTMBands = map[string]string{"B1": "blue", "B2": "green", "B3": "red", "B4": "nir08", "B5": "swir16",
		"B7": "swir22"}
)

// designatedBand is the common name (or band name) of the band a sensor
// designation names on this item's platform ("" when the platform is not
// one of these or the designation unknown). "B8", "SR_B4", "OLI_B4" and
// "b04" are read as B08, B4, B4 and B04.
func designatedBand(item *stacclient.Item, name string) string {
	d := strings.ToUpper(strings.TrimSpace(name))
	for _, prefix := range []string{"SR_", "ST_", "OLI_", "TM_", "ETM_"} {
		d = strings.TrimPrefix(d, prefix)
	}
	platform, _ := item.PropertyString("platform")
	constellation, _ := item.PropertyString("constellation")
	platform = strings.ToLower(platform + " " + constellation + " " + item.Collection)
	switch {
	case strings.Contains(platform, "sentinel-2") || strings.Contains(platform, "sentinel2"):
		if len(d) == 2 && d[0] == 'B' {
			d = "B0" + d[1:]
		}
		return sentinel2Bands[d]
	case strings.Contains(platform, "landsat-8") || strings.Contains(platform, "landsat-9"):
		return landsatOLIBands[strings.Replace(d, "B0", "B", 1)]
	case strings.Contains(platform, "landsat-4") || strings.Contains(platform, "landsat-5") || strings.Contains(platform, "landsat-7"):
		return landsatTMBands[strings.Replace(d, "B0", "B", 1)]
	}
	return ""
}

// CommonNames are the distinct common names of bands, in order.
func CommonNames(bands []Band) []string {
	var have []string
	for _, b := range bands {
		if b.CommonName != "" && !slices.Contains(have, b.CommonName) {
			have = append(have, b.CommonName)
		}
	}
	return have
}

// IsGeoTIFF says whether an asset may be read as a GeoTIFF.
func IsGeoTIFF(a stacclient.Asset) bool {
	mt := strings.ToLower(a.Type)
	if strings.HasPrefix(mt, "image/tiff") || strings.HasPrefix(mt, "image/geotiff") {
		return true
	}
	h := strings.ToLower(a.Href)
	if i := strings.IndexAny(h, "?#"); i >= 0 {
		h = h[:i]
	}
	return mt == "" && (strings.HasSuffix(h, ".tif") || strings.HasSuffix(h, ".tiff"))
}

// CloudMask is the item's cloud mask: Sentinel-2 L2A's scene
// classification (asset scl / SCL) or Landsat C2's QA_PIXEL (qa_pixel /
// QA_PIXEL). These are products' layers, not spectral bands, so they have
// no common name: they are found by the key both big catalogs use.
func CloudMask(item *stacclient.Item) (Band, mask.Kind, bool) {
	keys := make([]string, 0, len(item.Assets))
	for k := range item.Assets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if !IsGeoTIFF(item.Assets[key]) {
			continue
		}
		switch strings.ToLower(key) {
		case "scl":
			return Band{AssetKey: key, CommonName: "scl"}, mask.SCL, true
		case "qa_pixel":
			return Band{AssetKey: key, CommonName: "qa_pixel"}, mask.QAPixel, true
		}
	}
	return Band{}, "", false
}
