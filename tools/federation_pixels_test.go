package tools

import (
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/tools/internal/federation/fedtest"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
)

// The pixel tools read a scene whose own data cannot be read here (Earth
// Search's Landsat, on requester-pays s3://) from its readable copy in
// another catalog (Planetary Computer's, on Azure Blob HTTPS, signed).
// The catalogs are the recorded ones' layouts (fedtest); the copy's
// Cloud-Optimized GeoTIFFs are the synthetic Landsat-like bands of
// testdata/pixels (EPSG:32613, inside the scene's footprint), served at
// the copy's own hrefs.

const landsatScene = "LC08_L2SP_033032_20231008_02_T1"

// landsatCopyHosts serves Earth Search with the Landsat scene, Planetary
// Computer with its HTTPS copy (withCopy) and its token endpoint, and the
// copy's blob storage, which refuses unsigned requests; signed counts the
// signed range requests it answered.
func landsatCopyHosts(t *testing.T, withCopy bool) (*presetHosts, *atomic.Int64) {
	t.Helper()
	es, pc := landsatAndS2()
	if !withCopy {
		pc = pc[1:] // the Sentinel-2 tile only
	}
	hosts := newPresetHosts(t, es, pc, map[string]func(http.Handler) http.Handler{
		fedtest.PlanetaryComputerHost: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/api/sas/v1/token/") {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"msft:expiry": "` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `", "token": "st=2023&se=2099&sp=rl&sig=test"}`))
					return
				}
				h.ServeHTTP(w, r)
			})
		},
	})
	var signed atomic.Int64
	files := map[string]string{"_SR_B4.TIF": "LC_RED.tif", "_SR_B5.TIF": "LC_NIR08.tif", "_QA_PIXEL.TIF": "LC_QA_PIXEL.tif"}
	hosts.handlers["landsateuwest.blob.core.windows.net"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("sig") == "" {
			http.Error(w, "AuthenticationFailed", http.StatusForbidden)
			return
		}
		for suffix, name := range files {
			if strings.HasPrefix(r.URL.Path, "/landsat-c2/level-2/standard/oli-tirs/2023/033/032/") && strings.HasSuffix(r.URL.Path, suffix) {
				signed.Add(1)
				http.ServeFile(w, r, filepath.Join("testdata", "pixels", name))
				return
			}
		}
		http.NotFound(w, r)
	})
	return hosts, &signed
}

// syntheticAOI is the synthetic scene's square 1 m inside its edges (as
// newPixelScene's aoi).
func syntheticAOI(t *testing.T) map[string]any {
	t.Helper()
	crs, err := geo.FromEPSG(32613)
	if err != nil {
		t.Fatal(err)
	}
	var ring [][2]float64
	for _, c := range [][2]float64{{478001, 4437361}, {478639, 4437361}, {478639, 4437999}, {478001, 4437999}, {478001, 4437361}} {
		lon, lat, err := crs.ToLonLat(c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		ring = append(ring, [2]float64{lon, lat})
	}
	return map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}}
}

func TestPixelToolsReadAnUnreadableItemFromItsCopy(t *testing.T) {
	t.Parallel()
	hosts, signed := landsatCopyHosts(t, true)
	cs := newTestSession(t, testSessionOptions{Transport: hosts})
	aoi := syntheticAOI(t)
	es := map[string]any{"catalog_url": "earth-search", "collection_id": "landsat-c2-l2", "item_id": landsatScene, "aoi": aoi}
	pc := merged(es, map[string]any{"catalog_url": "planetary-computer"})

	res := callOK(t, cs, "aoi_statistics", merged(es, map[string]any{"bands": "red,nir08"}))
	viaCopy := structured[AOIStatisticsOut](t, res)
	cp := viaCopy.ReadFrom
	if cp == nil || cp.Catalog != "planetary-computer" || cp.ID != landsatScene || cp.Collection != "landsat-c2-l2" ||
		!strings.Contains(cp.Evidence, "path 033, row 032") || cp.Why == "" {
		t.Fatalf("read_from %+v", cp)
	}
	if viaCopy.ItemID != landsatScene || viaCopy.Collection != "landsat-c2-l2" {
		t.Errorf("reported item %s (%s): want the one asked for", viaCopy.ItemID, viaCopy.Collection)
	}
	text := resultText(res)
	if !strings.Contains(text, "Read from planetary-computer's copy "+landsatScene) || !strings.Contains(text, "cannot be read here (") {
		t.Errorf("the text does not say whose copy was read:\n%s", text)
	}
	if signed.Load() == 0 {
		t.Fatal("no signed range request reached the copy's storage")
	}
	direct := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", merged(pc, map[string]any{"bands": "red,nir08"})))
	if direct.ReadFrom != nil {
		t.Errorf("a readable item was read from a copy: %+v", direct.ReadFrom)
	}
	if len(viaCopy.Stats) != 2 || viaCopy.Stats[0].Valid == 0 || !reflect.DeepEqual(viaCopy.Stats, direct.Stats) {
		t.Errorf("statistics through the copy differ from a direct read of it:\n copy   %+v\n direct %+v", viaCopy.Stats, direct.Stats)
	}
	if !reflect.DeepEqual(viaCopy.Mask, direct.Mask) || viaCopy.Mask == nil {
		t.Errorf("mask through the copy %+v, direct %+v", viaCopy.Mask, direct.Mask)
	}

	ndvi := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", merged(es, map[string]any{"view": "ndvi"})))
	ndviDirect := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", merged(pc, map[string]any{"view": "ndvi"})))
	if ndvi.ReadFrom == nil || ndvi.ReadFrom.Catalog != "planetary-computer" || ndvi.Stats == nil || !reflect.DeepEqual(ndvi.Stats, ndviDirect.Stats) {
		t.Errorf("render_aoi ndvi: read_from %+v, stats %+v, direct %+v", ndvi.ReadFrom, ndvi.Stats, ndviDirect.Stats)
	}

	exp := callOK(t, cs, "export", map[string]any{"catalog_url": "earth-search", "kind": "pixels", "collections": "landsat-c2-l2", "item_id": landsatScene,
		"aoi": aoi, "bands": "ndvi"})
	eout := structured[ExportOut](t, exp)
	if eout.Pixels == nil || eout.Pixels.ReadFrom == nil || eout.Pixels.ReadFrom.ID != landsatScene || !reflect.DeepEqual(eout.Pixels.Stats[0], *ndviDirect.Stats) {
		t.Errorf("export: %+v", eout.Pixels)
	}
	if !strings.Contains(resultText(exp), "Read from planetary-computer's copy") {
		t.Errorf("export's text does not say whose copy was read:\n%s", resultText(exp))
	}
}

// Without a copy anywhere, the error says where it looked.
func TestPixelToolsSayWhereTheyLookedForACopy(t *testing.T) {
	t.Parallel()
	hosts, _ := landsatCopyHosts(t, false)
	cs := newTestSession(t, testSessionOptions{Transport: hosts})
	text := callErr(t, cs, "aoi_statistics", map[string]any{"catalog_url": "earth-search", "collection_id": "landsat-c2-l2", "item_id": landsatScene,
		"aoi": syntheticAOI(t), "bands": "red"})
	for _, want := range []string{"cannot be read here (requester-pays)", "no readable copy of the scene was found in planetary-computer", "planetary-computer: no copy of the scene"} {
		if !strings.Contains(text, want) {
			t.Errorf("the error lacks %q: %s", want, text)
		}
	}
}

// seriesScenes: Earth Search's recorded Sentinel-2 L2A tile of 8 October
// 2023 over Colorado and Planetary Computer's copy of it (one scene in
// both), a later date only Earth Search has and a later one only
// Planetary Computer has, each written as its catalog writes it. Every
// copy's bands are the synthetic scene of testdata/pixels, served at the
// copy's own hrefs (Earth Search's public bucket, Planetary Computer's
// blob storage, which refuses unsigned requests).
func seriesScenes(t *testing.T) (*presetHosts, *atomic.Int64) {
	t.Helper()
	s2 := fedtest.Find(fedtest.EarthSearchItems(), "S2A_13TDE_20231008_0_L2A")
	pcCopy := fedtest.CopyInPlanetaryComputer(s2)
	es := []fedtest.Item{s2, fedtest.WithID(s2, "S2A_13TDE_20231018_0_L2A", time.Date(2023, 10, 18, 18, 2, 55, 0, time.UTC))}
	later := fedtest.WithID(pcCopy, "S2A_MSIL2A_20231028T175231_R141_T13TDE_20231029T000000", time.Date(2023, 10, 28, 17, 52, 31, 0, time.UTC))
	p := later["properties"].(map[string]any)
	p["s2:product_uri"] = "S2A_MSIL2A_20231028T175231_N0509_R141_T13TDE_20231029T000000.SAFE"
	delete(p, "s2:datatake_id")
	pc := []fedtest.Item{pcCopy, later}
	hosts, _ := landsatCopyHosts(t, true)
	for host, style := range map[string]fedtest.Style{fedtest.EarthSearchHost: fedtest.EarthSearch(), fedtest.PlanetaryComputerHost: fedtest.PlanetaryComputer()} {
		items := es
		if host == fedtest.PlanetaryComputerHost {
			items = pc
		}
		srv, err := fedtest.Server(style, items)
		if err != nil {
			t.Fatal(err)
		}
		if host == fedtest.PlanetaryComputerHost {
			token := hosts.handlers[host]
			hosts.handlers[host] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/api/sas/") {
					token.ServeHTTP(w, r)
					return
				}
				srv.ServeHTTP(w, r)
			})
			continue
		}
		hosts.handlers[host] = srv
	}
	serve := func(files map[string]string, signed bool, n *atomic.Int64) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if signed && r.URL.Query().Get("sig") == "" {
				http.Error(w, "AuthenticationFailed", http.StatusForbidden)
				return
			}
			for suffix, name := range files {
				if strings.HasSuffix(r.URL.Path, suffix) {
					if n != nil {
						n.Add(1)
					}
					http.ServeFile(w, r, filepath.Join("testdata", "pixels", name))
					return
				}
			}
			http.NotFound(w, r)
		})
	}
	var signed atomic.Int64
	hosts.handlers["sentinel-cogs.s3.us-west-2.amazonaws.com"] = serve(map[string]string{"/B04.tif": "B04.tif", "/B08.tif": "B08.tif", "/SCL.tif": "SCL.tif"}, false, nil)
	hosts.handlers["sentinel2l2a01.blob.core.windows.net"] = serve(map[string]string{"_B04_10m.tif": "B04.tif", "_B08_10m.tif": "B08.tif", "_SCL_20m.tif": "SCL.tif"}, true, &signed)
	return hosts, &signed
}

func TestIndexTimeSeriesOverTwoCatalogs(t *testing.T) {
	t.Parallel()
	hosts, signed := seriesScenes(t)
	cs := newTestSession(t, testSessionOptions{Transport: hosts, SeriesPage: 1})
	args := map[string]any{"catalog_url": bothCatalogs, "collections": "sentinel-2-l2a", "aoi": syntheticAOI(t), "datetime": "2023-10"}

	// One date a call: the cursor carries the series across the catalogs.
	var rows []TimeSeriesRow
	res := callOK(t, cs, "index_time_series", args)
	out := structured[IndexTimeSeriesOut](t, res)
	text := resultText(res)
	for n := 0; ; n++ {
		if out.Dates != 3 || len(out.Catalogs) != 2 || out.Catalogs[0].Status != "answered" || out.Catalogs[1].Status != "answered" {
			t.Fatalf("call %d: %d dates (want 3: the scene both hold once), catalogs %+v, skipped %+v, failed %+v", n, out.Dates, out.Catalogs, out.Skipped, out.Failed)
		}
		rows = append(rows, out.Rows...)
		if out.Cursor == "" || n > 5 {
			break
		}
		out = structured[IndexTimeSeriesOut](t, callOK(t, cs, "index_time_series", merged(args, map[string]any{"cursor": out.Cursor})))
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows over the calls, want 3: %+v", len(rows), rows)
	}
	from := map[string]string{}
	for _, r := range rows {
		if len(r.ItemCatalogs) != len(r.Items) || len(r.Items) != 1 {
			t.Fatalf("row %s: items %v, catalogs %v", r.Date, r.Items, r.ItemCatalogs)
		}
		from[r.Datetime[:10]] = r.ItemCatalogs[0]
	}
	want := map[string]string{"2023-10-08": "earth-search", "2023-10-18": "earth-search", "2023-10-28": "planetary-computer"}
	if !reflect.DeepEqual(from, want) {
		t.Errorf("rows read from %v, want %v", from, want)
	}
	if signed.Load() == 0 {
		t.Error("no signed range request reached Planetary Computer's storage")
	}
	for _, w := range []string{"Catalogs: earth-search answered", "planetary-computer answered", "items (catalog:id)"} {
		if !strings.Contains(text, w) {
			t.Errorf("the text lacks %q:\n%s", w, text)
		}
	}
	// Each row is what its catalog alone gives for that date.
	alone := map[string]TimeSeriesRow{}
	for _, cat := range bothCatalogs {
		one := structured[IndexTimeSeriesOut](t, callOK(t, newTestSession(t, testSessionOptions{Transport: hosts}), "index_time_series",
			merged(args, map[string]any{"catalog_url": cat})))
		if one.Dates != 2 || len(one.Rows) != 2 || len(one.Catalogs) != 0 {
			t.Fatalf("%s alone: %d dates, rows %+v, catalogs %+v", cat, one.Dates, one.Rows, one.Catalogs)
		}
		for _, r := range one.Rows {
			alone[cat+" "+r.Datetime[:10]] = r
		}
	}
	for _, r := range rows {
		a, ok := alone[r.ItemCatalogs[0]+" "+r.Datetime[:10]]
		r.ItemCatalogs = nil
		if !ok || !reflect.DeepEqual(r, a) {
			t.Errorf("row %s over both catalogs:\n %+v\nits catalog alone:\n %+v", r.Date, r, a)
		}
	}

	// The cursor is bound to the catalogs.
	first := structured[IndexTimeSeriesOut](t, callOK(t, cs, "index_time_series", args))
	for _, other := range []any{"earth-search", []string{"planetary-computer", "earth-search"}} {
		if text := callErr(t, cs, "index_time_series", merged(args, map[string]any{"catalog_url": other, "cursor": first.Cursor})); !strings.Contains(text, "cursor") {
			t.Errorf("a cursor sent with catalog_url %v: %s", other, text)
		}
	}
}

// aoi_statistics and render_aoi over a period take several catalogs too:
// each scene once, each item's catalog named, the same values as the
// catalog that holds the scene gives alone.
func TestPeriodReadsOverTwoCatalogs(t *testing.T) {
	t.Parallel()
	hosts, _ := seriesScenes(t)
	cs := newTestSession(t, testSessionOptions{Transport: hosts})
	day := map[string]any{"catalog_url": bothCatalogs, "collections": "sentinel-2-l2a", "aoi": syntheticAOI(t), "datetime": "2023-10-28", "bands": "red,nir"}
	res := callOK(t, cs, "aoi_statistics", day)
	both := structured[AOIStatisticsOut](t, res)
	alone := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", merged(day, map[string]any{"catalog_url": "planetary-computer"})))
	if len(both.Items) != 1 || !reflect.DeepEqual(both.ItemCatalogs, []string{"planetary-computer"}) || len(both.Catalogs) != 2 ||
		both.Catalogs[0].Status != "answered" || both.Catalogs[1].Status != "answered" {
		t.Fatalf("items %v from %v, catalogs %+v", both.Items, both.ItemCatalogs, both.Catalogs)
	}
	if !reflect.DeepEqual(both.Stats, alone.Stats) || len(both.Stats) != 2 || both.Stats[0].Valid == 0 {
		t.Errorf("over both catalogs %+v, planetary-computer alone %+v", both.Stats, alone.Stats)
	}
	if text := resultText(res); !strings.Contains(text, "planetary-computer:"+both.Items[0]) || !strings.Contains(text, "Catalogs: earth-search answered") {
		t.Errorf("the text does not name the item's catalog and each catalog's outcome:\n%s", text)
	}

	month := map[string]any{"catalog_url": bothCatalogs, "collections": "sentinel-2-l2a", "aoi": syntheticAOI(t), "datetime": "2023-10", "view": "ndvi"}
	comp := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", month))
	if comp.Period == nil || comp.Period.Mode != "composite" || len(comp.Period.Dates) != 3 || len(comp.Items) != 3 || len(comp.ItemCatalogs) != 3 {
		t.Fatalf("composite over both catalogs: period %+v, items %v from %v", comp.Period, comp.Items, comp.ItemCatalogs)
	}
	if n := strings.Count(strings.Join(comp.ItemCatalogs, ","), "earth-search"); n != 2 {
		t.Errorf("items %v from %v: want the scene both hold from earth-search (listed first), and each date once", comp.Items, comp.ItemCatalogs)
	}
	change := structured[RenderAOIOut](t, callOK(t, cs, "render_aoi", merged(month, map[string]any{"datetime": "2023-10-28", "baseline": "2023-10-08"})))
	if change.Change == nil || len(change.Catalogs) != 2 || !reflect.DeepEqual(change.ItemCatalogs, []string{"earth-search", "planetary-computer"}) {
		t.Errorf("change over both catalogs: %+v, items %v from %v, catalogs %+v", change.Change, change.Items, change.ItemCatalogs, change.Catalogs)
	}
}

// An item named with a list of catalogs is looked up in the first; the
// others are where its readable copy is looked for.
func TestPixelItemWithACatalogList(t *testing.T) {
	t.Parallel()
	hosts, _ := landsatCopyHosts(t, true)
	cs := newTestSession(t, testSessionOptions{Transport: hosts})
	out := structured[AOIStatisticsOut](t, callOK(t, cs, "aoi_statistics", map[string]any{"catalog_url": bothCatalogs, "collection_id": "landsat-c2-l2",
		"item_id": landsatScene, "aoi": syntheticAOI(t), "bands": "red"}))
	if out.ReadFrom == nil || out.ReadFrom.Catalog != "planetary-computer" || len(out.Catalogs) != 0 {
		t.Errorf("read_from %+v, catalogs %+v", out.ReadFrom, out.Catalogs)
	}
}
