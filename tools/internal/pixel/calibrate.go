package pixel

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/mask"
)

// Calibration is how a read's raw numbers became values: the readings the
// metadata allowed, which one the engine used and why, and what the pixels
// said about each. The adapters word it.
//
// The big catalogs publish the same product with different conventions,
// and the metadata is not always right (Element84/earth-search#66, #71;
// cirrus-geo/cirrus-earth-search#21, #33; microsoft/PlanetaryComputer#134):
//   - Sentinel-2 L2A from processing baseline 04.00 (2022-01-25) stores
//     reflectance × 10000 + 1000. Earth Search's sentinel-2-l2a subtracts the
//     1000 itself ("harmonised") and marks such items
//     earthsearch:boa_offset_applied: true, while its raster:bands still say
//     offset −0.1, and some items carry the flag wrong; the Planetary
//     Computer serves the raw numbers with no raster:bands at all; Earth
//     Search's Collection 1 (sentinel-2-c1-l2a) keeps the raw numbers and the
//     −0.1 offset.
//   - Landsat Collection 2 Level-2 surface reflectance is DN × 0.0000275 −
//     0.2, surface temperature DN × 0.00341802 + 149 (kelvin).
//
// So the engine reads what the item and the file say, knows these
// conventions, and checks every read against what surface reflectance
// can be (clear pixels are not below −0.05 nor above 1.5; a normalised
// index lies in [−1, 1]): when the metadata's reading fails the check and
// another passes, the pixels win and the result says so.
type Calibration struct {
	// Convention is the product convention recognised ("sentinel-2-l2a",
	// "landsat-c2-l2"), "" when none.
	Convention string
	// Used is the reading applied; Metadata the one the metadata supports
	// (the same unless Overridden).
	Used, Metadata Reading
	// Evidence says what decided Metadata: "earthsearch:boa_offset_applied
	// true", "s2:processing_baseline 05.11", "raster:bands", "the file's
	// GDAL metadata", "sensed 2023-08-03, after baseline 04.00 began", "".
	Evidence string
	// Overridden: the pixels contradicted the metadata's reading and
	// supported Used.
	Overridden bool
	// Guessed: the metadata does not tell which convention the numbers
	// follow; Used is the likelier one (Evidence says from what).
	Guessed bool
	// Suspect: no reading passed the plausibility check; Used is the
	// metadata's.
	Suspect bool
	// Checks are the plausibility checks of each reading tried, Used's
	// first.
	Checks []Check
	// Other is what the reading not used would have given, when there was
	// one (Overridden, or a guess between two).
	Other *Outcome
	// IgnoredOffset is the item's own offset (raster:bands) for bands the
	// convention's reading does not apply it to, nil when none was set
	// aside.
	IgnoredOffset *float64
}

// Reading is one way of turning a band's numbers into values: value =
// raw × Scale + Offset.
type Reading struct {
	// Name is the reading's short name: "offset −0.1 applied",
	// "harmonised (no offset)", "as published".
	Name          string
	Scale, Offset float64
	// Reflectance: the values are surface reflectance, so the
	// plausibility check applies to them.
	Reflectance bool
}

// Check is what the pixels say about one reading.
type Check struct {
	Reading string
	// Clear is how many clear values of the reflectance bands were
	// checked; Impossible how many are below −0.05 or above 1.5; Negative
	// how many are below 0.
	Clear, Impossible, Negative int
	// IndexValues and IndexOutside count an index's values and those
	// outside [−1, 1] (0 when no index was asked for).
	IndexValues, IndexOutside int
}

// ImpossibleShare is Impossible / Clear (0 when nothing was checked).
func (c Check) ImpossibleShare() float64 { return share(c.Impossible, c.Clear) }

// NegativeShare is Negative / Clear.
func (c Check) NegativeShare() float64 { return share(c.Negative, c.Clear) }

// IndexOutsideShare is IndexOutside / IndexValues.
func (c Check) IndexOutsideShare() float64 { return share(c.IndexOutside, c.IndexValues) }

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// Plausibility thresholds. Real surface reflectance of clear pixels is
// rarely negative (atmospheric correction leaves a little over dark water)
// and never far below 0; harmonised Sentinel-2 numbers read with the −0.1
// offset put most dark pixels (vegetation in red and blue, water in the
// near infrared) below −0.05.
const (
	lowestReflectance   = -0.05
	highestReflectance  = 1.5
	maxImpossibleShare  = 0.01 // of clear values below lowestReflectance or above highestReflectance
	maxNegativeShare    = 0.2  // of clear values below 0
	maxIndexOutside     = 0.01 // of index values outside [−1, 1]
	rawFloorShareForRaw = 0.005
)

// Plausible says whether the reading passed.
func (c Check) Plausible() bool {
	return c.ImpossibleShare() <= maxImpossibleShare && c.NegativeShare() <= maxNegativeShare &&
		c.IndexOutsideShare() <= maxIndexOutside
}

// Outcome is what a reading gives: each band's mean over its clear
// pixels, and the index's mean when one was asked for.
type Outcome struct {
	Reading   string
	BandMeans []BandMean
	// IndexMean is nil without an index or without a value.
	IndexMean *float64
}

// BandMean is one band's mean under a reading.
type BandMean struct {
	Band string
	Mean float64
}

// plan is the readings a read may use, the metadata's first.
type plan struct {
	convention string
	candidates []Reading
	evidence   string
	guessed    bool
	// perBand overrides a candidate's scale and offset for bands that
	// follow another rule (Landsat's surface temperature band).
	perBand map[int]Reading
}

// Sentinel-2 L2A's numbers: reflectance × 10000, + 1000 from baseline 04.00.
const (
	s2Scale        = 0.0001
	s2BOAOffset    = -0.1
	landsatSRScale = 0.0000275
	landsatSROff   = -0.2
	landsatSTScale = 0.00341802
	landsatSTOff   = 149.0
)

// baseline0400 is when Sentinel-2's processing baseline 04.00 began.
var baseline0400 = time.Date(2022, 1, 25, 0, 0, 0, 0, time.UTC)

// reflectanceNames are the common names of solar reflective bands.
var reflectanceNames = map[string]bool{
	"coastal": true, "blue": true, "green": true, "red": true, "yellow": true, "pan": true,
	"rededge": true, "rededge071": true, "rededge075": true, "rededge078": true,
	"nir": true, "nir08": true, "nir09": true, "cirrus": true, "swir16": true, "swir22": true,
}

// s2Keys are Sentinel-2's band asset keys and names (B01…B12, B8A).
var s2Keys = regexp.MustCompile(`^(?i)b(0[1-9]|1[0-2]|8a)$`)

// isReflectanceBand says whether the band holds solar reflectance.
func isReflectanceBand(b Band) bool {
	return reflectanceNames[b.CommonName] || s2Keys.MatchString(b.Name) || s2Keys.MatchString(b.AssetKey)
}

// productOf recognises the two conventions from the item: its collection
// id, else its properties.
func productOf(item *stacclient.Item) string {
	coll := strings.ToLower(item.Collection)
	prop := func(k string) string { s, _ := item.PropertyString(k); return strings.ToLower(s) }
	switch {
	case strings.Contains(coll, "sentinel-2") && strings.Contains(coll, "l2a"),
		strings.Contains(coll, "sentinel2") && strings.Contains(coll, "l2a"),
		prop("s2:product_type") == "s2msi2a",
		strings.HasPrefix(prop("platform"), "sentinel-2") && (prop("processing:level") == "l2a" || prop("s2:processing_baseline") != "" && strings.Contains(strings.ToLower(item.ID), "l2a")):
		return "sentinel-2-l2a"
	case strings.Contains(coll, "landsat-c2-l2") || strings.Contains(coll, "landsat-c2l2"),
		prop("landsat:collection_number") == "02" && strings.HasPrefix(prop("landsat:correction"), "l2"):
		return "landsat-c2-l2"
	}
	return ""
}

// planFor decides the readings of a read's bands from the item and the
// files: bands[i] is read from a file with info[i].
func planFor(item *stacclient.Item, bands []Band, infos []cog.Info) plan {
	switch productOf(item) {
	case "sentinel-2-l2a":
		if p, ok := sentinel2Plan(item, bands); ok {
			return p
		}
	case "landsat-c2-l2":
		if p, ok := landsatPlan(bands); ok {
			return p
		}
	}
	return publishedPlan(bands, infos)
}

// publishedPlan is the one reading the metadata gives: raster:bands (or
// STAC 1.1 bands), else the file's GDAL metadata, else the raw numbers. A
// band's own calibration is applied in Read (this plan's reading is the
// identity): the check then sees the values as published.
func publishedPlan(bands []Band, infos []cog.Info) plan {
	evidence := ""
	refl := false
	for i, b := range bands {
		switch {
		case b.Item.Calibrated != "":
			evidence = b.Item.Calibrated
		case i < len(infos) && b.Index < len(infos[i].Scale) && (infos[i].Scale[b.Index] != 1 || infos[i].Offset[b.Index] != 0):
			if evidence == "" {
				evidence = "the file's GDAL metadata"
			}
		default:
			continue
		}
		// A scaled reflective band is taken to be reflectance.
		refl = refl || isReflectanceBand(b)
	}
	return plan{candidates: []Reading{{Name: "as published", Scale: 1, Reflectance: refl}}, evidence: evidence}
}

// sentinel2Plan: the reflectance bands' two readings, the metadata's
// first. ok is false when no band read is a reflectance band.
func sentinel2Plan(item *stacclient.Item, bands []Band) (plan, bool) {
	scale := s2Scale
	found := false
	for _, b := range bands {
		if !isReflectanceBand(b) {
			continue
		}
		found = true
		if b.Item.Scale != nil && *b.Item.Scale > 0 {
			scale = *b.Item.Scale
		}
	}
	if !found {
		return plan{}, false
	}
	withOffset := Reading{Name: "reflectance = DN × " + trimFloat(scale) + " − 0.1", Scale: scale, Offset: s2BOAOffset, Reflectance: true}
	harmonised := Reading{Name: "reflectance = DN × " + trimFloat(scale), Scale: scale, Reflectance: true}
	p := plan{convention: "sentinel-2-l2a"}
	order := func(offsetFirst bool) {
		if offsetFirst {
			p.candidates = []Reading{withOffset, harmonised}
		} else {
			p.candidates = []Reading{harmonised, withOffset}
		}
	}
	applied, hasFlag := item.Properties["earthsearch:boa_offset_applied"].(bool)
	baseline, hasBaseline := processingBaseline(item)
	switch {
	case hasFlag && applied:
		order(false)
		p.evidence = "earthsearch:boa_offset_applied true: the 1000 of baseline 04.00 is already out of the numbers"
	case hasBaseline:
		order(baseline >= 4)
		p.evidence = "s2:processing_baseline " + fmt.Sprint(item.Properties["s2:processing_baseline"])
		if hasFlag {
			p.evidence = "earthsearch:boa_offset_applied false and " + p.evidence
		}
	case rasterOffset(bands) != nil:
		order(*rasterOffset(bands) != 0)
		p.evidence = "raster:bands"
	default:
		t, ok := item.Datetime()
		switch {
		case !ok:
			order(true)
			p.evidence = "no processing baseline, flag, raster:bands or date"
		case t.Before(baseline0400):
			order(false)
			p.evidence = "sensed " + t.UTC().Format("2006-01-02") + ", before processing baseline 04.00 (2022-01-25)"
		default:
			order(true)
			p.evidence = "sensed " + t.UTC().Format("2006-01-02") + ", after processing baseline 04.00 began (2022-01-25)"
		}
		p.guessed = true
	}
	return p, true
}

// rasterOffset is the first reflectance band's raster:bands offset (nil:
// none given, or no scale either).
func rasterOffset(bands []Band) *float64 {
	for _, b := range bands {
		if isReflectanceBand(b) && b.Item.Calibrated != "" {
			if b.Item.Offset != nil {
				return b.Item.Offset
			}
			if b.Item.Scale != nil {
				zero := 0.0
				return &zero
			}
		}
	}
	return nil
}

// processingBaseline reads s2:processing_baseline ("05.11", or a number).
func processingBaseline(item *stacclient.Item) (float64, bool) {
	switch v := item.Properties["s2:processing_baseline"].(type) {
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	case float64:
		return v, true
	}
	return 0, false
}

// landsatPlan: Collection 2 Level-2's scale and offset where the item
// does not give them (raster:bands wins when it does).
func landsatPlan(bands []Band) (plan, bool) {
	p := plan{convention: "landsat-c2-l2", perBand: map[int]Reading{}}
	published := true
	for i, b := range bands {
		if b.Item.Calibrated != "" {
			continue
		}
		switch {
		case isReflectanceBand(b):
			p.perBand[i] = Reading{Name: "Collection 2 Level-2 surface reflectance", Scale: landsatSRScale, Offset: landsatSROff, Reflectance: true}
			published = false
		case b.CommonName == "lwir11" || b.CommonName == "lwir" || strings.EqualFold(b.AssetKey, "lwir11"):
			p.perBand[i] = Reading{Name: "Collection 2 Level-2 surface temperature (kelvin)", Scale: landsatSTScale, Offset: landsatSTOff}
			published = false
		}
	}
	refl := false
	for _, b := range bands {
		refl = refl || isReflectanceBand(b)
	}
	p.candidates = []Reading{{Name: "as published", Scale: 1, Reflectance: refl}}
	p.evidence = "raster:bands"
	if !published {
		p.candidates[0].Name = "Collection 2 Level-2 scale and offset"
		p.evidence = "the Landsat Collection 2 Level-2 product definition (the item gives no raster:bands)"
	}
	return p, true
}

// trimFloat writes v in plain decimals.
func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// bandCalibration is band b's base calibration: raster:bands' (or STAC
// 1.1 bands') scale, offset and nodata, else the file's GDAL metadata and
// GDAL_NODATA. The item's nodata replaces the file's; source says which.
func bandCalibration(b Band, info cog.Info) (cal mask.Calibration, from, nodataFrom string) {
	cal = mask.Calibration{Scale: 1}
	if b.Index < len(info.Scale) && info.Scale[b.Index] != 0 {
		cal.Scale = info.Scale[b.Index]
	}
	if b.Index < len(info.Offset) {
		cal.Offset = info.Offset[b.Index]
	}
	from = "the file's GDAL metadata"
	if cal.Scale == 1 && cal.Offset == 0 {
		from = ""
	}
	if info.NoData != nil {
		cal.NoData, nodataFrom = info.NoData, "the file's GDAL_NODATA"
	}
	if b.Item.Calibrated != "" {
		from = b.Item.Calibrated
		if b.Item.Scale != nil {
			cal.Scale = *b.Item.Scale
		}
		if b.Item.Offset != nil {
			cal.Offset = *b.Item.Offset
		}
		if b.Item.NoData != nil {
			cal.NoData, nodataFrom = b.Item.NoData, b.Item.Calibrated
		}
	}
	return cal, from, nodataFrom
}

// checkReading counts, over the clear pixels of the reflectance bands,
// the values a reading makes implausible, and the index's values outside
// [−1, 1]. raw are the bands' raw numbers, valid which have one, keep the
// clear pixels of the area; reading maps a band's raw number to its value.
func checkReading(name string, raw [][]float64, valid [][]bool, keep []bool, refl []bool, value func(band int, dn float64) float64, ix *index.Index, roles []int) Check {
	c := Check{Reading: name}
	for k, band := range raw {
		if !refl[k] {
			continue
		}
		for i, dn := range band {
			if !keep[i] || !valid[k][i] {
				continue
			}
			v := value(k, dn)
			c.Clear++
			if v < 0 {
				c.Negative++
			}
			if v < lowestReflectance || v > highestReflectance {
				c.Impossible++
			}
		}
	}
	if ix == nil || roles == nil {
		return c
	}
	px := make([]float64, len(roles))
	for i := range keep {
		if !keep[i] {
			continue
		}
		ok := true
		for r, k := range roles {
			if !valid[k][i] {
				ok = false
				break
			}
			px[r] = value(k, raw[k][i])
		}
		if !ok {
			continue
		}
		v := ix.At(px)
		if math.IsNaN(v) {
			continue
		}
		c.IndexValues++
		if v < -1 || v > 1 {
			c.IndexOutside++
		}
	}
	return c
}

// outcome is what a reading gives: band means and the index's mean.
func outcome(name string, titles []string, raw [][]float64, valid [][]bool, keep []bool, value func(band int, dn float64) float64, ix *index.Index, roles []int) *Outcome {
	o := &Outcome{Reading: name}
	for k, band := range raw {
		sum, n := 0.0, 0
		for i, dn := range band {
			if keep[i] && valid[k][i] {
				sum += value(k, dn)
				n++
			}
		}
		if n > 0 {
			o.BandMeans = append(o.BandMeans, BandMean{Band: titles[k], Mean: sum / float64(n)})
		}
	}
	if ix != nil && roles != nil {
		px := make([]float64, len(roles))
		sum, n := 0.0, 0
		for i := range keep {
			if !keep[i] {
				continue
			}
			ok := true
			for r, k := range roles {
				if !valid[k][i] {
					ok = false
					break
				}
				px[r] = value(k, raw[k][i])
			}
			if v := ix.At(px); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				sum += v
				n++
			}
		}
		if n > 0 {
			m := sum / float64(n)
			o.IndexMean = &m
		}
	}
	return o
}

// calibrate applies nodata and the reading the pixels support to the
// measured bands (raw becomes values in place; valid loses nodata), fills
// out.Bands, and says what it did.
func (e *Env) calibrate(r Request, infos []cog.Info, raw [][]float64, valid [][]bool, out *Pixels) Calibration {
	bands := r.Bands
	base := make([]mask.Calibration, len(bands))
	from := make([]string, len(bands))
	ndFrom := make([]string, len(bands))
	for k, b := range bands {
		base[k], from[k], ndFrom[k] = bandCalibration(b, infos[k])
		applyNoData(raw[k], valid[k], base[k].NoData, infos[k].DataType)
	}
	p := planFor(r.Item, bands, infos)
	conv := make([]bool, len(bands)) // the band follows the plan's candidates
	refl := make([]bool, len(bands)) // the band's values are reflectance
	for k, b := range bands {
		switch {
		case p.convention == "sentinel-2-l2a":
			conv[k] = isReflectanceBand(b)
			refl[k] = conv[k]
		case p.perBand[k].Scale != 0:
			refl[k] = p.perBand[k].Reflectance
		default:
			refl[k] = p.candidates[0].Reflectance && isReflectanceBand(b) && (base[k].Scale != 1 || base[k].Offset != 0)
		}
	}
	valueOf := func(c Reading) func(k int, dn float64) float64 {
		return func(k int, dn float64) float64 {
			if conv[k] {
				return dn*c.Scale + c.Offset
			}
			if pb, ok := p.perBand[k]; ok {
				return dn*pb.Scale + pb.Offset
			}
			s := base[k].Scale
			if s == 0 {
				s = 1
			}
			return dn*s + base[k].Offset
		}
	}
	var roles []int
	if r.Index != nil && len(r.Index.Bands) == len(bands) {
		roles = make([]int, len(bands))
		for k := range roles {
			roles[k] = k
		}
	}
	cal := Calibration{Convention: p.convention, Metadata: p.candidates[0], Evidence: p.evidence, Guessed: p.guessed}
	checks := make([]Check, len(p.candidates))
	for i, c := range p.candidates {
		checks[i] = checkReading(c.Name, raw, valid, out.Keep, refl, valueOf(c), r.Index, roles)
	}
	chosen := 0
	if !checks[0].Plausible() {
		for i := 1; i < len(checks); i++ {
			if checks[i].Plausible() {
				chosen = i
				cal.Overridden = true
				break
			}
		}
		if chosen == 0 {
			cal.Suspect = true
		}
	} else if p.guessed && len(checks) > 1 && checks[0].NegativeShare() > rawFloorShareForRaw && p.candidates[0].Offset != 0 && checks[1].Plausible() {
		// No metadata, and the darkest numbers lie below the 1000 that
		// baseline 04.00 adds: more likely harmonised numbers.
		chosen = 1
	}
	cal.Used = p.candidates[chosen]
	cal.Checks = append([]Check{checks[chosen]}, slices.Delete(slices.Clone(checks), chosen, chosen+1)...)
	titles := make([]string, len(bands))
	for k, b := range bands {
		titles[k] = b.Title()
	}
	if len(p.candidates) > 1 && (cal.Overridden || cal.Guessed) {
		other := 1
		if chosen != 0 {
			other = 0
		}
		cal.Other = outcome(p.candidates[other].Name, titles, raw, valid, out.Keep, valueOf(p.candidates[other]), r.Index, roles)
	}
	value := valueOf(cal.Used)
	out.Bands = make([]BandRead, len(bands))
	for k, b := range bands {
		for i, dn := range raw[k] {
			if valid[k][i] {
				raw[k][i] = value(k, dn)
			} else {
				raw[k][i] = math.NaN()
			}
		}
		applied := base[k]
		switch {
		case conv[k]:
			applied.Scale, applied.Offset, from[k] = cal.Used.Scale, cal.Used.Offset, "the Sentinel-2 L2A convention"
			if o := b.Item.Offset; o != nil && *o != cal.Used.Offset && cal.IgnoredOffset == nil {
				v := *o
				cal.IgnoredOffset = &v
			}
		case p.perBand[k].Scale != 0:
			applied.Scale, applied.Offset, from[k] = p.perBand[k].Scale, p.perBand[k].Offset, "the Landsat Collection 2 Level-2 convention"
		}
		out.Bands[k] = BandRead{Band: b.Title(), Asset: b.AssetKey, Calibration: applied, From: from[k], NoDataFrom: ndFrom[k]}
	}
	return cal
}

// applyNoData marks the values equal to nodata (NaN matches NaN; a
// float32 band compares in its own type, as GDAL does) as no value.
func applyNoData(raw []float64, valid []bool, nodata *float64, dataType string) {
	for i, v := range raw {
		if math.IsNaN(v) {
			valid[i] = false
		}
	}
	if nodata == nil {
		return
	}
	nd, isNaN := *nodata, math.IsNaN(*nodata)
	if dataType == "float32" {
		nd = float64(float32(nd))
	}
	for i, v := range raw {
		if v == nd || (isNaN && math.IsNaN(v)) {
			valid[i] = false
		}
	}
}
