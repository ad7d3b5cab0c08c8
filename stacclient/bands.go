package stacclient

import (
	"encoding/json"
	"math"
	"strings"
)

// Band is one band of an asset's file as its item describes it: from the
// eo and raster extensions of STAC 1.0 (eo:bands, raster:bands, matched by
// position) or from STAC 1.1's bands (eo:common_name, and raster:scale /
// raster:offset or the older scale / offset, nodata and data_type).
type Band struct {
	// Index is the band's 0-based position in the asset's file.
	Index int
	// Name is the band's name (B04), "" when none is given.
	Name string
	// CommonName is the eo common name in lower case (red, nir, ...), ""
	// when none is given.
	CommonName string
	// Scale, Offset and NoData are nil when the item does not give them;
	// a nodata of "nan" is NaN.
	Scale, Offset, NoData *float64
	// DataType is raster:bands' data_type (uint16, float32, ...), "" when
	// absent.
	DataType string
	// Calibrated says where Scale, Offset or NoData came from:
	// "raster:bands", "bands" (STAC 1.1), or "" when the item gives none.
	Calibrated string
}

// bandJSON is one entry of eo:bands, raster:bands or bands.
type bandJSON struct {
	Name         string   `json:"name"`
	CommonName   string   `json:"common_name"`
	EOCommonName string   `json:"eo:common_name"`
	Scale        *float64 `json:"scale"`
	Offset       *float64 `json:"offset"`
	RasterScale  *float64 `json:"raster:scale"`
	RasterOffset *float64 `json:"raster:offset"`
	NoData       any      `json:"nodata"`
	DataType     string   `json:"data_type"`
}

func (b bandJSON) scale() *float64 {
	if b.RasterScale != nil {
		return b.RasterScale
	}
	return b.Scale
}

func (b bandJSON) offset() *float64 {
	if b.RasterOffset != nil {
		return b.RasterOffset
	}
	return b.Offset
}

// Bands lists the bands the asset describes, in file order: one per entry
// of eo:bands (STAC 1.0) or bands (STAC 1.1), else one per entry of
// raster:bands (an asset with calibration but no spectral names, such as a
// scene classification layer). Nil when the asset describes none. Entries
// that are not JSON objects are skipped; the rest is read as far as it is
// well-formed.
func (a Asset) Bands() []Band {
	var eo, rb, b11 []bandJSON
	_ = json.Unmarshal(a.Extra["eo:bands"], &eo)
	_ = json.Unmarshal(a.Extra["raster:bands"], &rb)
	_ = json.Unmarshal(a.Extra["bands"], &b11)
	names, cal, from := eo, rb, "raster:bands"
	if len(names) == 0 && len(b11) > 0 {
		names = b11
		if len(cal) == 0 {
			cal, from = b11, "bands"
		}
	}
	if len(names) == 0 {
		names = cal
	}
	out := make([]Band, 0, len(names))
	for i, n := range names {
		b := Band{Index: i, Name: strings.TrimSpace(n.Name),
			CommonName: strings.ToLower(strings.TrimSpace(n.CommonName + n.EOCommonName))}
		if i < len(cal) {
			c := cal[i]
			b.Scale, b.Offset, b.NoData, b.DataType = c.scale(), c.offset(), nodataValue(c.NoData), c.DataType
			if b.Scale != nil || b.Offset != nil || b.NoData != nil {
				b.Calibrated = from
			}
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// nodataValue reads a nodata value: a number, or "nan" (raster:bands
// writes NaN as a string, JSON having none); "inf" and "-inf" likewise.
func nodataValue(v any) *float64 {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return nil
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "nan":
			f = math.NaN()
		case "inf", "+inf":
			f = math.Inf(1)
		case "-inf":
			f = math.Inf(-1)
		default:
			return nil
		}
	default:
		return nil
	}
	return &f
}
