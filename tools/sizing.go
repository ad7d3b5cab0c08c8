package tools

import (
	"encoding/json"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Sizing methods, in the order they are tried.
const (
	methodFileSize   = "file:size"          // the asset's file:size, exact bytes on storage
	methodDtypeShape = "raster_dtype_shape" // rows × cols × bytes per band, summed over bands: uncompressed size
	methodHead       = "head_content_length"
	methodUnknown    = "unknown"
)

// dtypeBytes is the size of one sample of each raster:bands data_type.
var dtypeBytes = map[string]int64{
	"int8": 1, "uint8": 1,
	"int16": 2, "uint16": 2,
	"int32": 4, "uint32": 4, "float16": 2, "float32": 4, "cint16": 4,
	"int64": 8, "uint64": 8, "float64": 8, "cint32": 8, "cfloat32": 8,
	"cfloat64": 16,
}

// metadataSize sizes an asset from its metadata alone: file:size when
// present, else the raster band data types × proj:shape (asset-level, or the
// item's). ok is false when the metadata does not say.
func metadataSize(a stacclient.Asset, itemProps map[string]any) (bytes int64, method string, ok bool) {
	if n, ok := extraInt(a.Extra, "file:size"); ok && n >= 0 {
		return n, methodFileSize, true
	}
	shape := extraInts(a.Extra, "proj:shape")
	if len(shape) == 0 {
		shape = anyInts(itemProps["proj:shape"])
	}
	if len(shape) != 2 || shape[0] <= 0 || shape[1] <= 0 {
		return 0, "", false
	}
	perPixel, ok := bytesPerPixel(a.Extra)
	if !ok {
		return 0, "", false
	}
	return shape[0] * shape[1] * perPixel, methodDtypeShape, true
}

// bytesPerPixel sums the sample size of every band: raster:bands (STAC 1.0
// raster extension), or bands with data_type (STAC 1.1), or an asset-level
// data_type with one sample per band.
func bytesPerPixel(extra stacclient.Extra) (int64, bool) {
	for _, key := range []string{"raster:bands", "bands"} {
		var bands []map[string]any
		if raw, ok := extra[key]; ok && json.Unmarshal(raw, &bands) == nil && len(bands) > 0 {
			assetType := extraString(extra, "data_type")
			var total int64
			for _, b := range bands {
				dt, _ := b["data_type"].(string)
				if dt == "" {
					dt = assetType
				}
				size, known := dtypeBytes[strings.ToLower(dt)]
				if !known {
					return 0, false
				}
				total += size
			}
			return total, true
		}
	}
	if size, known := dtypeBytes[strings.ToLower(extraString(extra, "data_type"))]; known {
		return size, true
	}
	return 0, false
}

// isRasterAsset reports whether an asset is gridded data whose bytes scale
// with the area read: a GeoTIFF/JPEG 2000 media type or raster metadata.
func isRasterAsset(a stacclient.Asset) bool {
	for _, key := range []string{"raster:bands", "proj:shape"} {
		if _, ok := a.Extra[key]; ok {
			return true
		}
	}
	t := strings.ToLower(a.Type)
	return strings.Contains(t, "tiff") || strings.Contains(t, "jp2")
}

func extraString(extra stacclient.Extra, key string) string {
	var s string
	if raw, ok := extra[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func extraInt(extra stacclient.Extra, key string) (int64, bool) {
	raw, ok := extra[key]
	if !ok {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

func extraInts(extra stacclient.Extra, key string) []int64 {
	raw, ok := extra[key]
	if !ok {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return anyInts(v)
}

// anyInts reads a decoded JSON list of whole numbers.
func anyInts(v any) []int64 {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(list))
	for _, e := range list {
		f, ok := toFloat(e)
		if !ok || f != float64(int64(f)) {
			return nil
		}
		out = append(out, int64(f))
	}
	return out
}
