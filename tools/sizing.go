package tools

import (
	"encoding/json"
	"slices"
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

// bandNames lists the bands an asset holds (eo:bands, or STAC 1.1 bands),
// by name or common name, sorted and joined; "" when it does not say.
func bandNames(extra stacclient.Extra) string {
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

// copySuffixes mark an asset as another format of the asset named by the
// rest of its key (Earth Search: red and red-jp2).
var copySuffixes = []string{"-jp2", "_jp2"}

// markCopies finds the assets of one item that hold the same band in
// another format, keeps one of each group and marks the others copyOf it,
// so a band is counted once. Two assets are copies when one's key is the
// other's plus a format suffix (red, red-jp2), or when both are rasters
// listing the same named bands in different media types (a COG and a
// JPEG 2000 of B04). A group never holds two files of one media type:
// B04_10m and B04_20m, both JPEG 2000, are different resolutions.
func markCopies(jobs []*assetJob) {
	// group maps each job to the group it is in; members of a group share
	// one slice, and merging moves the smaller side's members over.
	group := make(map[*assetJob]*[]*assetJob, len(jobs))
	byKey := make(map[string]*assetJob, len(jobs))
	for _, j := range jobs {
		group[j] = &[]*assetJob{j}
		byKey[j.key] = j
	}
	merge := func(a, b *assetJob) {
		ga, gb := group[a], group[b]
		if ga == gb {
			return
		}
		*ga = append(*ga, *gb...)
		for _, m := range *gb {
			group[m] = ga
		}
	}
	for _, j := range jobs {
		for _, suffix := range copySuffixes {
			if base, ok := strings.CutSuffix(j.key, suffix); ok && byKey[base] != nil {
				merge(j, byKey[base])
			}
		}
	}
	// A group holds at most one file per media type: two JP2s listing the
	// same band are two resolutions, not two formats.
	sharesMediaType := func(ga, gb []*assetJob) bool {
		return slices.ContainsFunc(ga, func(x *assetJob) bool {
			return slices.ContainsFunc(gb, func(y *assetJob) bool { return strings.EqualFold(x.mediaType, y.mediaType) })
		})
	}
	for i, a := range jobs {
		for _, b := range jobs[i+1:] {
			if a.raster && b.raster && a.bands != "" && a.bands == b.bands && group[a] != group[b] && !sharesMediaType(*group[a], *group[b]) {
				merge(a, b)
			}
		}
	}
	done := map[*[]*assetJob]bool{}
	for _, j := range jobs {
		g := group[j]
		if done[g] || len(*g) < 2 {
			continue
		}
		done[g] = true
		keep := slices.MinFunc(*g, func(a, b *assetJob) int { return copyPreference(a) - copyPreference(b) })
		for _, m := range *g {
			if m != keep {
				m.copyOf = keep.key
			}
		}
	}
}

// copyPreference ranks the copies of a band, lowest kept: one sized from
// metadata, then one a HEAD can size, then a cloud-optimised GeoTIFF, then
// the shorter key (red over red-jp2).
func copyPreference(j *assetJob) int {
	rank := len(j.key)
	switch {
	case j.reason == "" && j.probe == nil:
	case j.probe != nil:
		rank += 1000
	default:
		rank += 2000
	}
	if !strings.Contains(strings.ToLower(j.mediaType), "tiff") {
		rank += 100
	}
	return rank
}
