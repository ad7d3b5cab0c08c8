package federation

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/federation/fedtest"
)

// item decodes a test item as stacclient does.
func item(t testing.TB, it fedtest.Item) *stacclient.Item {
	t.Helper()
	raw, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	var out stacclient.Item
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// identity reads an item as the engine does (its catalog's preset decides
// the family).
func identity(t testing.TB, preset string, it fedtest.Item) Identity {
	t.Helper()
	i := item(t, it)
	return Identify(FamilyID(preset, i.Collection), i)
}

func TestSameSentinel2SceneAcrossCatalogsMatches(t *testing.T) {
	es := fedtest.EarthSearchItems()
	l2a := fedtest.Find(es, "S2B_24MUV_20250731_0_L2A")
	c1 := fedtest.Find(es, "S2B_T24MUV_20250731T130245_L2A")
	pc := fedtest.CopyInPlanetaryComputer(l2a)
	if pc["id"] != "S2B_MSIL2A_20250731T130249_R095_T24MUV_20250731T132745" {
		t.Fatalf("the Planetary Computer copy is named %v", pc["id"])
	}
	a, b, c := identity(t, "earth-search", l2a), identity(t, "planetary-computer", pc), identity(t, "earth-search", c1)
	for _, pair := range [][2]Identity{{a, b}, {c, b}, {a, c}} {
		ok, why := Match(pair[0], pair[1])
		if !ok || !strings.Contains(why, "tile 24MUV") {
			t.Errorf("Match = %v, %q; want the same Sentinel-2 product", ok, why)
		}
	}
	// Their datetimes are 38 s apart (tile sensing vs datatake start).
	if d := a.time.Sub(b.time); d < 30*time.Second || d > time.Minute {
		t.Errorf("the copies are dated %s apart; the test means to cover tens of seconds", d)
	}
}

// Two tiles of one datatake are two scenes, however close in time.
func TestTwoTilesOfOneDatatakeStayTwo(t *testing.T) {
	es := fedtest.EarthSearchItems()
	uv := fedtest.Find(es, "S2B_24MUV_20250731_0_L2A")
	vv := fedtest.Find(es, "S2B_24MVV_20250731_0_L2A")
	if ok, _ := Match(identity(t, "earth-search", uv), identity(t, "planetary-computer", fedtest.CopyInPlanetaryComputer(vv))); ok {
		t.Error("tiles 24MUV and 24MVV of one datatake were taken for one scene")
	}
	pcs := fedtest.PlanetaryComputerItems()
	for i := 1; i < len(pcs); i++ {
		if ok, why := Match(identity(t, "planetary-computer", pcs[0]), identity(t, "planetary-computer", pcs[i])); ok {
			t.Errorf("%v and %v (one datatake) matched: %s", pcs[0]["id"], pcs[i]["id"], why)
		}
	}
}

// Without product names, platform, tile and sensing time decide, within
// S2Tolerance.
func TestSentinel2WithoutProductNameMatchesWithinTolerance(t *testing.T) {
	pc := fedtest.PlanetaryComputerItems()[3]
	near := fedtest.CopyInEarthSearch(pc, 7*time.Minute)
	far := fedtest.CopyInEarthSearch(pc, 2*time.Hour)
	for _, it := range []fedtest.Item{near, far} {
		delete(it["properties"].(map[string]any), "s2:product_uri")
	}
	if ok, why := Match(identity(t, "planetary-computer", pc), identity(t, "earth-search", near)); !ok {
		t.Errorf("7 minutes apart: no match (%s)", why)
	}
	if ok, _ := Match(identity(t, "planetary-computer", pc), identity(t, "earth-search", far)); ok {
		t.Error("2 hours apart (another orbit): matched")
	}
}

func TestLandsatSceneMatchesByPathRowDate(t *testing.T) {
	es := fedtest.Find(fedtest.EarthSearchItems(), "LC08_L2SP_033032_20231008_02_T1")
	pc := fedtest.CopyInPlanetaryComputer(es)
	ok, why := Match(identity(t, "earth-search", es), identity(t, "planetary-computer", pc))
	if !ok || !strings.Contains(why, "path 033, row 032") {
		t.Errorf("Match = %v, %q", ok, why)
	}
	// Read from landsat:scene_id when the id is not a product id.
	other := fedtest.WithID(pc, "some-other-id", time.Time{})
	if ok, _ := Match(identity(t, "earth-search", es), identity(t, "planetary-computer", other)); !ok {
		t.Error("the scene id did not identify the scene")
	}
	nextRow := fedtest.WithID(pc, "LC08_L2SP_033033_20231008_02_T1", time.Time{})
	delete(nextRow["properties"].(map[string]any), "landsat:scene_id")
	if ok, _ := Match(identity(t, "earth-search", es), identity(t, "planetary-computer", nextRow)); ok {
		t.Error("the next row matched")
	}
}

// Other products: the same datetime (± GenericTolerance) and footprints
// ≥ 90 % shared. Adjacent Sentinel-1 frames of one pass (25 s apart,
// overlapping slightly) are two scenes.
func TestGenericMatchNeedsTheSameFootprint(t *testing.T) {
	s1 := fedtest.InCollection(fedtest.EarthSearchItems(), "sentinel-1-grd")
	if len(s1) < 2 {
		t.Fatal("the recordings have no adjacent Sentinel-1 frames")
	}
	a, b := identity(t, "earth-search", s1[0]), identity(t, "earth-search", s1[1])
	if ok, why := Match(a, b); ok {
		t.Errorf("adjacent frames matched: %s", why)
	}
	copyA := fedtest.WithID(s1[0], "S1A_IW_GRDH_copy", a.time.Add(20*time.Second))
	ok, why := Match(a, identity(t, "planetary-computer", copyA))
	if !ok || !strings.Contains(why, "100% shared") {
		t.Errorf("the same frame 20 s apart: %v %q", ok, why)
	}
	// Records carry the bbox: the copy matches the record, the neighbour not.
	if !identity(t, "planetary-computer", copyA).MatchesRecord(a.Record()) {
		t.Error("the copy does not match the record")
	}
	if b.MatchesRecord(a.Record()) {
		t.Error("the adjacent frame matches the record")
	}
}

func TestRecordsMatchCopiesAcrossPages(t *testing.T) {
	es := fedtest.EarthSearchItems()
	uv := identity(t, "earth-search", fedtest.Find(es, "S2B_24MUV_20250731_0_L2A"))
	pcUV := identity(t, "planetary-computer", fedtest.CopyInPlanetaryComputer(fedtest.Find(es, "S2B_24MUV_20250731_0_L2A")))
	pcVV := identity(t, "planetary-computer", fedtest.CopyInPlanetaryComputer(fedtest.Find(es, "S2B_24MVV_20250731_0_L2A")))
	if !pcUV.MatchesRecord(uv.Record()) {
		t.Error("the copy of 24MUV does not match its record")
	}
	if pcVV.MatchesRecord(uv.Record()) {
		t.Error("24MVV matches 24MUV's record")
	}
	ls := fedtest.Find(es, "LC08_L2SP_033032_20231008_02_T1")
	if !identity(t, "planetary-computer", fedtest.CopyInPlanetaryComputer(ls)).MatchesRecord(identity(t, "earth-search", ls).Record()) {
		t.Error("the Landsat copy does not match its record")
	}
}

func TestReadableCopyIsPreferred(t *testing.T) {
	es := fedtest.Find(fedtest.EarthSearchItems(), "LC08_L2SP_033032_20231008_02_T1")
	pc := fedtest.CopyInPlanetaryComputer(es)
	a, b := AccessOf(item(t, es)), AccessOf(item(t, pc))
	if a.Readable != 0 || a.Unreadable == 0 || !strings.Contains(a.Why, "requester-pays") {
		t.Errorf("Earth Search's Landsat copy: %+v, want every data asset unreadable (requester-pays)", a)
	}
	if !b.AllReadable() || b.Readable == 0 {
		t.Errorf("Planetary Computer's copy: %+v, want every data asset readable", b)
	}
	if Prefer(b, a) <= 0 || Prefer(a, b) >= 0 {
		t.Error("the readable copy is not preferred")
	}
	s2 := fedtest.Find(fedtest.EarthSearchItems(), "S2B_24MUV_20250731_0_L2A")
	if x, y := AccessOf(item(t, s2)), AccessOf(item(t, fedtest.CopyInPlanetaryComputer(s2))); Prefer(x, y) != 0 {
		t.Errorf("Sentinel-2 L2A copies on public HTTPS buckets: %+v vs %+v, want equally readable", x, y)
	}
}

func TestCollectionFamilies(t *testing.T) {
	for _, c := range []struct{ preset, asked, want string }{
		{"planetary-computer", "sentinel-2-c1-l2a", "sentinel-2-l2a"},
		{"earth-search", "sentinel-2-c1-l2a", "sentinel-2-c1-l2a"},
		{"usgs-landsat", "landsat-c2-l2", "landsat-c2l2-sr"},
		{"earth-search", "landsat-c2l2-sr", "landsat-c2-l2"},
	} {
		ids, known := Candidates(c.preset, c.asked)
		if !known || ids[0] != c.want {
			t.Errorf("Candidates(%s, %s) = %v, %v; want %s first", c.preset, c.asked, ids, known, c.want)
		}
	}
	if ids, known := Candidates("", "naip"); known || ids[0] != "naip" || len(ids) != 1 {
		t.Errorf("an unlisted catalog: %v %v", ids, known)
	}
	if FamilyID("earth-search", "sentinel-2-c1-l2a") != FamilyID("planetary-computer", "sentinel-2-l2a") {
		t.Error("Earth Search's C1 L2A and Planetary Computer's L2A are not one family")
	}
	if FamilyID("earth-search", "sentinel-2-l1c") == FamilyID("earth-search", "sentinel-2-l2a") {
		t.Error("L1C and L2A are one family")
	}
}
