// Package sizing is estimate_data_size's engine: what a STAC asset's
// metadata says about its size (file:size, else the raster bands' data
// types × proj:shape), which assets are data and which are not (thumbnails,
// overviews, tiler renderings), which assets of an item hold the same band
// in another format (copies counted once), and the HEAD probes that size
// the rest, bounded in number, parallelism and time. It returns facts: a
// size and its method, a copy's key, a probe's outcome; tools words them
// (tools/estimate_data_size.go) and keeps the per-call bookkeeping.
package sizing

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Sizing methods, in the order they are tried.
const (
	MethodFileSize   = "file:size"          // the asset's file:size, exact bytes on storage
	MethodDtypeShape = "raster_dtype_shape" // rows × cols × bytes per band, summed over bands: uncompressed size
	MethodHead       = "head_content_length"
	MethodUnknown    = "unknown"
)

// dtypeBytes is the size of one sample of each raster:bands data_type.
var dtypeBytes = map[string]int64{
	"int8": 1, "uint8": 1,
	"int16": 2, "uint16": 2,
	"int32": 4, "uint32": 4, "float16": 2, "float32": 4, "cint16": 4,
	"int64": 8, "uint64": 8, "float64": 8, "cint32": 8, "cfloat32": 8,
	"cfloat64": 16,
}

// MetadataSize sizes an asset from its metadata alone: file:size when
// present, else the raster band data types × proj:shape (asset-level, or the
// item's). ok is false when the metadata does not say.
func MetadataSize(a stacclient.Asset, itemProps map[string]any) (bytes int64, method string, ok bool) {
	if n, ok := extraInt(a.Extra, "file:size"); ok && n >= 0 {
		return n, MethodFileSize, true
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
	return shape[0] * shape[1] * perPixel, MethodDtypeShape, true
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

// IsRaster reports whether an asset is gridded data whose bytes scale
// with the area read: a GeoTIFF/JPEG 2000 media type or raster metadata.
func IsRaster(a stacclient.Asset) bool {
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
		var f float64
		switch x := e.(type) {
		case float64:
			f = x
		case json.Number:
			var err error
			if f, err = x.Float64(); err != nil {
				return nil
			}
		case int:
			f = float64(x)
		case int64:
			f = float64(x)
		default:
			return nil
		}
		if f != float64(int64(f)) {
			return nil
		}
		out = append(out, int64(f))
	}
	return out
}

// BandNames lists the bands an asset holds (eo:bands, or STAC 1.1 bands),
// by name or common name, sorted and joined; "" when it does not say.
func BandNames(extra stacclient.Extra) string {
	for _, key := range []string{"eo:bands", "bands"} {
		var bands []struct {
			Name       string `json:"name"`
			CommonName string `json:"common_name"`
		}
		if raw, ok := extra[key]; !ok || json.Unmarshal(raw, &bands) != nil || len(bands) == 0 {
			continue
		}
		names := make([]string, 0, len(bands))
		for _, b := range bands {
			n := b.Name
			if n == "" {
				n = b.CommonName
			}
			if n == "" {
				return "" // an unnamed band: cannot tell copies apart
			}
			names = append(names, strings.ToLower(n))
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	return ""
}

// NonDataRoles are asset roles that are not the data a download is for:
// small pictures, tile endpoints and sidecar metadata. An asset with one of
// them and not the role data is left out unless the caller names it.
var NonDataRoles = []string{"thumbnail", "overview", "tiles", "metadata"}

// RoleRendered is the left-out "role" of hrefs a tiler renders on request.
const RoleRendered = "rendered by a tiler"

// NonDataRole is the role for which an asset is left out by default: one
// of NonDataRoles (unless it is also data), or RoleRendered for an href a
// tiler renders on request; "" for a data asset.
func NonDataRole(a stacclient.Asset) string {
	if !slices.Contains(a.Roles, "data") {
		for _, r := range NonDataRoles {
			if slices.Contains(a.Roles, r) {
				return r
			}
		}
	}
	if RenderedHref(a.Href) {
		return RoleRendered
	}
	return ""
}

// RenderedHref reports whether an href is a tiler's rendering endpoint
// (titiler as the Planetary Computer runs it: /api/data/v1/item/preview.png,
// tilejson.json, {z}/{x}/{y} templates) rather than a file: asking it for a
// size would make it render.
func RenderedHref(href string) bool {
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	p := strings.ToLower(u.Path)
	// Not any "/tiles/": Sentinel-2 archives keep their files under
	// s3://…/tiles/20/E/PT/….
	return strings.Contains(p, "/api/data/v1/") || strings.HasSuffix(p, "/tilejson.json") || strings.Contains(p, "{z}") ||
		strings.HasSuffix(p, "/item/preview.png") || strings.HasSuffix(p, "/wmtscapabilities.xml")
}

// Headable reports whether an href can be probed over HTTP.
func Headable(href string) bool {
	u, err := url.Parse(href)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
