package federation

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// When two items of different catalogs are one acquisition. Each catalog
// names and times a scene its own way: Earth Search's
// S2B_24MUV_20250731_0_L2A is dated at the tile's sensing time
// (13:03:27), Planetary Computer's S2B_MSIL2A_20250731T130249_R095_T24MUV_…
// at its datatake's start (13:02:49), every tile of the datatake alike.
const (
	// S2Tolerance is how far apart two Sentinel-2 items of one platform
	// and MGRS tile may be dated and still be one acquisition: a datatake
	// (one satellite's continuous imaging on one orbit) lasts well under
	// an hour, and the same satellite sees a tile again one orbit later at
	// the earliest, about 100 minutes on.
	S2Tolerance = 60 * time.Minute
	// GenericTolerance is the datetime tolerance of other products, which
	// must also share their footprint (MinOverlap).
	GenericTolerance = 60 * time.Second
	// MinOverlap is the share of each footprint the other must cover for
	// two items of another product to be one acquisition: adjacent frames
	// of one pass (seconds apart) overlap far less.
	MinOverlap = 0.9
)

type kind byte

const (
	kindGeneric kind = iota + 1
	kindS2
	kindLandsat
)

// Identity is what tells an acquisition apart, read from one item.
type Identity struct {
	Family string
	kind   kind
	// Sentinel-2: platform (S2A, S2B …), MGRS tile (24MUV); from the ESA
	// product name (s2:product_uri) when there is one: its datatake
	// sensing start and relative orbit.
	platform string
	tile     string
	datatake string
	orbit    int
	// Landsat: sensor (LC08 …), WRS path and row, acquisition date.
	wrsPath, wrsRow, date string

	time    time.Time
	hasTime bool
	bbox    []float64
	shape   *footprint.Shape
}

var (
	// S2B_MSIL2A_20250731T130249_N0511_R095_T24MUV_20250731T132745.SAFE
	s2ProductURI = regexp.MustCompile(`^(S2[A-D])_MSI(L1C|L2A)_(\d{8}T\d{6})_N\d{4}_R(\d{3})_T(\d{2}[C-X][A-Z]{2})_`)
	// ids: S2B_24MUV_20250731_0_L2A, S2B_T24MUV_20250731T130245_L2A,
	// S2B_MSIL2A_20250731T130249_R095_T24MUV_20250731T132745
	s2IDTile = regexp.MustCompile(`^(S2[A-D])_(?:MSIL\w{2}_\d{8}T\d{6}_R\d{3}_)?T?(\d{2}[C-X][A-Z]{2})_`)
	// Landsat product ids: LC08_L2SP_033032_20231008_02_T1, also with the
	// processing date: LC08_L2SP_033032_20231008_20231017_02_T1
	landsatProductID = regexp.MustCompile(`^(L[COTEM]0\d)_L\w{3}_(\d{3})(\d{3})_(\d{8})_`)
	// Landsat scene ids: LC80330322023281LGN00
	landsatSceneID = regexp.MustCompile(`^L([COTEM])(\d)(\d{3})(\d{3})(\d{4})(\d{3})`)
	mgrsTile       = regexp.MustCompile(`^\d{1,2}[C-X][A-Z]{2}$`)
)

// Identify reads an item's identity within its product family.
func Identify(familyID string, it *stacclient.Item) Identity {
	id := Identity{Family: familyID, kind: kindGeneric, bbox: it.BBox}
	id.time, id.hasTime = it.Datetime()
	if readS2(it, &id) {
		id.kind = kindS2
	} else if readLandsat(it, &id) {
		id.kind = kindLandsat
	}
	if s, err := footprint.Parse(it.Geometry, it.BBox); err == nil {
		id.shape = &s
	}
	return id
}

// readS2 fills the Sentinel-2 fields: from the product name when the item
// has one, else from the tile properties each catalog writes (s2:mgrs_tile;
// mgrs:utm_zone + mgrs:latitude_band + mgrs:grid_square; grid:code) or the
// id, and the platform property.
func readS2(it *stacclient.Item, id *Identity) bool {
	if uri, ok := it.PropertyString("s2:product_uri"); ok {
		if m := s2ProductURI.FindStringSubmatch(uri); m != nil {
			id.platform, id.datatake, id.tile = m[1], m[3], m[5]
			id.orbit, _ = strconv.Atoi(m[4])
			return true
		}
	}
	if m := s2IDTile.FindStringSubmatch(it.ID); m != nil {
		id.platform, id.tile = m[1], m[2]
	}
	if t := s2Tile(it); t != "" {
		id.tile = t
	}
	if p := s2Platform(it); p != "" {
		id.platform = p
	}
	if f, ok := it.PropertyFloat("sat:relative_orbit"); ok {
		id.orbit = int(f)
	}
	return id.platform != "" && id.tile != ""
}

func s2Tile(it *stacclient.Item) string {
	norm := func(t string) string {
		t = strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "MGRS-"), "T")))
		if len(t) == 4 {
			t = "0" + t
		}
		if mgrsTile.MatchString(t) {
			return t
		}
		return ""
	}
	if t, ok := it.PropertyString("s2:mgrs_tile"); ok {
		return norm(t)
	}
	zone, okZone := it.PropertyFloat("mgrs:utm_zone")
	band, okBand := it.PropertyString("mgrs:latitude_band")
	square, okSquare := it.PropertyString("mgrs:grid_square")
	if okZone && okBand && okSquare {
		return norm(fmt.Sprintf("%02d%s%s", int(zone), band, square))
	}
	if code, ok := it.PropertyString("grid:code"); ok && strings.HasPrefix(code, "MGRS-") {
		return norm(code)
	}
	return ""
}

// s2Platform is the platform as the product name writes it (S2A …):
// catalogs say "sentinel-2b" or "Sentinel-2B".
func s2Platform(it *stacclient.Item) string {
	p, _ := it.PropertyString("platform")
	p = strings.ToLower(strings.TrimSpace(p))
	if rest, ok := strings.CutPrefix(p, "sentinel-2"); ok && len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'd' {
		return "S2" + strings.ToUpper(rest)
	}
	return ""
}

// readLandsat fills the Landsat fields from the product id (the item's id
// at Earth Search and Planetary Computer), else landsat:scene_id, else the
// WRS properties, the platform and the date.
func readLandsat(it *stacclient.Item, id *Identity) bool {
	if m := landsatProductID.FindStringSubmatch(it.ID); m != nil {
		id.platform, id.wrsPath, id.wrsRow, id.date = m[1], m[2], m[3], m[4]
		return true
	}
	if s, ok := it.PropertyString("landsat:scene_id"); ok {
		if m := landsatSceneID.FindStringSubmatch(s); m != nil {
			year, _ := strconv.Atoi(m[5])
			doy, _ := strconv.Atoi(m[6])
			d := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, doy-1)
			id.platform, id.wrsPath, id.wrsRow, id.date = "L"+m[1]+"0"+m[2], m[3], m[4], d.Format("20060102")
			return true
		}
	}
	path, okPath := it.PropertyString("landsat:wrs_path")
	row, okRow := it.PropertyString("landsat:wrs_row")
	platform, _ := it.PropertyString("platform")
	if okPath && okRow && id.hasTime && strings.HasPrefix(strings.ToLower(platform), "landsat-") {
		id.platform = "landsat-" + strings.TrimPrefix(strings.ToLower(platform), "landsat-")
		id.wrsPath, id.wrsRow, id.date = fmt.Sprintf("%03s", path), fmt.Sprintf("%03s", row), id.time.UTC().Format("20060102")
		return true
	}
	return false
}

// Match reports whether two identities are one acquisition, and on what
// evidence (for the note that says why a copy was folded into another).
func Match(a, b Identity) (bool, string) {
	if a.Family != b.Family || a.kind != b.kind {
		return false, ""
	}
	switch a.kind {
	case kindS2:
		if a.platform != b.platform || a.tile != b.tile {
			return false, ""
		}
		if a.datatake != "" && b.datatake != "" {
			if a.datatake != b.datatake || a.orbit != b.orbit {
				return false, ""
			}
			return true, fmt.Sprintf("same Sentinel-2 product: %s, tile %s, datatake %s", a.platform, a.tile, a.datatake)
		}
		if a.orbit != 0 && b.orbit != 0 && a.orbit != b.orbit {
			return false, ""
		}
		if !a.hasTime || !b.hasTime || absDur(a.time.Sub(b.time)) > S2Tolerance {
			return false, ""
		}
		return true, fmt.Sprintf("same Sentinel-2 acquisition: %s, tile %s, sensed %s apart (within %s)",
			a.platform, a.tile, roundDur(absDur(a.time.Sub(b.time))), S2Tolerance)
	case kindLandsat:
		if landsatSensor(a.platform) != landsatSensor(b.platform) || a.wrsPath != b.wrsPath || a.wrsRow != b.wrsRow || a.date != b.date {
			return false, ""
		}
		return true, fmt.Sprintf("same Landsat scene: path %s, row %s, %s", a.wrsPath, a.wrsRow, a.date)
	}
	if !a.hasTime || !b.hasTime || absDur(a.time.Sub(b.time)) > GenericTolerance {
		return false, ""
	}
	share, ok := overlap(a, b)
	if !ok || share < MinOverlap {
		return false, ""
	}
	return true, fmt.Sprintf("same %s acquisition: dated %s apart (within %s), footprints %.0f%% shared", a.Family,
		roundDur(absDur(a.time.Sub(b.time))), GenericTolerance, 100*share)
}

// landsatSensor is the satellite number of a Landsat platform written as a
// product id does (LC08) or as a platform property (landsat-8).
func landsatSensor(p string) string {
	p = strings.ToLower(p)
	if rest, ok := strings.CutPrefix(p, "landsat-"); ok {
		return strings.TrimLeft(rest, "0")
	}
	if len(p) == 4 {
		return strings.TrimLeft(p[2:], "0")
	}
	return p
}

// overlap is the smaller of the two shares each footprint has inside the
// other (footprints, else bounding boxes).
func overlap(a, b Identity) (float64, bool) {
	if a.shape != nil && b.shape != nil {
		if area, err := footprint.NewArea(*a.shape); err == nil {
			if o, err := area.Overlap(*b.shape); err == nil {
				return min(o.AreaPercent/100, o.FootprintFraction), true
			}
		}
	}
	return bboxOverlap(a.bbox, b.bbox)
}

// bboxOverlap is the smaller share of each box inside the other (planar,
// in degrees: only ever compared with a threshold of 0.9, where the
// difference with an equal-area measure is far below the threshold's
// margin).
func bboxOverlap(a, b []float64) (float64, bool) {
	if len(a) < 4 || len(b) < 4 {
		return 0, false
	}
	a, b = flat(a), flat(b)
	w, s := max(a[0], b[0]), max(a[1], b[1])
	e, n := min(a[2], b[2]), min(a[3], b[3])
	if e <= w || n <= s {
		return 0, true
	}
	inter := (e - w) * (n - s)
	areaA := (a[2] - a[0]) * (a[3] - a[1])
	areaB := (b[2] - b[0]) * (b[3] - b[1])
	if areaA <= 0 || areaB <= 0 {
		return 0, false
	}
	return min(inter/areaA, inter/areaB), true
}

// flat keeps the 2D corners of a 4- or 6-number bbox.
func flat(b []float64) []float64 {
	if len(b) >= 6 {
		return []float64{b[0], b[1], b[3], b[4]}
	}
	return b[:4]
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func roundDur(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// Record is an identity made small enough for a cursor: what a later page
// needs to drop the copies of items an earlier page returned. It keeps the
// family and acquisition key as a fingerprint, the time to the second and
// the bbox to 0.01°, which is all Match compares across pages (the
// footprint itself is not carried: two boxes ≥ 0.9 shared stand for it).
type Record struct {
	Kind byte
	Key  uint32
	Unix int64
	BBox [4]int16 // west, south, east, north in hundredths of a degree (generic only)
	// Members are the catalogs (bits, by their index in the call) whose
	// copy was already taken: another item of one of them is another item.
	Members uint32
}

// Record is the identity's cursor form.
func (id Identity) Record() Record {
	r := Record{Kind: byte(id.kind)}
	if id.hasTime {
		r.Unix = id.time.Unix()
	}
	switch id.kind {
	case kindS2:
		r.Key = fingerprint(id.Family, id.platform, id.tile)
	case kindLandsat:
		r.Key = fingerprint(id.Family, landsatSensor(id.platform), id.wrsPath, id.wrsRow, id.date)
	default:
		r.Key = fingerprint(id.Family)
		if b := id.bbox; len(b) >= 4 {
			b = flat(b)
			for i := range 4 {
				r.BBox[i] = int16(max(-18000, min(18000, math.Round(b[i]*100))))
			}
		}
	}
	return r
}

// MatchesRecord reports whether id is the acquisition an earlier page's
// item left as r.
func (id Identity) MatchesRecord(r Record) bool {
	back := id.Record()
	if back.Kind != r.Kind || back.Key != r.Key { // Members: the caller's
		return false
	}
	switch kind(r.Kind) {
	case kindLandsat:
		return true
	case kindS2:
		return id.hasTime && absDur(time.Duration(back.Unix-r.Unix)*time.Second) <= S2Tolerance
	}
	if !id.hasTime || absDur(time.Duration(back.Unix-r.Unix)*time.Second) > GenericTolerance+time.Second {
		return false
	}
	box := func(b [4]int16) []float64 {
		return []float64{float64(b[0]) / 100, float64(b[1]) / 100, float64(b[2]) / 100, float64(b[3]) / 100}
	}
	// The boxes were rounded to 0.01°: a hair below the threshold allows
	// for it on boxes of a few tenths of a degree.
	share, ok := bboxOverlap(box(back.BBox), box(r.BBox))
	return ok && share >= MinOverlap-0.02
}

func fingerprint(parts ...string) uint32 {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return binary.BigEndian.Uint32(sum[:4])
}
