package sizing

import (
	"slices"
	"strings"
)

// Sizability is how an asset can be sized, for choosing which copy of a
// band to count.
type Sizability int

const (
	SizedByMetadata Sizability = iota // its metadata says its size
	Probeable                         // a HEAD can size it
	Unsizable                         // nothing can size it
)

// Candidate is one asset of an item, as MarkCopies sees it.
type Candidate struct {
	Key, MediaType string
	Bands          string // BandNames; "" when unknown
	Raster         bool
	Sizability     Sizability
}

// copySuffixes mark an asset as another format of the asset named by the
// rest of its key (Earth Search: red and red-jp2).
var copySuffixes = []string{"-jp2", "_jp2"}

// MarkCopies finds the assets of one item that hold the same band in
// another format, keeps one of each group and returns, for each asset, the
// key of the one kept instead of it ("" for an asset counted), so a band is
// counted once. Two assets are copies when one's key is the other's plus a
// format suffix (red, red-jp2), or when both are rasters listing the same
// named bands in different media types (a COG and a JPEG 2000 of B04). A
// group never holds two files of one media type: B04_10m and B04_20m, both
// JPEG 2000, are different resolutions.
func MarkCopies(assets []Candidate) (copyOf []string) {
	// group maps each asset to the group it is in; members of a group
	// share one slice, and merging moves the smaller side's members over.
	group := make([]*[]int, len(assets))
	byKey := make(map[string]int, len(assets))
	for i, a := range assets {
		group[i] = &[]int{i}
		byKey[a.Key] = i
	}
	merge := func(a, b int) {
		ga, gb := group[a], group[b]
		if ga == gb {
			return
		}
		*ga = append(*ga, *gb...)
		for _, m := range *gb {
			group[m] = ga
		}
	}
	for i, a := range assets {
		for _, suffix := range copySuffixes {
			if base, ok := strings.CutSuffix(a.Key, suffix); ok {
				if j, ok := byKey[base]; ok {
					merge(i, j)
				}
			}
		}
	}
	// A group holds at most one file per media type: two JP2s listing the
	// same band are two resolutions, not two formats.
	sharesMediaType := func(ga, gb []int) bool {
		return slices.ContainsFunc(ga, func(x int) bool {
			return slices.ContainsFunc(gb, func(y int) bool { return strings.EqualFold(assets[x].MediaType, assets[y].MediaType) })
		})
	}
	for i, a := range assets {
		for j := i + 1; j < len(assets); j++ {
			b := assets[j]
			if a.Raster && b.Raster && a.Bands != "" && a.Bands == b.Bands && group[i] != group[j] && !sharesMediaType(*group[i], *group[j]) {
				merge(i, j)
			}
		}
	}
	copyOf = make([]string, len(assets))
	done := map[*[]int]bool{}
	for i := range assets {
		g := group[i]
		if done[g] || len(*g) < 2 {
			continue
		}
		done[g] = true
		keep := slices.MinFunc(*g, func(a, b int) int { return copyPreference(assets[a]) - copyPreference(assets[b]) })
		for _, m := range *g {
			if m != keep {
				copyOf[m] = assets[keep].Key
			}
		}
	}
	return copyOf
}

// copyPreference ranks the copies of a band, lowest kept: one sized from
// metadata, then one a HEAD can size, then a cloud-optimised GeoTIFF, then
// the shorter key (red over red-jp2).
func copyPreference(a Candidate) int {
	rank := len(a.Key)
	switch a.Sizability {
	case SizedByMetadata:
	case Probeable:
		rank += 1000
	default:
		rank += 2000
	}
	if !strings.Contains(strings.ToLower(a.MediaType), "tiff") {
		rank += 100
	}
	return rank
}
