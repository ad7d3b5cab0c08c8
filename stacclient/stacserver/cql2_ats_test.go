package stacserver

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/cql2/cql2test"
)

// The OGC 21-065 Annex A test dataset served as STAC items, one collection
// per table. The ATS names the geometry "geom", so each item carries its
// geometry as the item's and as properties.geom too; its "date", "start",
// "end" and "boolean" columns are plain properties.
func annexAServer(t *testing.T) *testServer {
	t.Helper()
	s := NewStore()
	for _, source := range []string{"ne_110m_admin_0_countries", "ne_110m_populated_places_simple", "ne_110m_rivers_lake_centerlines"} {
		rows, err := cql2test.Dataset(source)
		if err != nil {
			t.Fatal(err)
		}
		mustAdd(t, s.AddCollection, collectionJSON(source, source, nil, []float64{-180, -90, 180, 90}, "2020-01-01T00:00:00Z", nil))
		for _, f := range rows {
			props := f["properties"].(map[string]any)
			props["geom"] = f["geometry"]
			props["datetime"] = "2020-01-01T00:00:00Z" // STAC requires one; no ATS predicate reads it
			mustAdd(t, s.AddItem, itemJSON(fmt.Sprintf("%s-%v", source, f["id"]), source, f["geometry"].(map[string]any), props))
		}
	}
	return startServerWith(t, s, Options{})
}

// Every predicate of the Annex A tables, sent as cql2-text in GET /search
// on its table's collection, matches the number of items the standard
// gives (before: cql2-text was refused, and in its JSON form 34 of these
// disagreed: NOT with nulls, dates, the s_* and t_* beyond intersects).
func TestAnnexAThroughSearch(t *testing.T) {
	cases, err := cql2test.AnnexA()
	if err != nil {
		t.Fatal(err)
	}
	ts := annexAServer(t)
	agree := 0
	for _, c := range cases {
		r := ts.get(t, "/search?"+url.Values{"collections": {c.Source}, "filter": {c.Filter}, "limit": {"1"}}.Encode())
		if r.status != http.StatusOK {
			t.Errorf("%s: %s: status %d: %s", c.File, c.Filter, r.status, r.raw)
			continue
		}
		ctx, _ := r.body["context"].(map[string]any)
		if got := fmt.Sprint(ctx["matched"]); got != fmt.Sprint(c.Want) {
			t.Errorf("%s: %s: matched %s, the standard expects %d", c.File, c.Filter, got, c.Want)
			continue
		}
		agree++
	}
	if len(cases) < 200 {
		t.Errorf("only %d Annex A cases", len(cases))
	}
	t.Logf("OGC 21-065 Annex A through GET /search: %d cases, %d agree", len(cases), agree)
}

// The reference case of the issue: NOT (nfield = true) on cql2-rs's
// dataset selects the 4 rows where nfield is false, not the 81 where it
// is not true (null included).
func TestNotWithNullsThroughSearch(t *testing.T) {
	rows, err := cql2test.Features(cql2test.Dir() + "/cql2rs/cql2testdata.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore()
	mustAdd(t, s.AddCollection, collectionJSON("rs", "cql2-rs test data", nil, []float64{-180, -90, 180, 90}, "2020-01-01T00:00:00Z", nil))
	for _, row := range rows {
		geom := row["geom"].(map[string]any)
		delete(row, "geom")
		row["datetime"] = "2020-01-01T00:00:00Z"
		mustAdd(t, s.AddItem, itemJSON(fmt.Sprint(row["intfield"]), "rs", geom, row))
	}
	ts := startServerWith(t, s, Options{})
	filter := map[string]any{"op": "not", "args": []any{map[string]any{"op": "=", "args": []any{map[string]any{"property": "nfield"}, true}}}}
	got := searchBoth(t, ts, url.Values{"filter": {"NOT (nfield = true)"}, "limit": {"200"}},
		map[string]any{"filter": filter, "limit": 200})
	if want := []string{"25", "26", "27", "28"}; !equalStrings(got, want) {
		t.Errorf("NOT (nfield = true): %d items %v, want %v", len(got), got, want)
	}
}

// The dataset's queryables say what the ATS's queryables say: "date" is a
// date, "start" a timestamp (before: "date" was a plain string).
func TestAnnexAQueryables(t *testing.T) {
	ts := annexAServer(t)
	r := ts.get(t, "/collections/ne_110m_populated_places_simple/queryables")
	wantStatus(t, r, http.StatusOK)
	props := r.body["properties"].(map[string]any)
	for name, format := range map[string]string{"date": "date", "start": "date-time", "end": "date-time"} {
		if p, _ := props[name].(map[string]any); p["type"] != "string" || p["format"] != format {
			t.Errorf("queryable %s: %v, want a string of format %s", name, p, format)
		}
	}
}
