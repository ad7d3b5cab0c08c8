package stacserver

import (
	"net/http"
	"net/url"
	"testing"
)

// standardsStore: items whose datetimes sort differently as strings and
// as instants, and items with and without heights.
func standardsStore(t *testing.T) *Store {
	t.Helper()
	s := NewStore()
	mustAdd(t, s.AddCollection, collectionJSON("c", "Standards", []string{}, []float64{-180, -90, 180, 90}, "2020-01-01T00:00:00Z", nil))
	for _, it := range []struct{ id, datetime string }{
		{"half", "2020-06-01T10:00:00.5Z"},      // as a string, before "…00Z"
		{"whole", "2020-06-01T10:00:00Z"},       // the earliest
		{"offset", "2020-06-01T11:00:01+02:00"}, // 09:00:01Z: as a string, the latest
		{"late", "2020-06-01T23:59:59.750Z"},    // inside 2020-06-01's last second
		{"leap", "2016-12-31T23:59:60Z"},        // a leap second
	} {
		mustAdd(t, s.AddItem, itemJSON(it.id, "c", squareGeometry(0, 0, 1, 1), map[string]any{"datetime": it.datetime}))
	}
	high := itemJSON("high", "c", squareGeometry(0, 0, 1, 1), map[string]any{"datetime": "2021-01-01T00:00:00Z"})
	high["bbox"] = []float64{0, 0, 1000, 1, 1, 2000}
	mustAdd(t, s.AddItem, high)
	low := itemJSON("low", "c", map[string]any{"type": "Point", "coordinates": []float64{0.5, 0.5, 10}}, map[string]any{"datetime": "2021-01-01T00:00:00Z"})
	mustAdd(t, s.AddItem, low)
	return s
}

// Item search semantics in the in-process STAC API.
func TestSearchStandards(t *testing.T) {
	ts := startServerWith(t, standardsStore(t), Options{})
	ids := func(target string) []string {
		t.Helper()
		r := ts.get(t, target)
		wantStatus(t, r, http.StatusOK)
		return featureIDs(t, r)
	}

	// sortby datetime orders instants: fractional seconds and offsets.
	if got := ids("/search?ids=half,whole,offset&sortby=%2Bdatetime"); !equalStrings(got, []string{"offset", "whole", "half"}) {
		t.Errorf("sortby +datetime: %v, want offset (09:00:01Z), whole, half", got)
	}
	if got := ids("/search?ids=half,whole,offset&sortby=-datetime"); !equalStrings(got, []string{"half", "whole", "offset"}) {
		t.Errorf("sortby -datetime: %v", got)
	}

	// A leap second is RFC 3339, in a query and in an item; lowercase t and
	// z too.
	if got := ids("/search?datetime=" + url.QueryEscape("2016-12-31T23:59:60Z/2016-12-31T23:59:60.5Z")); !equalStrings(got, []string{"leap"}) {
		t.Errorf("leap second interval: %v", got)
	}
	if got := ids("/search?datetime=" + url.QueryEscape("2020-06-01t10:00:00z")); !equalStrings(got, []string{"whole"}) {
		t.Errorf("lowercase t/z: %v", got)
	}
	// The last item of a day, by a range ending in its last second.
	if got := ids("/search?datetime=" + url.QueryEscape("2020-06-01T23:00:00Z/2020-06-01T23:59:59.999999Z")); !equalStrings(got, []string{"late"}) {
		t.Errorf("end of day: %v", got)
	}

	// A comma decimal is not RFC 3339; both ends open is not a STAC range.
	for _, bad := range []string{"2020-06-01T10:00:00,5Z", "../..", "2020-06-01T10:00:60Z"} {
		r := ts.get(t, "/search?datetime="+url.QueryEscape(bad))
		wantStatus(t, r, http.StatusBadRequest)
	}

	// A 3D bbox bounds heights; an item without heights is kept.
	if got := ids("/search?collections=c&bbox=0,0,500,1,1,5000&datetime=2021-01-01T00:00:00Z"); !equalStrings(got, []string{"high"}) {
		t.Errorf("3D bbox 500..5000 m: %v, want high only", got)
	}
	if got := ids("/search?collections=c&bbox=0,0,0,1,1,100&datetime=2021-01-01T00:00:00Z"); !equalStrings(got, []string{"low"}) {
		t.Errorf("3D bbox 0..100 m: %v, want low only", got)
	}
	r := ts.get(t, "/search?bbox=0,0,100,1,1,0")
	wantStatus(t, r, http.StatusBadRequest)
}
