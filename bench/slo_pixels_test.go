package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// Pixel tools in the SLO runs: the harness's collection
// sloPixelCollection has Sentinel-2-L2A-style items whose band assets are
// GeoTIFFs on the asset server. The files are tiled with small (64 px)
// tiles and the calls' area is four tiles wide, so every band read is a
// header read plus one range per tile row: a call makes dozens of range
// requests (see sloPixelRequests), each exposed to the injected faults.
// The files are written here (uncompressed tiled GeoTIFF, EPSG:32613, the
// demo's place near Boulder), so the runs need no GDAL.

const (
	sloPixelCollection = "slo-pixels"
	sloPixelItems      = 3
	sloPixelSize       = 1024 // 10 m pixels a side; the 20 m SCL has half
	sloPixelTile       = 64
	sloPixelX0         = 478000.0
	sloPixelY0         = 4438000.0
)

// sloPixelAOI is 2.56 km × 5.12 km inside the files (UTM 480560–483120 E,
// 4430320–4435440 N, shrunk a little): 4 tiles × 8 tile rows at 10 m, about
// 22 range requests for red, nir and SCL. sloPixelAOISmall, for the time
// series (2 items), is 2 tiles × 4 rows (UTM 480700–481700 E,
// 4433000–4435300 N): about 13 per item.
var (
	sloPixelAOI      = []float64{-105.2270, 40.0235, -105.1985, 40.0685}
	sloPixelAOISmall = []float64{-105.2262, 40.0471, -105.2146, 40.0677}
)

// sloPixelFootprint is the files' extent in longitude/latitude (gdaltransform).
var sloPixelFootprint = [][]float64{
	{-105.258079, 40.091997}, {-105.257732, 39.999738}, {-105.137770, 39.999943}, {-105.137956, 40.092203}, {-105.258079, 40.091997},
}

type sloBand struct {
	key, common string
	center      float64
	res         int
}

var sloPixelBands = []sloBand{
	{"blue", "blue", 0.49, 10}, {"green", "green", 0.56, 10}, {"red", "red", 0.665, 10}, {"nir", "nir", 0.842, 10}, {"scl", "", 0, 20},
}

var (
	sloPixelOnce  sync.Once
	sloPixelFiles map[string][]byte // band key → file
)

// sloPixelFile is the GeoTIFF of a band (the same pixels for every item;
// each item's href is its own, so no call reads another's cached tiles).
func sloPixelFile(key string) []byte {
	sloPixelOnce.Do(func() {
		sloPixelFiles = map[string][]byte{}
		for i, b := range sloPixelBands {
			n := sloPixelSize
			if b.res == 20 {
				n /= 2
			}
			if b.common == "" {
				sloPixelFiles[b.key] = writeTiledGeoTIFF(n, sloPixelTile, 1, float64(b.res), func(x, y int) uint16 {
					if (x/40+y/40)%7 == 0 {
						return 9 // cloud
					}
					return uint16(4 + (x/64+y/64)%3) // vegetation, bare, water
				})
				continue
			}
			// Reflectance-like DNs (baseline 04.00 offset), a field pattern
			// and texture: vegetation is bright in nir.
			sloPixelFiles[b.key] = writeTiledGeoTIFF(n, sloPixelTile, 2, float64(b.res), func(x, y int) uint16 {
				field := (x/64 + 3*(y/64)) % 5
				v := 1300 + 150*field + (x*7+y*13+i*5)%40
				if b.key == "nir" {
					v += 1500 + 300*field
				}
				return uint16(v)
			})
		}
	})
	return sloPixelFiles[key]
}

// writeTiledGeoTIFF writes a little-endian, uncompressed, tiled GeoTIFF of
// one band (bytesPer 1: uint8, 2: uint16), the IFD and its arrays first (as
// in a COG), in EPSG:32613 from (sloPixelX0, sloPixelY0) at res metres, with
// GDAL_NODATA 0.
func writeTiledGeoTIFF(n, tile, bytesPer int, res float64, value func(x, y int) uint16) []byte {
	across := (n + tile - 1) / tile
	tiles := across * across
	type entry struct {
		tag, typ uint16
		count    uint32
		data     []byte // the value, or the bytes the offset points at
	}
	u16 := func(vs ...uint16) []byte {
		b := make([]byte, 2*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint16(b[2*i:], v)
		}
		return b
	}
	u32 := func(vs ...uint32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		return b
	}
	f64 := func(vs ...float64) []byte {
		var buf bytes.Buffer
		_ = binary.Write(&buf, binary.LittleEndian, vs)
		return buf.Bytes()
	}
	const short, long, ascii, double = 3, 4, 2, 12
	tileBytes := tile * tile * bytesPer
	offsets := make([]uint32, tiles)
	counts := make([]uint32, tiles)
	entries := []entry{
		{256, long, 1, u32(uint32(n))},
		{257, long, 1, u32(uint32(n))},
		{258, short, 1, u16(uint16(8 * bytesPer))},
		{259, short, 1, u16(1)}, // no compression
		{262, short, 1, u16(1)}, // min-is-black
		{277, short, 1, u16(1)},
		{284, short, 1, u16(1)},
		{322, short, 1, u16(uint16(tile))},
		{323, short, 1, u16(uint16(tile))},
		{324, long, uint32(tiles), nil}, // offsets: filled below
		{325, long, uint32(tiles), nil},
		{339, short, 1, u16(1)}, // unsigned
		{33550, double, 3, f64(res, res, 0)},
		{33922, double, 6, f64(0, 0, 0, sloPixelX0, sloPixelY0, 0)},
		// GeoKeys: projected, pixel is area, EPSG:32613.
		{34735, short, 16, u16(1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32613)},
		{42113, ascii, 2, []byte("0\x00")},
	}
	// Layout: header (8), IFD, out-of-line values, tiles.
	ifdSize := 2 + 12*len(entries) + 4
	extra := 8 + ifdSize
	for i := range entries {
		if entries[i].data == nil {
			entries[i].data = make([]byte, 4*tiles)
		}
		if len(entries[i].data) > 4 {
			extra += len(entries[i].data) + len(entries[i].data)%2
		}
	}
	pos := uint32(extra)
	for i := range tiles {
		offsets[i], counts[i] = pos, uint32(tileBytes)
		pos += uint32(tileBytes)
	}
	entries[9].data, entries[10].data = u32(offsets...), u32(counts...)

	var out bytes.Buffer
	out.Write([]byte("II*\x00"))
	out.Write(u32(8))
	out.Write(u16(uint16(len(entries))))
	valuePos := uint32(8 + ifdSize)
	var values bytes.Buffer
	for _, e := range entries {
		out.Write(u16(e.tag, e.typ))
		out.Write(u32(e.count))
		if len(e.data) <= 4 {
			out.Write(append(e.data, make([]byte, 4-len(e.data))...))
			continue
		}
		out.Write(u32(valuePos + uint32(values.Len())))
		values.Write(e.data)
		if len(e.data)%2 == 1 {
			values.WriteByte(0)
		}
	}
	out.Write(u32(0)) // no next IFD
	out.Write(values.Bytes())
	for ty := range across {
		for tx := range across {
			for y := ty * tile; y < (ty+1)*tile; y++ {
				for x := tx * tile; x < (tx+1)*tile; x++ {
					var v uint16
					if x < n && y < n {
						v = value(x, y)
					}
					if bytesPer == 1 {
						out.WriteByte(byte(v))
					} else {
						out.Write(u16(v))
					}
				}
			}
		}
	}
	return out.Bytes()
}

// addSLOPixelItems adds sloPixelCollection and its items to store.
func addSLOPixelItems(store *stacserver.Store) error {
	collection := map[string]any{
		"type": "Collection", "stac_version": "1.0.0", "id": sloPixelCollection, "license": "CC0-1.0",
		"description": "SLO harness multispectral items whose GeoTIFF bands are read by range requests",
		"extent": map[string]any{
			"spatial":  map[string]any{"bbox": [][]float64{{-105.26, 39.99, -105.13, 40.1}}},
			"temporal": map[string]any{"interval": [][]any{{"2023-06-01T00:00:00Z", nil}}},
		},
		"links": []any{},
	}
	if err := store.AddCollection(mustJSON(collection)); err != nil {
		return err
	}
	for i := range sloPixelItems {
		id := fmt.Sprintf("slo-pixels-%d", i)
		assets := map[string]any{}
		for _, b := range sloPixelBands {
			n := sloPixelSize * 10 / b.res
			a := map[string]any{
				"href":           fmt.Sprintf("%s/cog/%s/%s.tif", assetHostPlaceholder, id, b.key),
				"type":           "image/tiff; application=geotiff",
				"roles":          []string{"data"},
				"proj:shape":     []int{n, n},
				"proj:transform": []float64{float64(b.res), 0, sloPixelX0, 0, -float64(b.res), sloPixelY0},
				"raster:bands":   []any{map[string]any{"nodata": 0, "data_type": "uint16", "scale": 0.0001, "offset": -0.1}},
			}
			if b.common != "" {
				a["eo:bands"] = []any{map[string]any{"name": b.key, "common_name": b.common, "center_wavelength": b.center}}
			} else {
				a["raster:bands"] = []any{map[string]any{"nodata": 0, "data_type": "uint8"}}
			}
			assets[b.key] = a
		}
		item := map[string]any{
			"type": "Feature", "stac_version": "1.0.0", "id": id, "collection": sloPixelCollection,
			"bbox":     []float64{-105.258079, 39.999738, -105.137770, 40.092203},
			"geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{sloPixelFootprint}},
			"properties": map[string]any{
				"datetime":       time.Date(2023, 6, 1+10*i, 17, 52, 0, 0, time.UTC).Format(time.RFC3339),
				"eo:cloud_cover": 5, "proj:epsg": 32613, "constellation": "sentinel-2",
			},
			"assets": assets, "links": []any{},
		}
		if err := store.AddItem(mustJSON(item)); err != nil {
			return err
		}
	}
	return nil
}

// servePixelFile answers a range request for a band file of an item
// (paths …/cog/<item>/<band>.tif); ok is false for other paths.
func servePixelFile(w http.ResponseWriter, r *http.Request) (ok bool) {
	i := strings.Index(r.URL.Path, "/cog/")
	if i < 0 || !strings.HasSuffix(r.URL.Path, ".tif") {
		return false
	}
	parts := strings.Split(r.URL.Path[i+len("/cog/"):], "/")
	if len(parts) != 2 {
		return false
	}
	file := sloPixelFile(strings.TrimSuffix(parts[1], ".tif"))
	if file == nil {
		http.NotFound(w, r)
		return true
	}
	w.Header().Set("Content-Type", "image/tiff; application=geotiff")
	http.ServeContent(w, r, parts[1], time.Time{}, bytes.NewReader(file))
	return true
}
